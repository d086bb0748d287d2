// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai_mock_mdev - for kvmai's tests only, never for production: a vendor
 * driver that makes the PCI function it is bound to an mdev parent, as
 * the mdevs of GPUs come: NVIDIA's vGPU driver before vGPU 17 (the "Virtual
 * GPU Software User Guide", "Creating an NVIDIA vGPU on a Linux with KVM
 * Hypervisor": mdev_supported_types/ below the GPU's PCI function) and
 * Intel's GVT-g (drivers/gpu/drm/i915/gvt/kvmgt.c, which registers the
 * parent on the i915 device).  The kernel's own sample drivers
 * (samples/vfio-mdev) register theirs on virtual devices instead, so they
 * cannot show where an mdev of a PCI parent sits.
 *
 * The driver has no ID table: a test binds it to a function through
 * driver_override, as an operator binds vfio-pci.  The function gets one
 * type, "kvmai_mock_mdev-quarter" (the mdev core prefixes the driver's
 * name), of four instances, each a VFIO device of the emulated-IOMMU kind
 * (Documentation/driver-api/vfio-mediated-device.rst).  The devices have
 * no regions: a VMM can open them but not run a guest with them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mdev.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/vfio.h>

#define MOCK_INSTANCES 4

/*
 * One parent at a time, kept in static storage as the kernel's samples keep
 * theirs: the mdev core's kobject of a type points back to its parent, and
 * nothing tells the driver when the core has let go of it.
 */
static struct mock_parent {
	struct mdev_parent parent;
	struct mdev_type type;
	struct mdev_type *typep;	/* the list of its types: one */
	struct pci_dev *pdev;		/* bound to it; NULL: none */
} mock;
static DEFINE_MUTEX(mock_lock);

struct mock_mdev {
	struct vfio_device vdev;
};

static const struct vfio_device_ops mock_mdev_ops = {
	.name = "kvmai-mock-mdev",
	.bind_iommufd = vfio_iommufd_emulated_bind,
	.unbind_iommufd = vfio_iommufd_emulated_unbind,
	.attach_ioas = vfio_iommufd_emulated_attach_ioas,
	.detach_ioas = vfio_iommufd_emulated_detach_ioas,
};

static int mock_mdev_probe(struct mdev_device *mdev)
{
	struct mock_mdev *mm;
	int ret;

	mm = vfio_alloc_device(mock_mdev, vdev, &mdev->dev, &mock_mdev_ops);
	if (IS_ERR(mm))
		return PTR_ERR(mm);
	ret = vfio_register_emulated_iommu_dev(&mm->vdev);
	if (ret) {
		vfio_put_device(&mm->vdev);
		return ret;
	}
	dev_set_drvdata(&mdev->dev, mm);
	return 0;
}

static void mock_mdev_remove(struct mdev_device *mdev)
{
	struct mock_mdev *mm = dev_get_drvdata(&mdev->dev);

	vfio_unregister_group_dev(&mm->vdev);
	vfio_put_device(&mm->vdev);
}

static ssize_t mock_mdev_show_description(struct mdev_type *mtype, char *buf)
{
	return sysfs_emit(buf, "a quarter of the parent, %u instances\n", MOCK_INSTANCES);
}

static struct mdev_driver mock_mdev_driver = {
	.device_api = VFIO_DEVICE_API_PCI_STRING,
	.driver = {
		.name = "kvmai_mock_mdev",
		.owner = THIS_MODULE,
		.mod_name = KBUILD_MODNAME,
	},
	/* Without get_available, the mdev core counts these down per parent. */
	.max_instances = MOCK_INSTANCES,
	.probe = mock_mdev_probe,
	.remove = mock_mdev_remove,
	.show_description = mock_mdev_show_description,
};

static int mock_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	guard(mutex)(&mock_lock);
	if (mock.pdev) {
		pci_warn(pdev, "%s is the mock's mdev parent already: one at a time\n",
			 pci_name(mock.pdev));
		return -EBUSY;
	}
	/* A kobject is initialized once: a parent bound again starts afresh. */
	memset(&mock, 0, sizeof(mock));
	mock.type.sysfs_name = "quarter";
	mock.type.pretty_name = "kvmai mock quarter";
	mock.typep = &mock.type;
	ret = mdev_register_parent(&mock.parent, &pdev->dev, &mock_mdev_driver, &mock.typep, 1);
	if (ret)
		return ret;
	mock.pdev = pdev;
	pci_info(pdev, "mdev parent, %u instances of %s\n", MOCK_INSTANCES,
		 mock.type.pretty_name);
	return 0;
}

/* The mdev core removes the parent's mdevs first. */
static void mock_pci_remove(struct pci_dev *pdev)
{
	guard(mutex)(&mock_lock);
	mdev_unregister_parent(&mock.parent);
	mock.pdev = NULL;
}

static struct pci_driver mock_pci_driver = {
	.name = "kvmai_mock_mdev",
	.probe = mock_pci_probe,
	.remove = mock_pci_remove,
};

static int __init mock_mdev_init(void)
{
	int ret;

	ret = mdev_register_driver(&mock_mdev_driver);
	if (ret)
		return ret;
	ret = pci_register_driver(&mock_pci_driver);
	if (ret)
		mdev_unregister_driver(&mock_mdev_driver);
	return ret;
}

static void __exit mock_mdev_exit(void)
{
	pci_unregister_driver(&mock_pci_driver);
	mdev_unregister_driver(&mock_mdev_driver);
}

module_init(mock_mdev_init);
module_exit(mock_mdev_exit);
MODULE_DESCRIPTION("kvmai test mock: an mdev parent on a PCI function (tests only)");
MODULE_LICENSE("GPL");
