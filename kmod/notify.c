// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - how groups learn that the world changed under them: a member
 * leaving vfio-pci or the bus (PCI bus notifier), an mdev member leaving
 * its driver or the bus (mdev bus notifier), the owning netlink socket
 * closing (netlink notifier; a VMM killed by SIGKILL included), and, on
 * kernels with the kvm-ai series, a user opening or closing a member or
 * another mdev of a member's parent (vfio).
 */
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/vfio.h>

#include "counters.h"
#include "group.h"
#include "notify.h"
#include "pmu.h"

/* Called by the driver core with the device lock held (see lock order). */
static int kvmai_pci_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	switch (action) {
	case BUS_NOTIFY_UNBIND_DRIVER:
	case BUS_NOTIFY_UNBOUND_DRIVER:
		/* Both: a member added while the unbind was under way is caught too. */
		kvmai_groups_device_unbind(&pdev->dev);
		break;
	case BUS_NOTIFY_ADD_DEVICE:
		kvmai_groups_device_added(pdev);
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		kvmai_groups_device_removed(&pdev->dev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_pci_nb = {
	.notifier_call = kvmai_pci_notify,
};

/*
 * The same for mdevs.  A new mdev needs no check: it sends nothing until a
 * user opens it, and vfio says when one does.
 */
static int kvmai_mdev_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct device *dev = data;

	switch (action) {
	case BUS_NOTIFY_UNBIND_DRIVER:
	case BUS_NOTIFY_UNBOUND_DRIVER:
		kvmai_groups_device_unbind(dev);
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		kvmai_groups_device_removed(dev);
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_mdev_nb = {
	.notifier_call = kvmai_mdev_notify,
};

/* After kvmai_counters_init(), which finds the mdev bus. */
int kvmai_mdev_notifier_register(void)
{
	const struct bus_type *bus = kvmai_mdev_bus();

	return bus ? bus_register_notifier(bus, &kvmai_mdev_nb) : 0;
}

void kvmai_mdev_notifier_unregister(void)
{
	const struct bus_type *bus = kvmai_mdev_bus();

	if (bus)
		bus_unregister_notifier(bus, &kvmai_mdev_nb);
}

static int kvmai_netlink_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct netlink_notify *n = data;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC || !n->portid)
		return NOTIFY_DONE;
	kvmai_groups_release_owner(n->net, n->portid);
	kvmai_pmu_release_owner(n->net, n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_netlink_nb = {
	.notifier_call = kvmai_netlink_notify,
};

#ifdef KVMAI_HAVE_VFIO_NOTIFY
/*
 * A user opened a device (before the open returns to it), or let go of it
 * (last close, even when killed).  Runs under the device set's lock.
 */
static int kvmai_vfio_notify(struct notifier_block *nb, unsigned long event, void *data)
{
	struct vfio_device *vdev = data;

	if (!dev_is_pci(vdev->dev) && !kvmai_is_mdev(vdev->dev))
		return NOTIFY_DONE;
	if (event == VFIO_DEVICE_NOTIFY_OPEN)
		kvmai_groups_device_opened(vdev->dev);
	else if (event == VFIO_DEVICE_NOTIFY_CLOSE)
		kvmai_groups_device_closed(vdev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block kvmai_vfio_nb = {
	.notifier_call = kvmai_vfio_notify,
};

static int kvmai_vfio_register(void)
{
	return vfio_register_device_notifier(&kvmai_vfio_nb);
}

static void kvmai_vfio_unregister(void)
{
	vfio_unregister_device_notifier(&kvmai_vfio_nb);
}
#else
static int kvmai_vfio_register(void)
{
	return 0;
}

static void kvmai_vfio_unregister(void)
{
}
#endif

int kvmai_notifiers_register(void)
{
	int ret;

	ret = bus_register_notifier(&pci_bus_type, &kvmai_pci_nb);
	if (ret)
		return ret;
	ret = netlink_register_notifier(&kvmai_netlink_nb);
	if (ret)
		goto err_bus;
	ret = kvmai_vfio_register();
	if (ret)
		goto err_netlink;
	return 0;

err_netlink:
	netlink_unregister_notifier(&kvmai_netlink_nb);
err_bus:
	bus_unregister_notifier(&pci_bus_type, &kvmai_pci_nb);
	return ret;
}

void kvmai_notifiers_unregister(void)
{
	kvmai_vfio_unregister();
	netlink_unregister_notifier(&kvmai_netlink_nb);
	bus_unregister_notifier(&pci_bus_type, &kvmai_pci_nb);
}
