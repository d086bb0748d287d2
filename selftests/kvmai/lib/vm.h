/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A KVM guest that accesses one MSR, or reads one counter with RDPMC, in a
 * loop, written in C on the kernel's KVM selftests library: the guest
 * pmu_exit_test and pmu_exit_bench count the VM exits of.  And the kvm-ai
 * series' uncore capability: a reservation's handle from /dev/kvmai
 * attached to such a VM.
 */
#ifndef KT_VM_H
#define KT_VM_H

#include "kt.h"

#ifndef KVM_CAP_X86_UNCORE_PASSTHROUGH
#define KVM_CAP_X86_UNCORE_PASSTHROUGH 1000	/* kvm-ai series, out of tree */
#endif
#ifndef KVM_X86_UNCORE_DETACH
#define KVM_X86_UNCORE_DETACH 0x1ULL
#endif

/* A VM with one vCPU, unknown MSRs sent to userspace. */
struct kt_vm;

/* What the guest does with its MSR (or, for RDPMC, counter index). */
enum kt_op { KT_RDMSR, KT_WRMSR, KT_RDPMC };

/* One run of the guest's loop. */
struct kt_counts {
	__u64 exits;		/* VM exits during the loop */
	unsigned int to_user;	/* of which MSR exits to userspace */
	__u64 ns;		/* its wall time */
	__u64 last;		/* what the last access read (or wrote) */
	bool gp;		/* the guest took a #GP and stopped */
};

/*
 * A VM whose KVM_CAP_PMU_CAPABILITY is @pmu_caps (0: left as KVM has it),
 * or NULL.
 */
struct kt_vm *kt_vm_create(__u64 pmu_caps);
void kt_vm_destroy(struct kt_vm *vm);
/* The VM's file descriptor, for ioctls of a test's own. */
int kt_vm_fd(const struct kt_vm *vm);
/* KVM_CHECK_EXTENSION on the VM, and on /dev/kvm (-errno without it). */
int kt_vm_check_cap(const struct kt_vm *vm, long cap);
int kt_kvm_check_cap(long cap);

/*
 * Runs the guest's loop once: @loops times @op on @msr (WRMSR writes
 * @value, high half 0).  0, or -EPROTO for an exit the loop does not take.
 */
int _test_cmd_vm_run(struct kt_vm *vm, __u32 msr, __u32 loops, enum kt_op op,
		     __u32 value, struct kt_counts *c);
#define test_cmd_vm_run(vm, msr, loops, op, value, c) \
	__kt_cmd(_test_cmd_vm_run(vm, msr, loops, op, value, c))

/* /dev/kvmai: a handle on unit @unit of PMU record @record: fd or -errno. */
int _test_cmd_unit_fd(const char *record, const char *unit);
#define test_err_unit_fd(err, record, unit) __kt_err(err, _test_cmd_unit_fd(record, unit))

/* KVM_CAP_X86_UNCORE_PASSTHROUGH with handle @fd: attach, or detach. */
int _test_cmd_vm_attach_fd(struct kt_vm *vm, int fd);
int _test_cmd_vm_detach_fd(struct kt_vm *vm, int fd);
#define test_cmd_vm_attach_fd(vm, fd) __kt_cmd(_test_cmd_vm_attach_fd(vm, fd))
#define test_err_vm_attach_fd(err, vm, fd) __kt_err(err, _test_cmd_vm_attach_fd(vm, fd))
#define test_err_vm_detach_fd(err, vm, fd) __kt_err(err, _test_cmd_vm_detach_fd(vm, fd))
/* Both: takes the handle of @unit of @record, attaches (detaches), closes it. */
int _test_cmd_vm_attach(struct kt_vm *vm, const char *record, const char *unit);
int _test_cmd_vm_detach(struct kt_vm *vm, const char *record, const char *unit);
#define test_cmd_vm_attach(vm, record, unit) __kt_cmd(_test_cmd_vm_attach(vm, record, unit))
#define test_err_vm_attach(err, vm, record, unit) \
	__kt_err(err, _test_cmd_vm_attach(vm, record, unit))
#define test_cmd_vm_detach(vm, record, unit) __kt_cmd(_test_cmd_vm_detach(vm, record, unit))
#define test_err_vm_detach(err, vm, record, unit) \
	__kt_err(err, _test_cmd_vm_detach(vm, record, unit))

#endif /* KT_VM_H */
