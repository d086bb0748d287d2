/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - uncore counter pages mapped into the VM owning their unit, as a
 * mediated device (kernels with VFIO_MDEV, on x86): the devices' parents
 * (counters.c), each device (ctrdev.c), and the provider inside kvmai
 * (counters_intel.c).  Providers register with kvmai_counters_register()
 * (<kvmai/counter_page.h>).
 */
#ifndef _KVMAI_COUNTERS_H
#define _KVMAI_COUNTERS_H

#include <linux/device.h>

#ifdef KVMAI_HAVE_COUNTERS
#include <linux/mdev.h>
#include <linux/rwsem.h>
#include <linux/vfio.h>

#include <uapi/linux/kvmai.h>
#include <uapi/linux/pci_regs.h>

#include "kvmai/counter_page.h"

struct kvmai_ctrdev;

struct kvmai_ctr_parent {
	struct device dev;
	struct mdev_parent parent;
	struct mdev_type type;
	struct mdev_type *types[1];
	struct kvmai_counter_page *cp;
	void __iomem *regs;		/* @cp's MMIO page, for read() */
	struct list_head node;		/* in kvmai_ctr_parents */
	struct kvmai_ctrdev *cd;	/* its one device, under kvmai_ctr_lock */
};

struct kvmai_ctrdev {
	struct vfio_device vdev;
	struct kvmai_ctr_parent *kp;
	char vm[KVMAI_VM_LEN];		/* the owner it was created for */
	struct rw_semaphore lock;	/* faults, config and reads vs. revoke */
	bool revoked;
	u8 config[PCI_CFG_SPACE_SIZE];
	void *layout;			/* BAR2 */
	struct page *ones;		/* mapped once revoked */
};

/* ctrdev.c */
extern const struct vfio_device_ops kvmai_ctrdev_ops;
int kvmai_ctrdev_init(struct kvmai_ctrdev *cd);
void kvmai_ctrdev_free(struct kvmai_ctrdev *cd);
void kvmai_ctrdev_revoke(struct kvmai_ctrdev *cd);

/* counters.c */
int kvmai_counters_init(void);
void kvmai_counters_exit(void);
const struct bus_type *kvmai_mdev_bus(void);
/* A VM gave @unit back (pmu.c, under kvmai_lock). */
void kvmai_counters_revoke(const char *unit, const char *vm);

/* counters_intel.c */
void kvmai_counters_intel_init(void);
void kvmai_counters_intel_exit(void);
#else
static inline int kvmai_counters_init(void) { return 0; }
static inline void kvmai_counters_exit(void) { }
static inline const struct bus_type *kvmai_mdev_bus(void) { return NULL; }
static inline void kvmai_counters_revoke(const char *unit, const char *vm) { }
static inline void kvmai_counters_intel_init(void) { }
static inline void kvmai_counters_intel_exit(void) { }
#endif

/* Whether @dev is a mediated device (on the mdev bus kvmai_mdev_bus() found). */
static inline bool kvmai_is_mdev(const struct device *dev)
{
	const struct bus_type *bus = kvmai_mdev_bus();

	return bus && dev->bus == bus;
}

#endif /* _KVMAI_COUNTERS_H */
