// SPDX-License-Identifier: GPL-2.0-only
/*
 * Does a guest read an owned uncore counter without VM exits?
 *
 * The emulated host runs KVM (kvm_amd on QEMU's emulated SVM), and QEMU
 * honours L1 KVM's MSR permission map on every guest RDMSR, so exits can
 * be counted here even though no counter counts: a one-vCPU real-mode
 * guest reads the mock L3 unit's first counter MSR N times between two
 * port writes, and the vCPU's "exits" statistic is read at each port write.
 *
 *  - intercepted: the MSR is unknown to KVM and goes to userspace, N exits;
 *  - passed through (KVM_CAP_X86_UNCORE_PASSTHROUGH, kvm-ai series) after
 *    kvmai reserved the unit and the VMM attached with the reservation's
 *    handle from /dev/kvmai: reads do not exit, while writes to its control
 *    MSR still do, handled and checked by KVM;
 *  - after kvmai releases the unit, reads exit again, and KVM answers them
 *    itself with 0 (the guest's driver may still read the unit it found).
 *
 * And the capability's contract, on the mock unit, whose registers the mock
 * provider keeps in memory (kmod/testing/kvmai_mock_pmu.c, debugfs):
 *  - detach, and slots given back (100 attach/detach cycles, 100 revoked
 *    reservations in a row on a VM that holds at most 32 units);
 *  - the unit scrubbed when reserved (what a host event left) and when
 *    released (what the guest programmed);
 *  - no guest write lands after the owner's release returned, while the
 *    guest writes without pause (1000 rounds);
 *  - the handle is the authority: only CAP_SYS_ADMIN gets one, any process
 *    holding it attaches one VM, and it attaches nothing once released;
 *  - the host's and the VMM's PMU policy refuse an attach;
 *  - what a stock guest's uncore driver reads with: RDPMC of the unit's
 *    index answered (one exit each) while attached, 0 after the owner
 *    released it, #GP for a VM that never had the unit.
 *
 * On real uncore hardware the same holds for the host's own units; those
 * tests need one and skip here.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>
#include <linux/kvmai_dev.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"
#include "lib/vm.h"

#define VM "exit-test"		/* the PMU record the cases reserve with */
#define LOOPS 1000
#define CYCLES 100
#define RACE_ROUNDS 1000
#define MOCK_CTL_VALUE 0x40ffff		/* enable + event: within the mask */
#define GUEST_COUNT 0xabcd
#define KVM_PARAM "/sys/module/kvm/parameters/enable_uncore_passthrough"

FIXTURE(exits) {
	struct kt_nl nl;
	char pkg0[64];
	int pkg0_cpus;		/* how many CPUs pkg0 lists */
	struct kt_vm *vm;
	bool mock;
	bool genoa;	/* the mock was loaded as a Genoa socket */
};

/* KVM's administrator switch (kvm-ai series), set back after every case. */
static int set_param(const char *val)
{
	FILE *f = fopen(KVM_PARAM, "w");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

FIXTURE_SETUP(exits)
{
	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "no /dev/kvm in this host");
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	/* Only the mock cases need it; a real host may not carry it. */
	self->mock = _test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL) == 0;
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	self->pkg0_cpus = kt_cpu_package(0, self->pkg0, sizeof(self->pkg0));
	ASSERT_LT(0, self->pkg0_cpus);
	ASSERT_EQ(0, kt_cpu_pin(self->pkg0));
	self->vm = kt_vm_create(0);
	ASSERT_NE(NULL, self->vm) TH_LOG("cannot make a KVM guest");
}

FIXTURE_TEARDOWN(exits)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = VM };

	kt_vm_destroy(self->vm);
	if (!access(KVM_PARAM, W_OK))
		set_param("Y");
	if (self->nl.sk) {
		_test_cmd_pmu(&self->nl, &rel, NULL);
		kt_nl_close(&self->nl);
	}
	/* The next case loads the mock as it is by default. */
	if (self->genoa)
		_test_cmd_mod_unload(KT_MOD_MOCK_PMU);
}

static int reserve_l3(struct _test_data_exits *self)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = VM,
				  .units = { KT_MOCK_L3 }, .cpus = self->pkg0 };

	return _test_cmd_pmu(&self->nl, &req, NULL);
}

/* Why this case cannot run here, or NULL. */
static const char *mock_unusable(struct _test_data_exits *self)
{
	if (kt_kvm_check_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH) <= 0)
		return "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)";
	if (!self->mock)
		return "no mock PMU provider (" KT_MOCK_PMU_PATH ")";
	return NULL;
}

static int release_l3(struct _test_data_exits *self)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = VM };

	return _test_cmd_pmu(&self->nl, &rel, NULL);
}

static __u64 mock_reg(__u32 msr, long *writes)
{
	__u64 val = ~0ULL;
	long w = -1;

	if (kt_mock_pmu_reg(KT_MOCK_L3, 0, msr, &val, &w))
		return ~0ULL;
	if (writes)
		*writes = w;
	return val;
}

TEST_F(exits, intercepted_uncore_reads_exit)
{
	struct kt_counts c;

	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KT_MOCK_PMU_PATH);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &c);
	TH_LOG("intercepted: %u reads, %llu exits, %u to userspace",
	       LOOPS, (unsigned long long)c.exits, c.to_user);
	EXPECT_EQ(LOOPS, c.to_user);
	EXPECT_LE(LOOPS, c.exits);
}

TEST_F(exits, owned_uncore_counter_reads_do_not_exit)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = VM };
	struct kt_counts before, pass, ctl, after;

	if (kt_kvm_check_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH) <= 0)
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KT_MOCK_PMU_PATH);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &before);

	/* Not reserved yet: there is no handle to attach with. */
	test_err_vm_attach(ENOENT, self->vm, VM, KT_MOCK_L3);

	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &pass);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTL0, LOOPS, KT_WRMSR, 0, &ctl);

	/*
	 * Released by kvmai: KVM intercepts again, and answers itself, 0: the
	 * guest's driver may still read the unit it found.
	 */
	test_cmd_pmu(&rel, NULL);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &after);

	TH_LOG("%u reads of 0x%x: %llu exits intercepted, %llu owned, %llu after release",
	       LOOPS, KT_MOCK_L3_CTR0, (unsigned long long)before.exits,
	       (unsigned long long)pass.exits, (unsigned long long)after.exits);
	TH_LOG("%u writes of 0x%x while owned: %llu exits, %u to userspace",
	       LOOPS, KT_MOCK_L3_CTL0, (unsigned long long)ctl.exits, ctl.to_user);
	EXPECT_LE(LOOPS, before.exits);
	/* Timer interrupts may still exit now and then; MSR reads may not. */
	EXPECT_GT(LOOPS / 100, pass.exits);
	EXPECT_EQ(0, pass.to_user);
	/* Control writes are checked by KVM: they exit, but stay in the kernel. */
	EXPECT_LE(LOOPS, ctl.exits);
	EXPECT_EQ(0, ctl.to_user);
	EXPECT_LE(LOOPS, after.exits);
	EXPECT_EQ(0, after.to_user);
	EXPECT_FALSE(after.gp);
	EXPECT_EQ(0, after.last);
}

TEST_F(exits, detach_intercepts_again_and_frees_the_slot)
{
	struct kt_counts pass, after;
	int i;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_err_vm_detach(ENOENT, self->vm, VM, KT_MOCK_L3);
	for (i = 0; i < CYCLES; i++) {
		test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3) TH_LOG("attach %d", i);
		if (!i)
			test_err_vm_attach(EEXIST, self->vm, VM, KT_MOCK_L3);
		test_cmd_vm_detach(self->vm, VM, KT_MOCK_L3) TH_LOG("detach %d", i);
	}
	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &pass);
	test_cmd_vm_detach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &after);
	TH_LOG("after %d attach/detach cycles, %u reads: %llu exits attached, %llu detached",
	       CYCLES, LOOPS, (unsigned long long)pass.exits, (unsigned long long)after.exits);
	EXPECT_GT(LOOPS / 100, pass.exits);
	EXPECT_EQ(0, pass.to_user);
	EXPECT_EQ(LOOPS, after.to_user);
}

TEST_F(exits, revoked_units_give_their_slot_back)
{
	struct kt_counts c;
	int i;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	/* A VM holds 32 units at most: each round's revoked unit must leave. */
	for (i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, reserve_l3(self)) TH_LOG("round %d: %s", i, self->nl.ext);
		test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3) TH_LOG("round %d", i);
		ASSERT_EQ(0, release_l3(self));
	}
	/* Intercepted again, and read as a stopped unit by KVM itself. */
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, LOOPS, KT_RDMSR, 0, &c);
	EXPECT_LE(LOOPS, c.exits);
	EXPECT_EQ(0, c.to_user);
	EXPECT_FALSE(c.gp);
}

TEST_F(exits, unit_scrubbed_on_reserve_and_release)
{
	struct kt_counts c;
	int fd;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	/* A host event counts on package 0 and leaves its count behind. */
	fd = kt_perf_open(KT_MOCK_L3, atoi(self->pkg0), false);
	ASSERT_LE(0, fd);
	close(fd);
	ASSERT_NE(0, mock_reg(KT_MOCK_L3_CTR0, NULL));
	ASSERT_NE(~0ULL, mock_reg(KT_MOCK_L3_CTR0, NULL));

	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, mock_reg(KT_MOCK_L3_CTR0, NULL)) TH_LOG("host's count not scrubbed");

	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTL0, 1, KT_WRMSR, MOCK_CTL_VALUE, &c);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, 1, KT_WRMSR, GUEST_COUNT, &c);
	EXPECT_EQ(MOCK_CTL_VALUE, mock_reg(KT_MOCK_L3_CTL0, NULL));
	EXPECT_EQ(GUEST_COUNT, mock_reg(KT_MOCK_L3_CTR0, NULL));

	ASSERT_EQ(0, release_l3(self));
	EXPECT_EQ(0, mock_reg(KT_MOCK_L3_CTL0, NULL)) TH_LOG("guest's control left counting");
	EXPECT_EQ(0, mock_reg(KT_MOCK_L3_CTR0, NULL)) TH_LOG("guest's count left for the host");
}

struct writer {
	struct kt_vm *vm;
	bool stop;		/* kt_read_once() */
	int err;
	unsigned long runs;
};

/* The guest stores its count without pause until told to stop. */
static void *guest_writes(void *arg)
{
	struct writer *w = arg;
	struct kt_counts c;

	while (!kt_read_once(w->stop) && !w->err) {
		w->err = _test_cmd_vm_run(w->vm, KT_MOCK_L3_CTR0, 20000, KT_WRMSR, GUEST_COUNT, &c);
		w->runs++;
	}
	return NULL;
}

static __u64 ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

TEST_F(exits, guest_rdpmc_reads_the_attached_unit)
{
	struct kt_counts c;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	/* Nobody answers RDPMC 10 (no vPMU here, no unit): #GP. */
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_TRUE(c.gp);

	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, 1, KT_WRMSR, GUEST_COUNT, &c);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, LOOPS, KT_RDPMC, 0, &c);
	TH_LOG("%u RDPMC %d while attached: %llu exits, %u to userspace, read 0x%llx",
	       LOOPS, KT_MOCK_L3_RDPMC0, (unsigned long long)c.exits, c.to_user,
	       (unsigned long long)c.last);
	EXPECT_FALSE(c.gp);
	EXPECT_EQ(GUEST_COUNT, c.last);
	EXPECT_LE(LOOPS, c.exits);
	EXPECT_EQ(0, c.to_user);

	/* Released: the guest's driver may still read it, and gets 0, not a #GP. */
	ASSERT_EQ(0, release_l3(self));
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp);
	EXPECT_EQ(0, c.last);
}

/*
 * The host moves a vCPU off the reserved package (no strict pinning, CPU
 * hotplug): the unit then reads as stopped counters and its writes are
 * dropped, never a #GP, which would oops a Linux guest reading with
 * RDPMC.  Back on the package, the guest reads the unit as it left it.
 */
TEST_F(exits, off_package_access_reads_stopped_counters)
{
	char pkg1[64];
	struct kt_counts c;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	/* Package 0's CPUs come first: the next CPU is another package's. */
	if (kt_cpu_package(self->pkg0_cpus, pkg1, sizeof(pkg1)) <= 0)
		SKIP(return, "one package only: no CPU off the reserved one");
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, 1, KT_WRMSR, GUEST_COUNT, &c);
	ASSERT_FALSE(c.gp);

	ASSERT_EQ(0, kt_cpu_pin(pkg1));
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, 1, KT_RDMSR, 0, &c);
	EXPECT_FALSE(c.gp) TH_LOG("RDMSR on package 1 (CPUs %s) faulted", pkg1);
	EXPECT_EQ(0, c.last);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp) TH_LOG("RDPMC on package 1 (CPUs %s) faulted", pkg1);
	EXPECT_EQ(0, c.last);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_CTR0, 1, KT_WRMSR, 0x1111, &c);
	EXPECT_FALSE(c.gp) TH_LOG("WRMSR on package 1 (CPUs %s) faulted", pkg1);

	/* Passed-through loads reach the CPU's MSR, not the mock: RDPMC. */
	ASSERT_EQ(0, kt_cpu_pin(self->pkg0));
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp);
	EXPECT_EQ(GUEST_COUNT, c.last) TH_LOG("the write off the package landed");
}

/*
 * Every unit of an AMD Genoa socket goes to one VM: the DF (16 counters),
 * the L3 and 12 UMCs, 14 units and 140 MSR ranges, with the mock loaded as
 * that socket's driver registers them.  And the DF's fifth counter answers
 * RDPMC 16, as the driver reads it, not the L3's 10.
 */
TEST_F(exits, genoa_socket_units_attach_to_one_vm)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = VM, .cpus = self->pkg0 };
	static char names[12][32];
	struct kt_counts c;
	struct kt_pmu rec;
	int i, n = 0;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	ASSERT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU));
	self->genoa = true;
	ASSERT_EQ(0, _test_cmd_mod_load(KT_MOD_MOCK_PMU, "genoa=1"));
	req.units[n++] = KT_MOCK_L3;
	req.units[n++] = KT_MOCK_DF;
	for (i = 0; i < 12; i++) {
		snprintf(names[i], sizeof(names[i]), "mock_uncore_umc_%d", i);
		req.units[n++] = names[i];
	}
	ASSERT_EQ(0, _test_cmd_pmu(&self->nl, &req, &rec)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(n, rec.nunits);
	for (i = 0; i < n; i++) {
		int r = _test_cmd_vm_attach(self->vm, VM, req.units[i]);

		EXPECT_EQ(0, r) TH_LOG("attaching unit %d, %s: %d", i + 1, req.units[i], r);
	}

	/* DF counter 4 is MSR 0xc0010249 and RDPMC 16. */
	test_cmd_vm_run(self->vm, KT_MOCK_DF_CTL0 + 9, 1, KT_WRMSR, GUEST_COUNT, &c);
	EXPECT_FALSE(c.gp);
	test_cmd_vm_run(self->vm, 16, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp) TH_LOG("RDPMC 16 has no unit");
	EXPECT_EQ(GUEST_COUNT, c.last) TH_LOG("RDPMC 16 read 0x%llx", (unsigned long long)c.last);
	test_cmd_vm_run(self->vm, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_NE(GUEST_COUNT, c.last) TH_LOG("RDPMC 10 read the DF's counter 4");
}

/* 1000 rounds of reserve, attach and release under TCG take a while. */
TEST_F_TIMEOUT(exits, no_guest_write_after_release, 600)
{
	struct writer w = { .vm = self->vm };
	long before = -1, at = -1, later = -1;
	unsigned int round, late = 0, dirty = 0;
	__u64 t0, deadline;
	pthread_t thread;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	ASSERT_EQ(0, pthread_create(&thread, NULL, guest_writes, &w));
	t0 = ms_now();
	for (round = 0; round < RACE_ROUNDS && !w.err; round++) {
		ASSERT_EQ(0, reserve_l3(self)) TH_LOG("round %u: %s", round, self->nl.ext);
		mock_reg(KT_MOCK_L3_CTR0, &before);
		test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3) TH_LOG("round %u", round);
		/* Release only while the guest's stores reach the unit. */
		deadline = ms_now() + 5000;
		do {
			mock_reg(KT_MOCK_L3_CTR0, &at);
		} while (at == before && ms_now() < deadline);
		ASSERT_NE(before, at) TH_LOG("round %u: the guest wrote nothing", round);

		ASSERT_EQ(0, release_l3(self));
		if (mock_reg(KT_MOCK_L3_CTR0, &at))
			dirty++;
		usleep(200);
		if (mock_reg(KT_MOCK_L3_CTR0, &later) || later != at)
			late++;
		if (round % 100 == 99)
			TH_LOG("round %u after %llu ms", round + 1,
			       (unsigned long long)(ms_now() - t0));
	}
	kt_write_once(w.stop, true);
	pthread_join(thread, NULL);
	EXPECT_EQ(0, w.err);
	TH_LOG("%u rounds in %llu ms, %lu guest runs", round,
	       (unsigned long long)(ms_now() - t0), w.runs);
	TH_LOG("%u with the unit dirty after release, %u with a write after it", dirty, late);
	EXPECT_EQ(RACE_ROUNDS, round);
	EXPECT_EQ(0, dirty);
	EXPECT_EQ(0, late);
}

/* Child: 1 if the ioctl on /dev/kvmai *@arg says EPERM as uid 65534. */
static int unit_fd_as_nobody(void *arg)
{
	struct kvmai_unit_fd req = { .vm = VM, .unit = KT_MOCK_L3 };

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 2;
	return ioctl(*(int *)arg, KVMAI_UNIT_FD, &req) < 0 && errno == EPERM ? 1 : 0;
}

/* 0 if a child could take a handle after dropping to uid 65534. */
static int handle_as_nobody(int dev)
{
	int ret = kt_child(unit_fd_as_nobody, &dev);

	return ret == 1 ? -EPERM : ret ? -1 : 0;
}

/* Child: its own VM, attached with the handle *@arg it inherited. */
static int attach_own_vm(void *arg)
{
	struct kt_vm *vm = kt_vm_create(0);
	int ret;

	if (!vm)
		return 100;
	ret = _test_cmd_vm_attach_fd(vm, *(int *)arg);
	kt_vm_destroy(vm);
	return -ret;
}

/* In a child: its own VM's attach with handle @fd, 0 or -errno. */
static int attach_in_child(int fd)
{
	int ret = kt_child(attach_own_vm, &fd);

	return ret < 0 ? -1 : -ret;
}

/*
 * KVM asks no process for its pid: holding a handle is what allows an
 * attach, for one VM at a time, while the reservation lasts.  Handles go
 * to CAP_SYS_ADMIN only, even through an open /dev/kvmai.
 */
TEST_F(exits, the_handle_is_the_authority)
{
	struct kvmai_unit_fd bad = { .flags = 1, .vm = VM, .unit = KT_MOCK_L3 };
	struct kt_vm *other;
	int dev, fd, stale;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	test_err_unit_fd(ENOENT, VM, KT_MOCK_L3);
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_err_unit_fd(ENOENT, VM, "mock_uncore_df");
	test_err_unit_fd(ENOENT, "no-such-vm", KT_MOCK_L3);
	dev = open(KVMAI_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev) TH_LOG(KVMAI_DEV_PATH ": %s", strerror(errno));
	EXPECT_EQ(-1, ioctl(dev, KVMAI_UNIT_FD, &bad));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EPERM, handle_as_nobody(dev));
	close(dev);

	fd = _test_cmd_unit_fd(VM, KT_MOCK_L3);
	ASSERT_LE(0, fd) TH_LOG("handle: %d", fd);
	/* Another process, with the handle: its VM attaches... */
	EXPECT_EQ(0, attach_in_child(fd));
	/* ...and, once that VM is gone, ours, but not a second one. */
	test_cmd_vm_attach_fd(self->vm, fd);
	other = kt_vm_create(0);
	ASSERT_NE(NULL, other);
	test_err_vm_attach_fd(EBUSY, other, fd);
	test_err_vm_detach_fd(ENOENT, other, fd);
	test_err_vm_attach_fd(EEXIST, self->vm, fd);

	/* Released: the handle attaches nothing, nor to the next reservation. */
	stale = fd;
	ASSERT_EQ(0, release_l3(self));
	test_err_vm_attach_fd(ENODEV, other, stale);
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	test_err_vm_attach_fd(ENODEV, other, stale);
	fd = _test_cmd_unit_fd(VM, KT_MOCK_L3);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, _test_cmd_vm_attach_fd(other, fd));
	close(fd);
	close(stale);
	kt_vm_destroy(other);
}

TEST_F(exits, pmu_policy_refuses_attach)
{
	struct kvm_pmu_event_filter filter = { .action = KVM_PMU_EVENT_DENY };
	struct kt_vm *filtered;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);

	/* The administrator's switch: refused, and not offered. */
	ASSERT_EQ(0, set_param("N"));
	test_err_vm_attach(EOPNOTSUPP, self->vm, VM, KT_MOCK_L3);
	EXPECT_EQ(0, kt_vm_check_cap(self->vm, KVM_CAP_X86_UNCORE_PASSTHROUGH));
	ASSERT_EQ(0, set_param("Y"));
	EXPECT_EQ(32, kt_vm_check_cap(self->vm, KVM_CAP_X86_UNCORE_PASSTHROUGH));

	/* A VM whose VMM filters guest events cannot take a unit... */
	filtered = kt_vm_create(0);
	ASSERT_NE(NULL, filtered);
	ASSERT_EQ(0, ioctl(kt_vm_fd(filtered), KVM_SET_PMU_EVENT_FILTER, &filter));
	test_err_vm_attach(EACCES, filtered, VM, KT_MOCK_L3);
	kt_vm_destroy(filtered);

	/* ...and a VM with a unit cannot start filtering. */
	test_cmd_vm_attach(self->vm, VM, KT_MOCK_L3);
	EXPECT_EQ(-1, ioctl(kt_vm_fd(self->vm), KVM_SET_PMU_EVENT_FILTER, &filter));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(exits, vmm_pmu_disable_refuses_attach)
{
	struct kt_vm *nopmu;
	int ret;

	if (mock_unusable(self))
		SKIP(return, "%s", mock_unusable(self));
	if (kt_kvm_check_cap(KVM_CAP_PMU_CAPABILITY) <= 0)
		SKIP(return, "KVM has no vPMU to disable here (enable_pmu=N: TCG has no PMU)");
	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->nl.ext);
	nopmu = kt_vm_create(KVM_PMU_CAP_DISABLE);
	ASSERT_NE(NULL, nopmu);
	ret = _test_cmd_vm_attach(nopmu, VM, KT_MOCK_L3);
	EXPECT_EQ(0, kt_vm_check_cap(nopmu, KVM_CAP_X86_UNCORE_PASSTHROUGH));
	kt_vm_destroy(nopmu);
	EXPECT_EQ(-EOPNOTSUPP, ret);
}

/*
 * The first unit of real hardware that drivers offer, reserved for this
 * process on package 0: NULL with its name and a counter MSR, or a reason
 * to skip (no such unit), or *err set for a failure (it would not reserve).
 */
static const char *reserve_real_unit(struct _test_data_exits *self, char *name,
				     __u32 *counter, int *err)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = VM,
				  .units = { name }, .cpus = self->pkg0 };
	struct kt_pmu_host h;
	struct kt_pmu rec;
	int i;

	if (_test_cmd_pmu_host(&self->nl, &h))
		return "pmu-host-get failed";
	for (i = 0; i < h.nunits; i++)
		if (strncmp(h.units[i].name, "mock_", 5))
			break;
	if (i == h.nunits)
		return "no uncore PMU hardware offered here (emulated host: TCG has no PMU)";
	snprintf(name, 64, "%s", h.units[i].name);
	*err = _test_cmd_pmu(&self->nl, &req, &rec);
	if (!*err && (rec.nunits != 1 || !rec.units[0].counter_msr))
		*err = -ENOENT;
	if (!*err)
		*counter = rec.units[0].counter_msr;
	return NULL;
}

TEST_F(exits, hardware_host_perf_refused_while_owned)
{
	__u32 counter = 0;
	const char *why;
	char name[64];
	int fd, err = 0;

	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s: %s", name, self->nl.ext);
	/* What 'perf stat -a -e <unit>/.../' does on the owned package. */
	fd = kt_perf_open(name, 0, false);
	EXPECT_EQ(-EBUSY, fd);
	if (fd >= 0)
		close(fd);
}

TEST_F(exits, hardware_uncore_counter_reads_do_not_exit)
{
	__u32 counter = 0;
	const char *why;
	struct kt_counts c;
	char name[64];
	int err = 0;

	if (kt_kvm_check_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH) <= 0)
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s (or no counter MSR): %s", name, self->nl.ext);
	test_cmd_vm_attach(self->vm, VM, name);
	test_cmd_vm_run(self->vm, counter, LOOPS, KT_RDMSR, 0, &c);
	TH_LOG("%u reads of %s's counter 0x%x: %llu exits", LOOPS, name, counter,
	       (unsigned long long)c.exits);
	EXPECT_GT(LOOPS / 100, c.exits);
	EXPECT_EQ(0, c.to_user);
}

TEST_HARNESS_MAIN
