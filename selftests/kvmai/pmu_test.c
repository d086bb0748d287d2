// SPDX-License-Identifier: GPL-2.0-only
/*
 * PMU ownership in the emulated host: the test-only mock provider
 * (kmod/testing) plays the uncore drivers, so every decision kvmai takes is
 * checked end to end, including against the host's own perf events:
 * whole-package assignment, refusals (package not owned, unknown unit,
 * unit already owned, host events open), release by request, by owner exit,
 * by the provider going away and by rmmod, notifications, an owned
 * package's CPUs going offline and back, and the core PMU on kernels with
 * the series' KVM fence.  The emulated host's KVM has no mediated vPMU, so
 * KVM refuses the core fence there (checked); the mock's own fence stands
 * in for KVM's while the mock is loaded (kmod/testing/test.c), and the KVM fence
 * itself is checked where KVM has a mediated vPMU (core_kvm_fence_*).
 * And that a unit is closed to the host from the start of its release to
 * the end of its scrub, and counts host events from before its PMU shows.
 * And what 'kvmaictl pmu exec' starts a VMM with: the reservation's handle,
 * as the user it is told, without a capability (exec_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"

#define L3 "mock_uncore_l3"
#define DF "mock_uncore_df"
#define KVMAICTL "/kvmai/bin/kvmaictl"
#define EXEC_ERR "/tmp/pmu-exec.err"

FIXTURE(pmu) {
	struct kt_nl nl;
	char pkg0[64], pkg1[64];
	int pkg0_n, pkg1_n;
	int fds[8];
	int nfds;
	char offline[64];	/* CPUs a test took offline, to bring back */
};

static int set_cpu_online(int cpu, void *on)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return kt_sysfs_write(path, *(int *)on ? "1\n" : "0\n");
}

/* Writes @on to the online file of every CPU in @list ("1", "1-2,4"). */
static int set_cpus_online(const char *list, int on)
{
	return kt_cpulist_each(list, set_cpu_online, &on);
}

FIXTURE_SETUP(pmu)
{
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL) TH_LOG("cannot insmod %s", KT_MOCK_PMU_PATH);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	self->pkg0_n = kt_cpu_package(0, self->pkg0, sizeof(self->pkg0));
	ASSERT_GT(self->pkg0_n, 0);
	/* CPUs are numbered package by package in the emulated host. */
	self->pkg1_n = kt_cpu_package(self->pkg0_n, self->pkg1, sizeof(self->pkg1));
}

FIXTURE_TEARDOWN(pmu)
{
	struct kt_pmu_req dump = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	struct kt_pmu vms[8];
	int i, n = 0;

	for (i = 0; i < self->nfds; i++)
		close(self->fds[i]);
	kt_mock_scrub_probe(false);
	if (!self->nl.sk)
		goto online;
	/* Whatever a test left behind goes; then nothing may stay reserved. */
	if (kt_mod_loaded(KT_MOD_KVMAI) &&
	    !_test_cmd_pmu_dump(&self->nl, &dump, vms, 8, &n)) {
		for (i = 0; i < n && i < 8; i++) {
			struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = vms[i].vm };

			_test_cmd_pmu(&self->nl, &rel, NULL);
		}
	}
	i = kt_perf_try(L3, 0, false);
	EXPECT_EQ(0, i) TH_LOG(L3 " still fenced off the host after the test: %d", i);
	kt_nl_close(&self->nl);
online:
	/* After the releases: a core-select unit's owner keeps CPUs out. */
	if (self->offline[0])
		EXPECT_EQ(0, set_cpus_online(self->offline, 1))
			TH_LOG("CPUs %s stay offline", self->offline);
}

static int assign(struct __test_metadata *_metadata, struct _test_data_pmu *self,
		  const struct kt_pmu_req *in, struct kt_pmu *out)
{
	struct kt_pmu_req req = *in;

	req.cmd = KVMAI_CMD_PMU_ASSIGN;
	return _test_cmd_pmu(&self->nl, &req, out);
}

static int get_vm(struct _test_data_pmu *self, const char *vm, struct kt_pmu *out)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_GET, .vm = vm };

	return _test_cmd_pmu(&self->nl, &req, out);
}

static int release(struct _test_data_pmu *self, const char *vm, bool core, const char *unit)
{
	struct kt_pmu_req req = {
		.cmd = KVMAI_CMD_PMU_RELEASE, .vm = vm, .core = core, .units = { unit },
	};

	return _test_cmd_pmu(&self->nl, &req, NULL);
}

static const struct kt_unit *host_unit(const struct kt_pmu_host *h, const char *name)
{
	for (int i = 0; i < h->nunits; i++)
		if (!strcmp(h->units[i].name, name))
			return &h->units[i];
	return NULL;
}

TEST_F(pmu, mock_units_offered)
{
	struct kt_pmu_host h;
	const struct kt_unit *u;

	test_cmd_pmu_host(&h);
	u = host_unit(&h, L3);
	ASSERT_NE(NULL, u) TH_LOG("pmu-host-get does not list " L3);
	EXPECT_EQ(kt_perf_type(L3), (int)u->type);
	EXPECT_EQ(12, u->ranges);	/* six control/counter pairs */
	EXPECT_STREQ("", u->vm);
	EXPECT_TRUE(u->core_select);	/* as AMD's L3 from family 17h */
	EXPECT_EQ(KVMAI_SCOPE_LLC, u->scope);	/* the CPUs of an L3, as AMD's */
	u = host_unit(&h, DF);
	ASSERT_NE(NULL, u);
	EXPECT_EQ(8, u->ranges);
	EXPECT_FALSE(u->core_select);
	EXPECT_EQ(KVMAI_SCOPE_PACKAGE, u->scope);
}

TEST_F(pmu, whole_package_fences_the_host)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	const struct kt_unit *u;
	struct kt_pmu_host h;
	struct kt_pmu rec;
	int fd;

	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_STREQ("vm1", rec.vm);
	ASSERT_EQ(1, rec.nunits);
	EXPECT_STREQ(L3, rec.units[0].name);
	EXPECT_EQ(12, rec.units[0].ranges);
	EXPECT_EQ(KVMAI_SCOPE_LLC, rec.units[0].scope);
	EXPECT_EQ(12, rec.units[0].nmsr);
	EXPECT_EQ(0xc0010231, rec.units[0].counter_msr);
	EXPECT_EQ(kt_perf_type(L3), (int)rec.units[0].type);
	EXPECT_STREQ(self->pkg0, rec.cpus);
	ASSERT_EQ(1, rec.npkgs);
	EXPECT_EQ(0, rec.pkgs[0]);
	EXPECT_EQ((__u32)getpid(), rec.pid);
	EXPECT_FALSE(rec.shared);

	/* The host cannot count on the owned package... */
	EXPECT_EQ(-EBUSY, kt_perf_try(L3, 0, false));
	/* ...but still can on the other one, and on the unit nobody owns. */
	if (self->pkg1_n > 0) {
		fd = kt_perf_open(L3, self->pkg0_n, false);
		EXPECT_LE(0, fd);
		if (fd >= 0)
			self->fds[self->nfds++] = fd;
	}
	fd = kt_perf_open(DF, 0, false);
	EXPECT_LE(0, fd);
	if (fd >= 0)
		self->fds[self->nfds++] = fd;

	test_cmd_pmu_host(&h);
	u = host_unit(&h, L3);
	ASSERT_NE(NULL, u);
	EXPECT_STREQ("vm1", u->vm);
	EXPECT_EQ(self->pkg1_n > 0 ? 1 : 0, u->host_events);

	ASSERT_EQ(0, release(self, "vm1", false, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
	EXPECT_EQ(0, kt_perf_try(L3, 0, false)) TH_LOG("host still fenced off after release");
}

TEST_F(pmu, partial_package_needs_shared)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { DF }, .cpus = "0" };
	struct kt_pmu rec;

	if (self->pkg0_n < 2)
		SKIP(return, "package 0 has one CPU: every CPU list covers whole packages");
	EXPECT_EQ(-EPERM, assign(_metadata, self, &req, NULL));
	test_ext_has("package 0");
	test_ext_has("shared");
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));

	req.shared = true;
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_TRUE(rec.shared);
	EXPECT_STREQ("0", rec.cpus);
	/* The package is still the unit of fencing: the whole of it. */
	EXPECT_EQ(-EBUSY, kt_perf_try(DF, self->pkg0_n - 1, false));
}

/*
 * A unit whose controls choose the cores it counts could be pointed at
 * another tenant's cores: never to a VM that lacks some CPU of its packages,
 * shared or not.  The unit that cannot choose may go.
 */
TEST_F(pmu, core_select_unit_needs_every_cpu_of_the_package)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = "0", .shared = true };
	struct kt_pmu rec;

	if (self->pkg0_n < 2)
		SKIP(return, "package 0 has one CPU: every CPU list covers whole packages");
	EXPECT_EQ(-EACCES, assign(_metadata, self, &req, NULL));
	test_ext_has(L3);
	test_ext_has("every CPU");
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
	EXPECT_EQ(0, kt_perf_try(L3, 0, false)) TH_LOG("refused, yet the host is fenced off");

	req.units[0] = DF;
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, rec.nunits);
	EXPECT_STREQ(DF, rec.units[0].name);
	ASSERT_EQ(0, release(self, "vm1", false, NULL)) TH_LOG("%s", self->nl.ext);

	/* With every CPU of the package, it goes. */
	req.units[0] = L3;
	req.cpus = self->pkg0;
	req.shared = false;
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_STREQ(L3, rec.units[0].name);
}

/* The online state of CPU @cpu: 1, 0, or -errno. */
static int cpu_online_state(int cpu)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return kt_sysfs_read_long(path);
}

/*
 * A core-select unit given with every online CPU of its package: a CPU of
 * that package that comes online later is not the VM's, yet the unit's
 * controls could count it, so it stays offline until the unit goes.  A
 * unit without core selection does not keep it out.
 */
/*
 * A CPU left out of an owned package cannot come online while the VM owns
 * a unit there: a core-select unit could count it, and any unit sees what
 * it would do for another tenant.
 */
TEST_F(pmu, cpu_joining_an_owned_package_is_refused)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3, DF } };
	int last = self->pkg0_n - 1;
	char rest[32], one[16];
	struct kt_pmu rec;

	if (self->pkg0_n < 2 || cpu_online_state(last) != 1)
		SKIP(return, "package 0 has no second CPU that can go offline");
	snprintf(one, sizeof(one), "%d", last);
	snprintf(rest, sizeof(rest), last == 1 ? "0" : "0-%d", last - 1);
	snprintf(self->offline, sizeof(self->offline), "%s", one);
	ASSERT_EQ(0, set_cpus_online(one, 0)) TH_LOG("cannot offline CPU %s", one);

	/* Every online CPU of package 0: the L3 unit goes with them. */
	req.cpus = rest;
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(2, rec.nunits);
	EXPECT_EQ(-EBUSY, set_cpus_online(one, 1)) TH_LOG("CPU %s came online", one);
	EXPECT_EQ(0, cpu_online_state(last));

	/* The DF unit alone keeps it out too: the VM owns the whole package. */
	ASSERT_EQ(0, release(self, "vm1", false, L3)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-EBUSY, set_cpus_online(one, 1)) TH_LOG("CPU %s came online beside DF", one);
	EXPECT_EQ(0, cpu_online_state(last));
	ASSERT_EQ(0, get_vm(self, "vm1", &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, rec.nunits);
	EXPECT_STREQ(DF, rec.units[0].name);

	/* Released, the package takes its CPU back. */
	ASSERT_EQ(0, release(self, "vm1", false, DF)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, set_cpus_online(one, 1)) TH_LOG("CPU %s stays offline", one);
	self->offline[0] = '\0';
	EXPECT_EQ(1, cpu_online_state(last));
}

TEST_F(pmu, unknown_unit_refused_and_nothing_kept)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3, "uncore_nope_7" },
				  .cpus = self->pkg0 };

	EXPECT_EQ(-ENODEV, assign(_metadata, self, &req, NULL));
	test_ext_has("uncore_nope_7");
	/* All or nothing: the good unit was given back. */
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
	EXPECT_EQ(0, kt_perf_try(L3, 0, false));
}

TEST_F(pmu, unit_already_owned)
{
	struct kt_pmu_req one = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	struct kt_pmu_req two = { .vm = "vm2", .units = { L3 }, .cpus = self->pkg0 };
	struct kt_pmu_req other = { .vm = "vm2", .units = { DF }, .cpus = self->pkg0 };

	ASSERT_EQ(0, assign(_metadata, self, &one, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-EEXIST, assign(_metadata, self, &two, NULL));
	test_ext_has("vm1");
	EXPECT_EQ(-EEXIST, assign(_metadata, self, &one, NULL));
	test_ext_has("already owns");
	/* Another unit on the same package is free. */
	EXPECT_EQ(0, assign(_metadata, self, &other, NULL)) TH_LOG("%s", self->nl.ext);
	if (self->pkg1_n > 0) {
		two.cpus = self->pkg1;
		EXPECT_EQ(-EINVAL, assign(_metadata, self, &two, NULL))
			TH_LOG("vm2 has cpus %s; a different list must be refused", self->pkg0);
		two.vm = "vm3";
		EXPECT_EQ(0, assign(_metadata, self, &two, NULL)) TH_LOG("%s", self->nl.ext);
	}
}

TEST_F(pmu, vmm_pid)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0,
				  .pid = getppid() };
	struct kt_pmu rec;

	/* The VMM that may attach the units in KVM is named explicitly... */
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ((__u32)getppid(), rec.pid);
	/* ...and stays the one for every unit of the VM. */
	req.units[0] = DF;
	req.pid = getpid();
	EXPECT_EQ(-EINVAL, assign(_metadata, self, &req, NULL));
	test_ext_has("reserved for pid");
	req.pid = 0x7ffffff0;
	EXPECT_EQ(-ESRCH, assign(_metadata, self, &req, NULL));
	ASSERT_EQ(0, get_vm(self, "vm1", &rec));
	EXPECT_EQ(1, rec.nunits);
}

TEST_F(pmu, host_events_block_assignment)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	int fd = kt_perf_open(L3, 0, false);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, assign(_metadata, self, &req, NULL));
	test_ext_has("host perf events");
	close(fd);
	EXPECT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
}

/*
 * A driver offers a unit to the registry before it registers the unit's
 * PMU (the mock as the series' drivers): a host event opened as soon as the
 * PMU shows is counted, and keeps the unit from a reservation.  The mock
 * sleeps between the two steps of each unit, and the test opens its event
 * on DF as soon as it can.
 */
TEST_F(pmu, host_event_on_a_unit_coming_up_blocks_assignment)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { DF }, .cpus = self->pkg0 };
	int fd = -1, status, i;
	pid_t child;

	ASSERT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(_test_cmd_mod_load(KT_MOD_MOCK_PMU, "register_delay_ms=1500") ? 1 : 0);
	for (i = 0; i < 3000 && fd < 0; i++) {
		fd = kt_perf_open(DF, 0, false);
		if (fd < 0)
			usleep(10000);
	}
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("cannot load the mock");
	ASSERT_LE(0, fd) TH_LOG(DF " never showed: %d", fd);
	EXPECT_EQ(-EBUSY, assign(_metadata, self, &req, NULL))
		TH_LOG("reserved while a host event opened as " DF " came up counts on it");
	close(fd);
	/* The next tests get the mock without the delay. */
	EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU));
	EXPECT_EQ(0, _test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL));
}

TEST_F(pmu, bad_requests)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 } };

	EXPECT_EQ(-EINVAL, assign(_metadata, self, &req, NULL));
	test_ext_has("need cpus");
	req.cpus = "zero";
	EXPECT_EQ(-EINVAL, assign(_metadata, self, &req, NULL));
	test_ext_has("zero");
	req.cpus = "0-200";
	EXPECT_EQ(-EINVAL, assign(_metadata, self, &req, NULL));
	req.cpus = NULL;
	req.units[0] = NULL;
	EXPECT_EQ(-EINVAL, assign(_metadata, self, &req, NULL));
	test_ext_has("nothing to assign");
	EXPECT_EQ(-ENOENT, release(self, "vm-none", false, NULL));
	test_ext_has("vm-none");
}

TEST_F(pmu, release_by_unit)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3, DF }, .cpus = self->pkg0 };
	struct kt_pmu rec;

	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(2, rec.nunits);
	EXPECT_EQ(-ENOENT, release(self, "vm1", false, "mock_uncore_xx"));
	EXPECT_EQ(-ENOENT, release(self, "vm1", true, NULL));	/* core not owned */
	ASSERT_EQ(0, release(self, "vm1", false, DF)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, get_vm(self, "vm1", &rec));
	ASSERT_EQ(1, rec.nunits);
	EXPECT_STREQ(L3, rec.units[0].name);
	EXPECT_EQ(-EBUSY, kt_perf_try(L3, 0, false));
	ASSERT_EQ(0, release(self, "vm1", false, L3)) TH_LOG("%s", self->nl.ext);
	/* Owning nothing, the VM is gone. */
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
}

/*
 * Ending a reservation scrubs the unit before the host gets it back: a host
 * event let in before the scrub would have its control cleared by it and
 * never count, with nothing to tell its user.  The mock asks the registry
 * at each of its writes whether it would take a host event there now.
 */
TEST_F(pmu, release_scrubs_before_the_host_gets_the_unit_back)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { DF }, .cpus = self->pkg0 };
	int opened, refused, at_reserve;
	__u64 ctl;
	long writes;
	int fd;

	/*
	 * The registry scrubs a package from its first online CPU: on it, the
	 * scrub runs in this thread's request, where the mock can ask.
	 */
	ASSERT_EQ(0, kt_cpu_pin("0"));
	ASSERT_EQ(0, kt_mock_scrub_probe(true));
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, kt_mock_scrub_probed(&opened, &at_reserve));
	EXPECT_EQ(0, opened) TH_LOG("host events taken while a reservation starts");
	ASSERT_LT(0, at_reserve) TH_LOG("the reservation wrote nothing: no scrub to probe");

	ASSERT_EQ(0, release(self, "vm1", false, NULL)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, kt_mock_scrub_probed(&opened, &refused));
	EXPECT_EQ(0, kt_mock_scrub_probe(false));
	EXPECT_EQ(0, opened)
		TH_LOG("%d registry writes of the release's scrub found " DF " open to host events",
		       opened);
	EXPECT_LT(at_reserve, refused + opened) TH_LOG("the release wrote nothing");

	/* Once the release returned, a host event is taken and counts. */
	fd = kt_perf_open(DF, 0, false);
	ASSERT_LE(0, fd) TH_LOG("host event refused after release: %d", fd);
	self->fds[self->nfds++] = fd;
	ASSERT_EQ(0, kt_mock_pmu_reg(DF, 0, KT_MOCK_DF_CTL0, &ctl, &writes));
	EXPECT_TRUE(ctl & KT_MOCK_CTL_EN) TH_LOG("host event not programmed: 0x%llx", ctl);
}

/*
 * Intel's counters are read-only for a guest, and a scrub that cleared
 * only what the guest may write left them: the guest read what the host,
 * or the tenant before it, counted.  The mock's Intel-style unit is
 * offered as the series offers Intel's boxes; reserving it must clear the
 * count a host event left behind.
 */
TEST_F(pmu, intel_style_counters_cleared_on_reserve)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { KT_MOCK_CHA }, .cpus = self->pkg0 };
	__u64 ctr = 0, ctl = 0;
	long writes;
	int fd;

	fd = kt_perf_open(KT_MOCK_CHA, 0, false);
	ASSERT_LE(0, fd) TH_LOG("no host event on " KT_MOCK_CHA ": %d", fd);
	ASSERT_EQ(0, kt_mock_pmu_reg(KT_MOCK_CHA, 0, KT_MOCK_CHA_CTL0, &ctl, &writes));
	EXPECT_TRUE(ctl & KT_MOCK_CTL_EN) TH_LOG("the host event did not program CTL0");
	close(fd);
	ASSERT_EQ(0, kt_mock_pmu_reg(KT_MOCK_CHA, 0, KT_MOCK_CHA_CTR0, &ctr, &writes));
	ASSERT_NE(0, ctr) TH_LOG("the host event left no count");

	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, kt_mock_pmu_reg(KT_MOCK_CHA, 0, KT_MOCK_CHA_CTR0, &ctr, &writes));
	EXPECT_EQ(0, ctr) TH_LOG("the host's count 0x%llx is left for the guest", ctr);
}

TEST_F(pmu, notifications)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	struct kt_nl mon;
	struct kt_pmu ntf;

	ASSERT_EQ(0, kt_nl_monitor_open(&mon));
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, kt_nl_receive_pmu(&mon, &ntf, 2000));
	EXPECT_EQ(KVMAI_CMD_PMU_CHANGE_NTF, ntf.cmd);
	EXPECT_STREQ("vm1", ntf.vm);
	ASSERT_EQ(1, ntf.nunits);
	EXPECT_STREQ(L3, ntf.units[0].name);
	ASSERT_EQ(0, release(self, "vm1", false, NULL));
	ASSERT_EQ(1, kt_nl_receive_pmu(&mon, &ntf, 2000));
	EXPECT_STREQ("vm1", ntf.vm);
	EXPECT_EQ(0, ntf.nunits);
	EXPECT_FALSE(ntf.core);
	kt_nl_close(&mon);
}

TEST_F(pmu, owner_exit_releases)
{
	struct kt_pmu rec;
	int pipefd[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "vmm", .units = { L3 },
					  .cpus = self->pkg0, .bind_socket = true };
		struct kt_nl nl;

		if (kt_nl_open(&nl) || _test_cmd_pmu(&nl, &req, NULL))
			_exit(1);
		c = 1;
		if (write(pipefd[1], &c, 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	close(pipefd[0]);
	ASSERT_EQ(0, get_vm(self, "vmm", &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_TRUE(rec.bind_socket);
	EXPECT_EQ((__u32)pid, rec.pid);
	EXPECT_EQ(-EBUSY, kt_perf_try(L3, 0, false));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* The socket is released when the process dies. */
	for (int i = 0; i < 50 && !get_vm(self, "vmm", NULL); i++)
		usleep(100000);
	EXPECT_EQ(-ENOENT, get_vm(self, "vmm", NULL));
	EXPECT_EQ(0, kt_perf_try(L3, 0, false));
}

TEST_F(pmu, provider_unload_revokes)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3, DF }, .cpus = self->pkg0 };
	struct kt_nl mon;
	struct kt_pmu ntf, rec;

	ASSERT_EQ(0, kt_nl_monitor_open(&mon));
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, kt_nl_receive_pmu(&mon, &ntf, 2000));
	test_cmd_mod_unload(KT_MOD_MOCK_PMU) TH_LOG("rmmod kvmai_mock_pmu refused");
	/*
	 * The units' driver went away: the VM loses them, and monitors hear,
	 * once per unit or once for both, depending on when the work runs.
	 */
	do {
		ASSERT_EQ(1, kt_nl_receive_pmu(&mon, &ntf, 5000));
		EXPECT_STREQ("vm1", ntf.vm);
	} while (ntf.nunits > 0);
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", &rec));
	kt_nl_close(&mon);
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL);
}

TEST_F(pmu, rmmod_releases)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3, DF }, .cpus = self->pkg0 };
	struct kt_pmu_req dump = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	int n = -1;

	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-EBUSY, kt_perf_try(DF, 0, false));
	kt_nl_close(&self->nl);
	self->nl.sk = NULL;
	test_cmd_mod_unload(KT_MOD_KVMAI);
	EXPECT_EQ(0, kt_perf_try(DF, 0, false)) TH_LOG("rmmod kvmai left " DF " fenced");
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	ASSERT_EQ(0, _test_cmd_pmu_dump(&self->nl, &dump, NULL, 0, &n));
	EXPECT_EQ(0, n);
}

TEST_F(pmu, unprivileged_assign_refused)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "vm1",
					  .units = { L3 }, .cpus = self->pkg0 };
		struct kt_pmu_req get = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
		struct kt_pmu_host h;
		struct kt_nl nl;

		if (kt_nl_open_unprivileged(&nl))
			_exit(11);
		if (_test_cmd_pmu(&nl, &req, NULL) != -EPERM)
			_exit(12);
		/* Reads name VMM pids and host perf users: admin only too. */
		if (_test_cmd_pmu(&nl, &get, NULL) != -EPERM)
			_exit(13);
		_exit(_test_cmd_pmu_host(&nl, &h) != -EPERM ? 14 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed", WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
}

static __u64 mock_reg(const char *unit, unsigned int pkg, __u32 msr)
{
	__u64 val = ~0ULL;
	long writes;

	kt_mock_pmu_reg(unit, pkg, msr, &val, &writes);
	return val;
}

/*
 * The last CPUs of an owned package go offline and come back: the VM keeps
 * the package, pmu-get says it is offline meanwhile, and the unit is cleared
 * after the driver set it up for the host again (the mock's bring-up
 * enables pair 0 of a package that comes back, as drivers' box init does;
 * the unit nobody owns keeps that, the owned one must not).
 */
TEST_F(pmu, package_hotplug_keeps_the_reservation_and_clears_it)
{
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg1 };
	struct kt_pmu rec;
	char online[64];

	snprintf(online, sizeof(online), "/sys/devices/system/cpu/cpu%d/online", self->pkg0_n);
	if (self->pkg1_n <= 0 || access(online, W_OK))
		SKIP(return, "no second package whose CPUs can go offline");
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, rec.nunits);
	EXPECT_EQ(0, rec.units[0].offline_pkgs);
	EXPECT_EQ(0, rec.units[0].hotplug_scrubs);

	snprintf(self->offline, sizeof(self->offline), "%s", self->pkg1);
	ASSERT_EQ(0, set_cpus_online(self->pkg1, 0)) TH_LOG("cannot offline CPUs %s", self->pkg1);
	ASSERT_EQ(0, get_vm(self, "vm1", &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, rec.nunits) TH_LOG("the reservation went with the package's CPUs");
	EXPECT_EQ(1u << 1, rec.units[0].offline_pkgs) TH_LOG("package 1 not reported offline");
	EXPECT_EQ(0, rec.units[0].hotplug_scrubs);

	ASSERT_EQ(0, set_cpus_online(self->pkg1, 1));
	self->offline[0] = '\0';
	/* The provider did set package 1 up again: the unit nobody owns shows it. */
	ASSERT_EQ(KT_MOCK_INIT_CTL, mock_reg(DF, 1, KT_MOCK_DF_CTL0))
		TH_LOG("the mock's bring-up did not run");
	EXPECT_EQ(0, mock_reg(L3, 1, KT_MOCK_L3_CTL0))
		TH_LOG("owned unit left as the host set it up");
	ASSERT_EQ(0, get_vm(self, "vm1", &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(1, rec.nunits);
	EXPECT_EQ(0, rec.units[0].offline_pkgs);
	EXPECT_EQ(1, rec.units[0].hotplug_scrubs);
	/* Still the VM's: the host cannot count there. */
	EXPECT_EQ(-EBUSY, kt_perf_try(L3, self->pkg0_n, false));

	ASSERT_EQ(0, release(self, "vm1", false, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, kt_perf_try(L3, self->pkg0_n, false));
}

static bool core_fence_built(struct _test_data_pmu *self)
{
	struct kt_status st;

	return !_test_cmd_status_get(&self->nl, &st) &&
	       (st.features & KVMAI_FEATURE_CORE_FENCE);
}

TEST_F(pmu, core_needs_the_perf_interface)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	struct kt_pmu_host h;

	if (core_fence_built(self))
		SKIP(return, "kernel has the KVM core PMU fence (see core_* tests)");
	EXPECT_EQ(-EOPNOTSUPP, assign(_metadata, self, &req, NULL));
	test_ext_has("core PMU fence");
	/* Nothing is made up about the core PMU either. */
	test_cmd_pmu_host(&h);
	EXPECT_FALSE(h.has_core_info);
}

/* Y if the loaded KVM vendor module gives VMs a mediated vPMU. */
static bool kvm_mediated_vpmu(void)
{
	static const char *const params[] = {
		"/sys/module/kvm_amd/parameters/enable_mediated_pmu",
		"/sys/module/kvm_intel/parameters/enable_mediated_pmu",
	};
	bool on = false;

	for (size_t i = 0; i < ARRAY_SIZE(params) && !on; i++) {
		FILE *f = fopen(params[i], "r");

		if (f) {
			on = fgetc(f) == 'Y';
			fclose(f);
		}
	}
	return on;
}

/* A system-wide cycles event on the real core PMU: 0 if it opens, else -errno. */
static int cycles_try(bool exclude_guest)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE, .size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES, .exclude_guest = exclude_guest,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * The mock's fence, standing in for KVM's: kvmai holds it for exactly as
 * long as the VM owns the core PMU, and pins its provider meanwhile.
 */
TEST_F(pmu, core_fences_host_events_that_count_guests)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	struct kt_pmu_host h;
	struct kt_pmu rec;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	test_cmd_pmu_host(&h);
	ASSERT_TRUE(h.core_capable) TH_LOG("mock_core has PERF_PMU_CAP_MEDIATED_VPMU");
	ASSERT_EQ(0, h.nconflicts);
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_TRUE(rec.core);
	/* Host events counting in guests are refused; exclude_guest ones are fine. */
	EXPECT_EQ(-EOPNOTSUPP, kt_perf_try("mock_core", 0, false));
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, true)) TH_LOG("exclude_guest event refused");
	EXPECT_EQ(-EEXIST, assign(_metadata, self, &req, NULL));
	/* The provider cannot go while its fence is held. */
	EXPECT_NE(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU))
		TH_LOG("the mock unloaded under a held fence");
	ASSERT_EQ(0, release(self, "vm1", true, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, false)) TH_LOG("still fenced after release");
	/* Taken again after the release, and dropped with the record at rmmod. */
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-EOPNOTSUPP, kt_perf_try("mock_core", 0, false));
	test_cmd_mod_unload(KT_MOD_KVMAI);
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, false)) TH_LOG("still fenced after rmmod");
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
}

/*
 * KVM drops every fence when its vendor module is unloaded (the module
 * may come back with enable_mediated_pmu=0); the mock does the same on
 * request.  The record must stop showing the core PMU, host events must
 * be allowed again, the release must not drop the fence a second time,
 * and the VM can take the core PMU anew.
 */
TEST_F(pmu, core_fence_ends_with_the_vendor_module)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	struct kt_pmu_req get = { .cmd = KVMAI_CMD_PMU_GET, .vm = "vm1" };
	struct kt_pmu rec;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_TRUE(rec.core);
	ASSERT_EQ(0, kt_mock_drop_fences());
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, false)) TH_LOG("host still fenced");
	ASSERT_EQ(0, _test_cmd_pmu(&self->nl, &get, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_FALSE(rec.core) TH_LOG("the record still shows the dropped fence");
	/* Taken anew: the host is fenced again, and the release drops it once. */
	ASSERT_EQ(0, assign(_metadata, self, &req, &rec)) TH_LOG("%s", self->nl.ext);
	EXPECT_TRUE(rec.core);
	EXPECT_EQ(-EOPNOTSUPP, kt_perf_try("mock_core", 0, false));
	ASSERT_EQ(0, release(self, "vm1", true, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, false)) TH_LOG("still fenced after release");
}

TEST_F(pmu, core_refused_while_host_events_count_guests)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	char want[128], comm[16] = "";
	struct kt_pmu_host h;
	int fd;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	fd = kt_perf_open("mock_core", 1, false);
	ASSERT_LE(0, fd);
	self->fds[self->nfds++] = fd;
	test_cmd_pmu_host(&h);
	ASSERT_EQ(1, h.nconflicts);
	EXPECT_STREQ("mock_core", h.conflicts[0].pmu);
	EXPECT_EQ(1, h.conflicts[0].cpu);
	EXPECT_EQ((__u32)getpid(), h.conflicts[0].pid);
	EXPECT_EQ(1, h.include_guest);

	EXPECT_EQ(-EBUSY, assign(_metadata, self, &req, NULL));
	/* Whole: the command name, pid, PMU and CPU of the event to blame. */
	ASSERT_EQ(0, prctl(PR_GET_NAME, comm));
	snprintf(want, sizeof(want), "core PMU: %s[%d] counts guests (mock_core event, CPU 1)",
		 comm, getpid());
	EXPECT_STREQ(want, self->nl.ext);
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
}

/* Whether @s holds a byte a terminal would act on. */
static bool has_control_bytes(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' && *s != '\n')
			return true;
		else if ((unsigned char)*s >= 0x7f)
			return true;
	return false;
}

/*
 * A task names itself: a refusal that blames it carries its name escaped,
 * in the kernel's extack and in what kvmaictl prints, never the bytes a
 * terminal acts on (here: clear the screen, ring the bell).
 */
TEST_F(pmu, core_refusal_escapes_the_blamed_command_name)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	char saved[16] = "", out[4096];
	int fd, rc;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	ASSERT_EQ(0, prctl(PR_GET_NAME, saved));
	/* perf reads the owner's name when asked, so it stays until the end. */
	ASSERT_EQ(0, prctl(PR_SET_NAME, "\x1b[2J\x07pmu"));
	fd = kt_perf_open("mock_core", 1, false);
	if (fd >= 0)
		self->fds[self->nfds++] = fd;
	EXPECT_EQ(-EBUSY, assign(_metadata, self, &req, NULL));
	rc = kt_sh(out, sizeof(out), KVMAICTL " pmu assign vm1 core 2>&1; " KVMAICTL " pmu show");
	prctl(PR_SET_NAME, saved);
	ASSERT_LE(0, fd);
	EXPECT_FALSE(has_control_bytes(self->nl.ext)) TH_LOG("extack: %s", self->nl.ext);
	test_ext_has("core PMU: \\e[2J\\apmu[");
	EXPECT_EQ(0, rc) TH_LOG("%s", out);
	EXPECT_FALSE(has_control_bytes(out)) TH_LOG("kvmaictl printed: %s", out);
	EXPECT_NE(NULL, strstr(out, "Error: pmu assign: core PMU: \\e[2J\\apmu["))
		TH_LOG("kvmaictl printed: %s", out);
	EXPECT_NE(NULL, strstr(out, "(\\x1b[2J\\x07pmu)")) TH_LOG("kvmaictl printed: %s", out);
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
}

/*
 * Without the mock, the fence is KVM's: where VMs get no mediated vPMU (the
 * emulated host: TCG has no PMU) it is refused, and no host event is kept
 * off any PMU for guests that could not use it.
 */
TEST_F(pmu, core_refused_without_a_mediated_vpmu)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	struct kt_pmu_host h;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	if (kvm_mediated_vpmu())
		SKIP(return, "KVM gives VMs a mediated vPMU here (see core_kvm_fence_on_hardware)");
	test_cmd_mod_unload(KT_MOD_MOCK_PMU);
	EXPECT_EQ(-EOPNOTSUPP, assign(_metadata, self, &req, NULL));
	test_ext_has("no mediated vPMU");
	EXPECT_EQ(-ENOENT, get_vm(self, "vm1", NULL));
	test_cmd_pmu_host(&h);
	EXPECT_EQ(0, h.fences);
	/* perf keeps no host event off a PMU with the mediated vPMU. */
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL);
	EXPECT_EQ(0, kt_perf_try("mock_core", 0, false));
}

/* On hardware whose KVM gives VMs a mediated vPMU: KVM's fence itself. */
TEST_F(pmu, core_kvm_fence_on_hardware)
{
	struct kt_pmu_req req = { .vm = "vm1", .core = true };
	struct kt_pmu_host h;
	unsigned int before;

	if (!core_fence_built(self))
		SKIP(return, "kernel without the KVM core PMU fence");
	if (!kvm_mediated_vpmu())
		SKIP(return, "KVM gives VMs no mediated vPMU here (enable_mediated_pmu)");
	test_cmd_mod_unload(KT_MOD_MOCK_PMU);
	test_cmd_pmu_host(&h);
	before = h.fences;
	ASSERT_EQ(0, cycles_try(false)) TH_LOG("host counts guests before the fence");
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	test_cmd_pmu_host(&h);
	EXPECT_EQ(before + 1, h.fences);
	EXPECT_EQ(-EOPNOTSUPP, cycles_try(false));
	EXPECT_EQ(0, cycles_try(true)) TH_LOG("exclude_guest cycles refused");
	ASSERT_EQ(0, release(self, "vm1", true, NULL)) TH_LOG("%s", self->nl.ext);
	test_cmd_pmu_host(&h);
	EXPECT_EQ(before, h.fences);
	EXPECT_EQ(0, cycles_try(false)) TH_LOG("still fenced after release");
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL);
}

/* Line @key ("Uid:") of /proc/@pid/status, without the key and the newline. */
static bool status_line(pid_t pid, const char *key, char *val, size_t len)
{
	char path[64], buf[4096], *p, *end;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (kt_file_read(path, buf, sizeof(buf)) < 0)
		return false;
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, strlen(key)))
			continue;
		p += strlen(key);
		p += strspn(p, "\t ");
		end = p + strcspn(p, "\n");
		snprintf(val, len, "%.*s", (int)(end - p), p);
		return true;
	}
	return false;
}

/* Whether /proc/@pid/environ holds @var ("KVMAI_VM=vm1"). */
static bool environ_has(pid_t pid, const char *var)
{
	char path[64], buf[8192];
	long n, i;

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	n = kt_file_read(path, buf, sizeof(buf));
	for (i = 0; i < n; i += strlen(buf + i) + 1)
		if (!strcmp(buf + i, var))
			return true;
	return false;
}

/*
 * Starts "kvmaictl pmu exec ARGS -- /bin/sleep 60" (@argv: ARGS, then
 * NULL), its stderr in EXEC_ERR, and waits until the process runs sleep:
 * its pid, or -1 if kvmaictl exited first (its output logged).  "Runs"
 * is its comm and its environment both: execve() names the task before
 * the new program's stack holds the environment, and /proc/PID/environ
 * reads empty in between.
 */
static pid_t exec_sleep(struct __test_metadata *_metadata, const char *const *args)
{
	const char *argv[16] = { KVMAICTL, "pmu", "exec" };
	char comm[32] = "", err[1024], env[64];
	int n = 3, status, i, fd;
	pid_t pid;

	while (*args && n < 12)
		argv[n++] = *args++;
	argv[n++] = "--";
	argv[n++] = "/bin/sleep";
	argv[n++] = "60";
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		fd = open(EXEC_ERR, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(KVMAICTL, (char *const *)argv);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		snprintf(err, sizeof(err), "/proc/%d/comm", pid);
		kt_file_read(err, comm, sizeof(comm));
		snprintf(err, sizeof(err), "/proc/%d/environ", pid);
		if (!strcmp(comm, "sleep\n") && kt_file_read(err, env, sizeof(env)) > 0)
			return pid;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			kt_file_read(EXEC_ERR, err, sizeof(err));
			TH_LOG("kvmaictl exited (status 0x%x) before it ran the command: %s",
			       status, err);
			return -1;
		}
		usleep(10000);
	}
	TH_LOG("kvmaictl did not exec the command within 10 s");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

static void stop(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/*
 * 'kvmaictl pmu exec --user nobody' as a launch script starts the VMM: the
 * process it execs holds the reservation's handle at 3 and runs as nobody,
 * with nobody's groups, no capability in any set, and no way to gain one
 * (no new privileges).  A guest escaping into that VMM gets nobody.
 */
TEST_F(pmu, exec_runs_the_vmm_as_the_user_without_capabilities)
{
	static const char *const args[] = { "--user", "nobody", "vm1", NULL };
	static const char *const caps[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
					    "CapAmb:" };
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	char want[128], val[256], path[64];
	struct passwd *pw = getpwnam("nobody");
	ssize_t n;
	pid_t pid;

	if (access(KVMAICTL, X_OK))
		SKIP(return, "no %s (not in the emulated host)", KVMAICTL);
	ASSERT_NE(NULL, pw) TH_LOG("no user nobody in the emulated host's /etc/passwd");
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	pid = exec_sleep(_metadata, args);
	ASSERT_LT(0, pid);

	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", pw->pw_uid, pw->pw_uid, pw->pw_uid,
		 pw->pw_uid);
	EXPECT_TRUE(status_line(pid, "Uid:", val, sizeof(val)) && !strcmp(val, want))
		TH_LOG("Uid: %s, want %s", val, want);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", pw->pw_gid, pw->pw_gid, pw->pw_gid,
		 pw->pw_gid);
	EXPECT_TRUE(status_line(pid, "Gid:", val, sizeof(val)) && !strcmp(val, want))
		TH_LOG("Gid: %s, want %s", val, want);
	/* nobody is in no group but its own: root's groups are gone. */
	snprintf(want, sizeof(want), "%u ", pw->pw_gid);
	EXPECT_TRUE(status_line(pid, "Groups:", val, sizeof(val)) && !strcmp(val, want))
		TH_LOG("Groups: \"%s\", want \"%s\"", val, want);
	for (size_t i = 0; i < ARRAY_SIZE(caps); i++) {
		EXPECT_TRUE(status_line(pid, caps[i], val, sizeof(val)) &&
			    !strcmp(val, "0000000000000000"))
			TH_LOG("%s %s", caps[i], val);
	}
	EXPECT_TRUE(status_line(pid, "NoNewPrivs:", val, sizeof(val)) && !strcmp(val, "1"))
		TH_LOG("NoNewPrivs: %s", val);

	/* The reservation's handle, at 3, named in the environment. */
	snprintf(path, sizeof(path), "/proc/%d/fd/3", pid);
	n = readlink(path, val, sizeof(val) - 1);
	val[n > 0 ? n : 0] = '\0';
	EXPECT_STREQ("anon_inode:[uncore_guest]", val);
	snprintf(path, sizeof(path), "/proc/%d/fd/4", pid);
	EXPECT_NE(0, access(path, F_OK)) TH_LOG("a descriptor at 4 besides the one unit's");
	EXPECT_TRUE(environ_has(pid, "KVMAI_UNCORE_FDS=3"));
	EXPECT_TRUE(environ_has(pid, "KVMAI_VM=vm1"));
	stop(pid);
}

/*
 * Without --user, pmu exec refuses to start the VMM as root, saying how to
 * name the user, and runs nothing; "--user root" is how root is kept.
 */
TEST_F(pmu, exec_as_root_only_when_told)
{
	static const char *const as_root[] = { "--user", "root", "vm1", NULL };
	struct kt_pmu_req req = { .vm = "vm1", .units = { L3 }, .cpus = self->pkg0 };
	char out[1024], val[256];
	pid_t pid;

	if (access(KVMAICTL, X_OK))
		SKIP(return, "no %s (not in the emulated host)", KVMAICTL);
	ASSERT_EQ(0, assign(_metadata, self, &req, NULL)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(2, kt_sh(out, sizeof(out), KVMAICTL " pmu exec vm1 -- /bin/echo KVMAI-EXEC-RAN"));
	EXPECT_EQ(NULL, strstr(out, "KVMAI-EXEC-RAN")) TH_LOG("ran as root: %s", out);
	EXPECT_EQ(0, strncmp(out, "Error: pmu exec: ", 17)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "--user USER")) TH_LOG("%s", out);

	pid = exec_sleep(_metadata, as_root);
	ASSERT_LT(0, pid);
	EXPECT_TRUE(status_line(pid, "Uid:", val, sizeof(val)) && !strcmp(val, "0\t0\t0\t0"))
		TH_LOG("Uid: %s", val);
	EXPECT_TRUE(status_line(pid, "CapEff:", val, sizeof(val)) &&
		    strcmp(val, "0000000000000000"))
		TH_LOG("CapEff: %s", val);
	stop(pid);
}

TEST_HARNESS_MAIN
