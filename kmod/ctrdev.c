// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the counters device a VM is given: a PCI function, emulated for
 * VFIO, whose BAR0 is an uncore unit's counter page mapped read-only, so
 * that a guest reads the counters at memory speed without exits.  BAR2 and
 * the configuration space are emulated (reads exit, but a guest reads them
 * once); the layout is in <uapi/linux/kvmai_counters.h>.
 *
 * Revocation maps a page of all ones where the counters were, the value a
 * PCIe function that went away reads as, and never maps the counters
 * again: faults take the device's rwsem for reading, the revoke takes it
 * for writing before it zaps the mappings.
 *
 * The zap reaches CPU page tables (and KVM's, through its MMU notifier),
 * not IOMMU domains: VFIO's type1 backend maps a VM_PFNMAP range of MMIO,
 * such as a BAR a VMM places in guest memory, into the domain and never
 * hears of a zap.  So BAR0 is mapped VM_MIXEDMAP | VM_IO instead, which
 * neither type1 (pinnable pages or VM_PFNMAP only) nor iommufd (pinnable
 * pages only) will map, while KVM resolves VM_IO ranges through the page
 * tables as it does VM_PFNMAP ones.  A VMM's attempt to DMA-map the BAR
 * fails, which QEMU reports once and tolerates for a RAM device; no
 * device of the VM can reach the counters, before or after a revoke.
 */
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/pci_regs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unaligned.h>
#include <linux/vfio.h>
#include <linux/vfio_pci_core.h>

#include <uapi/linux/kvmai_counters.h>

#include "compat.h"
#include "counters.h"

/* Not allocated to kvmai: guests find the device by class and capability. */
#define KVMAI_CTRDEV_VENDOR	0x1234
#define KVMAI_CTRDEV_DEVICE	0x4b76
#define KVMAI_CTRDEV_CAP	0x40	/* the vendor-specific capability */
#define KVMAI_CTRDEV_CAP_LEN	8	/* header, magic, version */
#define KVMAI_CTRDEV_LAYOUT_SIZE PAGE_SIZE

#define KVMAI_CTR_INDEX(pos)	((pos) >> VFIO_PCI_OFFSET_SHIFT)
#define KVMAI_CTR_OFFSET(pos)	((pos) & VFIO_PCI_OFFSET_MASK)
#define KVMAI_CTR_PGOFF_MASK	((1UL << (VFIO_PCI_OFFSET_SHIFT - PAGE_SHIFT)) - 1)

static void kvmai_ctrdev_config_init(struct kvmai_ctrdev *cd)
{
	u8 *c = cd->config;

	put_unaligned_le16(KVMAI_CTRDEV_VENDOR, c + PCI_VENDOR_ID);
	put_unaligned_le16(KVMAI_CTRDEV_DEVICE, c + PCI_DEVICE_ID);
	put_unaligned_le16(PCI_STATUS_CAP_LIST, c + PCI_STATUS);
	c[PCI_REVISION_ID] = KVMAI_CTRDEV_VERSION;
	c[PCI_CLASS_PROG] = KVMAI_CTRDEV_CLASS & 0xff;
	put_unaligned_le16(KVMAI_CTRDEV_CLASS >> 8, c + PCI_CLASS_DEVICE);
	c[PCI_HEADER_TYPE] = PCI_HEADER_TYPE_NORMAL;
	/* BAR0 and BAR2: 32-bit, non-prefetchable memory; address 0 until set. */
	put_unaligned_le16(KVMAI_CTRDEV_VENDOR, c + PCI_SUBSYSTEM_VENDOR_ID);
	put_unaligned_le16(KVMAI_CTRDEV_DEVICE, c + PCI_SUBSYSTEM_ID);
	c[PCI_CAPABILITY_LIST] = KVMAI_CTRDEV_CAP;
	c[KVMAI_CTRDEV_CAP + PCI_CAP_LIST_ID] = PCI_CAP_ID_VNDR;
	c[KVMAI_CTRDEV_CAP + PCI_CAP_LIST_NEXT] = 0;
	c[KVMAI_CTRDEV_CAP + PCI_CAP_FLAGS] = KVMAI_CTRDEV_CAP_LEN;
	put_unaligned_le32(KVMAI_CTRDEV_MAGIC, c + KVMAI_CTRDEV_CAP + 3);
	c[KVMAI_CTRDEV_CAP + 7] = KVMAI_CTRDEV_VERSION;
}

static void kvmai_ctrdev_layout_init(struct kvmai_ctrdev *cd)
{
	const struct kvmai_counter_page *cp = cd->kp->cp;
	struct kvmai_ctrdev_layout *l = cd->layout;
	struct kvmai_ctrdev_counter *c = (void *)(l + 1);
	unsigned int i;

	l->magic = cpu_to_le32(KVMAI_CTRDEV_MAGIC);
	l->version = cpu_to_le16(KVMAI_CTRDEV_VERSION);
	l->nr_counters = cpu_to_le16(cp->nr_counters);
	l->state = cpu_to_le32(KVMAI_CTRDEV_LIVE);
	l->bar0_size = cpu_to_le32(cp->size);
	strscpy(l->unit, cp->unit);
	for (i = 0; i < cp->nr_counters; i++) {
		const struct kvmai_counter_desc *d = &cp->counters[i];

		c[i].offset = cpu_to_le32(d->offset);
		c[i].width = d->width;
		c[i].kind = d->kind;
		c[i].index = cpu_to_le16(d->index);
		c[i].scale = cpu_to_le64(d->scale);
		strscpy(c[i].name, d->name ?: "");
	}
}

int kvmai_ctrdev_init(struct kvmai_ctrdev *cd)
{
	const struct kvmai_counter_page *cp = cd->kp->cp;

	if (sizeof(struct kvmai_ctrdev_layout) +
	    cp->nr_counters * sizeof(struct kvmai_ctrdev_counter) > KVMAI_CTRDEV_LAYOUT_SIZE)
		return -E2BIG;
	cd->layout = kzalloc(KVMAI_CTRDEV_LAYOUT_SIZE, GFP_KERNEL);
	cd->ones = alloc_page(GFP_KERNEL);
	if (!cd->layout || !cd->ones)
		return -ENOMEM;
	memset(page_address(cd->ones), 0xff, PAGE_SIZE);
	init_rwsem(&cd->lock);
	kvmai_ctrdev_config_init(cd);
	kvmai_ctrdev_layout_init(cd);
	return 0;
}

void kvmai_ctrdev_free(struct kvmai_ctrdev *cd)
{
	if (cd->ones)
		__free_page(cd->ones);
	kfree(cd->layout);
}

/* The counters are gone for good: see the top of the file. */
void kvmai_ctrdev_revoke(struct kvmai_ctrdev *cd)
{
	scoped_guard(rwsem_write, &cd->lock) {
		if (cd->revoked)
			return;
		cd->revoked = true;
		((struct kvmai_ctrdev_layout *)cd->layout)->state =
			cpu_to_le32(KVMAI_CTRDEV_REVOKED);
	}
	unmap_mapping_range(cd->vdev.inode->i_mapping, 0, 0, true);
}

static int kvmai_ctrdev_open(struct vfio_device *vdev)
{
	struct kvmai_ctrdev *cd = container_of(vdev, struct kvmai_ctrdev, vdev);

	guard(rwsem_read)(&cd->lock);
	return cd->revoked ? -ENODEV : 0;
}

static u64 kvmai_ctrdev_region_size(struct kvmai_ctrdev *cd, unsigned int index)
{
	switch (index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		return PCI_CFG_SPACE_SIZE;
	case VFIO_PCI_BAR0_REGION_INDEX:
		return cd->kp->cp->size;
	case VFIO_PCI_BAR2_REGION_INDEX:
		return KVMAI_CTRDEV_LAYOUT_SIZE;
	}
	return 0;
}

static int kvmai_ctrdev_region_info(struct vfio_device *vdev, struct vfio_region_info *info,
				    struct vfio_info_cap *caps)
{
	struct kvmai_ctrdev *cd = container_of(vdev, struct kvmai_ctrdev, vdev);

	if (info->index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;
	info->offset = (u64)info->index << VFIO_PCI_OFFSET_SHIFT;
	info->size = kvmai_ctrdev_region_size(cd, info->index);
	info->flags = 0;
	switch (info->index) {
	case VFIO_PCI_CONFIG_REGION_INDEX:
		info->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
		break;
	case VFIO_PCI_BAR0_REGION_INDEX:
		/* No WRITE: the VMM maps it read-only. */
		info->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_MMAP;
		break;
	case VFIO_PCI_BAR2_REGION_INDEX:
		info->flags = VFIO_REGION_INFO_FLAG_READ;
		break;
	}
	return 0;
}

/* A BAR's register after a write of @val: the size's low bits read as 0. */
static u32 kvmai_ctrdev_bar(u32 val, u64 size)
{
	return (val & ~(u32)(size - 1)) | PCI_BASE_ADDRESS_SPACE_MEMORY |
	       PCI_BASE_ADDRESS_MEM_TYPE_32;
}

static void kvmai_ctrdev_config_write(struct kvmai_ctrdev *cd, unsigned int off, u32 val,
				      size_t len)
{
	u8 *c = cd->config;

	/* Everything else is read-only. */
	if (off == PCI_COMMAND && len >= 2)
		put_unaligned_le16(val & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER), c + off);
	else if (off == PCI_BASE_ADDRESS_0 && len == 4)
		put_unaligned_le32(kvmai_ctrdev_bar(val, cd->kp->cp->size), c + off);
	else if (off == PCI_BASE_ADDRESS_2 && len == 4)
		put_unaligned_le32(kvmai_ctrdev_bar(val, KVMAI_CTRDEV_LAYOUT_SIZE), c + off);
}

/* A read of BAR0 through the file rather than the mapping. */
static u64 kvmai_ctrdev_bar0_read(struct kvmai_ctrdev *cd, unsigned int off, size_t len)
{
	const struct kvmai_ctr_parent *kp = cd->kp;
	u64 val = 0;

	if (cd->revoked)
		return ~0ULL;
	if (kp->regs) {
		if (len == 8)
			return readq(kp->regs + off);
		return len == 4 ? readl(kp->regs + off) : len == 2 ? readw(kp->regs + off) :
		       readb(kp->regs + off);
	}
	memcpy(&val, page_address(kp->cp->page) + off, len);
	return val;
}

static ssize_t kvmai_ctrdev_rw(struct kvmai_ctrdev *cd, char __user *ubuf, size_t count,
			       loff_t *ppos, bool write)
{
	unsigned int index = KVMAI_CTR_INDEX(*ppos);
	u64 off = KVMAI_CTR_OFFSET(*ppos);
	u64 size = kvmai_ctrdev_region_size(cd, index);
	size_t len;
	u64 val = 0;

	/* Naturally aligned accesses of 1, 2, 4 or 8 bytes, as a CPU makes. */
	len = count >= 8 && !(off % 8) ? 8 : count >= 4 && !(off % 4) ? 4 :
	      count >= 2 && !(off % 2) ? 2 : 1;
	if (!count || off + len > size)
		return -EINVAL;
	if (write) {
		if (index != VFIO_PCI_CONFIG_REGION_INDEX || len > 4)
			return -EINVAL;
		if (copy_from_user(&val, ubuf, len))
			return -EFAULT;
		guard(rwsem_write)(&cd->lock);
		kvmai_ctrdev_config_write(cd, off, le32_to_cpu((__force __le32)val), len);
	} else {
		scoped_guard(rwsem_read, &cd->lock) {
			if (index == VFIO_PCI_CONFIG_REGION_INDEX)
				memcpy(&val, cd->config + off, len);
			else if (index == VFIO_PCI_BAR2_REGION_INDEX)
				memcpy(&val, cd->layout + off, len);
			else
				val = kvmai_ctrdev_bar0_read(cd, off, len);
		}
		if (copy_to_user(ubuf, &val, len))
			return -EFAULT;
	}
	*ppos += len;
	return len;
}

/* A read(2) or write(2) of @count bytes, as the accesses a CPU would make. */
static ssize_t kvmai_ctrdev_access(struct vfio_device *vdev, char __user *buf, size_t count,
				   loff_t *ppos, bool write)
{
	struct kvmai_ctrdev *cd = container_of(vdev, struct kvmai_ctrdev, vdev);
	ssize_t done = 0, ret;

	while (count) {
		ret = kvmai_ctrdev_rw(cd, buf + done, count, ppos, write);
		if (ret < 0)
			return done ?: ret;
		done += ret;
		count -= ret;
	}
	return done;
}

static ssize_t kvmai_ctrdev_read(struct vfio_device *vdev, char __user *buf, size_t count,
				 loff_t *ppos)
{
	return kvmai_ctrdev_access(vdev, buf, count, ppos, false);
}

static ssize_t kvmai_ctrdev_write(struct vfio_device *vdev, const char __user *buf,
				  size_t count, loff_t *ppos)
{
	return kvmai_ctrdev_access(vdev, (char __user *)buf, count, ppos, true);
}

static vm_fault_t kvmai_ctrdev_fault(struct vm_fault *vmf)
{
	struct kvmai_ctrdev *cd = vmf->vma->vm_private_data;
	const struct kvmai_ctr_parent *kp = cd->kp;
	unsigned long pgoff = vmf->pgoff & KVMAI_CTR_PGOFF_MASK;
	unsigned long pfn;

	if (pgoff >= kp->cp->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	guard(rwsem_read)(&cd->lock);
	if (cd->revoked)
		pfn = page_to_pfn(cd->ones);
	else if (kp->cp->page)
		pfn = page_to_pfn(kp->cp->page) + pgoff;
	else
		pfn = PHYS_PFN(kp->cp->phys) + pgoff;
	return kvmai_vmf_insert_mixed(vmf->vma, vmf->address, pfn);
}

static const struct vm_operations_struct kvmai_ctrdev_vm_ops = {
	.fault = kvmai_ctrdev_fault,
};

static int kvmai_ctrdev_mmap(struct vfio_device *vdev, struct vm_area_struct *vma)
{
	struct kvmai_ctrdev *cd = container_of(vdev, struct kvmai_ctrdev, vdev);
	unsigned long index = vma->vm_pgoff >> (VFIO_PCI_OFFSET_SHIFT - PAGE_SHIFT);
	unsigned long pgoff = vma->vm_pgoff & KVMAI_CTR_PGOFF_MASK;

	if (index != VFIO_PCI_BAR0_REGION_INDEX || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if ((pgoff << PAGE_SHIFT) + (vma->vm_end - vma->vm_start) > cd->kp->cp->size)
		return -EINVAL;
	/* Read-only, now and after any mprotect(). */
	if (vma->vm_flags & VM_WRITE)
		return -EACCES;
	/* Not VM_PFNMAP, so that no IOMMU domain takes it: see the top. */
	vm_flags_mod(vma, VM_MIXEDMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
	if (cd->kp->regs)
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	vma->vm_ops = &kvmai_ctrdev_vm_ops;
	vma->vm_private_data = cd;
	return 0;
}

static long kvmai_ctrdev_ioctl(struct vfio_device *vdev, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	unsigned long minsz;

	switch (cmd) {
	case VFIO_DEVICE_GET_INFO: {
		struct vfio_device_info info;

		minsz = offsetofend(struct vfio_device_info, num_irqs);
		if (copy_from_user(&info, uarg, minsz))
			return -EFAULT;
		if (info.argsz < minsz)
			return -EINVAL;
		info.flags = VFIO_DEVICE_FLAGS_PCI;
		info.num_regions = VFIO_PCI_NUM_REGIONS;
		info.num_irqs = VFIO_PCI_NUM_IRQS;
		return copy_to_user(uarg, &info, minsz) ? -EFAULT : 0;
	}
	case VFIO_DEVICE_GET_IRQ_INFO: {
		struct vfio_irq_info info;

		/* No interrupts: counters are read, never waited for. */
		minsz = offsetofend(struct vfio_irq_info, count);
		if (copy_from_user(&info, uarg, minsz))
			return -EFAULT;
		if (info.argsz < minsz || info.index >= VFIO_PCI_NUM_IRQS)
			return -EINVAL;
		info.flags = 0;
		info.count = 0;
		return copy_to_user(uarg, &info, minsz) ? -EFAULT : 0;
	}
#ifndef KVMAI_HAVE_VFIO_REGION_INFO_OP
	case VFIO_DEVICE_GET_REGION_INFO: {
		struct vfio_region_info info;
		int ret;

		minsz = offsetofend(struct vfio_region_info, offset);
		if (copy_from_user(&info, uarg, minsz))
			return -EFAULT;
		if (info.argsz < minsz)
			return -EINVAL;
		ret = kvmai_ctrdev_region_info(vdev, &info, NULL);
		if (ret)
			return ret;
		return copy_to_user(uarg, &info, minsz) ? -EFAULT : 0;
	}
#endif
	case VFIO_DEVICE_RESET:
		return 0;	/* nothing to reset: the counters are the host's */
	}
	return -ENOTTY;
}

const struct vfio_device_ops kvmai_ctrdev_ops = {
	.name = "kvmai-counters",
	.open_device = kvmai_ctrdev_open,
	.read = kvmai_ctrdev_read,
	.write = kvmai_ctrdev_write,
	.ioctl = kvmai_ctrdev_ioctl,
#ifdef KVMAI_HAVE_VFIO_REGION_INFO_OP
	.get_region_info_caps = kvmai_ctrdev_region_info,
#endif
	.mmap = kvmai_ctrdev_mmap,
	.bind_iommufd = vfio_iommufd_emulated_bind,
	.unbind_iommufd = vfio_iommufd_emulated_unbind,
	.attach_ioas = vfio_iommufd_emulated_attach_ioas,
	.detach_ioas = vfio_iommufd_emulated_detach_ioas,
};
