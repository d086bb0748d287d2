/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - the live PCI topology around some devices, as the planner's
 * input (topo.c).  Building it requires kvmai_lock.
 */
#ifndef _KVMAI_TOPO_H
#define _KVMAI_TOPO_H

#include <linux/types.h>

#include "plan.h"

struct pci_bus;
struct pci_dev;

struct kvmai_topo {
	int n;
	struct kvmai_node *nodes;
	struct pci_dev **pdevs;		/* NULL for host bridges */
	struct pci_bus **buses;		/* the root bus of host bridge nodes */
};

int kvmai_topo_build(struct pci_dev *const *members, unsigned int nmembers,
		     struct kvmai_topo *topo);
void kvmai_topo_free(struct kvmai_topo *topo);
const char *kvmai_topo_name(const struct kvmai_topo *topo, int i, char *buf, size_t len);

#endif /* _KVMAI_TOPO_H */
