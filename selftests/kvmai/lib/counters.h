/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counters devices (kmod/counters.c) as an operator creates them and as a
 * VMM opens them: through the mdev sysfs interface and VFIO, the way QEMU
 * does for -device vfio-pci,sysfsdev=.
 */
#ifndef KT_COUNTERS_H
#define KT_COUNTERS_H

#include "kt.h"

struct vfio_region_info;

struct kt_vfio {
	int container, group, device;
};

/* A module parameter of the counters mock, or -errno. */
long kt_mock_counters_param(const char *name);

/* Creates the counters device of @unit on package 0, its UUID in @uuid. */
int _test_cmd_ctrdev_create(const char *unit, char *uuid, size_t len);
#define test_cmd_ctrdev_create(unit, uuid, len) \
	__kt_cmd(_test_cmd_ctrdev_create(unit, uuid, len))
#define test_err_ctrdev_create(err, unit, uuid, len) \
	__kt_err(err, _test_cmd_ctrdev_create(unit, uuid, len))
/* Removes the device, if it is there: 0 or -errno. */
int _test_cmd_ctrdev_remove(const char *uuid);
#define test_cmd_ctrdev_remove(uuid) __kt_cmd(_test_cmd_ctrdev_remove(uuid))
void kt_ctrdev_remove_all(void);
/* The device's kvmai/ sysfs attribute @attr (unit, vm, state): 0 or -errno. */
int kt_ctrdev_attr(const char *uuid, const char *attr, char *buf, size_t len);

/* Opens device @uuid as QEMU does: its group in a type1 container. */
int kt_vfio_open(const char *uuid, struct kt_vfio *v);
void kt_vfio_close(struct kt_vfio *v);
int kt_vfio_region(const struct kt_vfio *v, unsigned int index, struct vfio_region_info *info);

#endif /* KT_COUNTERS_H */
