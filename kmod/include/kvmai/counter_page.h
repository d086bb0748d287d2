/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - uncore counter pages a VM may read without exits.
 *
 * Some uncore units keep free-running counters in MMIO (or in the
 * configuration space of an uncore PCI function): a page that needs no
 * programming and that a guest could read at memory speed.  A provider
 * (the unit's driver, or kvmai's test-only mock) registers the page here;
 * kvmai then offers it as a mediated device (struct kvmai_ctrdev in
 * <uapi/linux/kvmai_counters.h>) that can be created only while a VM owns
 * the unit on the package the page counts, and that is revoked when the VM
 * gives the unit back.
 */
#ifndef _KVMAI_COUNTER_PAGE_H
#define _KVMAI_COUNTER_PAGE_H

#include <linux/types.h>

struct page;
struct kvmai_ctr_parent;

/* One counter: a 64-bit word of the page; see struct kvmai_ctrdev_counter. */
struct kvmai_counter_desc {
	u32 offset;
	u8 width;
	u8 kind;		/* enum kvmai_ctr_kind */
	u16 index;
	u64 scale;
	const char *name;
};

struct kvmai_counter_page {
	/* The uncore unit (perf PMU name) whose ownership the page follows. */
	const char *unit;
	/* The logical package whose traffic the counters see. */
	unsigned int package;
	/* The counters: MMIO at @phys, or (the test provider) memory @page. */
	phys_addr_t phys;
	struct page *page;
	size_t size;		/* a multiple of PAGE_SIZE */
	const struct kvmai_counter_desc *counters;
	unsigned int nr_counters;
	/*
	 * Non-NULL when the page also holds registers the unit's owner is not
	 * entitled to (another stack's or die's counters): it is never mapped,
	 * and the refusal says what else is there.
	 */
	const char *shares_with;

	struct kvmai_ctr_parent *priv;	/* kvmai's */
};

int kvmai_counters_register(struct kvmai_counter_page *cp);
void kvmai_counters_unregister(struct kvmai_counter_page *cp);

#endif /* _KVMAI_COUNTER_PAGE_H */
