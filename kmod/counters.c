// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - uncore counter pages, offered to the VM that owns their unit.
 *
 * Each page a provider registers becomes a mediated-device parent,
 * /sys/class/mdev_bus/kvmai-UNIT.PACKAGE, with one type, "kvmai-counters".  The
 * operator creates the device the way every mdev is created, and hands it
 * to QEMU (-device vfio-pci,sysfsdev=...) or libvirt (<hostdev
 * type='mdev'>): released VMMs need no change, and the VMM maps BAR0 into
 * the guest as it maps any BAR (ctrdev.c).
 *
 * A device can be created only while a VM owns the unit (pmu.c) on the
 * package the page counts, on whole packages (not "shared"), and only for
 * a page that holds nothing else: uncore counters see every tenant of what
 * they count.  It belongs to that VM from then on; when the VM gives the
 * unit back, whatever the reason, the device is revoked and stays so.
 *
 * Lock order: device_lock (mdev probe/remove) -> kvmai_lock ->
 * kvmai_ctr_lock -> a device's rwsem.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/vfio.h>

#include <uapi/linux/kvmai_counters.h>

#include "kvmai.h"
#include "counters.h"
#include "pmu.h"

/* Registered pages (struct kvmai_ctr_parent), and each one's device. */
static LIST_HEAD(kvmai_ctr_parents);
static DEFINE_MUTEX(kvmai_ctr_lock);

static const struct class kvmai_ctr_class = {
	.name = "kvmai",
};

static struct kvmai_ctr_parent *kvmai_ctr_parent_of(struct mdev_type *mtype)
{
	return container_of(mtype, struct kvmai_ctr_parent, type);
}

/*
 * May the VM owning @cp's unit on @cp's package see it?  Names that VM in
 * @vm; says why not in the log, naming the unit.
 */
static int kvmai_ctr_entitled(const struct kvmai_counter_page *cp, char *vm, size_t len)
{
	struct kvmai_pmu_vm *pvm;

	lockdep_assert_held(&kvmai_lock);
	if (cp->shares_with) {
		pr_warn("unit %s: its counter page also holds %s; it is never mapped\n",
			cp->unit, cp->shares_with);
		return -EACCES;
	}
	pvm = kvmai_pmu_unit_owner_on(cp->unit, cp->package);
	if (!pvm) {
		pr_warn("unit %s: no VM owns it on package %u, whose traffic its page counts\n",
			cp->unit, cp->package);
		return -EPERM;
	}
	if (pvm->shared) {
		pr_warn("unit %s: vm %s shares its packages, so the counters see other tenants\n",
			cp->unit, pvm->vm);
		return -EPERM;
	}
	strscpy(vm, pvm->vm, len);
	return 0;
}

static int kvmai_ctr_probe(struct mdev_device *mdev)
{
	struct kvmai_ctr_parent *kp = kvmai_ctr_parent_of(mdev->type);
	struct kvmai_ctrdev *cd;
	int ret;

	cd = vfio_alloc_device(kvmai_ctrdev, vdev, &mdev->dev, &kvmai_ctrdev_ops);
	if (IS_ERR(cd))
		return PTR_ERR(cd);
	cd->kp = kp;
	ret = kvmai_ctrdev_init(cd);
	if (ret)
		goto err_put;

	scoped_guard(mutex, &kvmai_lock) {
		ret = kvmai_ctr_entitled(kp->cp, cd->vm, sizeof(cd->vm));
		if (ret)
			goto err_put;
		guard(mutex)(&kvmai_ctr_lock);
		if (kp->cd) {
			pr_warn("unit %s: it already has a counters device\n", kp->cp->unit);
			ret = -EBUSY;
			goto err_put;
		}
		kp->cd = cd;
	}
	ret = vfio_register_emulated_iommu_dev(&cd->vdev);
	if (ret)
		goto err_clear;
	dev_set_drvdata(&mdev->dev, cd);
	pr_info("vm %s: counters device %s for unit %s\n", cd->vm, dev_name(&mdev->dev),
		kp->cp->unit);
	return 0;

err_clear:
	scoped_guard(mutex, &kvmai_ctr_lock)
		kp->cd = NULL;
err_put:
	kvmai_ctrdev_free(cd);
	vfio_put_device(&cd->vdev);
	return ret;
}

static void kvmai_ctr_remove(struct mdev_device *mdev)
{
	struct kvmai_ctrdev *cd = dev_get_drvdata(&mdev->dev);

	scoped_guard(mutex, &kvmai_ctr_lock)
		cd->kp->cd = NULL;
	/* A VMM may still hold it: it reads all ones until it lets go. */
	kvmai_ctrdev_revoke(cd);
	vfio_unregister_group_dev(&cd->vdev);
	kvmai_ctrdev_free(cd);
	vfio_put_device(&cd->vdev);
}

static unsigned int kvmai_ctr_get_available(struct mdev_type *mtype)
{
	struct kvmai_ctr_parent *kp = kvmai_ctr_parent_of(mtype);

	guard(mutex)(&kvmai_ctr_lock);
	return kp->cd ? 0 : 1;
}

static ssize_t kvmai_ctr_show_description(struct mdev_type *mtype, char *buf)
{
	const struct kvmai_counter_page *cp = kvmai_ctr_parent_of(mtype)->cp;

	return sysfs_emit(buf, "%u counters of %s on package %u, read-only%s\n",
			  cp->nr_counters, cp->unit, cp->package,
			  cp->shares_with ? "; never mapped: the page is shared" : "");
}

static ssize_t unit_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct kvmai_ctrdev *cd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", cd->kp->cp->unit);
}
static DEVICE_ATTR_RO(unit);

static ssize_t vm_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct kvmai_ctrdev *cd = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", cd->vm);
}
static DEVICE_ATTR_RO(vm);

static ssize_t state_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct kvmai_ctrdev *cd = dev_get_drvdata(dev);

	guard(rwsem_read)(&cd->lock);
	return sysfs_emit(buf, "%s\n", cd->revoked ? "revoked" : "live");
}
static DEVICE_ATTR_RO(state);

static struct attribute *kvmai_ctr_attrs[] = {
	&dev_attr_unit.attr,
	&dev_attr_vm.attr,
	&dev_attr_state.attr,
	NULL
};

static const struct attribute_group kvmai_ctr_group = {
	.name = "kvmai",
	.attrs = kvmai_ctr_attrs,
};

static const struct attribute_group *kvmai_ctr_groups[] = {
	&kvmai_ctr_group,
	NULL
};

static struct mdev_driver kvmai_ctr_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "kvmai_counters",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
		.dev_groups = kvmai_ctr_groups,
	},
	.probe = kvmai_ctr_probe,
	.remove = kvmai_ctr_remove,
	.get_available = kvmai_ctr_get_available,
	.show_description = kvmai_ctr_show_description,
};

/**
 * kvmai_counters_revoke - take a VM's counters devices of a unit back
 * @unit: the uncore unit the VM no longer owns
 * @vm: the VM
 *
 * Called for every unit a VM gives back, whatever the reason.
 */
void kvmai_counters_revoke(const char *unit, const char *vm)
{
	struct kvmai_ctr_parent *kp;

	lockdep_assert_held(&kvmai_lock);
	guard(mutex)(&kvmai_ctr_lock);
	list_for_each_entry(kp, &kvmai_ctr_parents, node) {
		if (!kp->cd || strcmp(kp->cp->unit, unit) || strcmp(kp->cd->vm, vm))
			continue;
		pr_info("vm %s: counters device %s of unit %s revoked\n", vm,
			dev_name(kp->cd->vdev.dev), unit);
		kvmai_ctrdev_revoke(kp->cd);
	}
}

static void kvmai_ctr_parent_release(struct device *dev)
{
	struct kvmai_ctr_parent *kp = container_of(dev, struct kvmai_ctr_parent, dev);

	if (kp->regs)
		iounmap(kp->regs);
	kfree(kp);
}

static int kvmai_counters_check(const struct kvmai_counter_page *cp)
{
	unsigned int i;

	if (!cp->unit || !cp->size || !PAGE_ALIGNED(cp->size) || !cp->nr_counters ||
	    !cp->phys == !cp->page || (cp->phys && !PAGE_ALIGNED(cp->phys)))
		return -EINVAL;
	for (i = 0; i < cp->nr_counters; i++) {
		const struct kvmai_counter_desc *d = &cp->counters[i];

		if (d->offset % 8 || d->offset + 8 > cp->size || !d->width || d->width > 64)
			return -EINVAL;
	}
	return 0;
}

/**
 * kvmai_counters_register - offer a unit's counter page to its owners
 * @cp: the page; it stays the provider's and must outlive the registration
 *
 * Return: 0, or a negative errno.
 */
int kvmai_counters_register(struct kvmai_counter_page *cp)
{
	struct kvmai_ctr_parent *kp;
	int ret;

	ret = kvmai_counters_check(cp);
	if (ret) {
		pr_err("unit %s: invalid counter page\n", cp->unit ?: "(unnamed)");
		return ret;
	}
	kp = kzalloc_obj(*kp);
	if (!kp)
		return -ENOMEM;
	kp->cp = cp;
	device_initialize(&kp->dev);
	kp->dev.class = &kvmai_ctr_class;
	kp->dev.release = kvmai_ctr_parent_release;
	if (cp->phys) {
		kp->regs = ioremap(cp->phys, cp->size);
		if (!kp->regs) {
			ret = -ENOMEM;
			goto err_put;
		}
	}
	ret = dev_set_name(&kp->dev, "kvmai-%s.%u", cp->unit, cp->package);
	if (ret)
		goto err_put;
	ret = device_add(&kp->dev);
	if (ret)
		goto err_put;
	kp->type.sysfs_name = "counters";
	kp->type.pretty_name = cp->unit;
	kp->types[0] = &kp->type;
	ret = mdev_register_parent(&kp->parent, &kp->dev, &kvmai_ctr_driver, kp->types, 1);
	if (ret)
		goto err_del;
	scoped_guard(mutex, &kvmai_ctr_lock)
		list_add_tail(&kp->node, &kvmai_ctr_parents);
	cp->priv = kp;
	pr_info("unit %s: counter page offered (package %u, %u counters)\n", cp->unit,
		cp->package, cp->nr_counters);
	return 0;

err_del:
	device_del(&kp->dev);
err_put:
	put_device(&kp->dev);
	return ret;
}
EXPORT_SYMBOL_GPL(kvmai_counters_register);

/**
 * kvmai_counters_unregister - withdraw a counter page
 * @cp: the page kvmai_counters_register() took
 *
 * Removes its device, if any, after revoking it; waits until no VMM holds it.
 */
void kvmai_counters_unregister(struct kvmai_counter_page *cp)
{
	struct kvmai_ctr_parent *kp = cp->priv;

	scoped_guard(mutex, &kvmai_ctr_lock)
		list_del(&kp->node);
	mdev_unregister_parent(&kp->parent);
	device_unregister(&kp->dev);
	cp->priv = NULL;
}
EXPORT_SYMBOL_GPL(kvmai_counters_unregister);

int kvmai_counters_init(void)
{
	int ret;

	ret = class_register(&kvmai_ctr_class);
	if (ret)
		return ret;
	ret = mdev_register_driver(&kvmai_ctr_driver);
	if (ret)
		goto err_class;
	return 0;

err_class:
	class_unregister(&kvmai_ctr_class);
	return ret;
}

/*
 * The mdev bus, which P2P groups watch for their mediated members: the mdev
 * core does not export it, but registering kvmai's driver put it in the
 * driver.  Valid from kvmai_counters_init() to kvmai_counters_exit().
 */
const struct bus_type *kvmai_mdev_bus(void)
{
	return kvmai_ctr_driver.driver.bus;
}

void kvmai_counters_exit(void)
{
	/*
	 * Providers outside kvmai hold the module and the one inside it
	 * (counters_intel.c) is gone: no page is left.
	 */
	mdev_unregister_driver(&kvmai_ctr_driver);
	class_unregister(&kvmai_ctr_class);
}
