// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark, not a test: what a guest's uncore counter read costs on each
 * path.  Unowned, the counter MSR is unknown to KVM and goes to the VMM, as
 * today.  Once the VM owns the unit (kvmai reservation +
 * KVM_CAP_X86_UNCORE_PASSTHROUGH, kvm-ai series): RDMSR of the counter is
 * not intercepted; RDPMC (what Linux's AMD uncore driver reads with) is
 * intercepted and answered in KVM.  A KVM guest in the emulated host reads
 * the mock L3 unit's first counter N times, R rounds each way; the figures
 * are VM exits and wall time per read, and each path's ratio against the
 * unowned read of the same run.  Nothing passes or fails.
 *
 *   pmu_exit_bench [N [R]]    (default 2000 reads, 5 rounds)
 *
 * Under TCG the emulated exit is far dearer than on hardware (about 1.3k to
 * 2k cycles there, more through the VMM): compare the ratio, not the times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/kvm.h>
#include <linux/kvmai.h>

#include "lib/sys.h"
#include "lib/module.h"
#include "lib/pmu.h"
#include "lib/vm.h"

struct tally {
	__u64 exits, to_user, ns;
};

static int rounds(struct kt_vm *vm, enum kt_op op, __u32 n, int r, struct tally *t)
{
	__u32 what = op == KT_RDPMC ? KT_MOCK_L3_RDPMC0 : KT_MOCK_L3_CTR0;
	struct kt_counts c;
	int i, ret;

	*t = (struct tally){};
	for (i = 0; i < r; i++) {
		ret = _test_cmd_vm_run(vm, what, n, op, 0, &c);
		if (ret)
			return ret;
		if (c.gp)
			return -EFAULT;
		t->exits += c.exits;
		t->to_user += c.to_user;
		t->ns += c.ns;
	}
	return 0;
}

static void show(const char *what, const struct tally *t, long reads,
		 const struct tally *base)
{
	printf("pmu_exit_bench: %-24s %8.3f exits/read (%.3f to the VMM)  %9.2f us/read",
	       what, (double)t->exits / reads, (double)t->to_user / reads,
	       t->ns / 1e3 / reads);
	if (base)
		printf("  unowned/this = %.1f", (double)base->ns / (t->ns ? t->ns : 1));
	printf("\n");
}

int main(int argc, char **argv)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "bench",
				  .units = { KT_MOCK_L3 } };
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "bench" };
	long n = argc > 1 ? strtol(argv[1], NULL, 0) : 2000;
	int r = argc > 2 ? atoi(argv[2]) : 5, ret;
	struct tally intercepted, owned, rdpmc;
	struct kt_nl nl;
	struct kt_vm *vm;
	char pkg0[64];

	if (n < 1 || n > 1000000 || r < 1) {
		fprintf(stderr, "usage: pmu_exit_bench [READS (1-1000000) [ROUNDS]]\n");
		return 2;
	}
	if (_test_cmd_mod_load(KT_MOD_KVMAI, NULL) || _test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL)) {
		fprintf(stderr, "pmu_exit_bench: cannot load kvmai or its mock provider\n");
		return 1;
	}
	if (kt_nl_open(&nl) || kt_cpu_package(0, pkg0, sizeof(pkg0)) <= 0 || kt_cpu_pin(pkg0)) {
		fprintf(stderr, "pmu_exit_bench: no kvmai family or package 0\n");
		return 1;
	}
	req.cpus = pkg0;
	vm = kt_vm_create(0);
	if (!vm) {
		fprintf(stderr, "pmu_exit_bench: no KVM guest\n");
		return 1;
	}

	ret = rounds(vm, KT_RDMSR, n, r, &intercepted);
	if (ret) {
		fprintf(stderr, "pmu_exit_bench: guest failed: %d\n", ret);
		return 1;
	}
	printf("pmu_exit_bench: %ld reads of MSR %#x, %d rounds each (TCG guest: compare ratios)\n",
	       n, KT_MOCK_L3_CTR0, r);
	show("rdmsr, unowned", &intercepted, n * r, NULL);

	if (kt_kvm_check_cap(KVM_CAP_X86_UNCORE_PASSTHROUGH) <= 0) {
		printf("pmu_exit_bench: owned: n/a, KVM without KVM_CAP_X86_UNCORE_PASSTHROUGH\n");
		return 0;
	}
	ret = _test_cmd_pmu(&nl, &req, NULL);
	if (!ret)
		ret = _test_cmd_vm_attach(vm, "bench", KT_MOCK_L3);
	if (ret) {
		fprintf(stderr, "pmu_exit_bench: cannot own %s: %s\n", KT_MOCK_L3,
			*nl.ext ? nl.ext : strerror(-ret));
		return 1;
	}
	ret = rounds(vm, KT_RDMSR, n, r, &owned);
	if (!ret)
		ret = rounds(vm, KT_RDPMC, n, r, &rdpmc);
	_test_cmd_pmu(&nl, &rel, NULL);
	if (ret) {
		fprintf(stderr, "pmu_exit_bench: guest failed: %d\n", ret);
		return 1;
	}
	show("rdmsr, owned", &owned, n * r, &intercepted);
	show("rdpmc, owned (in KVM)", &rdpmc, n * r, &intercepted);
	kt_vm_destroy(vm);
	kt_nl_close(&nl);
	return 0;
}
