// SPDX-License-Identifier: GPL-2.0-only
/*
 * A stock guest of the emulated host (L2) uses uncore PMU units its VMM
 * attached, the way an operator sets it up: the host reserves the mock
 * provider's L3 and DF units for the VM (kvmaictl pmu assign ... pid, run
 * by l2-run -p in the process that then execs QEMU, as a launch script
 * does), 'kvmaictl pmu exec' execs QEMU with the reservations' handles as
 * descriptors 3 and 4, as user nobody in group kvm without capabilities,
 * and kvm-ai's QEMU attaches them (-accel
 * kvm,uncore-fds=3:4, patches/qemu), which also gives the guest the CPUID
 * bits its AMD uncore driver looks for.  L2's kernel must register its L3
 * and DF PMUs, 'perf stat' on the L3 one must succeed, and the kernel must
 * log no refused MSR access and no fault; the same guest started without
 * the units must have no such PMU, and a QEMU given another file where a
 * handle should be must not start.  TCG has no PMU: the counts are 0.
 * The L2 side is vmhost/l2/uncore.sh.
 *
 * And the reads a monitoring agent in such a guest makes of an attached
 * counter MSR (RDMSR through /dev/cpu/0/msr) must not exit to L1's KVM
 * (which traces each RDMSR it handles), and cost one exit each, without a
 * fault, once the host released the unit under the running guest.  The
 * L2 side is vmhost/l2/uncore-reads.sh.  A guest of a VM without units that
 * executes RDPMC 6-15, which AMD's CPUs answer from the DF and L3
 * counters, must exit to the host's KVM and fault instead.  And a guest whose perf counts on
 * the unit when the host releases it must not fault either
 * (vmhost/l2/uncore-revoke.sh).
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"
#include "lib/l2.h"
#include "lib/vm.h"

#define KVMAICTL "/kvmai/bin/kvmaictl"
#define UNITS "mock_uncore_l3 mock_uncore_df"
/*
 * L2 runs the emulated host's 7.x kernel; without async page faults, which
 * double-faulted there under TCG's nested SVM (emulated-host.rst).  TOPOEXT
 * is what Linux's AMD uncore driver needs besides the perfctr bits; QEMU
 * allows it under KVM whatever the host CPU has.
 */
#define L2_WORK "/tmp/l2-uncore"
#define L2_ARGS "-w " L2_WORK " -s uncore -a no-kvmapf"
#define L2_CPU "-cpu host,+topoext"
/*
 * The VMM as an operator starts it: holding the handles, as nobody, in
 * group kvm for /dev/kvm (the emulated host's /init gives it that group,
 * as Debian's udev does).  QEMU writes its serial logs into l2-run's work
 * directory, which vmm_owns() gives it.
 */
#define VMM_USER "nobody"
#define PMU_EXEC KVMAICTL " pmu exec --user " VMM_USER " --group kvm l2 --"
/*
 * What runs in the process that then execs the VMM (l2-run -p): the
 * reservation of both units for its pid, on the CPUs of %s.  And the VMM
 * that attaches them: kvm-ai's QEMU through pmu exec, which hands it the
 * two handles as descriptors 3 and 4.
 */
#define ASSIGN "-p '" KVMAICTL " pmu assign l2 " UNITS " cpus %s pid'"
/* Before l2-run boots L2 again: the reservation for the QEMU that is gone. */
#define UNASSIGN "-r '" KVMAICTL " pmu release l2'"
#define ATTACHED_VMM "-q '" PMU_EXEC " " KT_KVMAI_QEMU "' -- -accel kvm,uncore-fds=3:4 " L2_CPU

#define READS_WORK "/tmp/l2-uncore-reads"
#define REVOKE_WORK "/tmp/l2-uncore-revoke"
#define READS_FMT "%lu reads, %ld exits on reads of the MSR; %.1f ns per read, %lu refused\n"
/* What the tenant's guest writes to its DF and L3 counters. */
#define TENANT_DF_COUNT 0xdf0
#define TENANT_L3_COUNT 0x130

/*
 * The value of field @field of the emulated host's /proc/cpuinfo (its
 * first CPU's), space-padded at both ends, in @val; -cpu host gives L2
 * the same.  False if there is no such field.
 */
static bool cpuinfo_value(const char *field, char *val, size_t len)
{
	size_t n = strlen(field);
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *colon = strchr(line, ':');

		if (strncmp(line, field, n) || line[n] != '\t' || !colon)
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(val, len, "%s ", colon + 1);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static unsigned int cpuinfo_field(const char *field)
{
	char val[64];

	return cpuinfo_value(field, val, sizeof(val)) ? atoi(val) : 0;
}

/* Whether the emulated host's CPU has flag @flag. */
static bool cpu_flag(const char *flag)
{
	char flags[4096], word[64];

	snprintf(word, sizeof(word), " %s ", flag);
	return cpuinfo_value("flags", flags, sizeof(flags)) && strstr(flags, word);
}

static unsigned int cpu_family(void)
{
	return cpuinfo_field("cpu family");
}

/* AMD Genoa (EPYC 9004: family 19h, models 10h-1fh), as QEMU's EPYC-Genoa. */
static bool genoa_host(void)
{
	unsigned int model = cpuinfo_field("model");

	return cpu_family() == 0x19 && model >= 0x10 && model <= 0x1f;
}

FIXTURE(l2unc) {
	struct kt_nl nl;
	char cpus[64];
	char out[16384];
	pid_t l2;
};

FIXTURE_SETUP(l2unc)
{
	FILE *f;

	self->l2 = -1;
	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	/* The units the platform has: a Genoa socket's DF of 16 and 12 UMCs. */
	if (!kt_mod_loaded(KT_MOD_MOCK_PMU))
		test_cmd_mod_load(KT_MOD_MOCK_PMU, genoa_host() ? "genoa=1" : NULL);
	/* 0 also while no unit is offered: after the mock's are. */
	if (kt_kvm_check_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH) <= 0)
		SKIP(return, "KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH (kvm-ai series)");
	ASSERT_EQ(0, access(KT_KVMAI_QEMU, X_OK)) TH_LOG(KT_KVMAI_QEMU_MISSING);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
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

	if (self->l2 > 0) {
		kill(self->l2, SIGKILL);
		waitpid(self->l2, NULL, 0);
	}
	if (!self->nl.sk)
		return;
	_test_cmd_pmu(&self->nl, &rel, NULL);
	kt_nl_close(&self->nl);
}

static bool has(const char *out, const char *line)
{
	return strstr(out, line);
}

/* Makes directory @dir VMM_USER's, for the VMM to write in: 0 or -errno. */
static int vmm_owns(const char *dir)
{
	struct passwd *pw = getpwnam(VMM_USER);

	if (!pw)
		return -ENOENT;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return chown(dir, pw->pw_uid, -1) ? -errno : 0;
}

/* Whether @path belongs to VMM_USER: a file the VMM made. */
static bool owned_by_vmm_user(const char *path)
{
	struct passwd *pw = getpwnam(VMM_USER);
	struct stat st;

	return pw && !stat(path, &st) && st.st_uid == pw->pw_uid;
}

/* AMD's event select in an uncore control: bits 0-7 and 32-35. */
#define AMD_EVENT_SELECT 0xf000000ffULL
#define AMD_CTL_ENABLE BIT_ULL(22)

/*
 * A control of the mock L3 unit, on any package, that selects @event, in
 * @ctl: what the guest's driver leaves there when perf stops its event
 * (the event and, from family 17h, the threads and slices it counts,
 * without the enable bit), written through KVM and the registry.
 */
static bool l3_control_holds(__u64 event, __u64 *ctl)
{
	__u64 val;
	long writes;
	unsigned int pkg, i;

	for (pkg = 0; pkg < 4; pkg++) {
		for (i = 0; i < 6; i++) {
			__u32 msr = KT_MOCK_L3_CTL0 + 2 * i;

			if (kt_mock_pmu_reg(KT_MOCK_L3, pkg, msr, &val, &writes))
				continue;
			if (val && (val & AMD_EVENT_SELECT) == event) {
				*ctl = val;
				return true;
			}
		}
	}
	return false;
}

TEST_F_TIMEOUT(l2unc, guest_registers_attached_units_and_perf_counts, 600)
{
	bool zen = cpu_family() >= 0x17;
	__u64 ctl = 0;
	int rc;

	ASSERT_EQ(0, vmm_owns(L2_WORK));
	/* UNASSIGN: a boot again after an L2 reset reserves the units anew. */
	rc = kt_sh(self->out, sizeof(self->out),
		   "l2-run " L2_ARGS " " ASSIGN " " UNASSIGN " " ATTACHED_VMM, self->cpus);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	ASSERT_EQ(0, rc);
	/* QEMU, not root, made its console log. */
	EXPECT_TRUE(owned_by_vmm_user(L2_WORK "/console.log"));
	/* Linux names them amd_l2/amd_nb below family 17h, amd_l3/amd_df from it. */
	TH_LOG("emulated host: CPU family 0x%x model 0x%x%s", cpu_family(), cpuinfo_field("model"),
	       genoa_host() ? " (Genoa: the mock plays its units)" : "");
	EXPECT_TRUE(has(self->out, zen ? "KVMAI-UNCORE pmu amd_l3" : "KVMAI-UNCORE pmu amd_l2"));
	EXPECT_TRUE(has(self->out, zen ? "KVMAI-UNCORE pmu amd_df" : "KVMAI-UNCORE pmu amd_nb"));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE perf-exit 0"));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE kmsg"));
	EXPECT_FALSE(has(self->out, "<not supported>"));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE done"));
	/* perf's event=0x1 reached the unit (until the release scrubs it)... */
	ASSERT_TRUE(l3_control_holds(0x1, &ctl));
	TH_LOG("mock L3 control: 0x%llx", (unsigned long long)ctl);
	/* ...and from 17h with the threads and slices the driver chose. */
	if (zen)
		EXPECT_NE(0, ctl & ~(AMD_EVENT_SELECT | AMD_CTL_ENABLE));
}

TEST_F_TIMEOUT(l2unc, guest_without_units_has_no_uncore_pmu, 600)
{
	__u64 ctl;
	int rc;

	rc = kt_sh(self->out, sizeof(self->out),
		   "l2-run " L2_ARGS " -q " KT_KVMAI_QEMU " -- " L2_CPU);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	ASSERT_EQ(0, rc);
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE pmu "));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE kmsg"));
	EXPECT_FALSE(l3_control_holds(0x1, &ctl));
	EXPECT_TRUE(has(self->out, "KVMAI-UNCORE done"));
}

/*
 * AMD's RDPMC 6-9 read the DF counters and 10-15 the L3 counters of the
 * package the CPU is on, whatever the guest's CPUID says, and SVM has no
 * control per index: so a guest of a VM with no unit attached that
 * executes them must exit to this host's KVM and get #GP, as on a host
 * without uncore PMUs, even while a co-tenant's VM has the units attached
 * on the same CPUs and reads them through the same indices.  L2 here is a
 * one-vCPU guest of the KVM selftests library (lib/vm.c) at CPL 0, which
 * a stock guest kernel without uncore driver would be too; the exits are
 * the vCPU's "exits" statistic in this host's KVM.
 *
 * What this cannot show here: TCG gives the emulated host no PMU, so its
 * KVM never runs the mediated vPMU that stops intercepting RDPMC, and
 * QEMU's EPYC models under TCG lack PERFCTR_NB and PERFCTR_LLC, for
 * which the series keeps it intercepted (the decision itself is the
 * series' KUnit suite, kunit_test.c); on hardware with the mediated vPMU
 * on, the same case checks that decision.
 */
TEST_F_TIMEOUT(l2unc, rdpmc_of_uncore_indices_exits_in_a_vm_without_units, 600)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "l2",
				  .units = { KT_MOCK_L3, KT_MOCK_DF }, .cpus = self->cpus };
	struct kt_vm *tenant, *other;
	struct kt_counts c;
	__u32 idx;

	TH_LOG("emulated host: CPU family 0x%x model 0x%x, perfctr_nb %s, perfctr_llc %s",
	       cpu_family(), cpuinfo_field("model"), cpu_flag("perfctr_nb") ? "yes" : "no",
	       cpu_flag("perfctr_llc") ? "yes" : "no");
	ASSERT_EQ(0, kt_cpu_pin(self->cpus));
	tenant = kt_vm_create(0);
	other = kt_vm_create(0);
	ASSERT_TRUE(tenant && other);
	ASSERT_EQ(0, _test_cmd_pmu(&self->nl, &req, NULL)) TH_LOG("%s", self->nl.ext);
	test_cmd_vm_attach(tenant, "l2", KT_MOCK_L3);
	test_cmd_vm_attach(tenant, "l2", KT_MOCK_DF);
	/* The tenant's counters: DF counter 0 is RDPMC 6, L3 counter 0 RDPMC 10. */
	test_cmd_vm_run(tenant, KT_MOCK_DF_CTL0 + 1, 1, KT_WRMSR, TENANT_DF_COUNT, &c);
	test_cmd_vm_run(tenant, KT_MOCK_L3_CTR0, 1, KT_WRMSR, TENANT_L3_COUNT, &c);
	test_cmd_vm_run(tenant, 6, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp);
	EXPECT_EQ(TENANT_DF_COUNT, c.last);
	test_cmd_vm_run(tenant, KT_MOCK_L3_RDPMC0, 1, KT_RDPMC, 0, &c);
	EXPECT_FALSE(c.gp);
	EXPECT_EQ(TENANT_L3_COUNT, c.last);

	for (idx = 6; idx <= 15; idx++) {
		test_cmd_vm_run(other, idx, 1, KT_RDPMC, 0, &c);
		if (c.gp)
			TH_LOG("other VM: RDPMC %u: %llu exits, #GP", idx,
			       (unsigned long long)c.exits);
		else
			TH_LOG("other VM: RDPMC %u: %llu exits, read 0x%llx", idx,
			       (unsigned long long)c.exits, (unsigned long long)c.last);
		EXPECT_LE(1, c.exits) TH_LOG("RDPMC %u did not exit to the host", idx);
		EXPECT_TRUE(c.gp) TH_LOG("RDPMC %u was answered in a VM without units", idx);
	}
	/* And the guest runs on: its next loop starts and ends. */
	test_cmd_vm_run(other, KT_MOCK_L3_RDPMC0, 0, KT_RDPMC, 0, &c);
	kt_vm_destroy(other);
	kt_vm_destroy(tenant);
}

/*
 * A VMM given some other file where the handle should be (here /dev/null
 * as descriptor 3), as a launcher without /dev/kvmai's handles would do,
 * attaches nothing although the units are reserved for its pid: QEMU
 * refuses to start, naming the descriptor, and no guest runs.
 */
TEST_F_TIMEOUT(l2unc, vmm_without_the_handle_gets_no_unit, 600)
{
	__u64 ctl;
	int rc;

	rc = kt_sh(self->out, sizeof(self->out), "exec 3</dev/null; l2-run " L2_ARGS " " ASSIGN
		   " -q " KT_KVMAI_QEMU " -- -accel kvm,uncore-fds=3 " L2_CPU, self->cpus);
	TH_LOG("l2-run (exit %d):\n%s", rc, self->out);
	EXPECT_EQ(3, rc);
	EXPECT_TRUE(has(self->out, "uncore-fds: cannot attach descriptor 3: Invalid argument"));
	EXPECT_FALSE(has(self->out, "KVMAI-UNCORE pmu "));
	EXPECT_FALSE(l3_control_holds(0x1, &ctl));
}

/*
 * As an operator starts a VM with the units attached, in the background:
 * "l2-run" with scenario @scenario and work directory @work, its output in
 * @work.out; self->l2 is that l2-run.
 */
static void start_l2_attached(struct __test_metadata *_metadata, struct _test_data_l2unc *self,
			      const char *work, const char *scenario)
{
	char cmd[1024];

	ASSERT_EQ(0, vmm_owns(work));
	snprintf(cmd, sizeof(cmd),
		 "l2-run -w %s -s %s -a no-kvmapf " ASSIGN " " UNASSIGN " " ATTACHED_VMM
		 " >%s.out 2>&1",
		 work, scenario, self->cpus, work);
	self->l2 = fork();
	ASSERT_LE(0, self->l2);
	if (!self->l2) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
}

/* The host takes the units back, under the running guest: true. */
static bool release_l2(struct __test_metadata *_metadata, struct _test_data_l2unc *self)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "l2" };

	EXPECT_EQ(0, _test_cmd_pmu(&self->nl, &rel, NULL));
	return true;
}

/* msr_reads' line after @prefix: its reads, refusals and ns per read. */
static int msr_reads_of(const char *out, const char *prefix, unsigned long *reads,
			unsigned long *refused, double *ns)
{
	char key[64];
	const char *p;
	double secs;

	snprintf(key, sizeof(key), "%smsr_reads ", prefix);
	p = strstr(out, key);
	if (!p || sscanf(p + strlen(key), "%*s reads %lu refused %lu seconds %lf ns_per_read %lf",
			 reads, refused, &secs, ns) != 4 || secs <= 0)
		return -1;
	return 0;
}

static bool reads_announced(const char *line)
{
	return kt_file_has(READS_WORK "/results.log", line);
}

/*
 * An agent in the guest reads the attached L3 unit's counter MSR: no exit
 * per read.  The host then releases the unit under the running guest, and
 * the same reads exit again, one each.  L1's KVM's exits on reads of that
 * MSR are counted exactly (its kvm_msr tracepoint) over each loop whole:
 * from before L2 boots to L2's revoke-now, which comes after the attached
 * loop, and from there to its done, after the released one.
 */
TEST_F_TIMEOUT(l2unc, guest_msr_reads_exit_only_when_intercepted, 600)
{
	unsigned long att_reads, rev_reads, att_refused, rev_refused;
	long before, at_release = -1, at_done = -1;
	struct kt_l2_msr_exits exits;
	double att_ns, rev_ns;
	static char out[65536];
	int status = -1, ret;

	ret = kt_l2_msr_exits_open(&exits, KT_MOCK_L3_CTR0);
	ASSERT_EQ(0, ret) TH_LOG("cannot count KVM's kvm_msr events: %s", strerror(-ret));
	before = kt_l2_msr_exits_read(&exits);
	ASSERT_LE(0, before);
	start_l2_attached(_metadata, self, READS_WORK, "uncore-reads");
	/* Follow L2 through its announcements until it is done. */
	for (int waited = 0; waited < 4000 && !waitpid(self->l2, &status, WNOHANG); waited++) {
		if (at_release < 0 && reads_announced("KVMAI-UNCORE revoke-now")) {
			at_release = kt_l2_msr_exits_read(&exits);
			release_l2(_metadata, self);
		} else if (at_release >= 0 && at_done < 0 &&
			   reads_announced("KVMAI-UNCORE done")) {
			at_done = kt_l2_msr_exits_read(&exits);
		}
		usleep(100000);
	}
	self->l2 = -1;
	kt_l2_msr_exits_close(&exits);
	ASSERT_LE(0, kt_file_read(READS_WORK ".out", out, sizeof(out)));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("l2-run: %#x\n%s", status, out);
	ASSERT_TRUE(at_release >= 0 && at_done >= 0)
		TH_LOG("L2 never announced its read loops:\n%s", out);
	ASSERT_EQ(0, msr_reads_of(out, "KVMAI-UNCORE attached ", &att_reads, &att_refused,
				  &att_ns)) TH_LOG("%s", out);
	ASSERT_EQ(0, msr_reads_of(out, "KVMAI-UNCORE revoked ", &rev_reads, &rev_refused,
				  &rev_ns)) TH_LOG("%s", out);
	ksft_print_msg("attached: " READS_FMT, att_reads, at_release - before, att_ns,
		       att_refused);
	ksft_print_msg("released: " READS_FMT, rev_reads, at_done - at_release, rev_ns,
		       rev_refused);
	ksft_print_msg("per read: released / attached = %.1fx the time\n", rev_ns / att_ns);
	EXPECT_GE(att_reads, 10000);
	EXPECT_EQ(0, att_refused) TH_LOG("the guest's reads of the attached counter faulted");
	/* L2 touches that MSR only in its loops; L2's kernel does not. */
	EXPECT_EQ(0, at_release - before);
	EXPECT_EQ(rev_reads, at_done - at_release);
	/* Released, the unit reads as stopped counters: no fault either. */
	EXPECT_EQ(0, rev_refused) TH_LOG("the guest's reads of the released counter faulted");
}

/*
 * The host takes the units back while the guest's perf counts on the L3
 * one: the guest's driver keeps reading its counters (RDPMC, which has no
 * fault handler in the kernel) and writing its controls, so each of those
 * must keep working, reading nothing, instead of faulting the guest.
 */
TEST_F_TIMEOUT(l2unc, guest_perf_survives_revocation, 600)
{
	static char out[65536];
	bool released = false;
	int status = -1;

	start_l2_attached(_metadata, self, REVOKE_WORK, "uncore-revoke");
	for (int waited = 0; waited < 4000 && !waitpid(self->l2, &status, WNOHANG); waited++) {
		if (!released && kt_file_has(REVOKE_WORK "/results.log", "KVMAI-UNCORE revoke-now"))
			released = release_l2(_metadata, self);
		usleep(100000);
	}
	self->l2 = -1;
	ASSERT_LE(0, kt_file_read(REVOKE_WORK ".out", out, sizeof(out)));
	TH_LOG("l2-run (status %#x):\n%s", status, out);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_TRUE(released);
	EXPECT_TRUE(has(out, "KVMAI-UNCORE perf-exit 0"));
	EXPECT_FALSE(has(out, "KVMAI-UNCORE kmsg"));
	EXPECT_FALSE(has(out, "KVMAI-UNCORE no uncore pmu"));
	EXPECT_TRUE(has(out, "KVMAI-UNCORE done"));
}

TEST_HARNESS_MAIN
