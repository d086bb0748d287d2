// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the ports registry: every port an enabled group programmed, with
 * the ACS control word it had before, and the one place that writes ACS.
 *
 * A port is shared by reference count when several enabled groups need the
 * same control word on it; the saved word goes back when the last one goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/pci.h>
#include <linux/slab.h>

#include "kvmai.h"

static LIST_HEAD(kvmai_ports);

u16 kvmai_port_read(struct pci_dev *pdev)
{
	u16 ctl = 0;

	pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CTRL, &ctl);
	return ctl;
}

static void kvmai_port_write(struct kvmai_port *port, u16 val, const char *group)
{
	u16 old = kvmai_port_read(port->pdev);

	pci_write_config_word(port->pdev, port->acs_pos + PCI_ACS_CTRL, val);
	pci_info(port->pdev, "kvmai: ACS control %#06x -> %#06x (group %s)\n",
		 old, val, group);
}

struct kvmai_port *kvmai_port_find(struct pci_dev *pdev)
{
	struct kvmai_port *port;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(port, &kvmai_ports, node)
		if (port->pdev == pdev)
			return port;
	return NULL;
}

int kvmai_port_check(struct pci_dev *pdev, u16 want, struct netlink_ext_ack *extack)
{
	struct kvmai_port *port = kvmai_port_find(pdev);

	if (port && port->target != want) {
		NL_SET_ERR_MSG_FMT(extack,
				   "port %s is programmed for another group with ACS control %#06x, this group needs %#06x",
				   pci_name(pdev), port->target, want);
		return -EBUSY;
	}
	return 0;
}

struct kvmai_port *kvmai_port_get(struct pci_dev *pdev, u16 want, const char *group,
				  struct netlink_ext_ack *extack)
{
	struct kvmai_port *port;
	int ret;

	ret = kvmai_port_check(pdev, want, extack);
	if (ret)
		return ERR_PTR(ret);

	port = kvmai_port_find(pdev);
	if (port) {
		port->users++;
		return port;
	}

	port = kzalloc_obj(*port);
	if (!port)
		return ERR_PTR(-ENOMEM);
	port->pdev = pci_dev_get(pdev);
	port->acs_pos = pdev->acs_cap;
	pci_read_config_word(pdev, port->acs_pos + PCI_ACS_CAP, &port->cap);
	port->saved = kvmai_port_read(pdev);
	port->target = want;
	port->users = 1;
	list_add_tail(&port->node, &kvmai_ports);
	if (want != port->saved)
		kvmai_port_write(port, want, group);
	return port;
}

void kvmai_port_put(struct kvmai_port *port, const char *group)
{
	u16 cur;

	lockdep_assert_held(&kvmai_lock);
	if (--port->users)
		return;

	cur = kvmai_port_read(port->pdev);
	if (cur != port->target)
		pci_warn(port->pdev,
			 "kvmai: ACS control changed behind kvmai (%#06x, expected %#06x)\n",
			 cur, port->target);
	if (cur != port->saved)
		kvmai_port_write(port, port->saved, group);
	list_del(&port->node);
	pci_dev_put(port->pdev);
	kfree(port);
}
