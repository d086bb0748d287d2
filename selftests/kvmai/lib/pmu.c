// SPDX-License-Identifier: GPL-2.0-only
/*
 * PMU ownership requests (pmu-* operations) and perf events on the host,
 * for the selftests.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/kvmai.h>

#include "pmu.h"
#include "sys.h"

static void parse_unit(struct kt_unit *u, struct nlattr *nest)
{
	struct nlattr *tb[KVMAI_A_UNIT_MAX + 1], *r[KVMAI_A_MSR_RANGE_MAX + 1], *a;
	int rem;

	memset(u, 0, sizeof(*u));
	u->hotplug_scrubs = -1;
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) == KVMAI_A_UNIT_OFFLINE_PACKAGE && kt_nla_u32(a) < 32)
			u->offline_pkgs |= 1u << kt_nla_u32(a);
		if (nla_type(a) != KVMAI_A_UNIT_MSR ||
		    nla_parse_nested(r, KVMAI_A_MSR_RANGE_MAX, a, NULL))
			continue;
		u->nmsr++;
		if (!u->counter_msr && r[KVMAI_A_MSR_RANGE_READ])
			u->counter_msr = kt_nla_u32(r[KVMAI_A_MSR_RANGE_BASE]);
	}
	if (nla_parse_nested(tb, KVMAI_A_UNIT_MAX, nest, NULL))
		return;
	kt_nla_str(u->name, sizeof(u->name), tb[KVMAI_A_UNIT_NAME]);
	kt_nla_str(u->vm, sizeof(u->vm), tb[KVMAI_A_UNIT_VM]);
	u->type = kt_nla_u32(tb[KVMAI_A_UNIT_TYPE]);
	u->ranges = kt_nla_u32(tb[KVMAI_A_UNIT_MSR_RANGES]);
	u->host_events = kt_nla_u32(tb[KVMAI_A_UNIT_HOST_EVENTS]);
	u->core_select = !!tb[KVMAI_A_UNIT_CORE_SELECT];
	u->scope = kt_nla_u32(tb[KVMAI_A_UNIT_SCOPE]);
	if (tb[KVMAI_A_UNIT_HOTPLUG_SCRUBS])
		u->hotplug_scrubs = kt_nla_u32(tb[KVMAI_A_UNIT_HOTPLUG_SCRUBS]);
}

static void parse_pmu(struct nl_msg *msg, struct kt_pmu *p)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gnlh = nlmsg_data(nlh);
	struct nlattr *a;
	int rem;

	memset(p, 0, sizeof(*p));
	p->cmd = gnlh->cmd;
	nla_for_each_attr(a, genlmsg_attrdata(gnlh, 0), genlmsg_attrlen(gnlh, 0), rem) {
		switch (nla_type(a)) {
		case KVMAI_A_PMU_VM:
			kt_nla_str(p->vm, sizeof(p->vm), a);
			break;
		case KVMAI_A_PMU_CORE:
			p->core = true;
			break;
		case KVMAI_A_PMU_SHARED:
			p->shared = true;
			break;
		case KVMAI_A_PMU_BIND_SOCKET:
			p->bind_socket = true;
			break;
		case KVMAI_A_PMU_PID:
			p->pid = nla_get_u32(a);
			break;
		case KVMAI_A_PMU_CPUS:
			kt_nla_str(p->cpus, sizeof(p->cpus), a);
			break;
		case KVMAI_A_PMU_PACKAGE:
			if (p->npkgs < 8)
				p->pkgs[p->npkgs++] = nla_get_u32(a);
			break;
		case KVMAI_A_PMU_UNIT:
			if (p->nunits < (int)ARRAY_SIZE(p->units))
				parse_unit(&p->units[p->nunits++], a);
			break;
		}
	}
}

struct pmu_ctx {
	struct kt_pmu *out;
	int max, n;
};

static int on_pmu(struct nl_msg *msg, void *arg)
{
	struct pmu_ctx *c = arg;

	if (c->out && c->n < c->max)
		parse_pmu(msg, &c->out[c->n]);
	c->n++;
	return NL_OK;
}

static void fill_pmu_req(struct nl_msg *msg, const void *arg)
{
	const struct kt_pmu_req *req = arg;
	struct nlattr *nest;
	int i;

	if (req->vm)
		nla_put_string(msg, KVMAI_A_PMU_VM, req->vm);
	if (req->core)
		nla_put_flag(msg, KVMAI_A_PMU_CORE);
	for (i = 0; i < (int)ARRAY_SIZE(req->units) && req->units[i]; i++) {
		nest = nla_nest_start(msg, KVMAI_A_PMU_UNIT);
		nla_put_string(msg, KVMAI_A_UNIT_NAME, req->units[i]);
		nla_nest_end(msg, nest);
	}
	if (req->cpus)
		nla_put_string(msg, KVMAI_A_PMU_CPUS, req->cpus);
	if (req->shared)
		nla_put_flag(msg, KVMAI_A_PMU_SHARED);
	if (req->pid)
		nla_put_u32(msg, KVMAI_A_PMU_PID, req->pid);
	if (req->bind_socket)
		nla_put_flag(msg, KVMAI_A_PMU_BIND_SOCKET);
}

int _test_cmd_pmu_dump(struct kt_nl *nl, const struct kt_pmu_req *req,
		       struct kt_pmu *out, int max, int *n)
{
	struct pmu_ctx c = { .out = out, .max = max };
	int ret;

	ret = kt_nl_exchange(nl, req->cmd, req->dump, fill_pmu_req, req, on_pmu, &c);
	if (!ret && n)
		*n = c.n;
	return ret;
}

int _test_cmd_pmu(struct kt_nl *nl, const struct kt_pmu_req *req, struct kt_pmu *out)
{
	return _test_cmd_pmu_dump(nl, req, out, out ? 1 : 0, NULL);
}

static int on_host(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gnlh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *a, *tb[KVMAI_A_CONFLICT_MAX + 1];
	struct kt_pmu_host *h = arg;
	struct kt_conflict *c;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(gnlh, 0), genlmsg_attrlen(gnlh, 0), rem) {
		switch (nla_type(a)) {
		case KVMAI_A_PMU_HOST_CORE_CAPABLE:
			h->core_capable = true;
			break;
		case KVMAI_A_PMU_HOST_CORE_FENCES:
			h->fences = nla_get_u32(a);
			h->has_core_info = true;
			break;
		case KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS:
			h->include_guest = nla_get_u32(a);
			break;
		case KVMAI_A_PMU_HOST_CONFLICT:
			if (h->nconflicts == 8 ||
			    nla_parse_nested(tb, KVMAI_A_CONFLICT_MAX, a, NULL))
				break;
			c = &h->conflicts[h->nconflicts++];
			kt_nla_str(c->pmu, sizeof(c->pmu), tb[KVMAI_A_CONFLICT_PMU]);
			kt_nla_str(c->comm, sizeof(c->comm), tb[KVMAI_A_CONFLICT_COMM]);
			c->cpu = kt_nla_u32(tb[KVMAI_A_CONFLICT_CPU]);
			c->pid = kt_nla_u32(tb[KVMAI_A_CONFLICT_PID]);
			if (tb[KVMAI_A_CONFLICT_CONFIG])
				c->config = nla_get_u64(tb[KVMAI_A_CONFLICT_CONFIG]);
			break;
		case KVMAI_A_PMU_HOST_UNIT:
			if (h->nunits < (int)ARRAY_SIZE(h->units))
				parse_unit(&h->units[h->nunits++], a);
			break;
		}
	}
	return NL_OK;
}

int _test_cmd_pmu_host(struct kt_nl *nl, struct kt_pmu_host *out)
{
	memset(out, 0, sizeof(*out));
	return kt_nl_exchange(nl, KVMAI_CMD_PMU_HOST_GET, false, NULL, NULL, on_host, out);
}

static int on_ntf(struct nl_msg *msg, void *arg)
{
	struct genlmsghdr *gnlh = nlmsg_data(nlmsg_hdr(msg));

	/* Group notifications share the monitor group; skip them. */
	if (gnlh->cmd == KVMAI_CMD_PMU_CHANGE_NTF)
		return on_pmu(msg, arg);
	return NL_OK;
}

int kt_nl_receive_pmu(struct kt_nl *nl, struct kt_pmu *out, int timeout_ms)
{
	struct pmu_ctx c = { .out = out, .max = 1 };
	int ret;

	while (!c.n) {
		ret = kt_nl_poll(nl, on_ntf, &c, timeout_ms);
		if (ret <= 0)
			return ret;
	}
	return 1;
}

int kt_perf_type(const char *pmu)
{
	char path[128];
	int type, ok;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	ok = fscanf(f, "%d", &type) == 1;
	fclose(f);
	return ok ? type : -EINVAL;
}

int kt_perf_open(const char *pmu, int cpu, bool exclude_guest)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	int type = kt_perf_type(pmu), fd;

	if (type < 0)
		return type;
	attr.type = type;
	attr.exclude_guest = exclude_guest;
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);
	return fd < 0 ? -errno : fd;
}

int kt_perf_try(const char *pmu, int cpu, bool exclude_guest)
{
	int fd = kt_perf_open(pmu, cpu, exclude_guest);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int kt_mock_pmu_reg(const char *unit, unsigned int pkg, __u32 msr, __u64 *val, long *writes)
{
	unsigned long long v;
	unsigned int p, m;
	char path[128], line[128];
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvmai_mock_pmu/%s", unit);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "writes %ld", writes) == 1)
			continue;
		if (sscanf(line, "%u %x %llx", &p, &m, &v) == 3 && p == pkg && m == msr) {
			*val = v;
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

#define MOCK_SCRUB_PROBE "/sys/kernel/debug/kvmai_mock_pmu/scrub_probe"

int kt_mock_scrub_probe(bool on)
{
	return kt_sysfs_write(MOCK_SCRUB_PROBE, on ? "1\n" : "0\n");
}

int kt_mock_drop_fences(void)
{
	return kt_sysfs_write("/sys/kernel/debug/kvmai_mock_pmu/drop_fences", "1\n");
}

int kt_mock_scrub_probed(int *opened, int *refused)
{
	char buf[64];
	long n = kt_file_read(MOCK_SCRUB_PROBE, buf, sizeof(buf));

	if (n < 0)
		return -ENOENT;
	return sscanf(buf, "opened %d refused %d", opened, refused) == 2 ? 0 : -EINVAL;
}
