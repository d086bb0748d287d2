/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a guest of the emulated host (L2) reports, read back: the lines of
 * its probe scenario, kvmaictl's JSON from its topo scenario, and the NCCL
 * topology file kvmaictl writes for it.  Shared by the tests that boot L2
 * with l2-run (nested_test) and through libvirt (libvirt_test).
 */
#ifndef KT_L2OUT_H
#define KT_L2OUT_H

#include <stddef.h>

/* A PCI function as L2's probe scenario prints it. */
struct kt_l2_dev {
	char bdf[16];
	char id[16];	/* vendor:device */
	int numa;
	char path[256];	/* below /sys/devices */
	char link[40];	/* max link, "32.0GT/sPCIe,x16"; "-" without one */
	char bars[96];	/* assigned memory BARs, "0:1000,4:800000000"; "-" for none */
};

/* The probe lines of @out into @devs (@out is cut up); returns how many. */
int kt_l2_parse_probe(char *out, struct kt_l2_dev *devs, int max);

/* The maximum link of @bdf in this machine's sysfs, as probe.sh writes it. */
void kt_sysfs_link(const char *bdf, char *buf, size_t len);

/* The assigned memory BARs of @bdf in this machine's sysfs, as probe.sh writes them. */
void kt_sysfs_bars(const char *bdf, char *buf, size_t len);

/*
 * Whether the port above each of @n devices shows in L2 the link its port
 * has on this host: @hport[i] is the host port (kt_topo_port() on the
 * host's topo), @gport[i] the L2 port, whose link @devs (L2's probe lines)
 * give.  0 if so; else -1, with the first that differs in @why.
 */
int kt_same_port_links(const char hport[][16], const char gport[][16], int n,
		       const struct kt_l2_dev *devs, int nd, char *why, size_t len);

/* In `kvmaictl -j topo` output: the bus id of the bridge right above @name, "" if absent. */
void kt_topo_port(const char *json, const char *name, char *bdf);

/* In `kvmaictl -j topo` output: a device's NUMA node, or -2 if absent. */
int kt_topo_numa(const char *json, const char *name);
/* A GPU-NIC pair's path class ("PIX", "SYS", ...) into @path[8], "" if absent. */
void kt_topo_path(const char *json, const char *gpu, const char *nic, char *path);

/*
 * Whether L2 keeps the host's layout: each of the @n devices @host names
 * (2 GPUs, then NICs) on the host in @l1's `kvmaictl -j topo` is on the
 * same NUMA node in @l2's under the name @guest gives it, and each
 * GPU-NIC pair has the same path class.  0 if so; else -1, with what
 * differs first in @why.
 */
int kt_topo_same_layout(const char *l1, const char *l2, const char *const host[],
			const char *const guest[], int n, char *why, size_t len);

/* A leaf of the NCCL file: its busid, the busids of the <pci> above it. */
struct kt_nccl_leaf {
	char busid[16];
	char bridges[8][16];
	int depth;
	int numaid;
};

/*
 * The leaves of `kvmaictl vm nccl-topo`'s file, which puts one element on a
 * line: <cpu numaid=N>, <pci ...> opening a bridge, <pci .../> a device
 * (@xml is cut up).  Returns how many, -1 if the nesting is broken.
 */
int kt_parse_nccl(char *xml, struct kt_nccl_leaf *leaves, int max);

/*
 * Whether the devices of the @n leaves of L2's NCCL file (@devs, L2's
 * probe lines) have the assigned memory BARs of the @n devices at @hbdf on
 * this host, compared as sets: the firmware or L2's kernel gave every BAR
 * an address, at the host's size.  0 if so; else -1, with the first that
 * differs in @why.
 */
int kt_same_bars(const char *const hbdf[], const struct kt_nccl_leaf *leaves, int n,
		 const struct kt_l2_dev *devs, int nd, char *why, size_t len);

#endif /* KT_L2OUT_H */
