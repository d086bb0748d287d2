// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may reach kvmai, and with what.  Tenants and containers on the host
 * are not trusted, even with CAP_NET_ADMIN: every operation but status-get
 * needs CAP_SYS_ADMIN in the initial user namespace, other network
 * namespaces do not see the family, the monitor group is for admins only,
 * names are printable and bounded in number, and once module unload has
 * started no request runs.
 */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/group.h"
#include "lib/pmu.h"

/*
 * Become uid/gid 65534 holding only the capabilities in @caps (a mask of
 * CAP_* bits), as a container given --cap-add does; first move to a new
 * network namespace if @new_netns.  For good: call it in a child.
 */
static int drop_to(__u64 caps, bool new_netns)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (new_netns && unshare(CLONE_NEWNET))
		return -errno;
	if (prctl(PR_SET_KEEPCAPS, 1) || setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return -errno;
	data[0].effective = (__u32)caps;
	data[0].permitted = (__u32)caps;
	data[1].effective = (__u32)(caps >> 32);
	data[1].permitted = (__u32)(caps >> 32);
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

struct dropped {
	__u64 caps;
	bool new_netns;
	int (*body)(void *arg);
	void *arg;
};

static int dropped_body(void *arg)
{
	struct dropped *d = arg;

	if (drop_to(d->caps, d->new_netns))
		return 100;
	return d->body(d->arg);
}

/* Runs @body in a child that dropped to @caps; returns its exit code. */
static int as_child(__u64 caps, bool new_netns, int (*body)(void *arg), void *arg)
{
	struct dropped d = { .caps = caps, .new_netns = new_netns, .body = body, .arg = arg };

	return kt_child(dropped_body, &d);
}

#define NET_ADMIN BIT_ULL(CAP_NET_ADMIN)

FIXTURE(iso) {
	struct kt_nl nl;
};

FIXTURE_SETUP(iso)
{
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
}

FIXTURE_TEARDOWN(iso)
{
	if (self->nl.sk)
		kt_nl_close(&self->nl);
	/* Unloading deletes whatever a case left behind. */
	_test_cmd_mod_unload(KT_MOD_KVMAI);
}

static int new_group(struct kt_nl *nl, const char *name, const char *vm)
{
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_NEW, .name = name, .vm = vm };

	return _test_cmd_group(nl, &r, NULL);
}

/* Every mutation a container could try; each must be refused. */
static int try_mutations(void *arg)
{
	struct kt_req nw = { .cmd = KVMAI_CMD_GROUP_NEW, .name = "evil", .vm = "vm" };
	struct kt_req set = { .cmd = KVMAI_CMD_GROUP_SET, .name = "victim",
			      .state = KVMAI_STATE_ENABLED };
	struct kt_req del = { .cmd = KVMAI_CMD_GROUP_DEL, .name = "victim" };
	struct kt_pmu_req as = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "evil", .core = true };
	struct kt_nl nl;

	if (kt_nl_open(&nl))
		return 1;
	if (_test_cmd_group(&nl, &nw, NULL) != -EPERM)
		return 2;
	if (_test_cmd_group(&nl, &set, NULL) != -EPERM)
		return 3;
	if (_test_cmd_group(&nl, &del, NULL) != -EPERM)
		return 4;
	if (_test_cmd_pmu(&nl, &as, NULL) != -EPERM)
		return 5;
	return 0;
}

/* --cap-add NET_ADMIN in the host's network namespace is not enough. */
TEST_F(iso, net_admin_cannot_mutate)
{
	struct kt_req get = { .cmd = KVMAI_CMD_GROUP_GET, .name = "victim" };
	struct kt_req evil = { .cmd = KVMAI_CMD_GROUP_GET, .name = "evil" };
	struct kt_group g;

	ASSERT_EQ(0, new_group(&self->nl, "victim", "vm1")) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, as_child(NET_ADMIN, false, try_mutations, NULL))
		TH_LOG("step that was not refused: see try_mutations()");
	test_cmd_group(&get, &g);
	EXPECT_EQ(KVMAI_STATE_DISABLED, g.state);
	test_err_group(ENOENT, &evil, &g)
		TH_LOG("group 'evil' was created by the container");
}

static int reach_family(void *arg)
{
	struct kt_nl nl;
	int ret = kt_nl_open(&nl);

	if (ret)
		return ret == -ENOENT ? 0 : 1;
	/* Visible: then it must at least refuse. */
	return try_mutations(NULL) ? 2 : 3;
}

/* A container's own network namespace does not even see the family. */
TEST_F(iso, other_netns_cannot_reach_the_family)
{
	EXPECT_EQ(0, as_child(NET_ADMIN, true, reach_family, NULL))
		TH_LOG("1: lookup failed oddly, 2: visible and a mutation went through, %s",
		       "3: visible (refused, but the family must not serve other namespaces)");
}

/* What a reader without CAP_SYS_ADMIN gets: status-get only. */
static int try_reads(void *arg)
{
	struct kt_req get = { .cmd = KVMAI_CMD_GROUP_GET, .name = "victim" };
	struct kt_req dump = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
	struct kt_pmu_req pget = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	struct kt_status st;
	struct kt_pmu_host h;
	struct kt_group g[4];
	struct kt_nl nl;
	int n = 0, grp;

	if (kt_nl_open(&nl))
		return 1;
	if (_test_cmd_status_get(&nl, &st))
		return 2;
	if (_test_cmd_group(&nl, &get, g) != -EPERM)
		return 3;
	if (_test_cmd_group_dump(&nl, &dump, g, 4, &n) != -EPERM || n)
		return 4;
	if (_test_cmd_pmu(&nl, &pget, NULL) != -EPERM)
		return 5;
	if (_test_cmd_pmu_host(&nl, &h) != -EPERM)
		return 6;
	grp = genl_ctrl_resolve_grp(nl.sk, KVMAI_FAMILY_NAME, "monitor");
	if (grp < 0)
		return 7;
	if (!nl_socket_add_membership(nl.sk, grp))
		return 8;
	return 0;
}

TEST_F(iso, unprivileged_reader_gets_status_only)
{
	ASSERT_EQ(0, new_group(&self->nl, "victim", "tenant-a")) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, as_child(0, false, try_reads, NULL))
		TH_LOG("step that was not refused: see try_reads()");
}

TEST_F(iso, net_admin_reader_gets_status_only)
{
	ASSERT_EQ(0, new_group(&self->nl, "victim", "tenant-a")) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, as_child(NET_ADMIN, false, try_reads, NULL))
		TH_LOG("step that was not refused: see try_reads()");
}

/*
 * Names reach the kernel log, operators' terminals, shell completion and
 * libvirt's errors, and a tenant may choose them: letters, digits and
 * "._:@+-" only, and the refusal names the first character that is not.
 */
TEST_F(iso, names_take_only_safe_characters)
{
	static const struct {
		const char *name;
		const char *why;
	} bad[] = {
		{ "a\nb", "byte 0x0a at offset 1" },
		{ "a b", "byte 0x20 at offset 1" },
		{ "tab\tx", "byte 0x09 at offset 3" },
		{ "\x1b[2Jx", "byte 0x1b at offset 0" },
		{ "del\x7f", "byte 0x7f at offset 3" },
		{ "caf\xc3\xa9", "byte 0xc3 at offset 3" },
		{ "$(touch${IFS}pw)", "'$' at offset 0" },
		{ "x`id`", "'`' at offset 1" },
		{ "vm;reboot", "';' at offset 2" },
		{ "vm-1/x", "'/' at offset 4" },
		{ "*", "'*' at offset 0" },
	};
	struct kt_pmu_req as = { .cmd = KVMAI_CMD_PMU_ASSIGN, .core = true };

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, new_group(&self->nl, bad[i].name, "vm"))
			TH_LOG("group name %zu accepted", i);
		test_ext_has("group name");
		test_ext_has(bad[i].why);
		EXPECT_EQ(-EINVAL, new_group(&self->nl, "ok", bad[i].name))
			TH_LOG("vm name %zu accepted", i);
		test_ext_has("vm");
		test_ext_has(bad[i].why);
		as.vm = bad[i].name;
		test_err_pmu(EINVAL, &as, NULL)
			TH_LOG("pmu vm name %zu accepted", i);
		test_ext_has(bad[i].why);
	}
	EXPECT_EQ(0, new_group(&self->nl, "g-1.a_b:c", "vm-1@host+2")) TH_LOG("%s", self->nl.ext);
}

/* Lookups refuse such names too, and never echo their bytes back. */
TEST_F(iso, lookups_do_not_echo_unprintable_names)
{
	static const char *const bad[] = { "a\nb", "\x1b[2Jx", "del\x7f" };
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE };

	ASSERT_EQ(0, new_group(&self->nl, "ok", "vm"));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct kt_req get = { .cmd = KVMAI_CMD_GROUP_GET, .name = bad[i] };
		struct kt_req add = { .cmd = KVMAI_CMD_DEV_ADD, .name = "ok", .pci = bad[i] };

		test_err_group(EINVAL, &get, NULL)
			TH_LOG("group-get of name %zu", i);
		EXPECT_EQ(NULL, strstr(self->nl.ext, bad[i])) TH_LOG("extack echoes name %zu", i);
		test_err_group(EINVAL, &add, NULL)
			TH_LOG("dev-add of PCI address %zu", i);
		EXPECT_EQ(NULL, strstr(self->nl.ext, bad[i]))
			TH_LOG("extack echoes address %zu", i);
		rel.vm = bad[i];
		test_err_pmu(EINVAL, &rel, NULL)
			TH_LOG("pmu-release of vm %zu", i);
		EXPECT_EQ(NULL, strstr(self->nl.ext, bad[i])) TH_LOG("extack echoes vm %zu", i);
	}
}

/* One admin cannot make the module hold without bound. */
TEST_F(iso, group_count_is_capped)
{
	char name[32];
	int i, ret = 0;

	for (i = 0; i < KVMAI_MAX_GROUPS + 1; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		ret = new_group(&self->nl, name, "vm");
		if (ret)
			break;
	}
	EXPECT_EQ(KVMAI_MAX_GROUPS, i);
	EXPECT_EQ(-ENOSPC, ret);
	test_ext_has("256");
	/* Deleting one makes room for one. */
	{
		struct kt_req del = { .cmd = KVMAI_CMD_GROUP_DEL, .name = "g7" };

		test_cmd_group(&del, NULL);
	}
	EXPECT_EQ(0, new_group(&self->nl, "again", "vm")) TH_LOG("%s", self->nl.ext);
}

/* The same for PMU records: core ownership is not exclusive, so many VMs can. */
TEST_F(iso, pmu_vm_count_is_capped)
{
	struct kt_pmu_req as = { .cmd = KVMAI_CMD_PMU_ASSIGN, .core = true };
	struct kt_status st;
	char vm[32];
	int i, ret = 0;

	test_cmd_status_get(&st);
	if (!(st.features & KVMAI_FEATURE_CORE_FENCE))
		SKIP(return, "kernel without the KVM core PMU fence");
	if (_test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL))
		SKIP(return, "no mock PMU provider (%s)", KT_MOCK_PMU_PATH);
	for (i = 0; i < KVMAI_MAX_PMU_VMS + 1; i++) {
		snprintf(vm, sizeof(vm), "p%d", i);
		as.vm = vm;
		ret = _test_cmd_pmu(&self->nl, &as, NULL);
		if (ret)
			break;
	}
	EXPECT_EQ(KVMAI_MAX_PMU_VMS, i) TH_LOG("stopped with %d: %s", ret, self->nl.ext);
	EXPECT_EQ(-ENOSPC, ret);
	test_ext_has("256");
	test_cmd_mod_unload(KT_MOD_KVMAI);
	_test_cmd_mod_unload(KT_MOD_MOCK_PMU);
}

#define UNLOAD_DELAY "/sys/module/kvmai/parameters/unload_delay_ms"

/*
 * A request sent while the module is being unloaded must not run: here a
 * pmu-assign of the mock unit during a widened unload window.  Had it run
 * after kvmai released everything, the reservation would outlive the module.
 */
TEST_F(iso, no_request_runs_once_unload_started)
{
	struct kt_pmu_req as = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "late",
				 .units = { KT_MOCK_L3 }, .cpus = "0-3" };
	int status, ret;
	pid_t pid;
	FILE *f;

	if (_test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL))
		SKIP(return, "no mock PMU provider (%s)", KT_MOCK_PMU_PATH);
	f = fopen(UNLOAD_DELAY, "w");
	ASSERT_NE(NULL, f) TH_LOG("kvmai.ko not built with KVMAI_TEST=y");
	fprintf(f, "3000\n");
	fclose(f);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(_test_cmd_mod_unload(KT_MOD_KVMAI) ? 1 : 0);
	usleep(1000 * 1000);
	ret = _test_cmd_pmu(&self->nl, &as, NULL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_NE(0, ret) TH_LOG("pmu-assign ran during module unload");
	/* Nothing of kvmai holds the unit: the host can count on it again. */
	EXPECT_EQ(0, kt_perf_try(KT_MOCK_L3, 0, false));
	_test_cmd_mod_unload(KT_MOD_MOCK_PMU);
}

TEST_HARNESS_MAIN
