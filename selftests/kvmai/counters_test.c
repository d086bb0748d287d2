// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counters devices in the emulated host: a unit's free-running counter
 * page, given read-only to the VM that owns the unit (kmod/counters.c).
 * The test-only mock provider (kmod/testing/kvmai_mock_counters.c) advances
 * its counters at the rates given as module parameters, so values are
 * checked too.  Each test acts as the operator (pmu assign, mdev create)
 * and as the VMM (VFIO, as QEMU opens a sysfsdev).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/ioctl.h>

#include <linux/kvmai.h>
#include <linux/kvmai_counters.h>
#include <linux/vfio.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"
#include "lib/counters.h"
#include "lib/dev.h"
#include "lib/pci.h"

#define BW "mock_bw"
#define BW_SHARED "mock_bw_shared"
#define NR_CTRS 9
#define KVMAICTL "/kvmai/bin/kvmaictl"

FIXTURE(ctr) {
	struct kt_nl nl;
	char pkg0[64], pkg1[64];
	char uuid[64];
	struct kt_vfio v;
};

FIXTURE_SETUP(ctr)
{
	int n;

	self->v.container = -1;
	self->v.group = -1;
	self->v.device = -1;
	if (access(KT_MOCK_COUNTERS_PATH, F_OK))
		SKIP(return, "no %s: this kernel has no mediated devices", KT_MOCK_COUNTERS_PATH);
	test_cmd_mod_load(KT_MOD_MOCK_COUNTERS, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	n = kt_cpu_package(0, self->pkg0, sizeof(self->pkg0));
	ASSERT_GT(n, 0);
	ASSERT_GT(kt_cpu_package(n, self->pkg1, sizeof(self->pkg1)), 0);
}

FIXTURE_TEARDOWN(ctr)
{
	struct kt_pmu_req dump = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	struct kt_pmu vms[8];
	int i, n = 0;

	kt_vfio_close(&self->v);
	if (!self->nl.sk)
		return;
	kt_ctrdev_remove_all();
	if (!_test_cmd_pmu_dump(&self->nl, &dump, vms, 8, &n))
		for (i = 0; i < n && i < 8; i++) {
			struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = vms[i].vm };

			_test_cmd_pmu(&self->nl, &rel, NULL);
		}
	kt_nl_close(&self->nl);
	EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_COUNTERS));
}

static int own(struct _test_data_ctr *self, const char *vm, const char *unit, const char *cpus,
	       bool shared)
{
	struct kt_pmu_req req = {
		.cmd = KVMAI_CMD_PMU_ASSIGN, .vm = vm, .units = { unit }, .cpus = cpus,
		.shared = shared,
	};

	return _test_cmd_pmu(&self->nl, &req, NULL);
}

static int give_back(struct _test_data_ctr *self, const char *vm)
{
	struct kt_pmu_req req = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = vm };

	return _test_cmd_pmu(&self->nl, &req, NULL);
}

static int mdev_count(void)
{
	char out[4096];
	int n = 0;
	char *p;

	if (kt_run("ls -d /sys/bus/mdev/devices/*/kvmai 2>/dev/null", out, sizeof(out)) < 0)
		return -1;
	for (p = out; (p = strstr(p, "/kvmai")); p++)
		n++;
	return n;
}

#define EPERM_TEXT "Operation not permitted"

/* Counter @c of the device's mapped BAR0. */
static __u64 at(const __u64 *bar0, const struct kvmai_ctrdev_counter *c)
{
	return kt_read_once(bar0[c->offset / 8]);
}

/* BAR0 of the device, mapped read-only as QEMU maps it. */
static const __u64 *map_bar0(struct __test_metadata *_metadata, struct _test_data_ctr *self,
			     size_t *size)
{
	struct vfio_region_info info;
	void *p;

	EXPECT_EQ(0, kt_vfio_region(&self->v, VFIO_PCI_BAR0_REGION_INDEX, &info));
	EXPECT_EQ(VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_MMAP, info.flags);
	p = mmap(NULL, info.size, PROT_READ, MAP_SHARED, self->v.device, info.offset);
	EXPECT_NE(MAP_FAILED, p);
	*size = info.size;
	return p == MAP_FAILED ? NULL : p;
}

static void owned_and_open(struct __test_metadata *_metadata, struct _test_data_ctr *self)
{
	ASSERT_EQ(0, own(self, "vm1", BW, self->pkg0, false)) TH_LOG("%s", self->nl.ext);
	test_cmd_ctrdev_create(BW, self->uuid, sizeof(self->uuid));
	ASSERT_EQ(0, kt_vfio_open(self->uuid, &self->v));
}

/* Nobody owns the unit: the device cannot be created, no VM can have one. */
TEST_F(ctr, unowned_unit_has_no_device)
{
	test_err_ctrdev_create(EPERM, BW, self->uuid, sizeof(self->uuid));
	EXPECT_TRUE(kt_kmsg_has("unit " BW ": no VM owns it on package 0"));
	EXPECT_EQ(0, mdev_count());
}

/*
 * What the VMM and the guest see: a PCI function of class 0x110100 with
 * the kvmai capability, the layout in BAR2, and counters in a read-only
 * BAR0 that advance at exactly the mock's rates.
 */
TEST_F(ctr, owner_reads_counters_at_the_rates_generated)
{
	struct kvmai_ctrdev_counter ctrs[NR_CTRS];
	struct kvmai_ctrdev_layout l;
	struct vfio_region_info cfg, lay;
	const __u64 *bar0;
	__u64 a[NR_CTRS], b[NR_CTRS], first;
	struct timespec t0, t1;
	__u8 config[256];
	char buf[64];
	size_t size;
	double secs;
	int i, n;

	owned_and_open(_metadata, self);
	ASSERT_EQ(0, kt_ctrdev_attr(self->uuid, "vm", buf, sizeof(buf)));
	EXPECT_STREQ("vm1", buf);
	ASSERT_EQ(0, kt_ctrdev_attr(self->uuid, "state", buf, sizeof(buf)));
	EXPECT_STREQ("live", buf);

	ASSERT_EQ(0, kt_vfio_region(&self->v, VFIO_PCI_CONFIG_REGION_INDEX, &cfg));
	ASSERT_EQ(256, pread(self->v.device, config, 256, cfg.offset));
	EXPECT_EQ(KVMAI_CTRDEV_CLASS, config[9] | config[10] << 8 | config[11] << 16);
	ASSERT_EQ(0x40, config[0x34]);
	EXPECT_EQ(0x09, config[0x40]);
	EXPECT_EQ(KVMAI_CTRDEV_MAGIC, config[0x43] | config[0x44] << 8 |
		  config[0x45] << 16 | (__u32)config[0x46] << 24);

	ASSERT_EQ(0, kt_vfio_region(&self->v, VFIO_PCI_BAR2_REGION_INDEX, &lay));
	EXPECT_EQ(VFIO_REGION_INFO_FLAG_READ, lay.flags);
	ASSERT_EQ(sizeof(l), pread(self->v.device, &l, sizeof(l), lay.offset));
	EXPECT_EQ(KVMAI_CTRDEV_MAGIC, l.magic);
	EXPECT_EQ(KVMAI_CTRDEV_LIVE, l.state);
	EXPECT_STREQ(BW, l.unit);
	ASSERT_EQ(NR_CTRS, l.nr_counters);
	ASSERT_EQ(sizeof(ctrs), pread(self->v.device, ctrs, sizeof(ctrs), lay.offset + sizeof(l)));
	ASSERT_EQ(KVMAI_CTR_CLOCK, ctrs[0].kind);

	bar0 = map_bar0(_metadata, self, &size);
	ASSERT_NE(NULL, bar0);
	/* Not writable, not even by asking for it. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->v.device, 0));
	/*
	 * Start on a tick stamped after t0.  The mock stamps every counter
	 * when its timer fires, and under TCG that can be many milliseconds
	 * late, so a value read at once may be older than t0, and the clock
	 * would seem to outrun the host's.  The first
	 * change seen after t0 may still have been stamped before it; the
	 * timer stamps the next one only after storing that one, which we
	 * had not seen at t0.  So a[] counts from after t0, b[] from before
	 * t1.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; n < 2; n++) {
		first = at(bar0, &ctrs[0]);
		for (i = 0; i < 20000 && at(bar0, &ctrs[0]) == first; i++)
			usleep(100);
		ASSERT_NE(first, at(bar0, &ctrs[0])) TH_LOG("the clock stood still for 2 s");
	}
	for (i = 0; i < NR_CTRS; i++)
		a[i] = at(bar0, &ctrs[i]);
	/*
	 * A window of at least 0.3 s of the device's own clock.  Under a
	 * loaded TCG the mock's timer can fire far later than asked, so the
	 * window is not a fixed sleep: it ends on the first snapshot whose
	 * clock is 0.3 s past a[] (within 20 s, or the clock stood still).
	 */
	usleep(300 * 1000);
	for (n = 0; n < 200; n++) {
		for (i = 0; i < NR_CTRS; i++)
			b[i] = at(bar0, &ctrs[i]);
		if ((double)(b[0] - a[0]) / (double)ctrs[0].scale >= 0.3)
			break;
		usleep(100 * 1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(b[0] - a[0]) / (double)ctrs[0].scale;
	ASSERT_GE(secs, 0.3) TH_LOG("the device's clock moved %.3f s in 20 s", secs);
	/* The device's clock is the host's time: it cannot outrun t0..t1. */
	EXPECT_LE(secs, t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (i = 1; i < NR_CTRS; i++) {
		static const char *const param[] = {
			[KVMAI_CTR_PCIE_IN] = "pcie_in_mbps",
			[KVMAI_CTR_PCIE_OUT] = "pcie_out_mbps",
			[KVMAI_CTR_MEM_READ] = "mem_read_mbps",
			[KVMAI_CTR_MEM_WRITE] = "mem_write_mbps",
		};
		double mbps = kt_mock_counters_param(param[ctrs[i].kind]);
		double want = mbps * 1e6 * (ctrs[i].index + 1);
		double got = (double)(b[i] - a[i]) * (double)ctrs[i].scale / secs;

		EXPECT_LT(got, want * 1.01)
			TH_LOG("%s: %.0f B/s, generated %.0f", ctrs[i].name, got, want);
		EXPECT_GT(got, want * 0.99)
			TH_LOG("%s: %.0f B/s, generated %.0f", ctrs[i].name, got, want);
	}
	/* The same values through the file, as QEMU reads when it has no mapping. */
	ASSERT_EQ(8, pread(self->v.device, &a[0], 8, 0));
	EXPECT_GE(a[0], b[0]);
	munmap((void *)bar0, size);
}

/*
 * The VM gives the unit back: its mapping reads all ones at once, the
 * layout says revoked, the device cannot be opened again, and the host
 * can count on the unit again.
 */
TEST_F(ctr, release_revokes_and_the_host_regains_the_unit)
{
	struct vfio_region_info lay;
	const __u64 *bar0;
	struct kvmai_ctrdev_layout l;
	struct kt_vfio again;
	char buf[64];
	size_t size;

	owned_and_open(_metadata, self);
	EXPECT_EQ(-EBUSY, kt_perf_try(BW, 0, false));
	bar0 = map_bar0(_metadata, self, &size);
	ASSERT_NE(NULL, bar0);
	EXPECT_NE(~0ULL, kt_read_once(bar0[0]));

	ASSERT_EQ(0, give_back(self, "vm1")) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(~0ULL, kt_read_once(bar0[0]));
	EXPECT_EQ(~0ULL, kt_read_once(bar0[size / 8 - 1]));
	ASSERT_EQ(0, kt_vfio_region(&self->v, VFIO_PCI_BAR2_REGION_INDEX, &lay));
	ASSERT_EQ(sizeof(l), pread(self->v.device, &l, sizeof(l), lay.offset));
	EXPECT_EQ(KVMAI_CTRDEV_REVOKED, l.state);
	ASSERT_EQ(0, kt_ctrdev_attr(self->uuid, "state", buf, sizeof(buf)));
	EXPECT_STREQ("revoked", buf);
	EXPECT_EQ(0, kt_perf_try(BW, 0, false));

	/* Owned again, even by the same VM: this device stays revoked. */
	munmap((void *)bar0, size);
	kt_vfio_close(&self->v);
	ASSERT_EQ(0, own(self, "vm1", BW, self->pkg0, false)) TH_LOG("%s", self->nl.ext);
	EXPECT_NE(0, kt_vfio_open(self->uuid, &again));
	kt_vfio_close(&again);
}

/* The VM owns the unit, but not on the package the page counts. */
TEST_F(ctr, other_package_refused)
{
	ASSERT_EQ(0, own(self, "vm1", BW, self->pkg1, false)) TH_LOG("%s", self->nl.ext);
	test_err_ctrdev_create(EPERM, BW, self->uuid, sizeof(self->uuid));
	EXPECT_TRUE(kt_kmsg_has("unit " BW ": no VM owns it on package 0"));
	EXPECT_EQ(0, mdev_count());
}

/* Packages shared with other tenants: the counters would see them. */
TEST_F(ctr, shared_packages_refused)
{
	ASSERT_EQ(0, own(self, "vm1", BW, "0", true)) TH_LOG("%s", self->nl.ext);
	test_err_ctrdev_create(EPERM, BW, self->uuid, sizeof(self->uuid));
	EXPECT_TRUE(kt_kmsg_has("unit " BW ": vm vm1 shares its packages"));
	EXPECT_EQ(0, mdev_count());
}

/* A page that also holds another stack's counters is never mapped. */
TEST_F(ctr, shared_page_refused)
{
	ASSERT_EQ(0, own(self, "vm1", BW_SHARED, self->pkg0, false)) TH_LOG("%s", self->nl.ext);
	test_err_ctrdev_create(EACCES, BW_SHARED, self->uuid, sizeof(self->uuid));
	EXPECT_TRUE(kt_kmsg_has("unit " BW_SHARED ": its counter page also holds PCIe stacks 2-3"));
	EXPECT_EQ(0, mdev_count());
}

/* One device per unit and package: a second VMM cannot get its own. */
TEST_F(ctr, one_device_per_unit)
{
	char second[64];

	owned_and_open(_metadata, self);
	EXPECT_GT(0, _test_cmd_ctrdev_create(BW, second, sizeof(second)));
	EXPECT_EQ(1, mdev_count());
}

/* Removing the device while a VMM holds it revokes it for that VMM. */
TEST_F(ctr, removal_revokes_a_held_mapping)
{
	const __u64 *bar0;
	size_t size;
	int status = -1, waited;
	pid_t pid;

	owned_and_open(_metadata, self);
	bar0 = map_bar0(_metadata, self, &size);
	ASSERT_NE(NULL, bar0);
	/* The removal waits for the VMM to let go: let it go 1 s later. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Only the parent may hold it, or the removal waits for itself. */
		munmap((void *)bar0, size);
		kt_vfio_close(&self->v);
		_exit(_test_cmd_ctrdev_remove(self->uuid) ? 1 : 0);
	}
	usleep(500 * 1000);
	EXPECT_EQ(~0ULL, kt_read_once(bar0[0]));
	munmap((void *)bar0, size);
	kt_vfio_close(&self->v);
	for (waited = 0; waited < 100 && !waitpid(pid, &status, WNOHANG); waited++)
		usleep(100 * 1000);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("removal: %#x", status);
	EXPECT_EQ(0, mdev_count());
}

/*
 * A VMM maps every RAM-like region of the guest, BARs included, into its
 * IOMMU domain so that devices can reach each other; for the counters that
 * would let the VM's own devices DMA-read them, and nothing tells an IOMMU
 * mapping that the device was revoked.  So the counter page must never
 * reach an IOMMU domain, before or after the revoke: here through a type1
 * container holding a real device, as QEMU's and libvirt's default backend
 * sets it up (nic1 behind the emulated host's VT-d).  iommufd only maps
 * what it can pin, which no counters mapping is.  The CPU mapping still
 * reads the counters.
 */
TEST_F(ctr, counter_page_never_reaches_an_iommu_domain)
{
	static const char *const nic[] = { "nic1" };
	struct vfio_iommu_type1_dma_map map = {
		.argsz = sizeof(map), .flags = VFIO_DMA_MAP_FLAG_READ, .iova = 1ULL << 32,
	};
	char saved[1][64], path[64];
	const __u64 *bar0;
	int group = -1, ret, round;
	size_t size;

	owned_and_open(_metadata, self);
	bar0 = map_bar0(_metadata, self, &size);
	ASSERT_NE(NULL, bar0);
	EXPECT_NE(~0ULL, kt_read_once(bar0[0]));
	map.vaddr = (__u64)(unsigned long)bar0;
	map.size = size;

	ASSERT_EQ(1, kt_dev_bind_vfio(nic, 1, saved)) TH_LOG("cannot bind nic1 to vfio-pci");
	snprintf(path, sizeof(path), "/dev/vfio/%d", kt_pci_iommu_group(kt_dev_bdf("nic1")));
	group = open(path, O_RDWR);
	EXPECT_LE(0, group) TH_LOG("%s: %s", path, strerror(errno));
	EXPECT_EQ(0, group < 0 ? -1 : ioctl(group, VFIO_GROUP_SET_CONTAINER, &self->v.container))
		TH_LOG("nic1's group joins the counters' container: %s", strerror(errno));

	for (round = 0; group >= 0 && round < 2; round++) {
		if (round)
			ASSERT_EQ(0, give_back(self, "vm1")) TH_LOG("%s", self->nl.ext);
		ret = ioctl(self->v.container, VFIO_IOMMU_MAP_DMA, &map);
		EXPECT_EQ(-1, ret) TH_LOG("%s: type1 put the counter page in nic1's IOMMU domain",
					  round ? "revoked" : "live");
		if (!ret) {
			struct vfio_iommu_type1_dma_unmap unmap = {
				.argsz = sizeof(unmap), .iova = map.iova, .size = map.size,
			};

			ioctl(self->v.container, VFIO_IOMMU_UNMAP_DMA, &unmap);
		}
	}
	if (group >= 0)
		close(group);
	_test_cmd_pci_bind(kt_dev_bdf("nic1"), saved[0]);

	munmap((void *)bar0, size);
}

/*
 * The operator's steps with kvmaictl instead of sysfs paths: add refuses
 * while nobody owns the unit, saying which unit; then creates the device
 * and prints its sysfsdev; show lists it with its VM; del removes it.
 */
TEST_F(ctr, kvmaictl_adds_shows_and_removes_the_device)
{
	char out[4096], want[256], uuid[64] = "";
	const char *p;

	EXPECT_EQ(1, kt_sh(out, sizeof(out), KVMAICTL " counters add " BW)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "counters add: unit " BW " on package 0: " EPERM_TEXT))
		TH_LOG("%s", out);
	EXPECT_EQ(0, mdev_count());

	ASSERT_EQ(0, own(self, "vm1", BW, self->pkg0, false)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, kt_sh(out, sizeof(out), KVMAICTL " -j counters add " BW)) TH_LOG("%s", out);
	p = strstr(out, "\"uuid\":\"");
	ASSERT_NE(NULL, p) TH_LOG("%s", out);
	p += strlen("\"uuid\":\"");
	snprintf(uuid, sizeof(uuid), "%.*s", (int)strcspn(p, "\""), p);
	snprintf(want, sizeof(want), "\"sysfsdev\":\"/sys/bus/mdev/devices/%s\"", uuid);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_EQ(1, mdev_count());

	ASSERT_EQ(0, kt_sh(out, sizeof(out), KVMAICTL " counters show " BW)) TH_LOG("%s", out);
	snprintf(want, sizeof(want), "device %s vm vm1 state live", uuid);
	EXPECT_NE(NULL, strstr(out, want)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "kvmai-" BW ".0: unit " BW " package 0 available 0"))
		TH_LOG("%s", out);

	EXPECT_EQ(0, kt_sh(out, sizeof(out), KVMAICTL " counters del %s", uuid)) TH_LOG("%s", out);
	EXPECT_EQ(0, mdev_count());
}

TEST_HARNESS_MAIN
