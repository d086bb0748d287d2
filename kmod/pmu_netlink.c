// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - generic netlink handlers for PMU ownership (pmu-* operations).
 */
#include <linux/cpumask.h>
#include <linux/pid.h>
#include <net/genetlink.h>

#include <asm/uncore_guest.h>

#include "kvmai.h"
#include "kvmai_nl.h"
#include "netlink.h"
#include "netlink_priv.h"
#include "pmu.h"

#ifdef KVMAI_HAVE_PERF_GUEST_OWNER
#include <linux/perf/guest_owner.h>
#endif

static int kvmai_fill_ranges(struct sk_buff *msg, struct uncore_guest_res *res)
{
	const struct uncore_guest_msr_range *r;
	struct nlattr *nest;
	int i, n;

	n = uncore_guest_res_ranges(res, &r);
	if (nla_put_u32(msg, KVMAI_A_UNIT_MSR_RANGES, n))
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		nest = nla_nest_start(msg, KVMAI_A_UNIT_MSR);
		if (!nest ||
		    nla_put_u32(msg, KVMAI_A_MSR_RANGE_BASE, r[i].base) ||
		    nla_put_u32(msg, KVMAI_A_MSR_RANGE_COUNT, r[i].nr) ||
		    ((r[i].flags & UNCORE_GUEST_MSR_READ) &&
		     nla_put_flag(msg, KVMAI_A_MSR_RANGE_READ)) ||
		    ((r[i].flags & UNCORE_GUEST_MSR_WRITE) &&
		     (nla_put_flag(msg, KVMAI_A_MSR_RANGE_WRITE) ||
		      nla_put_u64_64bit(msg, KVMAI_A_MSR_RANGE_WRITE_MASK, r[i].write_mask,
					KVMAI_A_MSR_RANGE_PAD))))
			return -EMSGSIZE;
		nla_nest_end(msg, nest);
	}
	return 0;
}

/* The registry's scope as the UAPI says it. */
static u32 kvmai_scope(enum uncore_guest_scope scope)
{
	switch (scope) {
	case UNCORE_GUEST_SCOPE_DIE:
		return KVMAI_SCOPE_DIE;
	case UNCORE_GUEST_SCOPE_LLC:
		return KVMAI_SCOPE_LLC;
	default:
		return KVMAI_SCOPE_PACKAGE;
	}
}

/* What the registry says of a unit, in both the host's and a VM's view. */
static int kvmai_put_unit_info(struct sk_buff *msg,
			       const struct uncore_guest_unit_info *u)
{
	if (nla_put_u32(msg, KVMAI_A_UNIT_TYPE, u->type) ||
	    nla_put_u32(msg, KVMAI_A_UNIT_HOST_EVENTS, u->host_events) ||
	    nla_put_u32(msg, KVMAI_A_UNIT_SCOPE, kvmai_scope(u->scope)) ||
	    (u->core_select && nla_put_flag(msg, KVMAI_A_UNIT_CORE_SELECT)))
		return -EMSGSIZE;
	return 0;
}

/* The registry's view of one unit, found by name. */
struct kvmai_unit_lookup {
	const char *name;
	struct uncore_guest_unit_info info;
};

static int kvmai_unit_match(const struct uncore_guest_unit_info *u, void *data)
{
	struct kvmai_unit_lookup *l = data;

	if (strcmp(u->name, l->name))
		return 0;
	l->info = *u;
	return 1;
}

static int kvmai_fill_unit(struct sk_buff *msg, struct kvmai_pmu_unit *unit)
{
	struct kvmai_unit_lookup l = { .name = unit->name };
	struct nlattr *nest = nla_nest_start(msg, KVMAI_A_PMU_UNIT);
	unsigned int pkg;

	if (!nest || nla_put_string(msg, KVMAI_A_UNIT_NAME, unit->name))
		return -EMSGSIZE;
	/* A revoked unit is no longer in the registry: no type then. */
	if (uncore_guest_list_units(kvmai_unit_match, &l) == 1 &&
	    kvmai_put_unit_info(msg, &l.info))
		return -EMSGSIZE;
	if (kvmai_fill_ranges(msg, unit->res))
		return -EMSGSIZE;
	for (pkg = 0; pkg < topology_max_packages(); pkg++)
		if (uncore_guest_res_pkg_offline(unit->res, pkg) &&
		    nla_put_u32(msg, KVMAI_A_UNIT_OFFLINE_PACKAGE, pkg))
			return -EMSGSIZE;
	if (nla_put_u32(msg, KVMAI_A_UNIT_HOTPLUG_SCRUBS,
			uncore_guest_res_hotplug_scrubs(unit->res)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

static int kvmai_fill_pmu(struct sk_buff *msg, struct kvmai_pmu_vm *pvm)
{
	struct kvmai_pmu_unit *unit;
	char cpus[KVMAI_CPUS_LEN];
	unsigned int cpu, pkg;

	if (nla_put_string(msg, KVMAI_A_PMU_VM, pvm->vm) ||
	    (kvmai_pmu_owns_core(pvm) && nla_put_flag(msg, KVMAI_A_PMU_CORE)) ||
	    (pvm->shared && nla_put_flag(msg, KVMAI_A_PMU_SHARED)) ||
	    (pvm->owner_portid && nla_put_flag(msg, KVMAI_A_PMU_BIND_SOCKET)) ||
	    (pvm->pid && nla_put_u32(msg, KVMAI_A_PMU_PID, pid_vnr(pvm->pid))))
		return -EMSGSIZE;
	if (pvm->has_cpus) {
		scnprintf(cpus, sizeof(cpus), "%*pbl", cpumask_pr_args(pvm->cpus));
		if (nla_put_string(msg, KVMAI_A_PMU_CPUS, cpus))
			return -EMSGSIZE;
		/* Each package once, however its CPUs are numbered. */
		for (pkg = 0; pkg < topology_max_packages(); pkg++) {
			for_each_cpu(cpu, pvm->cpus) {
				if (topology_logical_package_id(cpu) != pkg)
					continue;
				if (nla_put_u32(msg, KVMAI_A_PMU_PACKAGE, pkg))
					return -EMSGSIZE;
				break;
			}
		}
	}
	list_for_each_entry(unit, &pvm->units, node)
		if (kvmai_fill_unit(msg, unit))
			return -EMSGSIZE;
	return 0;
}

/* Room for KVMAI_PMU_MAX_UNITS units with the ranges of AMD's DF. */
#define KVMAI_PMU_MSG_SIZE (64 * 1024)

static int kvmai_fill_pmu_obj(struct sk_buff *msg, void *pvm)
{
	return kvmai_fill_pmu(msg, pvm);
}

void kvmai_pmu_change_ntf(struct kvmai_pmu_vm *pvm)
{
	lockdep_assert_held(&kvmai_lock);
	kvmai_multicast(kvmai_msg(KVMAI_PMU_MSG_SIZE, 0, 0, KVMAI_CMD_PMU_CHANGE_NTF,
				  kvmai_fill_pmu_obj, pvm));
}

static int kvmai_reply_pmu(struct kvmai_pmu_vm *pvm, struct genl_info *info)
{
	struct sk_buff *msg = kvmai_msg(KVMAI_PMU_MSG_SIZE, info->snd_portid, info->snd_seq,
					info->genlhdr->cmd, kvmai_fill_pmu_obj, pvm);

	return msg ? genlmsg_reply(msg, info) : -ENOMEM;
}

static int kvmai_fill_host_unit(const struct uncore_guest_unit_info *u, void *data)
{
	struct sk_buff *msg = data;
	const char *owner = kvmai_pmu_unit_owner(u->name);
	struct nlattr *nest = nla_nest_start(msg, KVMAI_A_PMU_HOST_UNIT);

	if (!nest ||
	    nla_put_string(msg, KVMAI_A_UNIT_NAME, u->name) ||
	    nla_put_u32(msg, KVMAI_A_UNIT_MSR_RANGES, u->nr_ranges) ||
	    kvmai_put_unit_info(msg, u) ||
	    (owner && nla_put_string(msg, KVMAI_A_UNIT_VM, owner)))
		return -EMSGSIZE;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * pmu-host-get's core PMU part, as perf sees it (kernels with the kvm-ai
 * series): whether VMs can have it, the fences held, and the host events
 * that count in guests.
 */
#ifdef KVMAI_HAVE_PERF_GUEST_OWNER
static int kvmai_fill_conflict(const struct perf_guest_conflict *c, void *data)
{
	struct sk_buff *msg = data;
	struct nlattr *nest = nla_nest_start(msg, KVMAI_A_PMU_HOST_CONFLICT);

	/*
	 * Full (the NMI watchdog on a very large host): the list stops, the
	 * count of include-guest events still tells how many there are.
	 */
	if (!nest)
		return 1;
	if (nla_put_string(msg, KVMAI_A_CONFLICT_PMU, c->pmu) ||
	    nla_put_u32(msg, KVMAI_A_CONFLICT_CPU, c->cpu) ||
	    nla_put_u32(msg, KVMAI_A_CONFLICT_PID, c->pid) ||
	    nla_put_string(msg, KVMAI_A_CONFLICT_COMM, c->comm) ||
	    nla_put_u64_64bit(msg, KVMAI_A_CONFLICT_CONFIG, c->config, KVMAI_A_CONFLICT_PAD)) {
		nla_nest_cancel(msg, nest);
		return 1;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int kvmai_fill_core(struct sk_buff *msg)
{
	struct perf_guest_core_info info;
	int ret;

	perf_guest_core_info(&info);
	if ((info.capable && nla_put_flag(msg, KVMAI_A_PMU_HOST_CORE_CAPABLE)) ||
	    nla_put_u32(msg, KVMAI_A_PMU_HOST_CORE_FENCES, info.nr_fences) ||
	    nla_put_u32(msg, KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS,
			info.nr_include_guest_events))
		return -EMSGSIZE;
	ret = perf_guest_core_for_each_conflict(kvmai_fill_conflict, msg);
	return ret < 0 ? ret : 0;
}
#else
/* Nothing known: the attributes are left out rather than made up. */
static int kvmai_fill_core(struct sk_buff *msg)
{
	return 0;
}
#endif

int kvmai_nl_pmu_host_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int ret;

	msg = genlmsg_new(KVMAI_PMU_MSG_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	/* Units first: the conflict list is what stops short on a huge host. */
	scoped_guard(mutex, &kvmai_lock) {
		ret = uncore_guest_list_units(kvmai_fill_host_unit, msg);
		if (!ret)
			ret = kvmai_fill_core(msg);
	}
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static struct kvmai_pmu_vm *kvmai_pmu_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[KVMAI_A_PMU_VM];
	struct kvmai_pmu_vm *pvm;

	if (kvmai_missing(info, KVMAI_A_PMU_VM, "VM identifier") ||
	    kvmai_bad_name(info, KVMAI_A_PMU_VM, "vm"))
		return ERR_PTR(-EINVAL);
	pvm = kvmai_pmu_vm_find(nla_data(attr));
	if (!pvm) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "vm %s owns no PMU resources",
					(char *)nla_data(attr));
		return ERR_PTR(-ENOENT);
	}
	return pvm;
}

int kvmai_nl_pmu_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kvmai_pmu_vm *pvm;

	guard(mutex)(&kvmai_lock);
	pvm = kvmai_pmu_lookup(info);
	if (IS_ERR(pvm))
		return PTR_ERR(pvm);
	return kvmai_reply_pmu(pvm, info);
}

int kvmai_nl_pmu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct kvmai_pmu_vm *pvm = NULL;
	long i = 0;
	void *hdr;

	guard(mutex)(&kvmai_lock);
	while ((pvm = kvmai_pmu_vm_next(pvm))) {
		if (i++ < cb->args[0])
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &kvmai_nl_family, NLM_F_MULTI, KVMAI_CMD_PMU_GET);
		if (!hdr)
			return skb->len;
		if (kvmai_fill_pmu(skb, pvm)) {
			genlmsg_cancel(skb, hdr);
			/* Not even alone: say so rather than end the dump early. */
			return skb->len ?: -EMSGSIZE;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = i;
	}
	return skb->len;
}

/* Unit names from the request's unit nests into @names; count or -errno. */
static int kvmai_pmu_units(struct genl_info *info, const char **names)
{
	struct nlattr *nest, *tb[KVMAI_A_UNIT_MAX + 1];
	int rem, n = 0, ret;

	nlmsg_for_each_attr_type(nest, KVMAI_A_PMU_UNIT, info->nlhdr, GENL_HDRLEN, rem) {
		ret = nla_parse_nested(tb, KVMAI_A_UNIT_MAX, nest, kvmai_unit_nl_policy,
				       info->extack);
		if (ret)
			return ret;
		if (!tb[KVMAI_A_UNIT_NAME] || !*(char *)nla_data(tb[KVMAI_A_UNIT_NAME])) {
			NL_SET_ERR_MSG_ATTR(info->extack, nest, "unit without a name");
			return -EINVAL;
		}
		if (n == KVMAI_PMU_MAX_UNITS) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, nest, "more than %d units",
						KVMAI_PMU_MAX_UNITS);
			return -E2BIG;
		}
		names[n++] = nla_data(tb[KVMAI_A_UNIT_NAME]);
	}
	return n;
}

static int kvmai_pmu_req_parse(struct genl_info *info, struct kvmai_pmu_req *req,
			       struct cpumask *cpus)
{
	struct nlattr *attr;
	int ret;

	if (kvmai_missing(info, KVMAI_A_PMU_VM, "VM identifier"))
		return -EINVAL;
	if (kvmai_bad_name(info, KVMAI_A_PMU_VM, "vm"))
		return -EINVAL;
	req->vm = nla_data(info->attrs[KVMAI_A_PMU_VM]);
	req->core = nla_get_flag(info->attrs[KVMAI_A_PMU_CORE]);
	req->shared = nla_get_flag(info->attrs[KVMAI_A_PMU_SHARED]);
	ret = kvmai_pmu_units(info, req->units);
	if (ret < 0)
		return ret;
	req->nr_units = ret;

	attr = info->attrs[KVMAI_A_PMU_CPUS];
	if (attr) {
		ret = cpulist_parse(nla_data(attr), cpus);
		if (ret || cpumask_empty(cpus)) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "cpus: bad CPU list \"%s\"",
						(char *)nla_data(attr));
			return -EINVAL;
		}
		req->cpus = cpus;
		req->has_cpus = true;
	}
	return 0;
}

int kvmai_nl_pmu_assign_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kvmai_pmu_req req = {};
	struct kvmai_pmu_vm *pvm;
	cpumask_var_t cpus;
	struct nlattr *attr;
	int ret;

	/* The uncore registry and KVM's core fence are x86's (compat.h). */
	if (!IS_ENABLED(CONFIG_X86)) {
		NL_SET_ERR_MSG(info->extack, "PMU ownership is for x86 hosts only");
		return -EOPNOTSUPP;
	}
	if (!zalloc_cpumask_var(&cpus, GFP_KERNEL))
		return -ENOMEM;
	ret = kvmai_pmu_req_parse(info, &req, cpus);
	if (ret)
		goto out;

	attr = info->attrs[KVMAI_A_PMU_PID];
	if (attr) {
		req.pid = find_get_pid(nla_get_u32(attr));
		if (!req.pid) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "pid %u: no such process",
						nla_get_u32(attr));
			ret = -ESRCH;
			goto out;
		}
		req.pid_given = true;
	} else {
		req.pid = get_pid(task_tgid(current));
	}
	if (nla_get_flag(info->attrs[KVMAI_A_PMU_BIND_SOCKET])) {
		req.owner_portid = info->snd_portid;
		write_pnet(&req.owner_net, genl_info_net(info));
	}

	scoped_guard(mutex, &kvmai_lock) {
		pvm = kvmai_pmu_assign(&req, info->extack);
		ret = IS_ERR(pvm) ? PTR_ERR(pvm) : kvmai_reply_pmu(pvm, info);
	}
	put_pid(req.pid);
out:
	free_cpumask_var(cpus);
	return ret;
}

int kvmai_nl_pmu_release_doit(struct sk_buff *skb, struct genl_info *info)
{
	const char *units[KVMAI_PMU_MAX_UNITS];
	struct kvmai_pmu_vm *pvm;
	int n;

	n = kvmai_pmu_units(info, units);
	if (n < 0)
		return n;

	guard(mutex)(&kvmai_lock);
	pvm = kvmai_pmu_lookup(info);
	if (IS_ERR(pvm))
		return PTR_ERR(pvm);
	return kvmai_pmu_release(pvm, nla_get_flag(info->attrs[KVMAI_A_PMU_CORE]), units, n,
				 info->extack);
}
