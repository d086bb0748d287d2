// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - how groups learn that the world changed under them: a member
 * leaving vfio-pci or the bus (PCI bus notifier) and the owning netlink
 * socket closing (netlink notifier; a VMM killed by SIGKILL included).
 */
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pci.h>

#include "kvmai.h"

/* Called by the driver core with the device lock held (see lock order). */
static int kvmai_pci_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	switch (action) {
	case BUS_NOTIFY_UNBIND_DRIVER:
	case BUS_NOTIFY_UNBOUND_DRIVER:
		/* Both: a member added while the unbind was under way is caught too. */
		kvmai_groups_device_unbind(pdev);
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		kvmai_groups_device_removed(pdev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_pci_nb = {
	.notifier_call = kvmai_pci_notify,
};

static int kvmai_netlink_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct netlink_notify *n = data;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC || !n->portid)
		return NOTIFY_DONE;
	kvmai_groups_release_owner(n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_netlink_nb = {
	.notifier_call = kvmai_netlink_notify,
};

int kvmai_notifiers_register(void)
{
	int ret;

	ret = bus_register_notifier(&pci_bus_type, &kvmai_pci_nb);
	if (ret)
		return ret;
	ret = netlink_register_notifier(&kvmai_netlink_nb);
	if (ret)
		bus_unregister_notifier(&pci_bus_type, &kvmai_pci_nb);
	return ret;
}

void kvmai_notifiers_unregister(void)
{
	netlink_unregister_notifier(&kvmai_netlink_nb);
	bus_unregister_notifier(&pci_bus_type, &kvmai_pci_nb);
}
