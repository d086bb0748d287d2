/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The emulated host's devices by name (gpu0, nic3...): the map its /init
 * writes from aihost.toml, and binding them to vfio-pci.
 */
#ifndef KT_DEV_H
#define KT_DEV_H

#include "kt.h"

struct kt_acs;

#define KT_DEVICES_FILE "/run/kvmai/devices"

struct kt_dev {
	char name[32];
	char bdf[16];
	char role[8];
	char sw[16];
	int numa;
	bool ats;	/* offers ATS; the kernel should have enabled it */
	bool sriov;
	bool acs_port;	/* the port above it is expected to carry ACS */
	char port[16];	/* BDF of the bridge directly above */
};

/* The device named @name; NULL if it is unknown (or there is no map). */
const struct kt_dev *kt_dev(const char *name);
/* Up to @max devices of the map into @out: how many (0 without a map). */
int kt_devs(const struct kt_dev **out, int max);
/* A named device's BDF, and the port directly above it; "none" if unknown. */
const char *kt_dev_bdf(const char *name);
const char *kt_dev_port(const char *name);
/* The ACS word of the port above the device @name in snapshot @s, or now. */
__u16 kt_dev_acs(const struct kt_acs *s, const char *name);
__u16 kt_dev_acs_now(const char *name);
/*
 * Binds the @n named devices to vfio-pci, each one's driver saved first in
 * @saved[i] (one already on vfio-pci is left as it is); returns how many
 * are bound, so names[ret] failed if ret < n.
 */
size_t kt_dev_bind_vfio(const char *const *names, size_t n, char saved[][64]);
/*
 * A selftest's run, @run(@argc, @argv) (test_harness_run), with its cases
 * giving the @n devices of @names to VMs: bound to vfio-pci once for the
 * run, as an operator's host keeps them (a rebind is a host driver's
 * remove and probe, about 0.25 s under TCG), and those not on vfio-pci
 * before given back to their host drivers at the end.  Outside the
 * emulated host nothing is bound: the fixtures skip every case there.
 */
int kt_dev_run_bound(const char *const *names, size_t n, int (*run)(int, char **),
		     int argc, char **argv);

#endif /* KT_DEV_H */
