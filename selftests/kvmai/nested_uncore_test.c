// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stock guest of the emulated host (L2) uses uncore PMU units its VMM
 * attached, the way an operator sets it up: the host reserves the mock
 * provider's L3 and DF units for the VM (kvmaictl pmu assign ... pid, run
 * by l2-run -p in the process that then execs QEMU, as a launch script
 * does), 'kvmaictl pmu exec' execs QEMU with the reservations' handles as
 * descriptors 3 and 4, and kvm-ai's QEMU attaches them (-accel
 * kvm,uncore-fds=3:4, patches/qemu), which also gives the guest the CPUID
 * bits its AMD uncore driver looks for.  L2's kernel must register its L3
 * and DF PMUs, 'perf stat' on the L3 one must succeed, and the kernel must
 * log no refused MSR access and no fault; the same guest started without
 * the units must have no such PMU, and a QEMU given another file where a
 * handle should be must not start.  TCG has no PMU: the counts are 0.
 * The L2 side is vmhost/scenarios/l2-uncore.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/kvmai_test.h"

#define L2_SHARE "/usr/share/kvmai-l2/vmlinuz"
#define KVMAI_QEMU "/usr/libexec/kvmai/qemu-system-x86_64"
#define KVMAICTL "/kvmai/bin/kvmaictl"
#define UNITS "mock_uncore_l3 mock_uncore_df"
/*
 * L2 runs the emulated host's 7.x kernel; without async page faults, which
 * double-faulted there under TCG's nested SVM (emulated-host.rst).  TOPOEXT
 * is what Linux's AMD uncore driver needs besides the perfctr bits; QEMU
 * allows it under KVM whatever the host CPU has.
 */
#define L2_ARGS "-w /tmp/l2-uncore -q " KVMAI_QEMU " -s l2-uncore -a no-kvmapf -C host,+topoext"

FIXTURE(l2unc) {
	struct nl_sock *sk;
	int family;
	char cpus[64];
	char out[16384];
};

FIXTURE_SETUP(l2unc)
{
	FILE *f;

	if (access(L2_SHARE, F_OK))
		SKIP(return, "emulated host booted without vmhost.py --nested");
	ASSERT_EQ(0, kvmai_module_load());
	ASSERT_EQ(0, kvmai_mock_load());
	/* 0 also while no unit is offered: after the mock's are. */
	if (!kt_kvm_has_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH))
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	ASSERT_EQ(0, access(KVMAI_QEMU, X_OK)) TH_LOG("no kvm-ai QEMU (vmhost.py --kvmai-qemu)");
	self->sk = kvmai_genl_open(&self->family);
	ASSERT_NE(NULL, self->sk);
	/* Every CPU: the vCPUs may run anywhere in this small host. */
	f = fopen("/sys/devices/system/cpu/online", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->cpus, sizeof(self->cpus), f));
	fclose(f);
	self->cpus[strcspn(self->cpus, "\n")] = 0;
}

FIXTURE_TEARDOWN(l2unc)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "l2" };

	if (!self->sk)
		return;
	kt_pmu_request(self->sk, self->family, &rel, NULL, 0, NULL, NULL, 0);
	kvmai_genl_close(self->sk);
}

static bool has(const char *out, const char *line)
{
	return strstr(out, line) != NULL;
}

/*
 * Whether a control of the mock L3 unit, on any package, holds @config:
 * what the guest's driver leaves there when perf stops its event (the
 * event without the enable bit), written through KVM and the registry.
 */
static bool l3_control_holds(uint64_t config)
{
	uint64_t val;
	long writes;
	unsigned int pkg, i;

	for (pkg = 0; pkg < 4; pkg++)
		for (i = 0; i < 6; i++)
			if (!kt_mock_reg("mock_uncore_l3", pkg, KT_MOCK_L3_CTL0 + 2 * i,
					 &val, &writes) && val == config)
				return true;
	return false;
}

TEST_F_TIMEOUT(l2unc, guest_registers_attached_units_and_perf_counts, 600)
{
	int rc;

	rc = kt_sh(self->out, sizeof(self->out),
		   "l2-run " L2_ARGS " -A kvm,uncore-fds=3:4"
		   " -p '" KVMAICTL " pmu assign l2 " UNITS " cpus %s pid'"
		   " -x '" KVMAICTL " pmu exec l2 --'", self->cpus);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	ASSERT_EQ(0, rc);
	/* Linux names them amd_l2/amd_nb below family 17h, amd_l3/amd_df above. */
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE pmu amd_l3") ||
		    has(self->out, "KVMAI-UNCORE pmu amd_l2"));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE pmu amd_df") ||
		    has(self->out, "KVMAI-UNCORE pmu amd_nb"));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE perf-exit 0"));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE kmsg"));
	EXPECT_FALSE(has(self->out, "<not supported>"));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE done"));
	/* perf's event=0x1 reached the unit (until the release scrubs it). */
	EXPECT_TRUE(l3_control_holds(0x1));
}

TEST_F_TIMEOUT(l2unc, guest_without_units_has_no_uncore_pmu, 600)
{
	int rc;

	rc = kt_sh(self->out, sizeof(self->out), "l2-run " L2_ARGS);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	ASSERT_EQ(0, rc);
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE pmu "));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE kmsg"));
	EXPECT_FALSE(l3_control_holds(0x1));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE done"));
}

/*
 * A VMM given some other file where the handle should be (here /dev/null
 * as descriptor 3), as a launcher without /dev/kvmai's handles would do,
 * attaches nothing although the units are reserved for its pid: QEMU
 * refuses to start, naming the descriptor, and no guest runs.
 */
TEST_F_TIMEOUT(l2unc, vmm_without_the_handle_gets_no_unit, 600)
{
	int rc;

	rc = kt_sh(self->out, sizeof(self->out),
		   "exec 3</dev/null; l2-run " L2_ARGS " -A kvm,uncore-fds=3"
		   " -p '" KVMAICTL " pmu assign l2 " UNITS " cpus %s pid'", self->cpus);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	EXPECT_EQ(3, rc);
	EXPECT_TRUE(has(self->out, "uncore-fds: cannot attach descriptor 3: Invalid argument"));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE pmu "));
	EXPECT_FALSE(l3_control_holds(0x1));
}

TEST_HARNESS_MAIN
