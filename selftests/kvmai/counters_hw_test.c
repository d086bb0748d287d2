// SPDX-License-Identifier: GPL-2.0-only
/*
 * Counters devices on real hardware: the memory controllers' free-running
 * counter pages of an Ice Lake-SP host (kmod/counters_intel.c), which
 * kvmai offers with intel_imc_pages=1 and which can be owned on kernels
 * with patch 0008.  The test writes memory on package 0 and checks that
 * the write counters a VMM maps count at least half of it.  Anywhere else
 * (the emulated host included) it skips, saying why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kvmai.h>
#include <linux/kvmai_counters.h>
#include <linux/vfio.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"
#include "lib/counters.h"

#define NR_MC 4
#define WRITE_BYTES BIT(30)

/* Intel family 6 model 0x6a: Ice Lake-SP. */
static bool icelake_x(void)
{
	char line[256];
	bool intel = false;
	int family = -1, model = -1;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f) && (family < 0 || model < 0)) {
		if (strstr(line, "GenuineIntel"))
			intel = true;
		if (!strncmp(line, "cpu family\t: ", 13))
			family = atoi(line + 13);
		if (!strncmp(line, "model\t\t: ", 9))
			model = atoi(line + 9);
	}
	fclose(f);
	return intel && family == 6 && model == 0x6a;
}

FIXTURE(hw) {
	struct kt_nl nl;
	char pkg0[64];
	char uuid[NR_MC][64];
	struct kt_vfio v[NR_MC];
};

FIXTURE_SETUP(hw)
{
	for (int i = 0; i < NR_MC; i++) {
		self->v[i].container = -1;
		self->v[i].group = -1;
		self->v[i].device = -1;
	}
	if (!icelake_x())
		SKIP(return, "not an Ice Lake-SP host (Intel family 6 model 0x6a): %s",
		     "no memory-controller counter pages");
	if (access("/sys/bus/event_source/devices/uncore_imc_free_running_0", F_OK))
		SKIP(return, "no uncore_imc_free_running_0 PMU (intel_uncore not loaded?)");
	/* The pages are offered only when asked for at load. */
	test_cmd_mod_unload(KT_MOD_MOCK_COUNTERS);
	test_cmd_mod_unload(KT_MOD_KVMAI);
	test_cmd_mod_load(KT_MOD_KVMAI, "intel_imc_pages=1");
	ASSERT_EQ(0, access("/sys/class/mdev_bus/kvmai-uncore_imc_free_running_0.0", F_OK))
		TH_LOG("kvmai offered no counter page of memory controller 0 on package 0");
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	ASSERT_GT(kt_cpu_package(0, self->pkg0, sizeof(self->pkg0)), 0);
}

FIXTURE_TEARDOWN(hw)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "hw" };

	for (int i = 0; i < NR_MC; i++)
		kt_vfio_close(&self->v[i]);
	if (!self->nl.sk)
		return;
	kt_ctrdev_remove_all();
	_test_cmd_pmu(&self->nl, &rel, NULL);
	kt_nl_close(&self->nl);
	_test_cmd_mod_unload(KT_MOD_KVMAI);
}

TEST_F_TIMEOUT(hw, write_counters_count_what_package_0_writes, 120)
{
	struct kt_pmu_req own = {
		.cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "hw", .cpus = self->pkg0,
		.units = { "uncore_imc_free_running_0", "uncore_imc_free_running_1",
			   "uncore_imc_free_running_2", "uncore_imc_free_running_3" },
	};
	const __u64 *bar0[NR_MC];
	__u64 before[NR_MC], written = 0;
	struct vfio_region_info info;
	char unit[64], *buf;
	int i, ret;

	ret = _test_cmd_pmu(&self->nl, &own, NULL);
	if (ret && strstr(self->nl.ext, "no uncore unit of that name takes guests"))
		SKIP(return, "this kernel does not offer free-running MMIO units (patch 0008)");
	ASSERT_EQ(0, ret) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, kt_cpu_pin(self->pkg0));
	for (i = 0; i < NR_MC; i++) {
		snprintf(unit, sizeof(unit), "uncore_imc_free_running_%d", i);
		test_cmd_ctrdev_create(unit, self->uuid[i], sizeof(self->uuid[i]));
		ASSERT_EQ(0, kt_vfio_open(self->uuid[i], &self->v[i]));
		ASSERT_EQ(0, kt_vfio_region(&self->v[i], VFIO_PCI_BAR0_REGION_INDEX, &info));
		bar0[i] = mmap(NULL, info.size, PROT_READ, MAP_SHARED, self->v[i].device,
			       info.offset);
		ASSERT_NE(MAP_FAILED, bar0[i]);
	}
	/* DDR write counts, 64-byte units, at 0x298 in each page. */
	for (i = 0; i < NR_MC; i++)
		before[i] = kt_read_once(bar0[i][0x298 / 8]);
	buf = malloc(WRITE_BYTES);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x5a, WRITE_BYTES);
	memset(buf, 0xa5, WRITE_BYTES);
	for (i = 0; i < NR_MC; i++) {
		__u64 now = kt_read_once(bar0[i][0x298 / 8]);

		written += ((now - before[i]) & (BIT_ULL(48) - 1)) * 64;
	}
	free(buf);
	ksft_print_msg("wrote %lu MiB twice; the memory controllers counted %lu MiB written\n",
		       WRITE_BYTES >> 20, (unsigned long)(written >> 20));
	/* Twice the buffer, of which at least half must reach DRAM past the LLC. */
	EXPECT_GE(written, WRITE_BYTES);
}

TEST_HARNESS_MAIN
