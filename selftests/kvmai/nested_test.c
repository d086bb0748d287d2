// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guests of the emulated host (L2): the harness that later tests build on.
 * The emulated host, booted with vmhost.py --nested, runs Debian's QEMU under
 * KVM on nested SVM (guest/l2-run) and passes its own devices through with
 * vfio-pci; L2 must see them where the QEMU arguments put them.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/kvmai_test.h"

#define L2_SHARE "/usr/share/kvmai-l2/vmlinuz"

struct l2_dev {
	char bdf[16];
	char id[16];	/* vendor:device */
	int numa;
	char path[256];	/* below /sys/devices */
};

/* The l2-probe scenario's lines into @devs; returns how many. */
static int parse_probe(char *out, struct l2_dev *devs, int max)
{
	char *line, *save;
	int n = 0;

	for (line = strtok_r(out, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%15s %15s %d %255s", devs[n].bdf, devs[n].id, &devs[n].numa,
			   devs[n].path) == 4)
			n++;
	return n;
}

static const struct l2_dev *find_id(const struct l2_dev *devs, int n, const char *id)
{
	const struct l2_dev *found = NULL;

	for (int i = 0; i < n; i++) {
		if (strcmp(devs[i].id, id))
			continue;
		if (found)
			return NULL;	/* twice: ambiguous */
		found = &devs[i];
	}
	return found;
}

/* The vendor:device of a host device, as l2-probe prints it. */
static int host_id(const char *bdf, char *buf, size_t len)
{
	uint16_t ven, dev;

	if (pci_cfg_read16(bdf, 0, &ven) || pci_cfg_read16(bdf, 2, &dev))
		return -1;
	snprintf(buf, len, "%04x:%04x", ven, dev);
	return 0;
}

/* The parent directory of a sysfs path: the bridge above, as a path. */
static void parent_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "%.*s", slash ? (int)(slash - path) : 0, path);
}

/*
 * Two host devices behind one switch under an expander on NUMA node 1, as
 * kvmaictl vm plan lays out a GPU and its NIC: L2 sees each once, below two
 * downstream ports of one upstream port, on node 1.
 */
FIXTURE(l2) {
};

FIXTURE_SETUP(l2)
{
}

FIXTURE_TEARDOWN(l2)
{
}

/* An L2 boot takes 15-20 s on an idle machine: leave room for a busy one. */
TEST_F_TIMEOUT(l2, sees_assigned_devices_below_one_switch, 300)
{
	const struct kvmai_dev *gpu = kvmai_dev("gpu0"), *nic = kvmai_dev("nic0");
	char gdrv[64], ndrv[64], gid[16], nid[16], cmd[1024], out[16384];
	char gp[256], np[256], gup[256], nup[256];
	const struct l2_dev *g, *n;
	struct l2_dev devs[64];
	int rc, nd;

	if (access(L2_SHARE, F_OK))
		SKIP(return, "emulated host booted without vmhost.py --nested");
	ASSERT_EQ(0, access("/dev/kvm", F_OK)) TH_LOG("no /dev/kvm: kvm_amd not loaded?");
	ASSERT_NE(NULL, gpu);
	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, host_id(gpu->bdf, gid, sizeof(gid)));
	ASSERT_EQ(0, host_id(nic->bdf, nid, sizeof(nid)));
	ASSERT_EQ(0, pci_driver(gpu->bdf, gdrv, sizeof(gdrv)));
	ASSERT_EQ(0, pci_driver(nic->bdf, ndrv, sizeof(ndrv)));
	ASSERT_EQ(0, pci_bind(gpu->bdf, "vfio-pci"));
	ASSERT_EQ(0, pci_bind(nic->bdf, "vfio-pci"));

	snprintf(cmd, sizeof(cmd),
		 "l2-run -s l2-probe -w /tmp/l2-nested_test -- "
		 "-device pxb-pcie,id=pxb1,bus_nr=0x40,numa_node=1,bus=pcie.0 "
		 "-device pcie-root-port,id=rp0,bus=pxb1,chassis=1,slot=0 "
		 "-device x3130-upstream,id=up0,bus=rp0 "
		 "-device xio3130-downstream,id=dp0,bus=up0,chassis=2,slot=0 "
		 "-device xio3130-downstream,id=dp1,bus=up0,chassis=3,slot=0 "
		 "-device vfio-pci,host=%s,bus=dp0 -device vfio-pci,host=%s,bus=dp1 2>&1",
		 gpu->bdf, nic->bdf);
	rc = run_capture(cmd, out, sizeof(out));
	pci_bind(gpu->bdf, gdrv);
	pci_bind(nic->bdf, ndrv);
	ASSERT_EQ(0, rc) TH_LOG("l2-run failed:\n%s", out);

	nd = parse_probe(out, devs, 64);
	ASSERT_GT(nd, 2) TH_LOG("%s", out);
	g = find_id(devs, nd, gid);
	n = find_id(devs, nd, nid);
	ASSERT_NE(NULL, g) TH_LOG("%s not seen once in L2:\n%s", gid, out);
	ASSERT_NE(NULL, n) TH_LOG("%s not seen once in L2", nid);
	EXPECT_EQ(1, g->numa);
	EXPECT_EQ(1, n->numa);
	EXPECT_NE(NULL, strstr(g->path, "pci0000:40/")) TH_LOG("%s", g->path);
	/* Two downstream ports, one upstream port above both. */
	parent_of(g->path, gp, sizeof(gp));
	parent_of(n->path, np, sizeof(np));
	EXPECT_STRNE(gp, np);
	parent_of(gp, gup, sizeof(gup));
	parent_of(np, nup, sizeof(nup));
	EXPECT_STREQ(gup, nup);
}

TEST_HARNESS_MAIN
