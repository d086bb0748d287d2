// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's counters devices as the operator creates them and as
 * a VMM opens them: through the mdev sysfs interface and VFIO, the way QEMU
 * does for -device vfio-pci,sysfsdev=.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vfio.h>

#include "counters.h"
#include "sys.h"

long kt_mock_counters_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/kvmai_mock_counters/parameters/%s", name);
	return kt_sysfs_read_long(path);
}

int _test_cmd_ctrdev_create(const char *unit, char *uuid, size_t len)
{
	char path[256], buf[64] = "";
	FILE *f = fopen("/proc/sys/kernel/random/uuid", "r");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	snprintf(uuid, len, "%s", buf);
	snprintf(path, sizeof(path),
		 "/sys/class/mdev_bus/kvmai-%s.0/mdev_supported_types/kvmai-counters/create",
		 unit);
	return kt_sysfs_write(path, uuid);
}

int _test_cmd_ctrdev_remove(const char *uuid)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/remove", uuid);
	if (access(path, F_OK))
		return 0;
	return kt_sysfs_write(path, "1");
}

void kt_ctrdev_remove_all(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir("/sys/bus/mdev/devices");

	while (dir && (d = readdir(dir))) {
		snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/kvmai", d->d_name);
		if (d->d_name[0] == '.' || access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/remove", d->d_name);
		kt_sysfs_write(path, "1");
	}
	if (dir)
		closedir(dir);
}

int kt_ctrdev_attr(const char *uuid, const char *attr, char *buf, size_t len)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/kvmai/%s", uuid, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int kt_vfio_open(const char *uuid, struct kt_vfio *v)
{
	char path[160], link[160];
	ssize_t n;

	v->container = -1;
	v->group = -1;
	v->device = -1;
	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/iommu_group", uuid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/%s", basename(link));
	v->container = open("/dev/vfio/vfio", O_RDWR);
	v->group = open(path, O_RDWR);
	if (v->container < 0 || v->group < 0)
		goto err;
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) ||
	    ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		goto err;
	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, uuid);
	if (v->device < 0)
		goto err;
	return 0;
err:
	n = -errno;
	kt_vfio_close(v);
	return (int)n;
}

void kt_vfio_close(struct kt_vfio *v)
{
	if (v->device >= 0)
		close(v->device);
	if (v->group >= 0)
		close(v->group);
	if (v->container >= 0)
		close(v->container);
	v->container = -1;
	v->group = -1;
	v->device = -1;
}

int kt_vfio_region(const struct kt_vfio *v, unsigned int index, struct vfio_region_info *info)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	return ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, info) ? -errno : 0;
}
