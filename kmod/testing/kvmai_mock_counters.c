// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai_mock_counters - fake free-running bandwidth counters for kvmai's
 * tests, never for production.
 *
 * The emulated test host has no uncore at all.  This module plays a unit
 * whose free-running counters sit in a page of their own, as Intel's IMC
 * free-running counters sit in MMIO: a clock, and PCIe and memory byte
 * counters that an hrtimer advances at the rates given as parameters, so
 * that a guest reading them through kvmai's counters device can be checked
 * against known rates.  A second unit's page is declared to hold another
 * stack's counters too, which kvmai must refuse to map.
 *
 * Its pages are marked reserved, because the real ones are MMIO: VFIO's
 * type1 IOMMU backend follows a VM_PFNMAP mapping of an MMIO or reserved
 * page into an IOMMU domain (vaddr_get_pfns(), is_invalid_reserved_pfn()
 * in drivers/vfio/vfio_iommu_type1.c) but refuses one of ordinary RAM, so
 * a plain page would hide what a VMM can do with the real counters.
 *
 * Each unit is also an uncore perf PMU in the uncore registry, so that
 * kvmai's ownership (and the host's losing and regaining the unit) works
 * as for a real one.  Its events count nothing.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/perf_event.h>

#include <asm/uncore_guest.h>
#include <uapi/linux/kvmai_counters.h>

#include "kvmai/counter_page.h"

#define MOCK_WIDTH	48
#define MOCK_CLOCK_HZ	1000000000ULL	/* the clock counts nanoseconds */
#define MOCK_PCIE_SCALE	4		/* bytes per count, as IIO counts */
#define MOCK_MEM_SCALE	64		/* one cache line, as IMC counts */
#define MOCK_PERIOD_NS	(NSEC_PER_MSEC)

/* MB/s (10^6 bytes); stack or channel i runs at (i + 1) times the rate. */
static unsigned int pcie_in_mbps = 2000;
module_param(pcie_in_mbps, uint, 0444);
MODULE_PARM_DESC(pcie_in_mbps, "inbound PCIe rate of stack 0, MB/s");
static unsigned int pcie_out_mbps = 1000;
module_param(pcie_out_mbps, uint, 0444);
MODULE_PARM_DESC(pcie_out_mbps, "outbound PCIe rate of stack 0, MB/s");
static unsigned int mem_read_mbps = 4000;
module_param(mem_read_mbps, uint, 0444);
MODULE_PARM_DESC(mem_read_mbps, "memory read rate of channel 0, MB/s");
static unsigned int mem_write_mbps = 1500;
module_param(mem_write_mbps, uint, 0444);
MODULE_PARM_DESC(mem_write_mbps, "memory write rate of channel 0, MB/s");

#define MOCK_CTR(i, k, idx, s, n) { .offset = 8 * (i), .width = MOCK_WIDTH, \
				    .kind = (k), .index = (idx), .scale = (s), .name = (n) }

static const struct kvmai_counter_desc mock_ctrs[] = {
	MOCK_CTR(0, KVMAI_CTR_CLOCK, 0, MOCK_CLOCK_HZ, "clockticks"),
	MOCK_CTR(1, KVMAI_CTR_PCIE_IN, 0, MOCK_PCIE_SCALE, "bw_in_port0"),
	MOCK_CTR(2, KVMAI_CTR_PCIE_OUT, 0, MOCK_PCIE_SCALE, "bw_out_port0"),
	MOCK_CTR(3, KVMAI_CTR_PCIE_IN, 1, MOCK_PCIE_SCALE, "bw_in_port1"),
	MOCK_CTR(4, KVMAI_CTR_PCIE_OUT, 1, MOCK_PCIE_SCALE, "bw_out_port1"),
	MOCK_CTR(5, KVMAI_CTR_MEM_READ, 0, MOCK_MEM_SCALE, "cas_count_rd0"),
	MOCK_CTR(6, KVMAI_CTR_MEM_WRITE, 0, MOCK_MEM_SCALE, "cas_count_wr0"),
	MOCK_CTR(7, KVMAI_CTR_MEM_READ, 1, MOCK_MEM_SCALE, "cas_count_rd1"),
	MOCK_CTR(8, KVMAI_CTR_MEM_WRITE, 1, MOCK_MEM_SCALE, "cas_count_wr1"),
};

struct mock_unit {
	struct pmu pmu;
	const char *name;
	const char *shares_with;
	struct kvmai_counter_page cp;
	bool pmu_registered;
	bool offered;
};

static struct mock_unit mock_units[] = {
	{ .name = "mock_bw" },
	{ .name = "mock_bw_shared", .shares_with = "PCIe stacks 2-3 of package 0" },
};

static struct hrtimer mock_timer;
static ktime_t mock_start;

/* Bytes at @mbps MB/s over @ns, in counts of @scale bytes. */
static u64 mock_counts(u64 mbps, u64 ns, u64 scale)
{
	return mul_u64_u64_div_u64(mbps * 1000000, ns, NSEC_PER_SEC * scale);
}

static u64 mock_value(const struct kvmai_counter_desc *d, u64 ns)
{
	u64 n = d->index + 1;

	switch (d->kind) {
	case KVMAI_CTR_CLOCK:
		return ns;
	case KVMAI_CTR_PCIE_IN:
		return mock_counts(n * pcie_in_mbps, ns, d->scale);
	case KVMAI_CTR_PCIE_OUT:
		return mock_counts(n * pcie_out_mbps, ns, d->scale);
	case KVMAI_CTR_MEM_READ:
		return mock_counts(n * mem_read_mbps, ns, d->scale);
	case KVMAI_CTR_MEM_WRITE:
		return mock_counts(n * mem_write_mbps, ns, d->scale);
	}
	return 0;
}

/* Every counter from one clock reading, so that rates come out exact. */
static enum hrtimer_restart mock_tick(struct hrtimer *timer)
{
	u64 ns = ktime_to_ns(ktime_sub(ktime_get(), mock_start));
	unsigned int u, i;

	for (u = 0; u < ARRAY_SIZE(mock_units); u++) {
		u64 *page = page_address(mock_units[u].cp.page);

		for (i = 0; i < ARRAY_SIZE(mock_ctrs); i++)
			WRITE_ONCE(page[mock_ctrs[i].offset / 8],
				   mock_value(&mock_ctrs[i], ns) & GENMASK_ULL(MOCK_WIDTH - 1, 0));
	}
	hrtimer_forward_now(timer, ns_to_ktime(MOCK_PERIOD_NS));
	return HRTIMER_RESTART;
}

static int mock_event_init(struct perf_event *event)
{
	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	if (event->cpu < 0 || is_sampling_event(event))
		return -EINVAL;
	return uncore_guest_event_init(event);
}

static int mock_add(struct perf_event *event, int flags)
{
	return 0;
}

static void mock_nop(struct perf_event *event, int flags)
{
}

static void mock_read(struct perf_event *event)
{
}

static void mock_remove(void)
{
	int i;

	hrtimer_cancel(&mock_timer);
	for (i = ARRAY_SIZE(mock_units) - 1; i >= 0; i--) {
		struct mock_unit *mu = &mock_units[i];

		if (mu->offered)
			kvmai_counters_unregister(&mu->cp);
		if (mu->pmu_registered) {
			uncore_guest_unregister(&mu->pmu);
			perf_pmu_unregister(&mu->pmu);
		}
		if (mu->cp.page) {
			ClearPageReserved(mu->cp.page);
			__free_page(mu->cp.page);
		}
		mu->offered = false;
		mu->pmu_registered = false;
		mu->cp.page = NULL;
	}
}

static int mock_add_unit(struct mock_unit *mu)
{
	int ret;

	mu->cp = (struct kvmai_counter_page) {
		.unit = mu->name,
		.package = 0,
		.page = alloc_page(GFP_KERNEL | __GFP_ZERO),
		.size = PAGE_SIZE,
		.counters = mock_ctrs,
		.nr_counters = ARRAY_SIZE(mock_ctrs),
		.shares_with = mu->shares_with,
	};
	if (!mu->cp.page)
		return -ENOMEM;
	SetPageReserved(mu->cp.page);
	mu->pmu = (struct pmu) {
		.module = THIS_MODULE,
		.task_ctx_nr = perf_invalid_context,
		.event_init = mock_event_init,
		.add = mock_add,
		.del = mock_nop,
		.start = mock_nop,
		.stop = mock_nop,
		.read = mock_read,
		.capabilities = PERF_PMU_CAP_NO_EXCLUDE,
	};
	ret = perf_pmu_register(&mu->pmu, mu->name, -1);
	if (ret)
		return ret;
	/* No MSRs: what a guest gets of it is the page. */
	ret = uncore_guest_register(&mu->pmu, UNCORE_GUEST_SCOPE_PKG, NULL, 0, NULL);
	if (ret) {
		perf_pmu_unregister(&mu->pmu);
		return ret;
	}
	mu->pmu_registered = true;
	ret = kvmai_counters_register(&mu->cp);
	if (ret)
		return ret;
	mu->offered = true;
	return 0;
}

static int __init mock_init(void)
{
	unsigned int i;
	int ret;

	mock_start = ktime_get();
#ifdef KVMAI_HAVE_HRTIMER_SETUP
	hrtimer_setup(&mock_timer, mock_tick, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
#else
	hrtimer_init(&mock_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	mock_timer.function = mock_tick;
#endif
	for (i = 0; i < ARRAY_SIZE(mock_units); i++) {
		ret = mock_add_unit(&mock_units[i]);
		if (ret) {
			pr_err("cannot add %s: %d\n", mock_units[i].name, ret);
			mock_remove();
			return ret;
		}
	}
	hrtimer_start(&mock_timer, ns_to_ktime(MOCK_PERIOD_NS), HRTIMER_MODE_REL);
	pr_info("%zu test counter pages offered; not for production\n", ARRAY_SIZE(mock_units));
	return 0;
}

static void __exit mock_exit(void)
{
	mock_remove();
}

module_init(mock_init);
module_exit(mock_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kvmai test-only mock free-running counter pages");
