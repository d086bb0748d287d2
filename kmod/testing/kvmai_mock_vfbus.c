// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai_mock_vfbus - for kvmai's tests only, never for production: an
 * SR-IOV PF whose VFs have routing IDs on the bus after the PF's, as the
 * VFs of a PF with many of them do on real hardware.  The kernel puts such
 * VFs on a virtual bus of their own (virtfn_add_bus()), which no bridge
 * leads to; kvmai must still count them as below the port above the PF.
 *
 * QEMU builds every VF on its PF's own bus (it refuses routing IDs past
 * it), so this module stands between the kernel and one PF's config space,
 * through the pci_ops of the PF's bus:
 *  - the PF's First VF Offset reads one bus (0x100) further than QEMU's
 *    while NumVFs is not 0;
 *  - config accesses to the VFs' routing IDs on the next bus go to the VFs
 *    QEMU built on the PF's bus, at the same devfn;
 *  - the bus-number ranges of the PF's bus and of the buses above it, up to
 *    the first that holds the next number already (a pxb-pcie host bridge's
 *    ends at its last bus), grow by it, as firmware reserves it.
 * Everything else is the kernel's own: when the PF's driver enables VFs,
 * iov.c creates the virtual bus and real VFs (is_virtfn, physfn) on it.
 *
 * The next bus number must be free, so the PF must be the last one below
 * its ports.  A VF's DMA would carry QEMU's routing ID, not the one the
 * kernel knows; the tests make none.  The module stays pinned while the
 * virtual bus has VFs, so that nothing reads them through its pci_ops
 * after it is gone; its config-space callers must be done when it is
 * unloaded (x86 config reads take no lock that pci_bus_set_ops() waits on).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/pci.h>

/* One bus further: every VF keeps its devfn and moves to the next bus. */
#define VFBUS_SHIFT	0x100
/* Far more levels than the emulated host has between a port and a PF. */
#define VFBUS_MAX_LEVELS	8

static char *pf;
module_param(pf, charp, 0444);
MODULE_PARM_DESC(pf, "the SR-IOV PF whose VFs go to the next bus (domain:bus:dev.fn)");

static struct {
	struct pci_dev *pdev;
	struct pci_bus *bus;		/* the PF's bus, whose pci_ops this wraps */
	struct pci_ops *orig;
	struct pci_ops ops;
	int sriov;			/* the PF's SR-IOV capability */
	int next;			/* the VFs' bus number */
	u16 first, stride, total;	/* QEMU's VF routing, on the PF's bus */
	/* Buses whose range grew, PF's bus first, and their old ends. */
	struct pci_bus *grown[VFBUS_MAX_LEVELS];
	resource_size_t old_end[VFBUS_MAX_LEVELS];
	int ngrown;
} vfbus;

static bool vfbus_vf_devfn(unsigned int devfn)
{
	unsigned int d = devfn - vfbus.first;

	return devfn >= vfbus.first && d % vfbus.stride == 0 && d / vfbus.stride < vfbus.total;
}

/* Does [where, where + size) touch the First VF Offset field? */
static bool vfbus_offset_field(struct pci_bus *bus, unsigned int devfn, int where, int size)
{
	int field = vfbus.sriov + PCI_SRIOV_VF_OFFSET;

	return bus == vfbus.bus && devfn == vfbus.pdev->devfn &&
	       where < field + 2 && where + size > field;
}

static int vfbus_read(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 *val)
{
	int dword = vfbus.sriov + PCI_SRIOV_VF_OFFSET, ret;
	u32 v, numvfs;

	if (bus->number == vfbus.next) {
		if (vfbus_vf_devfn(devfn))
			return vfbus.orig->read(vfbus.bus, devfn, where, size, val);
		*val = size == 4 ? ~0U : (1U << (size * 8)) - 1;
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	if (!vfbus_offset_field(bus, devfn, where, size))
		return vfbus.orig->read(bus, devfn, where, size, val);
	/*
	 * The offset is the low half of the dword that also holds the
	 * stride: read it whole, move the offset, give back the bytes asked.
	 * With NumVFs 0 it stays QEMU's (the spec lets it change with
	 * NumVFs): the kernel keeps what it read last, at the last disable,
	 * and must not find a moved offset once this module is gone.
	 */
	ret = vfbus.orig->read(bus, devfn, dword, 4, &v) ?:
	      vfbus.orig->read(bus, devfn, vfbus.sriov + PCI_SRIOV_NUM_VF, 2, &numvfs);
	if (ret)
		return ret;
	if (numvfs)
		v = (v & 0xffff0000) | ((v + VFBUS_SHIFT) & 0xffff);
	v >>= 8 * (where - dword);
	*val = size == 4 ? v : v & ((1U << (size * 8)) - 1);
	return PCIBIOS_SUCCESSFUL;
}

static int vfbus_write(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 val)
{
	if (bus->number == vfbus.next) {
		if (vfbus_vf_devfn(devfn))
			return vfbus.orig->write(vfbus.bus, devfn, where, size, val);
		return PCIBIOS_DEVICE_NOT_FOUND;
	}
	/* First VF Offset is read-only: what QEMU keeps is what it had. */
	return vfbus.orig->write(bus, devfn, where, size, val);
}

static int vfbus_set_end(struct pci_bus *bus, resource_size_t end)
{
	struct resource *res = &bus->busn_res;

	return adjust_resource(res, res->start, end - res->start + 1);
}

/* Innermost first, so that each still fits in its parent. */
static void vfbus_shrink(void)
{
	while (vfbus.ngrown) {
		vfbus.ngrown--;
		WARN_ON(vfbus_set_end(vfbus.grown[vfbus.ngrown], vfbus.old_end[vfbus.ngrown]));
	}
}

/* Give the PF's bus and those above it the next bus number. */
static int vfbus_grow(void)
{
	struct pci_bus *chain[VFBUS_MAX_LEVELS], *bus;
	int n = 0, ret;

	/* A root bus too: a pxb-pcie host bridge's range ends at its last bus. */
	for (bus = vfbus.bus; bus && bus->busn_res.end < vfbus.next; bus = bus->parent) {
		if (n == VFBUS_MAX_LEVELS) {
			pr_err("%s: too many buses above\n", pf);
			return -ENOSPC;
		}
		chain[n++] = bus;
	}
	/* Outermost first, so that each fits in its parent's grown range. */
	while (n--) {
		bus = chain[n];
		vfbus.grown[vfbus.ngrown] = bus;
		vfbus.old_end[vfbus.ngrown] = bus->busn_res.end;
		ret = vfbus_set_end(bus, vfbus.next);
		if (ret) {
			pr_err("bus %02x cannot reach %02x: %d\n", bus->number, vfbus.next, ret);
			vfbus_shrink();
			return ret;
		}
		vfbus.ngrown++;
	}
	return 0;
}

/* A VF on the virtual bus reads its config space through this module. */
static bool vfbus_ours(struct pci_dev *pdev)
{
	return pdev->is_virtfn && pci_physfn(pdev) == vfbus.pdev &&
	       pdev->bus->number == vfbus.next;
}

static int vfbus_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	if (!vfbus_ours(pdev))
		return NOTIFY_DONE;
	/* Pinned while a VF's config space is this module's to answer. */
	if (action == BUS_NOTIFY_ADD_DEVICE)
		__module_get(THIS_MODULE);
	else if (action == BUS_NOTIFY_REMOVED_DEVICE)
		module_put(THIS_MODULE);
	return NOTIFY_OK;
}

static struct notifier_block vfbus_nb = { .notifier_call = vfbus_notify };

static int vfbus_find_pf(void)
{
	unsigned int domain, busnr, dev, fn;
	u16 ctrl;

	if (!pf || sscanf(pf, "%x:%x:%x.%x", &domain, &busnr, &dev, &fn) != 4) {
		pr_err("pf=domain:bus:dev.fn is required\n");
		return -EINVAL;
	}
	vfbus.pdev = pci_get_domain_bus_and_slot(domain, busnr, PCI_DEVFN(dev, fn));
	if (!vfbus.pdev) {
		pr_err("no PCI device %s\n", pf);
		return -ENODEV;
	}
	vfbus.sriov = pci_find_ext_capability(vfbus.pdev, PCI_EXT_CAP_ID_SRIOV);
	if (!vfbus.sriov || !vfbus.pdev->is_physfn) {
		pr_err("%s is no SR-IOV PF\n", pf);
		return -EINVAL;
	}
	pci_read_config_word(vfbus.pdev, vfbus.sriov + PCI_SRIOV_CTRL, &ctrl);
	if (ctrl & PCI_SRIOV_CTRL_VFE) {
		pr_err("%s has VFs enabled\n", pf);
		return -EBUSY;
	}
	pci_read_config_word(vfbus.pdev, vfbus.sriov + PCI_SRIOV_VF_OFFSET, &vfbus.first);
	pci_read_config_word(vfbus.pdev, vfbus.sriov + PCI_SRIOV_VF_STRIDE, &vfbus.stride);
	pci_read_config_word(vfbus.pdev, vfbus.sriov + PCI_SRIOV_TOTAL_VF, &vfbus.total);
	vfbus.first += vfbus.pdev->devfn;
	if (!vfbus.total || !vfbus.stride ||
	    vfbus.first + vfbus.stride * (vfbus.total - 1) > 0xff) {
		pr_err("%s: VF routing IDs already leave its bus\n", pf);
		return -EINVAL;
	}
	vfbus.bus = vfbus.pdev->bus;
	vfbus.next = vfbus.bus->number + 1;
	if (vfbus.next > 0xff || pci_find_bus(domain, vfbus.next)) {
		pr_err("bus %02x after %s's is taken\n", vfbus.next, pf);
		return -EBUSY;
	}
	return 0;
}

static int __init vfbus_init(void)
{
	int ret;

	pci_lock_rescan_remove();
	ret = vfbus_find_pf();
	if (!ret)
		ret = vfbus_grow();
	if (!ret)
		ret = bus_register_notifier(&pci_bus_type, &vfbus_nb);
	if (ret) {
		vfbus_shrink();
		pci_dev_put(vfbus.pdev);
		pci_unlock_rescan_remove();
		return ret;
	}
	vfbus.ops = *vfbus.bus->ops;
	vfbus.ops.read = vfbus_read;
	vfbus.ops.write = vfbus_write;
	vfbus.orig = pci_bus_set_ops(vfbus.bus, &vfbus.ops);
	pci_unlock_rescan_remove();
	pr_info("%s: VFs on bus %02x\n", pf, vfbus.next);
	return 0;
}

static void __exit vfbus_exit(void)
{
	pci_lock_rescan_remove();
	pci_bus_set_ops(vfbus.bus, vfbus.orig);
	bus_unregister_notifier(&pci_bus_type, &vfbus_nb);
	vfbus_shrink();
	pci_dev_put(vfbus.pdev);
	pci_unlock_rescan_remove();
}

module_init(vfbus_init);
module_exit(vfbus_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kvmai test-only SR-IOV PF with its VFs on a virtual bus");
