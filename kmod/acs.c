// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the ports registry: every port an enabled group programmed, with
 * the ACS control word it had before, and the one place that writes ACS.
 *
 * A port is shared by reference count when several enabled groups need the
 * same control word on it; the saved word goes back when the last one goes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
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

#ifdef KVMAI_HAVE_ACS_OVERRIDE
/*
 * Through the PCI core: the change survives the kernel's reprogramming of
 * ACS after a reset, is refused during one, and the core logs it.  Setting
 * the saved word drops the override, which restores the kernel's policy.
 */
static int kvmai_port_write(struct kvmai_port *port, u16 val, const char *group)
{
	u16 mask = KVMAI_ACS_REDIR | PCI_ACS_DT;
	int ret, tries = 0;

	if (val == port->saved)
		mask = 0;
	mask &= port->cap;
	/* Restoring must not fail: wait out a reset (a few seconds at most). */
	while ((ret = pci_acs_override(port->pdev, mask, val)) == -EBUSY &&
	       !mask && ++tries < 100)
		msleep(50);
	if (ret)
		pci_warn(port->pdev, "kvmai: ACS override for group %s failed: %d\n", group, ret);
	return ret;
}
#else
static int kvmai_port_write(struct kvmai_port *port, u16 val, const char *group)
{
	u16 old = kvmai_port_read(port->pdev);

	pci_write_config_word(port->pdev, port->acs_pos + PCI_ACS_CTRL, val);
	pci_info(port->pdev, "kvmai: ACS control %#06x -> %#06x (group %s)\n",
		 old, val, group);
	return 0;
}
#endif

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
		NL_SET_ERR_MSG_FMT(extack, "port %s holds ACS %#06x for another group, not %#06x",
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
	if (want != port->saved) {
		ret = kvmai_port_write(port, want, group);
		if (ret) {
			NL_SET_ERR_MSG_FMT(extack, "port %s: ACS change refused (%d)%s",
					   pci_name(pdev), ret,
					   ret == -EBUSY ? ": it is being reset, try again" : "");
			pci_dev_put(port->pdev);
			kfree(port);
			return ERR_PTR(ret);
		}
	}
	list_add_tail(&port->node, &kvmai_ports);
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
#ifdef KVMAI_HAVE_ACS_OVERRIDE
	/* The override must go even if the word already looks restored. */
	kvmai_port_write(port, port->saved, group);
#else
	if (cur != port->saved)
		kvmai_port_write(port, port->saved, group);
#endif
	list_del(&port->node);
	pci_dev_put(port->pdev);
	kfree(port);
}
