// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - Ice Lake-SP memory bandwidth as counter pages.
 *
 * Each memory controller of an Ice Lake-SP package has free-running
 * counters of DDR (and DDR-T) reads and writes in 64-byte units, 48 bits
 * wide, in one page of its MMIO space: perf's uncore_imc_free_running_N
 * (arch/x86/events/intel/uncore_snbep.c).  The MMIO space is found as the
 * driver finds it, from two registers of the package's memory-controller
 * PCI function (8086:3451).  kvmai offers each controller's page as unit
 * uncore_imc_free_running_N on its package.
 *
 * Only on request (intel_imc_pages=1): the page also holds the
 * controller's other registers.  They belong to the same controller,
 * whose traffic the owner of the package may see anyway, and the mapping
 * is read-only; but Intel does not document them as free of read side
 * effects, so the operator decides.
 *
 * Sapphire Rapids' free-running IMC counters count clocks and queue
 * occupancy, not bytes, and its bandwidth counters need programming: none
 * is offered there.  Nothing here runs without such a host; the selftest
 * counters_hw_test does on one.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <asm/cpu_device_id.h>
#include <asm/intel-family.h>

#include <uapi/linux/kvmai_counters.h>

#include "counters.h"

static bool intel_imc_pages;
module_param(intel_imc_pages, bool, 0444);
MODULE_PARM_DESC(intel_imc_pages,
		 "offer Ice Lake-SP IMC free-running counter pages to VMs owning their package");

#define ICX_MC_DEVICE		0x3451
#define ICX_MC_MMIO_BASE	0xd0	/* bits 51:23 of the MMIO space */
#define ICX_MC_MMIO_BASE_MASK	GENMASK(28, 0)
#define ICX_MC_MMIO_MEM0	0xd8	/* bits 22:12 of controller 0's part */
#define ICX_MC_MMIO_MEM_MASK	GENMASK(10, 0)
#define ICX_MC_MMIO_MEM_STRIDE	4
#define ICX_NR_MC		4
#define ICX_FR_PAGE		0x2000	/* the page of the free-running counters */
#define ICX_FR_WIDTH		48
#define ICX_FR_SCALE		64	/* bytes per count */

struct kvmai_icx_page {
	struct kvmai_counter_page cp;
	char unit[KVMAI_CTRDEV_NAME_LEN];
	struct kvmai_counter_desc ctrs[4];
};

static struct kvmai_icx_page *kvmai_icx_pages;
static unsigned int kvmai_icx_nr, kvmai_icx_max;

static const struct x86_cpu_id kvmai_icx_ids[] = {
	X86_MATCH_VFM(INTEL_ICELAKE_X, NULL),
	{}
};

/* In the page: DDR read, DDR write, DDR-T read, DDR-T write. */
static void kvmai_icx_counters(struct kvmai_icx_page *p, unsigned int mc)
{
	static const struct {
		u32 offset;
		u8 kind;
		const char *name;
	} ctr[] = {
		{ 0x290, KVMAI_CTR_MEM_READ, "read" },
		{ 0x298, KVMAI_CTR_MEM_WRITE, "write" },
		{ 0x2a0, KVMAI_CTR_MEM_READ, "ddrt_read" },
		{ 0x2a8, KVMAI_CTR_MEM_WRITE, "ddrt_write" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctr); i++)
		p->ctrs[i] = (struct kvmai_counter_desc) {
			.offset = ctr[i].offset,
			.width = ICX_FR_WIDTH,
			.kind = ctr[i].kind,
			/* DDR-T as channels of their own, after the DDR ones. */
			.index = i < 2 ? 0 : 1,
			.scale = ICX_FR_SCALE,
			.name = ctr[i].name,
		};
}

/* The logical package of a memory-controller function, from its node. */
static int kvmai_icx_package(struct pci_dev *pdev)
{
	int node = dev_to_node(&pdev->dev);
	unsigned int cpu;

	if (node == NUMA_NO_NODE)
		return -ENODEV;
	cpu = cpumask_first(cpumask_of_node(node));
	return cpu < nr_cpu_ids ? topology_logical_package_id(cpu) : -ENODEV;
}

static int kvmai_icx_add(struct pci_dev *pdev)
{
	u32 base, mem;
	unsigned int mc;
	int pkg, ret;

	pkg = kvmai_icx_package(pdev);
	if (pkg < 0)
		return pkg;
	if (kvmai_icx_nr + ICX_NR_MC > kvmai_icx_max)
		return -ENOSPC;
	pci_read_config_dword(pdev, ICX_MC_MMIO_BASE, &base);
	if (PCI_POSSIBLE_ERROR(base) || !(base & ICX_MC_MMIO_BASE_MASK))
		return -ENODEV;
	for (mc = 0; mc < ICX_NR_MC; mc++) {
		struct kvmai_icx_page *p = &kvmai_icx_pages[kvmai_icx_nr];
		phys_addr_t phys;

		pci_read_config_dword(pdev, ICX_MC_MMIO_MEM0 + mc * ICX_MC_MMIO_MEM_STRIDE, &mem);
		phys = (phys_addr_t)(base & ICX_MC_MMIO_BASE_MASK) << 23 |
		       (phys_addr_t)(mem & ICX_MC_MMIO_MEM_MASK) << 12;
		snprintf(p->unit, sizeof(p->unit), "uncore_imc_free_running_%u", mc);
		kvmai_icx_counters(p, mc);
		p->cp = (struct kvmai_counter_page) {
			.unit = p->unit,
			.package = pkg,
			.phys = phys + ICX_FR_PAGE,
			.size = PAGE_SIZE,
			.counters = p->ctrs,
			.nr_counters = ARRAY_SIZE(p->ctrs),
		};
		ret = kvmai_counters_register(&p->cp);
		if (ret)
			return ret;
		kvmai_icx_nr++;
	}
	return 0;
}

void kvmai_counters_intel_exit(void)
{
	while (kvmai_icx_nr)
		kvmai_counters_unregister(&kvmai_icx_pages[--kvmai_icx_nr].cp);
	kfree(kvmai_icx_pages);
	kvmai_icx_pages = NULL;
}

void kvmai_counters_intel_init(void)
{
	struct pci_dev *pdev = NULL;
	unsigned int n = 0;
	int ret = 0;

	if (!intel_imc_pages || !x86_match_cpu(kvmai_icx_ids))
		return;
	while ((pdev = pci_get_device(PCI_VENDOR_ID_INTEL, ICX_MC_DEVICE, pdev)))
		n++;
	if (!n) {
		pr_warn("intel_imc_pages: no memory controller function %04x:%04x\n",
			PCI_VENDOR_ID_INTEL, ICX_MC_DEVICE);
		return;
	}
	kvmai_icx_max = n * ICX_NR_MC;
	kvmai_icx_pages = kcalloc(kvmai_icx_max, sizeof(*kvmai_icx_pages), GFP_KERNEL);
	if (!kvmai_icx_pages)
		return;
	while (!ret && (pdev = pci_get_device(PCI_VENDOR_ID_INTEL, ICX_MC_DEVICE, pdev))) {
		ret = kvmai_icx_add(pdev);
		if (ret) {
			pci_err(pdev, "kvmai: cannot offer its IMC counter pages: %d\n", ret);
			pci_dev_put(pdev);
		}
	}
	/* All or none, and never a reason for kvmai itself not to load. */
	if (ret)
		kvmai_counters_intel_exit();
}
