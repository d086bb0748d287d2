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
 *    kvmai reserved the unit for this process: reads do not exit, while
 *    writes to its control MSR still do, handled and checked by KVM;
 *  - after kvmai releases the unit, reads exit again.
 *
 * On real uncore hardware the same holds for the host's own units; those
 * tests need one and skip here.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/kvmai_test.h"


#define LOOPS 1000

FIXTURE(exits) {
	struct nl_sock *sk;
	int family;
	char pkg0[64];
	char ext[256];
	struct kt_vm vm;
	bool mock;
};

FIXTURE_SETUP(exits)
{
	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "no /dev/kvm in this host");
	ASSERT_EQ(0, kvmai_module_load());
	/* Only the mock cases need it; a real host may not carry it. */
	self->mock = kvmai_mock_load() == 0;
	self->sk = kvmai_genl_open(&self->family);
	ASSERT_NE(NULL, self->sk);
	ASSERT_LT(0, kt_package_cpus(0, self->pkg0, sizeof(self->pkg0)));
	ASSERT_EQ(0, kt_pin(self->pkg0));
	ASSERT_EQ(0, kt_vm_create(&self->vm)) TH_LOG("cannot make a KVM guest");
}

FIXTURE_TEARDOWN(exits)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "exit-test" };

	kt_vm_destroy(&self->vm);
	if (self->sk) {
		kt_pmu_request(self->sk, self->family, &rel, NULL, 0, NULL, NULL, 0);
		kvmai_genl_close(self->sk);
	}
}

static int reserve_l3(FIXTURE_DATA(exits) *self)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "exit-test",
				  .units = { KT_MOCK_L3 }, .cpus = self->pkg0 };

	return kt_pmu_request(self->sk, self->family, &req, NULL, 0, NULL,
			      self->ext, sizeof(self->ext));
}

TEST_F(exits, intercepted_uncore_reads_exit)
{
	struct kt_counts c;

	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KVMAI_MOCK_PATH);
	ASSERT_EQ(0, kt_vm_measure(&self->vm, KT_MOCK_L3_CTR0, LOOPS, false, &c));
	TH_LOG("intercepted: %u reads, %llu exits, %u to userspace",
	       LOOPS, (unsigned long long)c.exits, c.to_user);
	EXPECT_EQ(LOOPS, c.to_user);
	EXPECT_LE(LOOPS, c.exits);
}

TEST_F(exits, owned_uncore_counter_reads_do_not_exit)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_UNCORE_PASSTHROUGH };
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "exit-test" };
	struct kt_counts before, pass, ctl, after;

	if (!kt_kvm_has_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH))
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	if (!self->mock)
		SKIP(return, "no mock PMU provider (%s)", KVMAI_MOCK_PATH);
	ASSERT_EQ(0, kt_vm_measure(&self->vm, KT_MOCK_L3_CTR0, LOOPS, false, &before));

	/* Not reserved for us yet: KVM must refuse. */
	cap.args[0] = kt_perf_type(KT_MOCK_L3);
	ASSERT_LE(0, (int)cap.args[0]);
	EXPECT_EQ(-1, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap));
	EXPECT_EQ(EPERM, errno);

	ASSERT_EQ(0, reserve_l3(self)) TH_LOG("%s", self->ext);
	ASSERT_EQ(0, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, kt_vm_measure(&self->vm, KT_MOCK_L3_CTR0, LOOPS, false, &pass));
	ASSERT_EQ(0, kt_vm_measure(&self->vm, KT_MOCK_L3_CTL0, LOOPS, true, &ctl));

	/* Released by kvmai: KVM intercepts again. */
	ASSERT_EQ(0, kt_pmu_request(self->sk, self->family, &rel, NULL, 0, NULL, NULL, 0));
	ASSERT_EQ(0, kt_vm_measure(&self->vm, KT_MOCK_L3_CTR0, LOOPS, false, &after));

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
	EXPECT_EQ(LOOPS, after.to_user);
}

/*
 * The first unit of real hardware that drivers offer, reserved for this
 * process on package 0: NULL with its name and a counter MSR, or a reason
 * to skip (no such unit), or *err set for a failure (it would not reserve).
 */
static const char *reserve_real_unit(FIXTURE_DATA(exits) *self, char *name,
				     uint32_t *counter, int *err)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "exit-test",
				  .units = { name }, .cpus = self->pkg0 };
	struct kt_pmu_host h;
	struct kt_pmu rec;
	int i;

	if (kt_pmu_host(self->sk, self->family, &h, NULL, 0))
		return "pmu-host-get failed";
	for (i = 0; i < h.nunits; i++)
		if (strncmp(h.units[i].name, "mock_", 5))
			break;
	if (i == h.nunits)
		return "no uncore PMU hardware offered here (emulated host: TCG has no PMU)";
	strcpy(name, h.units[i].name);
	*err = kt_pmu_request(self->sk, self->family, &req, &rec, 1, NULL,
			      self->ext, sizeof(self->ext));
	if (!*err && (rec.nunits != 1 || !rec.units[0].counter_msr))
		*err = -ENOENT;
	if (!*err)
		*counter = rec.units[0].counter_msr;
	return NULL;
}

TEST_F(exits, hardware_host_perf_refused_while_owned)
{
	uint32_t counter = 0;
	const char *why;
	char name[64];
	int fd, err = 0;

	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s: %s", name, self->ext);
	/* What 'perf stat -a -e <unit>/.../' does on the owned package. */
	fd = kt_perf_open(name, 0, false);
	EXPECT_EQ(-EBUSY, fd);
	if (fd >= 0)
		close(fd);
}

TEST_F(exits, hardware_uncore_counter_reads_do_not_exit)
{
	struct kvm_enable_cap cap = { .cap = KVM_CAP_X86_UNCORE_PASSTHROUGH };
	uint32_t counter = 0;
	const char *why;
	struct kt_counts c;
	char name[64];
	int err = 0;

	if (!kt_kvm_has_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH))
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	why = reserve_real_unit(self, name, &counter, &err);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, err) TH_LOG("cannot reserve %s (or no counter MSR): %s", name, self->ext);
	cap.args[0] = kt_perf_type(name);
	ASSERT_EQ(0, ioctl(self->vm.fd, KVM_ENABLE_CAP, &cap)) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, kt_vm_measure(&self->vm, counter, LOOPS, false, &c));
	TH_LOG("%u reads of %s's counter 0x%x: %llu exits", LOOPS, name, counter,
	       (unsigned long long)c.exits);
	EXPECT_GT(LOOPS / 100, c.exits);
	EXPECT_EQ(0, c.to_user);
}

TEST_HARNESS_MAIN
