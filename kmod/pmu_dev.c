// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - /dev/kvmai, where the operator takes the handles of the uncore
 * reservations kvmai made, to give them to the VMMs (<uapi/linux/kvmai_dev.h>).
 *
 * A handle lets whoever holds it attach one VM to the reservation in KVM,
 * so it goes only to CAP_SYS_ADMIN in the initial user namespace, as every
 * change kvmai makes does.  Netlink cannot carry a descriptor back to the
 * requester, hence a character device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <uapi/linux/kvmai_dev.h>

#include "pmu.h"

static_assert(KVMAI_DEV_VM_LEN == KVMAI_VM_LEN);
static_assert(KVMAI_DEV_UNIT_LEN == KVMAI_UNIT_LEN);

static long kvmai_dev_unit_fd(void __user *argp)
{
	struct kvmai_unit_fd req;
	struct file *file;
	int fd;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.reserved || !memchr(req.vm, 0, sizeof(req.vm)) ||
	    !memchr(req.unit, 0, sizeof(req.unit)))
		return -EINVAL;

	file = kvmai_pmu_unit_file(req.vm, req.unit);
	if (IS_ERR(file))
		return PTR_ERR(file);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		fput(file);
		return fd;
	}
	fd_install(fd, file);
	return fd;
}

static long kvmai_dev_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case KVMAI_UNIT_FD:
		return kvmai_dev_unit_fd((void __user *)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations kvmai_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = kvmai_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice kvmai_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kvmai",
	.fops = &kvmai_dev_fops,
	.mode = 0600,
};

int kvmai_dev_register(void)
{
	return misc_register(&kvmai_dev);
}

/*
 * With the netlink family, first at unload: an ioctl running holds the
 * device open, and so the module, so none runs once this returns.
 */
void kvmai_dev_unregister(void)
{
	misc_deregister(&kvmai_dev);
}
