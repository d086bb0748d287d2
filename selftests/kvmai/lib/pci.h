/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PCI functions as the hardware shows them, never as the module reports
 * them: config space through sysfs, drivers, IOMMU groups, and snapshots
 * of every port's ACS control word.
 */
#ifndef KT_PCI_H
#define KT_PCI_H

#include "kt.h"

/* Config space of @bdf at @off: bytes read (or written) or -errno. */
int kt_pci_read(const char *bdf, unsigned int off, void *buf, size_t len);
int kt_pci_read16(const char *bdf, unsigned int off, __u16 *val);
/* As root, behind the kernel's back: 0 or -errno. */
int kt_pci_write16(const char *bdf, unsigned int off, __u16 val);
/* Offset of extended capability @id, 0 if absent, -errno on error. */
int kt_pci_ext_cap(const char *bdf, __u16 id);
/* Name of the bound driver into @buf ("" when unbound): 0 or -errno. */
int kt_pci_driver(const char *bdf, char *buf, size_t len);
/* IOMMU group number, -errno if none. */
int kt_pci_iommu_group(const char *bdf);

/* Binds @bdf to @driver by driver_override; "" restores default matching. */
int _test_cmd_pci_bind(const char *bdf, const char *driver);
#define test_cmd_pci_bind(bdf, driver) __kt_cmd(_test_cmd_pci_bind(bdf, driver))

/* The ACS control word of every port that has ACS, from config space. */
struct kt_acs {
	int n;
	char bdf[KT_MAX][16];
	__u16 ctl[KT_MAX];
};

void kt_acs_snap(struct kt_acs *s);
/* The word of port @bdf in @s, 0xdead if it has none. */
__u16 kt_acs_word(const struct kt_acs *s, const char *bdf);
/* The word of port @bdf now, 0xdead if it has no ACS. */
__u16 kt_acs_now(const char *bdf);
/* How many ports' words differ between @a and @b, listed in @diff. */
int kt_acs_diff(const struct kt_acs *a, const struct kt_acs *b, char *diff, size_t len);

#endif /* KT_PCI_H */
