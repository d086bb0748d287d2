// SPDX-License-Identifier: GPL-2.0-only
/*
 * The emulated AI host is what aihost.toml says it is: devices where the
 * map puts them, ACS on the ports that model switch downstream ports, ATS
 * enabled on ATS endpoints, IOMMU groups, VFIO binding, KVM.  The P2P tests
 * rely on all of this, so topology drift must fail here first.
 */
#include <fcntl.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"

#define ACS_DEFAULT (PCI_ACS_SV | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF)
#define MAX 64

static int all_devs(struct __test_metadata *_metadata, const struct kt_dev **d)
{
	int n = kt_devs(d, MAX);

	if (!n)
		SKIP(return 0, "no device map at %s: not in the emulated host", KT_DEVICES_FILE);
	return n;
}

/* Whether there is a device map: the case skips without one. */
static bool have_map(struct __test_metadata *_metadata)
{
	const struct kt_dev *d[MAX];

	return all_devs(_metadata, d) > 0;
}

TEST(devices_present)
{
	static const char *const names[] = { "gpu0", "gpu1", "nic0", "nic1", "foreign0",
					     "gpu2", "gpu3", "nic2", "gpu4", "gpu5", "nic3",
					     "foreign1" };
	const struct kt_dev *d[MAX];
	__u16 vendor;

	if (!all_devs(_metadata, d))
		return;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const struct kt_dev *dev = kt_dev(names[i]);

		ASSERT_NE(NULL, dev) TH_LOG("%s missing from the device map", names[i]);
		ASSERT_EQ(0, kt_pci_read16(dev->bdf, PCI_VENDOR_ID, &vendor));
		EXPECT_NE(0xffff, vendor) TH_LOG("%s (%s) does not respond", names[i], dev->bdf);
	}
}

TEST(switch_ports_have_acs_redirect)
{
	const struct kt_dev *d[MAX];
	int n = all_devs(_metadata, d), checked = 0;

	for (int i = 0; i < n; i++) {
		__u16 ctl;
		int pos = kt_pci_ext_cap(d[i]->port, PCI_EXT_CAP_ID_ACS);

		if (!d[i]->acs_port) {
			/* QEMU's xio3130 downstream ports model a switch without ACS. */
			EXPECT_EQ(0, pos) TH_LOG("port %s of %s has ACS", d[i]->port, d[i]->name);
			continue;
		}
		ASSERT_GT(pos, 0) TH_LOG("port %s above %s has no ACS", d[i]->port, d[i]->name);
		ASSERT_EQ(0, kt_pci_read16(d[i]->port, pos + PCI_ACS_CTRL, &ctl));
		EXPECT_EQ(ACS_DEFAULT, ctl & ACS_DEFAULT)
			TH_LOG("port %s: ACS ctl %#06x lacks SV|RR|CR|UF", d[i]->port, ctl);
		checked++;
	}
	if (n)
		EXPECT_GE(checked, 10);
}

TEST(lspci_decodes_acs_and_ats)
{
	const struct kt_dev *gpu0;
	char cmd[128], out[16384];

	if (!have_map(_metadata))
		return;
	gpu0 = kt_dev("gpu0");
	ASSERT_NE(NULL, gpu0);

	snprintf(cmd, sizeof(cmd), "lspci -vvv -s %s", gpu0->port);
	ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL,
		  strstr(out, "ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+"))
		TH_LOG("lspci -vvv -s %s:\n%s", gpu0->port, out);

	snprintf(cmd, sizeof(cmd), "lspci -vvv -s %s", gpu0->bdf);
	ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "ATSCtl:\tEnable+"))
		TH_LOG("lspci -vvv -s %s:\n%s", gpu0->bdf, out);
}

TEST(ats_enabled_on_ats_endpoints)
{
	const struct kt_dev *d[MAX];
	int n = all_devs(_metadata, d), checked = 0;

	for (int i = 0; i < n; i++) {
		int pos = kt_pci_ext_cap(d[i]->bdf, PCI_EXT_CAP_ID_ATS);
		__u16 ctl;

		if (!d[i]->ats)
			continue;
		ASSERT_GT(pos, 0) TH_LOG("%s (%s) has no ATS capability", d[i]->name, d[i]->bdf);
		ASSERT_EQ(0, kt_pci_read16(d[i]->bdf, pos + PCI_ATS_CTRL, &ctl));
		EXPECT_TRUE(ctl & PCI_ATS_CTRL_ENABLE)
			TH_LOG("%s (%s): ATS not enabled (ctl %#06x)", d[i]->name, d[i]->bdf, ctl);
		checked++;
	}
	if (n)
		EXPECT_GE(checked, 9);
}

TEST(iommu_groups_and_numa)
{
	const struct kt_dev *d[MAX];
	int n = all_devs(_metadata, d);
	char path[256];

	for (int i = 0; i < n; i++) {
		int node = -2;
		FILE *f;

		EXPECT_GE(kt_pci_iommu_group(d[i]->bdf), 0)
			TH_LOG("%s (%s) is in no IOMMU group", d[i]->name, d[i]->bdf);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", d[i]->bdf);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		EXPECT_EQ(1, fscanf(f, "%d", &node));
		fclose(f);
		EXPECT_EQ(d[i]->numa, node) TH_LOG("%s: numa_node %d", d[i]->name, node);
	}
}

TEST(vfio_bind_creates_group_node)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	const struct kt_dev *gpu0;
	char drv[64], saved[64], node[64];
	int group, fd;

	if (!have_map(_metadata))
		return;
	gpu0 = kt_dev("gpu0");
	ASSERT_NE(NULL, gpu0);
	ASSERT_EQ(0, kt_pci_driver(gpu0->bdf, saved, sizeof(saved)));

	test_cmd_pci_bind(gpu0->bdf, "vfio-pci");
	ASSERT_EQ(0, kt_pci_driver(gpu0->bdf, drv, sizeof(drv)));
	EXPECT_STREQ("vfio-pci", drv);
	group = kt_pci_iommu_group(gpu0->bdf);
	ASSERT_GE(group, 0);
	snprintf(node, sizeof(node), "/dev/vfio/%d", group);
	fd = open(node, O_RDWR);
	EXPECT_GE(fd, 0) TH_LOG("cannot open %s", node);
	if (fd >= 0) {
		EXPECT_EQ(0, ioctl(fd, VFIO_GROUP_GET_STATUS, &status));
		EXPECT_TRUE(!!(status.flags & VFIO_GROUP_FLAGS_VIABLE));
		close(fd);
	}

	test_cmd_pci_bind(gpu0->bdf, "");
	ASSERT_EQ(0, kt_pci_driver(gpu0->bdf, drv, sizeof(drv)));
	EXPECT_STREQ(saved, drv);
}

TEST(sriov_creates_vfs)
{
	const struct kt_dev *nic3;
	char cmd[256], out[4096];

	if (!have_map(_metadata))
		return;
	nic3 = kt_dev("nic3");
	ASSERT_NE(NULL, nic3);
	ASSERT_TRUE(nic3->sriov);
	snprintf(cmd, sizeof(cmd),
		 "echo 2 > /sys/bus/pci/devices/%s/sriov_numvfs && ls -d /sys/bus/pci/devices/%s/virtfn* | wc -l",
		 nic3->bdf, nic3->bdf);
	ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
	EXPECT_EQ(2, atoi(out));
	snprintf(cmd, sizeof(cmd), "echo 0 > /sys/bus/pci/devices/%s/sriov_numvfs", nic3->bdf);
	EXPECT_EQ(0, kt_run(cmd, out, sizeof(out)));
}

TEST(kvm_available)
{
	if (!have_map(_metadata))
		return;
	EXPECT_EQ(0, access("/dev/kvm", R_OK | W_OK))
		TH_LOG("/dev/kvm missing: kvm_amd did not load (needs -cpu max with svm)");
}

TEST_HARNESS_MAIN
