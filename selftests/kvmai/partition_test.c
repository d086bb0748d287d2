// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmaictl partition in the emulated host: nic3, QEMU's 82576 (igb) with
 * SR-IOV, is repartitioned by the operator's commands and profiles, and
 * the kernel's own sysfs says what came of it.  Nothing in use is
 * destroyed (a VF a process holds through VFIO, a VF of an enabled P2P
 * group), and a change that fails half way leaves the layout it found.
 * mdevs: of the kernel's mtty sample, and of a test-only vendor driver on
 * foreign1, which `vm plan` lays out where that PCI parent sits.
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"

#define KVMAICTL "/kvmai/bin/kvmaictl"
#define PROFILES "/tmp/partition_test.toml"
/* The kernel's sample mdev driver, built for the kernel the host runs. */
#define MTTY_KO "/kvmai/mtty.ko"

FIXTURE(part) {
	char out[65536];
	char saved_drv[64];
	const char *pf;
};

#define ctl(fmt, ...) kt_sh(self->out, sizeof(self->out), KVMAICTL " " fmt, ##__VA_ARGS__)

static long pf_attr(const char *pf, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", pf, attr);
	return kt_sysfs_read_long(path);
}

/* VF @i's address into @bdf ("" when there is no such VF). */
static void vf_bdf(const char *pf, int i, char *bdf, size_t len)
{
	char path[128], link[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/virtfn%d", pf, i);
	n = readlink(path, link, sizeof(link) - 1);
	bdf[0] = '\0';
	if (n > 0) {
		link[n] = '\0';
		snprintf(bdf, len, "%s", strrchr(link, '/') + 1);
	}
}

/* How many of the first @n VFs are bound to @driver. */
static int vfs_on(const char *pf, int n, const char *driver)
{
	char bdf[32], drv[64];
	int on = 0;

	for (int i = 0; i < n; i++) {
		vf_bdf(pf, i, bdf, sizeof(bdf));
		if (bdf[0] && !kt_pci_driver(bdf, drv, sizeof(drv)) && !strcmp(drv, driver))
			on++;
	}
	return on;
}

FIXTURE_SETUP(part)
{
	char path[128];

	if (!kt_dev("nic3") || access(KVMAICTL, X_OK))
		SKIP(return, "not in the emulated host (no device map or %s)", KVMAICTL);
	self->pf = kt_dev("nic3")->bdf;
	ASSERT_EQ(0, kt_pci_driver(self->pf, self->saved_drv, sizeof(self->saved_drv)));
	/* SR-IOV needs the PF's own driver: igb's sriov_configure. */
	test_cmd_pci_bind(self->pf, "igb");
	ASSERT_EQ(0, pf_attr(self->pf, "sriov_numvfs"));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_drivers_autoprobe", self->pf);
	ASSERT_EQ(0, kt_sysfs_write(path, "1"));
}

FIXTURE_TEARDOWN(part)
{
	char path[128];

	if (!self->pf)
		return;
	_test_cmd_mod_unload(KT_MOD_MOCK_VGPU);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_numvfs", self->pf);
	kt_sysfs_write(path, "0");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_drivers_autoprobe", self->pf);
	kt_sysfs_write(path, "1");
	_test_cmd_pci_bind(self->pf, self->saved_drv);
	unlink(PROFILES);
}

/* 0 -> 4 -> 2 VFs, each on vfio-pci, host autoprobe off meanwhile. */
TEST_F(part, igb_repartitioned_0_4_2_on_vfio_pci)
{
	char want[96], bdf[32];

	ASSERT_EQ(0, ctl("partition set %s vfs 4", self->pf)) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "sriov_numvfs 0 -> 4")) TH_LOG("%s", self->out);
	EXPECT_EQ(4, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(4, vfs_on(self->pf, 4, "vfio-pci"));
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_drivers_autoprobe"));

	ASSERT_EQ(0, ctl("partition set %s vfs 2", self->pf)) TH_LOG("%s", self->out);
	EXPECT_EQ(2, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(2, vfs_on(self->pf, 2, "vfio-pci"));
	vf_bdf(self->pf, 2, bdf, sizeof(bdf));
	EXPECT_STREQ("", bdf);

	ASSERT_EQ(0, ctl("-j partition show %s", self->pf)) TH_LOG("%s", self->out);
	snprintf(want, sizeof(want), "\"parent\":\"%s\",\"driver\":\"igb\",\"num_vfs\":2",
		 self->pf);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no %s in %s", want, self->out);
	vf_bdf(self->pf, 1, bdf, sizeof(bdf));
	snprintf(want, sizeof(want), "\"index\":1,\"pci_addr\":\"%s\",\"driver\":\"vfio-pci\"",
		 bdf);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no %s in %s", want, self->out);

	ASSERT_EQ(0, ctl("partition set %s vfs 0", self->pf)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_numvfs"));
}

/*
 * A process holding the VFIO group of the device at sysfs directory @dev
 * open, as a VMM does, until killed.
 */
static pid_t hold_group_of(const char *dev)
{
	char path[64], link[PATH_MAX], group[PATH_MAX + 16];
	ssize_t len;
	pid_t pid;

	snprintf(group, sizeof(group), "%s/iommu_group", dev);
	len = readlink(group, link, sizeof(link) - 1);
	if (len <= 0)
		return -1;
	link[len] = '\0';
	snprintf(path, sizeof(path), "/dev/vfio/%s", strrchr(link, '/') + 1);
	pid = fork();
	if (pid == 0) {
		int fd;

		prctl(PR_SET_NAME, "fake-vmm");
		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	/* Until the child has the group open, nothing holds it. */
	for (int i = 0; i < 100; i++) {
		for (int fd = 3; fd < 64; fd++) {
			char fdpath[64], link[64];
			ssize_t n;

			snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", pid, fd);
			n = readlink(fdpath, link, sizeof(link) - 1);
			if (n > 0) {
				link[n] = '\0';
				if (!strcmp(link, path))
					return pid;
			}
		}
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

TEST_F(part, resize_refused_while_a_vf_is_open_by_a_vfio_user)
{
	char bdf[32], want[160], dev[64];
	pid_t holder;

	ASSERT_EQ(0, ctl("partition set %s vfs 2", self->pf)) TH_LOG("%s", self->out);
	vf_bdf(self->pf, 1, bdf, sizeof(bdf));
	snprintf(dev, sizeof(dev), "/sys/bus/pci/devices/%s", bdf);
	holder = hold_group_of(dev);
	ASSERT_LT(0, holder) TH_LOG("cannot hold the group of %s", bdf);

	EXPECT_EQ(1, ctl("partition set %s vfs 4", self->pf));
	snprintf(want, sizeof(want), "open by pid %d (fake-vmm)", holder);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no \"%s\" in: %s", want, self->out);
	EXPECT_NE(NULL, strstr(self->out, "Error: partition set: ")) TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strchr(self->out, '\n') ? strchr(strchr(self->out, '\n') + 1, '\n') : NULL)
		TH_LOG("more than one line: %s", self->out);
	EXPECT_EQ(2, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(2, vfs_on(self->pf, 2, "vfio-pci"));
	/* show names the user too. */
	EXPECT_EQ(0, ctl("partition show %s", self->pf));
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("%s", self->out);

	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	EXPECT_EQ(0, ctl("partition set %s vfs 4", self->pf)) TH_LOG("%s", self->out);
	EXPECT_EQ(4, pf_attr(self->pf, "sriov_numvfs"));
}

TEST_F(part, resize_refused_while_a_vf_is_in_an_enabled_group)
{
	char vf0[32], vf1[32];

	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, ctl("partition set %s vfs 2", self->pf)) TH_LOG("%s", self->out);
	vf_bdf(self->pf, 0, vf0, sizeof(vf0));
	vf_bdf(self->pf, 1, vf1, sizeof(vf1));
	ASSERT_EQ(0, ctl("group add gvf vm vm1")) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ctl("dev add gvf %s", vf0)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ctl("dev add gvf %s", vf1)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ctl("group enable gvf")) TH_LOG("%s", self->out);

	EXPECT_EQ(1, ctl("partition set %s vfs 0", self->pf));
	EXPECT_NE(NULL, strstr(self->out, "is in enabled P2P group gvf")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, pf_attr(self->pf, "sriov_numvfs"));

	/* A disabled group holds nothing. */
	ASSERT_EQ(0, ctl("group disable gvf")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, ctl("partition set %s vfs 0", self->pf)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_numvfs"));
	ctl("group del gvf");
	_test_cmd_mod_unload(KT_MOD_KVMAI);
}

static int write_profiles(const char *pf)
{
	FILE *f = fopen(PROFILES, "w");

	if (!f)
		return -1;
	fprintf(f, "[profile.inference.\"%s\"]\nvfs = 3\n", pf);
	fprintf(f, "[profile.training.\"%s\"]\nvfs = 0\n", pf);
	fprintf(f, "[profile.broken.\"%s\"]\nvfs = 2\ndriver = \"kvmai-no-such-driver\"\n", pf);
	return fclose(f);
}

TEST_F(part, profile_applied_twice_changes_nothing_the_second_time)
{
	ASSERT_EQ(0, write_profiles(self->pf));
	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile inference dry-run"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "sriov_numvfs 0 -> 3")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_numvfs"));

	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile inference")) TH_LOG("%s", self->out);
	EXPECT_EQ(3, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(3, vfs_on(self->pf, 3, "vfio-pci"));

	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile inference")) TH_LOG("%s", self->out);
	EXPECT_STREQ("no change\n", self->out);
	EXPECT_EQ(3, pf_attr(self->pf, "sriov_numvfs"));

	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile training")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(1, ctl("partition apply " PROFILES " profile nosuch"));
	EXPECT_NE(NULL, strstr(self->out, "it has: broken, inference, training"))
		TH_LOG("%s", self->out);
}

/*
 * A profile whose VF driver does not exist fails after the VF count
 * changed: the PF gets back its VFs, on the drivers they had.
 */
TEST_F(part, failure_half_way_leaves_the_previous_layout)
{
	char before[3][32], after[32];

	ASSERT_EQ(0, write_profiles(self->pf));
	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile inference")) TH_LOG("%s", self->out);
	for (int i = 0; i < 3; i++)
		vf_bdf(self->pf, i, before[i], sizeof(before[i]));

	EXPECT_EQ(1, ctl("partition apply " PROFILES " profile broken"));
	EXPECT_NE(NULL, strstr(self->out, "driver kvmai-no-such-driver is not loaded"))
		TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "rolled back to the previous layout"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(3, pf_attr(self->pf, "sriov_numvfs"));
	EXPECT_EQ(3, vfs_on(self->pf, 3, "vfio-pci"));
	EXPECT_EQ(0, pf_attr(self->pf, "sriov_drivers_autoprobe"));
	for (int i = 0; i < 3; i++) {
		vf_bdf(self->pf, i, after, sizeof(after));
		EXPECT_STREQ(before[i], after);
	}
}

/* How many mdevs of @type the mtty parent has. */
static int mtty_count(const char *type)
{
	char cmd[160], out[32];

	snprintf(cmd, sizeof(cmd),
		 "ls /sys/class/mdev_bus/mtty/mdev_supported_types/%s/devices | wc -l", type);
	if (kt_run(cmd, out, sizeof(out)))
		return -1;
	return atoi(out);
}

#define MDEV_UUID "6b3c2c8e-1f0a-4d6e-9a51-3e2f00c0ffee"

/*
 * The kernel's sample mdev driver, mtty (samples/vfio-mdev, built with the
 * test kernel): instances made by a profile and by hand, one refused
 * removal while a process holds it through VFIO, and all removed.
 */
TEST_F(part, mtty_mdevs_created_and_removed)
{
	char out[256], path[128], want[96];
	FILE *f;
	pid_t holder;

	if (access(MTTY_KO, F_OK))
		SKIP(return, "no %s: samples/vfio-mdev not built for this kernel", MTTY_KO);
	ASSERT_EQ(0, kt_sh(out, sizeof(out), "insmod " MTTY_KO)) TH_LOG("%s", out);
	ASSERT_EQ(0, access("/sys/class/mdev_bus/mtty", F_OK));
	f = fopen(PROFILES, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "[profile.serial.mtty]\nmdevs = { mtty-2 = 2 }\n");
	fprintf(f, "[profile.none.mtty]\nmdevs = []\n");
	ASSERT_EQ(0, fclose(f));

	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile serial")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, mtty_count("mtty-2"));
	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile serial")) TH_LOG("%s", self->out);
	EXPECT_STREQ("no change\n", self->out);

	ASSERT_EQ(0, ctl("partition add mtty type mtty-1 uuid " MDEV_UUID)) TH_LOG("%s", self->out);
	EXPECT_EQ(1, mtty_count("mtty-1"));
	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s", MDEV_UUID);
	ASSERT_EQ(0, access(path, F_OK));
	/* vm plan finds its parent in the kernel's layout: not a PCI device. */
	EXPECT_EQ(1, ctl("vm plan " MDEV_UUID));
	EXPECT_NE(NULL, strstr(self->out,
			       "mdev " MDEV_UUID ": its parent mtty is not a PCI device"))
		TH_LOG("%s", self->out);

	holder = hold_group_of(path);
	ASSERT_LT(0, holder) TH_LOG("cannot hold the group of %s", path);
	EXPECT_EQ(1, ctl("partition del " MDEV_UUID));
	snprintf(want, sizeof(want), "is open by pid %d (fake-vmm)", holder);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no \"%s\" in: %s", want, self->out);
	EXPECT_EQ(0, access(path, F_OK));
	/* The profile keeps the one in use and removes the others. */
	EXPECT_EQ(1, ctl("partition apply " PROFILES " profile none"));
	EXPECT_EQ(2, mtty_count("mtty-2"));
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);

	ASSERT_EQ(0, ctl("partition del " MDEV_UUID)) TH_LOG("%s", self->out);
	EXPECT_NE(0, access(path, F_OK));
	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile none")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, mtty_count("mtty-2"));
	kt_sh(out, sizeof(out), "rmmod mtty");
}

/*
 * Value of string field @field in the flat JSON object of @json that has
 * "@key":"@val", into @buf ("" when there is none).
 */
static void json_field_of(const char *json, const char *key, const char *val,
			  const char *field, char *buf, size_t len)
{
	char pair[160];
	const char *p, *start, *end;

	buf[0] = '\0';
	snprintf(pair, sizeof(pair), "\"%s\":\"%s\"", key, val);
	p = strstr(json, pair);
	if (!p)
		return;
	for (start = p; start > json && *start != '{'; start--)
		;
	end = strchr(p, '}');
	snprintf(pair, sizeof(pair), "\"%s\":\"", field);
	p = strstr(start, pair);
	if (!p || !end || p > end)
		return;
	p += strlen(pair);
	snprintf(buf, len, "%.*s", (int)(strcspn(p, "\"")), p);
}

#define MOCK_MDEV_TYPE "kvmai_mock_mdev-quarter"
#define MOCK_MDEV_UUID "4d0c6a1e-7b2f-4e8a-9c3d-5a6b7c8d9e0f"

/*
 * An mdev whose parent is a PCI function, as a GPU's vendor driver makes
 * them (kmod/testing/kvmai_mock_mdev.c, bound to foreign1 behind sw3):
 * `vm plan` finds it in the kernel's own layout and puts it where its
 * parent sits, below the mirror of the parent's downstream port, opened
 * by its sysfs path, and libvirt gets it as an mdev hostdev.  The parent
 * stays with its driver.
 */
TEST_F(part, mdev_of_a_pci_parent_planned_below_its_parents_port)
{
	const struct kt_dev *parent = kt_dev("foreign1");
	char drv[64], bus[32], host[32], port[32], bdf[32], path[128];
	int rc;

	if (access(KT_MOCK_MDEV_PATH, F_OK))
		SKIP(return, "no %s: a kernel without mdev", KT_MOCK_MDEV_PATH);
	ASSERT_NE(NULL, parent) TH_LOG("no foreign1 in the device map");
	ASSERT_EQ(0, kt_pci_driver(parent->bdf, drv, sizeof(drv)));
	ASSERT_EQ(0, _test_cmd_mod_load(KT_MOD_MOCK_MDEV, NULL));
	test_cmd_pci_bind(parent->bdf, "kvmai_mock_mdev");
	rc = ctl("partition add %s type " MOCK_MDEV_TYPE " uuid " MOCK_MDEV_UUID, parent->bdf);
	EXPECT_EQ(0, rc) TH_LOG("%s", self->out);

	if (!rc) {
		EXPECT_EQ(0, ctl("vm plan " MOCK_MDEV_UUID)) TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "-device vfio-pci,sysfsdev=/sys/bus/mdev/devices/"
					 MOCK_MDEV_UUID ",bus="))
			TH_LOG("%s", self->out);
		EXPECT_EQ(NULL, strstr(self->out, parent->bdf)) TH_LOG("%s", self->out);

		EXPECT_EQ(0, ctl("-j vm plan " MOCK_MDEV_UUID)) TH_LOG("%s", self->out);
		json_field_of(self->out, "mdev", MOCK_MDEV_UUID, "host_bdf", bdf, sizeof(bdf));
		EXPECT_STREQ(parent->bdf, bdf) TH_LOG("%s", self->out);
		json_field_of(self->out, "mdev", MOCK_MDEV_UUID, "bus", bus, sizeof(bus));
		json_field_of(self->out, "id", bus, "host", host, sizeof(host));
		/* The mirror of foreign1's downstream port, of sw3's upstream one. */
		EXPECT_STREQ(kt_dev_port("foreign1"), host) TH_LOG("%s", self->out);
		json_field_of(self->out, "id", bus, "bus", port, sizeof(port));
		json_field_of(self->out, "id", port, "host", host, sizeof(host));
		EXPECT_NE(0, host[0]) TH_LOG("no upstream port above %s: %s", bus, self->out);
		ksft_print_msg("%s: on %s, below %s (%s's mirror), below %s (%s's)\n",
			       MOCK_MDEV_UUID, bdf, bus, kt_dev_port("foreign1"), port, host);

		EXPECT_EQ(0, ctl("vm plan " MOCK_MDEV_UUID " format libvirt"))
			TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "type=\"mdev\" model=\"vfio-pci\""))
			TH_LOG("%s", self->out);
		EXPECT_NE(NULL, strstr(self->out, "uuid=\"" MOCK_MDEV_UUID "\""))
			TH_LOG("%s", self->out);

		EXPECT_EQ(0, ctl("partition del " MOCK_MDEV_UUID)) TH_LOG("%s", self->out);
		/* Bound again, the function is a parent again. */
		snprintf(path, sizeof(path), "/sys/class/mdev_bus/%s", parent->bdf);
		EXPECT_EQ(0, _test_cmd_pci_bind(parent->bdf, "kvmai_mock_mdev"));
		EXPECT_EQ(0, access(path, F_OK));
	}
	EXPECT_EQ(0, _test_cmd_pci_bind(parent->bdf, drv));
	EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_MDEV));
}

/* VF @i's nvidia/current_vgpu_type, -errno if it has none. */
static long vf_type(const char *pf, int i)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/virtfn%d/nvidia/current_vgpu_type",
		 pf, i);
	return kt_sysfs_read_long(path);
}

/*
 * NVIDIA vGPU on SR-IOV (vGPU 17+), on the test-only mock of its sysfs
 * (kmod/testing/kvmai_mock_vgpu.c): types set on every VF by a profile by
 * name, left alone by a second apply, cleared by hand; and a layout the
 * driver refuses half way (two vGPUs of a type one GPU holds once) leaves
 * the types that were there.
 */
TEST_F(part, nvidia_vgpu_types_set_cleared_and_rolled_back)
{
	char params[48];
	FILE *f;

	snprintf(params, sizeof(params), "pf=%s", self->pf);
	ASSERT_EQ(0, _test_cmd_mod_load(KT_MOD_MOCK_VGPU, params));
	f = fopen(PROFILES, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "[profile.half.\"%s\"]\nvfs = 2\nvgpu-type = \"NVIDIA H100-40C\"\n", self->pf);
	fprintf(f, "[profile.whole.\"%s\"]\nvfs = 2\n", self->pf);
	fprintf(f, "vgpu-type = [\"NVIDIA H100-80C\", \"NVIDIA H100-80C\"]\n");
	ASSERT_EQ(0, fclose(f));

	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile half")) TH_LOG("%s", self->out);
	EXPECT_EQ(902, vf_type(self->pf, 0));
	EXPECT_EQ(902, vf_type(self->pf, 1));
	EXPECT_EQ(2, vfs_on(self->pf, 2, "vfio-pci"));
	ASSERT_EQ(0, ctl("partition apply " PROFILES " profile half")) TH_LOG("%s", self->out);
	EXPECT_STREQ("no change\n", self->out);
	ASSERT_EQ(0, ctl("-j partition show %s", self->pf));
	EXPECT_NE(NULL, strstr(self->out,
			       "\"vgpu_type\":902,\"vgpu_type_name\":\"NVIDIA H100-40C\""))
		TH_LOG("%s", self->out);

	/* One GPU holds one H100-80C: the second VF's type fails. */
	EXPECT_EQ(1, ctl("partition apply " PROFILES " profile whole"));
	EXPECT_NE(NULL, strstr(self->out, "VF 1: vgpu-type none -> 901")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "rolled back to the previous layout"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(902, vf_type(self->pf, 0));
	EXPECT_EQ(902, vf_type(self->pf, 1));

	ASSERT_EQ(0, ctl("partition set %s vgpu-type none", self->pf)) TH_LOG("%s", self->out);
	EXPECT_EQ(0, vf_type(self->pf, 0));
	EXPECT_EQ(0, vf_type(self->pf, 1));
	ASSERT_EQ(0, ctl("partition set %s vgpu-type \"NVIDIA H100-80C\" vf 1", self->pf))
		TH_LOG("%s", self->out);
	EXPECT_EQ(0, vf_type(self->pf, 0));
	EXPECT_EQ(901, vf_type(self->pf, 1));
	EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_VGPU));
}

TEST_HARNESS_MAIN
