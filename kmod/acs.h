/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - the ports registry (acs.c): every port an enabled group
 * programmed, and the one place that writes ACS.  All but
 * kvmai_port_read() and kvmai_ports_destroy() require kvmai_lock.
 */
#ifndef _KVMAI_ACS_H
#define _KVMAI_ACS_H

#include <linux/list.h>
#include <linux/types.h>

struct netlink_ext_ack;
struct pci_dev;

/* A port some enabled group programmed; shared by reference count. */
struct kvmai_port {
	struct list_head node;		/* in kvmai_ports */
	struct pci_dev *pdev;		/* reference held */
	u16 acs_pos;
	u16 cap;
	u16 saved;			/* ACS control before kvmai, restored at 0 users */
	u16 target;
	unsigned int users;
	bool restore_pending;		/* no users, saved word not back yet */
};

struct kvmai_port *kvmai_port_find(struct pci_dev *pdev);
struct kvmai_port *kvmai_port_get(struct pci_dev *pdev, u16 want, const char *group,
				  struct netlink_ext_ack *extack);
void kvmai_port_put(struct kvmai_port *port, const char *group);
u16 kvmai_port_read(struct pci_dev *pdev);
int kvmai_port_check(struct pci_dev *pdev, u16 want, struct netlink_ext_ack *extack);
unsigned int kvmai_ports_restore_pending(void);
void kvmai_ports_device_removed(struct pci_dev *pdev);
void kvmai_ports_destroy(void);

#endif /* _KVMAI_ACS_H */
