/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * kvmai counters device: what a guest sees of a host uncore unit whose
 * free-running counters kvmai maps into it read-only.
 *
 * The device is a PCI function of class 0x11 (signal processing
 * controller), subclass 0x01 (performance counters), programming
 * interface 0, with:
 *
 *   BAR0  the unit's counter page(s), read-only.  The VMM maps them
 *         straight into the guest: reads never leave the guest.
 *   BAR2  the layout: struct kvmai_ctrdev_layout, then nr_counters
 *         struct kvmai_ctrdev_counter.  Read-only, emulated: read it once.
 *
 * Its vendor-specific capability (PCI capability ID 0x09) carries
 * KVMAI_CTRDEV_MAGIC after the capability's 3-byte header, so that a guest
 * finds the device by class and capability, never by vendor/device ID
 * (the IDs kvmai uses are not allocated to it).  All fields are little
 * endian.
 *
 * When the host takes the unit back, BAR0 reads all ones (as a PCIe
 * function that went away does) and the layout's state reads
 * KVMAI_CTRDEV_REVOKED; neither ever changes back.
 */
#ifndef _UAPI_LINUX_KVMAI_COUNTERS_H
#define _UAPI_LINUX_KVMAI_COUNTERS_H

#include <linux/types.h>

#define KVMAI_CTRDEV_CLASS	0x110100	/* class, subclass, prog-if */
#define KVMAI_CTRDEV_MAGIC	0x4941564bU	/* "KVAI" */
#define KVMAI_CTRDEV_VERSION	1
#define KVMAI_CTRDEV_NAME_LEN	32

/**
 * enum kvmai_ctr_kind - What a counter counts.
 * @KVMAI_CTR_CLOCK: a free-running clock; scale is its frequency in Hz.
 *   Readers prefer it to their own clock: it is sampled with the counters.
 * @KVMAI_CTR_PCIE_IN: bytes written by devices below PCIe stack @index
 *   towards the host (inbound); scale is bytes per count.
 * @KVMAI_CTR_PCIE_OUT: bytes the devices below stack @index read from the
 *   host (outbound).
 * @KVMAI_CTR_MEM_READ: bytes read from memory channel @index.
 * @KVMAI_CTR_MEM_WRITE: bytes written to memory channel @index.
 */
enum kvmai_ctr_kind {
	KVMAI_CTR_CLOCK = 1,
	KVMAI_CTR_PCIE_IN,
	KVMAI_CTR_PCIE_OUT,
	KVMAI_CTR_MEM_READ,
	KVMAI_CTR_MEM_WRITE,
};

enum kvmai_ctrdev_state {
	KVMAI_CTRDEV_LIVE = 0,
	KVMAI_CTRDEV_REVOKED = 1,
};

/* BAR2, offset 0. */
struct kvmai_ctrdev_layout {
	__le32 magic;			/* KVMAI_CTRDEV_MAGIC */
	__le16 version;			/* KVMAI_CTRDEV_VERSION */
	__le16 nr_counters;
	__le32 state;			/* enum kvmai_ctrdev_state */
	__le32 bar0_size;		/* bytes */
	char unit[KVMAI_CTRDEV_NAME_LEN];	/* host unit, NUL-terminated */
};

/* BAR2, after the layout, one per counter. */
struct kvmai_ctrdev_counter {
	__le32 offset;			/* in BAR0; 8-byte aligned 64-bit word */
	__u8 width;			/* counting bits; it wraps at 2^width */
	__u8 kind;			/* enum kvmai_ctr_kind */
	__le16 index;			/* PCIe stack or memory channel */
	__le64 scale;			/* bytes per count; Hz for a clock */
	char name[16];			/* the host driver's name, NUL-terminated */
};

#endif /* _UAPI_LINUX_KVMAI_COUNTERS_H */
