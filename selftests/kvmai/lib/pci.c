// SPDX-License-Identifier: GPL-2.0-only
/*
 * PCI functions as the hardware shows them: everything here reads config
 * space through sysfs rather than asking the module, so that the tests
 * check what the module did independently.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/pci_regs.h>

#include "pci.h"

static void dev_path(char *buf, size_t len, const char *bdf, const char *attr)
{
	snprintf(buf, len, "/sys/bus/pci/devices/%s/%s", bdf, attr);
}

/* One pread() or pwrite() of config space; bytes moved or -errno. */
static int cfg_io(const char *bdf, unsigned int off, void *buf, size_t len, bool write)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	dev_path(path, sizeof(path), bdf, "config");
	fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -errno;
	n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

int kt_pci_read(const char *bdf, unsigned int off, void *buf, size_t len)
{
	return cfg_io(bdf, off, buf, len, false);
}

int kt_pci_read16(const char *bdf, unsigned int off, __u16 *val)
{
	int n = kt_pci_read(bdf, off, val, sizeof(*val));

	return n == sizeof(*val) ? 0 : (n < 0 ? n : -EIO);
}

int kt_pci_write16(const char *bdf, unsigned int off, __u16 val)
{
	int n = cfg_io(bdf, off, &val, sizeof(val), true);

	return n == sizeof(val) ? 0 : (n < 0 ? n : -EIO);
}

int kt_pci_ext_cap(const char *bdf, __u16 id)
{
	unsigned int off = 0x100;
	int hops = 0;
	__u32 hdr;

	while (off && hops++ < 128) {
		if (kt_pci_read(bdf, off, &hdr, sizeof(hdr)) != sizeof(hdr))
			return -EIO;
		if (!hdr || hdr == 0xffffffff)
			return 0;
		if ((hdr & 0xffff) == id)
			return off;
		off = (hdr >> 20) & 0xffc;
	}
	return 0;
}

int kt_pci_driver(const char *bdf, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	dev_path(path, sizeof(path), bdf, "driver");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		buf[0] = '\0';
		return errno == ENOENT ? 0 : -errno;
	}
	target[n] = '\0';
	snprintf(buf, len, "%s", strrchr(target, '/') + 1);
	return 0;
}

int kt_pci_iommu_group(const char *bdf)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	dev_path(path, sizeof(path), bdf, "iommu_group");
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return atoi(strrchr(target, '/') + 1);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int _test_cmd_pci_bind(const char *bdf, const char *driver)
{
	char path[PATH_MAX], cur[64];
	int ret;

	ret = kt_pci_driver(bdf, cur, sizeof(cur));
	if (ret)
		return ret;
	if (cur[0]) {
		dev_path(path, sizeof(path), bdf, "driver/unbind");
		ret = write_str(path, bdf);
		if (ret)
			return ret;
	}
	dev_path(path, sizeof(path), bdf, "driver_override");
	ret = write_str(path, driver[0] ? driver : "\n");
	if (ret)
		return ret;
	/* A device no driver claims is still a success for "" (unbound). */
	ret = write_str("/sys/bus/pci/drivers_probe", bdf);
	return driver[0] ? ret : 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

void kt_acs_snap(struct kt_acs *s)
{
	struct dirent **names;
	int n, pos;

	s->n = 0;
	n = scandir("/sys/bus/pci/devices", &names, NULL, by_name);
	for (int i = 0; i < n; i++) {
		const char *bdf = names[i]->d_name;

		pos = bdf[0] == '.' ? 0 : kt_pci_ext_cap(bdf, PCI_EXT_CAP_ID_ACS);
		if (s->n < KT_MAX && pos > 0 &&
		    !kt_pci_read16(bdf, pos + PCI_ACS_CTRL, &s->ctl[s->n]))
			snprintf(s->bdf[s->n++], sizeof(s->bdf[0]), "%.15s", bdf);
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

__u16 kt_acs_word(const struct kt_acs *s, const char *bdf)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->bdf[i], bdf))
			return s->ctl[i];
	return 0xdead;
}

__u16 kt_acs_now(const char *bdf)
{
	int pos = kt_pci_ext_cap(bdf, PCI_EXT_CAP_ID_ACS);
	__u16 ctl = 0xdead;

	if (pos > 0)
		kt_pci_read16(bdf, pos + PCI_ACS_CTRL, &ctl);
	return ctl;
}

int kt_acs_diff(const struct kt_acs *a, const struct kt_acs *b, char *diff, size_t len)
{
	int n = 0, used = 0;

	diff[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		__u16 now = kt_acs_word(b, a->bdf[i]);

		if (now == a->ctl[i])
			continue;
		n++;
		used += snprintf(diff + used, len - used, " %s:%#06x->%#06x", a->bdf[i],
				 a->ctl[i], now);
		if ((size_t)used >= len)
			break;
	}
	return n;
}
