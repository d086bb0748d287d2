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

#endif /* KT_L2_H */
