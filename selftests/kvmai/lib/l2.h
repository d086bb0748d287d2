/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the nested tests count while a guest of the emulated host (L2)
 * runs: L1's KVM statistics of the one VM it runs, L2's QEMU.
 */
#ifndef KT_L2_H
#define KT_L2_H

#include "kt.h"

/* What L2 boots, in a host profile with the l2 part (vmhost/aihost.toml). */
#define KT_L2_KERNEL "/usr/share/kvmai-l2/vmlinuz"
#define KT_L2_SKIP "emulated host booted without guests of its own (--profile nested)"
/* kvm-ai's QEMU, in a profile with the kvmai-qemu part when make qemu built it. */
#define KT_KVMAI_QEMU "/usr/libexec/kvmai/qemu-system-x86_64"
#define KT_KVMAI_QEMU_MISSING "no kvm-ai QEMU at " KT_KVMAI_QEMU " (make qemu)"

/* L1's KVM statistics of the VM running L2, at one moment. */
struct kt_l2_exits {
	double t;		/* CLOCK_MONOTONIC, seconds */
	long io, mmio, all;	/* io_exits, mmio_exits, exits; -1 if unknown */
};

/* Statistic @name of the one VM L1's KVM runs (debugfs), or -1. */
long kt_l2_stat(const char *name);
void kt_l2_exits_now(struct kt_l2_exits *e);
/* Waits @start_us, then samples @from and, @len_us later, @to; true. */
bool kt_l2_exits_window(struct kt_l2_exits *from, struct kt_l2_exits *to,
			unsigned int start_us, unsigned int len_us);
/*
 * The I/O exits of a loop L2 ran between two quiet stretches, counted
 * whole from @n samples taken around it: the rise of at least @min_rise
 * from the last stretch of @quiet_s seconds or more without an I/O exit
 * before it to the first such stretch after it.  -1 if there is none.
 */
long kt_l2_io_rise(const struct kt_l2_exits *s, int n, double quiet_s, long min_rise);

/*
 * L2's reads of one MSR that exit to L1's KVM, counted exactly: KVM's
 * kvm_msr tracepoint, filtered to reads of that MSR, as a counting perf
 * event on every CPU of L1 (what 'perf stat -a -e kvm:kvm_msr --filter'
 * counts).  KVM traces each RDMSR it handles, answered or refused, and
 * none of the reads a guest makes without an exit.
 */
#define KT_L2_MAX_CPUS 64
struct kt_l2_msr_exits {
	int fd[KT_L2_MAX_CPUS];
	int n;
};

/* Starts counting L2's exits on reads of MSR @msr: 0 or -errno. */
int kt_l2_msr_exits_open(struct kt_l2_msr_exits *c, __u32 msr);
/* The exits counted since kt_l2_msr_exits_open(), or -1. */
long kt_l2_msr_exits_read(const struct kt_l2_msr_exits *c);
void kt_l2_msr_exits_close(struct kt_l2_msr_exits *c);

#endif /* KT_L2_H */
