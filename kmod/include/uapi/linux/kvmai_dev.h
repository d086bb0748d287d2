/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/*
 * kvmai character device, /dev/kvmai: hands out reservation handles.
 *
 * An uncore unit kvmai reserved for a VM (netlink pmu-assign) is attached
 * to the VM by KVM_ENABLE_CAP(KVM_CAP_X86_UNCORE_PASSTHROUGH) with a file
 * descriptor of the reservation: whoever holds the descriptor may attach
 * one VM to it.  KVMAI_UNIT_FD gives such a descriptor to a caller with
 * CAP_SYS_ADMIN, who passes it to the VMM (for example as an inherited
 * descriptor, 'kvmaictl pmu exec').
 */
#ifndef _UAPI_LINUX_KVMAI_DEV_H
#define _UAPI_LINUX_KVMAI_DEV_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define KVMAI_DEV_PATH		"/dev/kvmai"
#define KVMAI_DEV_VM_LEN	64	/* KVMAI_VM_LEN */
#define KVMAI_DEV_UNIT_LEN	64	/* KVMAI_UNIT_LEN */

/**
 * struct kvmai_unit_fd - KVMAI_UNIT_FD argument
 * @flags: 0
 * @reserved: 0
 * @vm: NUL-terminated name of the VM's PMU record
 * @unit: NUL-terminated perf PMU name of a unit the record reserves
 */
struct kvmai_unit_fd {
	__u32 flags;
	__u32 reserved;
	char vm[KVMAI_DEV_VM_LEN];
	char unit[KVMAI_DEV_UNIT_LEN];
};

#define KVMAI_DEV_IOC_MAGIC	0xb7

/*
 * Returns a new file descriptor (close-on-exec) of the reservation, or -1
 * with errno EPERM without CAP_SYS_ADMIN, EINVAL for non-zero flags or
 * reserved or a name without its NUL, ENOENT if the VM has no record or
 * the record does not reserve the unit, ENODEV if the unit's driver took
 * it back, EMFILE or ENOMEM.  The reservation outlives no release: once
 * the record lets the unit go, attaching with the descriptor fails.
 */
#define KVMAI_UNIT_FD		_IOW(KVMAI_DEV_IOC_MAGIC, 0x01, struct kvmai_unit_fd)

#endif /* _UAPI_LINUX_KVMAI_DEV_H */
