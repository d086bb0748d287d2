// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai_mock_vgpu - for kvmai's tests only, never for production: the
 * sysfs of NVIDIA's vGPU on SR-IOV GPUs (vGPU 17 and later: Ada, Hopper,
 * Blackwell) on the VFs of any PF, so that partitioning by vGPU type is
 * tested where there is no NVIDIA GPU.
 *
 * The layout follows NVIDIA's "Virtual GPU Software User Guide" (KVM
 * hypervisors, "Creating an NVIDIA vGPU that supports SR-IOV on a Linux
 * with KVM hypervisor"): below each VF of the GPU, a directory nvidia/
 * with
 *  - creatable_vgpu_types: a header line "ID    : vGPU Name", then one
 *    "ID : NAME" line per type the VF can take now (none once a type is
 *    set on it, or once no further vGPU of any type fits the GPU);
 *  - current_vgpu_type: the VF's type id, 0 for none; writing an id of
 *    creatable_vgpu_types creates the vGPU, writing 0 destroys it.
 * What the guide says of time-sliced vGPUs on one GPU is modelled: every
 * vGPU is of one type (equal-size mode), and a type has as many instances
 * as its frame buffer fits the GPU's 80 GB ("Virtual GPU Types for
 * Supported GPUs", H100 PCIe 80GB, C-series).  The ids are this mock's own:
 * the driver's change from release to release, and tools must read them
 * from creatable_vgpu_types.
 *
 * Not modelled: MIG-backed types, mixed-size mode, the driver's refusal to
 * change the type of a VF a VM uses (kvmaictl refuses that itself).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "../compat.h"

static char *pf;
module_param(pf, charp, 0444);
MODULE_PARM_DESC(pf, "the SR-IOV PF whose VFs get nvidia/ (domain:bus:dev.fn)");

struct mock_vgpu_type {
	unsigned int id;
	const char *name;
	unsigned int max;	/* instances on one 80 GB GPU */
};

static const struct mock_vgpu_type mock_types[] = {
	{ 901, "NVIDIA H100-80C", 1 },
	{ 902, "NVIDIA H100-40C", 2 },
	{ 903, "NVIDIA H100-20C", 4 },
	{ 904, "NVIDIA H100-10C", 8 },
};

struct mock_vf {
	struct kobject kobj;		/* nvidia/ below the VF */
	struct pci_dev *pdev;
	unsigned int type;		/* 0: no vGPU */
	struct list_head node;
};

static struct pci_dev *mock_pf;
static LIST_HEAD(mock_vfs);
static DEFINE_MUTEX(mock_lock);		/* mock_vfs and every mock_vf.type */

static const struct mock_vgpu_type *mock_type(unsigned int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(mock_types); i++)
		if (mock_types[i].id == id)
			return &mock_types[i];
	return NULL;
}

/* Whether @vf may take type @t now: the rules above. */
static bool mock_creatable(const struct mock_vf *vf, const struct mock_vgpu_type *t)
{
	struct mock_vf *o;
	unsigned int used = 0;

	lockdep_assert_held(&mock_lock);
	if (vf->type)
		return false;
	list_for_each_entry(o, &mock_vfs, node) {
		if (!o->type)
			continue;
		if (o->type != t->id)
			return false;
		used++;
	}
	return used < t->max;
}

static ssize_t creatable_vgpu_types_show(struct kobject *kobj, struct kobj_attribute *attr,
					 char *buf)
{
	struct mock_vf *vf = container_of(kobj, struct mock_vf, kobj);
	int len;

	len = sysfs_emit(buf, "ID    : vGPU Name\n");
	mutex_lock(&mock_lock);
	for (size_t i = 0; i < ARRAY_SIZE(mock_types); i++)
		if (mock_creatable(vf, &mock_types[i]))
			len += sysfs_emit_at(buf, len, "%-5u : %s\n", mock_types[i].id,
					     mock_types[i].name);
	mutex_unlock(&mock_lock);
	return len;
}

static ssize_t current_vgpu_type_show(struct kobject *kobj, struct kobj_attribute *attr,
				      char *buf)
{
	struct mock_vf *vf = container_of(kobj, struct mock_vf, kobj);
	unsigned int type;

	mutex_lock(&mock_lock);
	type = vf->type;
	mutex_unlock(&mock_lock);
	return sysfs_emit(buf, "%u\n", type);
}

static ssize_t current_vgpu_type_store(struct kobject *kobj, struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	struct mock_vf *vf = container_of(kobj, struct mock_vf, kobj);
	const struct mock_vgpu_type *t;
	unsigned int id;
	int ret;

	ret = kstrtouint(buf, 0, &id);
	if (ret)
		return ret;
	mutex_lock(&mock_lock);
	if (!id) {
		vf->type = 0;
		ret = count;
	} else if (vf->type) {
		ret = -EBUSY;		/* a vGPU exists: destroy it first */
	} else {
		t = mock_type(id);
		if (!t || !mock_creatable(vf, t)) {
			ret = -EINVAL;
		} else {
			vf->type = id;
			ret = count;
		}
	}
	mutex_unlock(&mock_lock);
	if (ret < 0)
		pci_info(vf->pdev, "vGPU type %u refused: %d\n", id, ret);
	return ret;
}

static struct kobj_attribute creatable_attr = __ATTR_RO(creatable_vgpu_types);
static struct kobj_attribute current_attr = __ATTR_RW(current_vgpu_type);

static struct attribute *mock_vf_attrs[] = {
	&creatable_attr.attr,
	&current_attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(mock_vf);

static void mock_vf_release(struct kobject *kobj)
{
	struct mock_vf *vf = container_of(kobj, struct mock_vf, kobj);

	pci_dev_put(vf->pdev);
	kfree(vf);
}

static const struct kobj_type mock_vf_ktype = {
	.release = mock_vf_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = mock_vf_groups,
};

static bool mock_is_our_vf(struct pci_dev *pdev)
{
	return pdev->is_virtfn && pci_physfn(pdev) == mock_pf;
}

static void mock_vf_add(struct pci_dev *pdev)
{
	struct mock_vf *vf;

	/* A VF added while the module loads comes twice: once is enough. */
	mutex_lock(&mock_lock);
	list_for_each_entry(vf, &mock_vfs, node) {
		if (vf->pdev == pdev) {
			mutex_unlock(&mock_lock);
			return;
		}
	}
	mutex_unlock(&mock_lock);
	vf = kzalloc_obj(*vf);
	if (!vf)
		return;
	vf->pdev = pci_dev_get(pdev);
	if (kobject_init_and_add(&vf->kobj, &mock_vf_ktype, &pdev->dev.kobj, "nvidia")) {
		pci_warn(pdev, "cannot add nvidia/\n");
		kobject_put(&vf->kobj);
		return;
	}
	mutex_lock(&mock_lock);
	list_add_tail(&vf->node, &mock_vfs);
	mutex_unlock(&mock_lock);
}

/*
 * Unlinked under the lock, removed outside it: kobject_del() waits for the
 * attribute methods running, which take the lock.
 */
static void mock_vf_remove(struct pci_dev *pdev)
{
	struct mock_vf *vf, *found = NULL;

	mutex_lock(&mock_lock);
	list_for_each_entry(vf, &mock_vfs, node) {
		if (vf->pdev == pdev) {
			list_del(&vf->node);
			found = vf;
			break;
		}
	}
	mutex_unlock(&mock_lock);
	if (found) {
		kobject_del(&found->kobj);
		kobject_put(&found->kobj);
	}
}

static int mock_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);

	if (!mock_is_our_vf(pdev))
		return NOTIFY_DONE;
	if (action == BUS_NOTIFY_ADD_DEVICE)
		mock_vf_add(pdev);
	else if (action == BUS_NOTIFY_DEL_DEVICE)
		mock_vf_remove(pdev);
	return NOTIFY_OK;
}

static struct notifier_block mock_nb = {
	.notifier_call = mock_notify,
};

static int __init mock_vgpu_init(void)
{
	struct pci_dev *pdev = NULL;
	unsigned int domain, bus, dev, fn;
	int ret;

	if (!pf || sscanf(pf, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4)
		return -EINVAL;
	mock_pf = pci_get_domain_bus_and_slot(domain, bus, PCI_DEVFN(dev, fn));
	if (!mock_pf)
		return -ENODEV;
	if (!mock_pf->is_physfn) {
		pci_dev_put(mock_pf);
		return -EINVAL;
	}
	ret = bus_register_notifier(&pci_bus_type, &mock_nb);
	if (ret) {
		pci_dev_put(mock_pf);
		return ret;
	}
	/* VFs made before the notifier: a removal now waits for mock_vf_add(). */
	pci_lock_rescan_remove();
	for_each_pci_dev(pdev)
		if (mock_is_our_vf(pdev))
			mock_vf_add(pdev);
	pci_unlock_rescan_remove();
	return 0;
}

static void __exit mock_vgpu_exit(void)
{
	struct mock_vf *vf;

	bus_unregister_notifier(&pci_bus_type, &mock_nb);
	for (;;) {
		mutex_lock(&mock_lock);
		vf = list_first_entry_or_null(&mock_vfs, struct mock_vf, node);
		if (vf)
			list_del(&vf->node);
		mutex_unlock(&mock_lock);
		if (!vf)
			break;
		kobject_del(&vf->kobj);
		kobject_put(&vf->kobj);
	}
	pci_dev_put(mock_pf);
}

module_init(mock_vgpu_init);
module_exit(mock_vgpu_exit);
MODULE_DESCRIPTION("kvmai test mock: NVIDIA SR-IOV vGPU sysfs on any PF's VFs (tests only)");
MODULE_LICENSE("GPL");
