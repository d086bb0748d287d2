// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai_mock_pmu - fake PMUs for kvmai's tests, never for production.
 *
 * The emulated test host (QEMU/TCG) has no PMU at all, so this module
 * plays the drivers: uncore units offered to guests through the uncore
 * registry, like an AMD L3 and DF PMU with their real MSR addresses (so
 * that KVM's MSR intercepts can be counted for them), an Intel CHA box
 * (read-only counters), with genoa=1 a Genoa socket's larger DF and its
 * twelve UMC PMUs, with iio_stacks= an Intel IIO stack whose dieN files
 * name the PCIe root bus it counts on each package, and, on kernels with
 * the mediated vPMU, a "core" PMU that supports it, so that host events
 * blocking the mediated vPMU can be created at will.  Counters never count.
 *
 * KVM gives an owner the core PMU fence only where VMs get a mediated
 * vPMU, which the emulated host's KVM cannot (TCG has no PMU).  The mock
 * offers test builds of kvmai a fence of its own instead, with KVM's and
 * perf's rules for mock_core alone: it is refused while mock_core has events
 * that count in guests, and refuses them while it is held; and, as KVM
 * drops its fences when its vendor module is unloaded, writing 1 to
 * debugfs kvmai_mock_pmu/drop_fences drops the mock's.
 *
 * The uncore units keep their registers in memory, per package, and the
 * registry reaches them through uncore_guest_ops: what the guest writes
 * through KVM, what a host event leaves behind (a started event programs
 * pair 0 and "counts" into its counter; a stopped one clears the control
 * only, as real drivers do) and what the registry's scrub clears can all
 * be seen in debugfs, kvmai_mock_pmu/<unit>:
 *
 *   writes N                 registry writes so far
 *   PKG MSR VALUE            one line per register and package
 *
 * Loads that KVM passes through still reach the CPU's own MSR, not these.
 *
 * And whether the host could create an event on a unit while the registry
 * writes its registers (kvmai_mock_pmu/scrub_probe): written 1, every
 * registry write asks the registry, on the package it writes, whether it
 * would accept a host event there now, and counts the answers ("opened N
 * refused M"); written 0, it stops.  A scrub of a reservation that ends
 * must find the unit still closed to the host, or the host event it lets
 * in is stopped by the scrub behind perf's back.
 *
 * Like a real driver setting up its boxes when a package gets its first
 * CPU back, the mock enables pair 0 of a package whose CPUs were all
 * offline when one of them is being brought up (MOCK_INIT_CTL), before any
 * of the CPU's online callbacks run.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/delay.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include <asm/processor.h>
#include <asm/uncore_guest.h>

#include "../compat.h"
#include "kvmai_mock.h"

#define MOCK_L3_MSR	0xc0010230	/* CTL0, CTR0, CTL1, ... */
#define MOCK_L3_PAIRS	6
#define MOCK_DF_MSR	0xc0010240
#define MOCK_DF_PAIRS	4
/*
 * An AMD Genoa socket (family 19h model 11h), as the AMD driver registers
 * it (amd/uncore.c): PerfMonV2's DF of more counters, whose RDPMC indices
 * skip the L3's from the fifth on (amd_uncore_df_rdpmc()), and twelve UMC
 * PMUs of four counters each at 0xc0010800 + 8 * i, without RDPMC.  The
 * counts, 16 DF counters and 4 per UMC, are what CPUID 0x80000022 reports
 * there as we understand it; the layout is the driver's.
 */
#define MOCK_GENOA_DF_PAIRS	16
#define MOCK_UMC_MSR	0xc0010800
#define MOCK_UMC_PAIRS	4
#define MOCK_MAX_PAIRS	16
#define MOCK_CTL_MASK	0x0000ff00004fffffULL	/* no interrupt enable */
#define MOCK_CTR_MASK	0x0000ffffffffffffULL
#define MOCK_CTL_EN	BIT_ULL(22)
#define MOCK_HOST_COUNT	0x1234	/* what a host event "counted" */
#define MOCK_INIT_CTL	MOCK_CTL_EN	/* what bringing a package up sets */
/*
 * Intel's CHA box 0 on Skylake-SP to Ice Lake-SP (intel/uncore_snbep.c,
 * skx_uncore_chabox: box control 0xe00, controls 0xe01-0xe04, counters
 * 0xe08-0xe0b, 48 bits), which the series offers with read-only counters
 * that its scrub clears (UNCORE_GUEST_MSR_CLEAR).
 */
#define MOCK_CHA_MSR	0xe00
#define MOCK_CHA_PAIRS	4
#define MOCK_CHA_REGS	16	/* 0xe00-0xe0f */
#define MOCK_CHA_CTL0	1
#define MOCK_CHA_CTR0	8
/*
 * Skylake-SP's IIO stack 0 (SKX_IIO0_MSR_PMON_* in uncore_snbep.c): box
 * control 0xa40, counters from 0xa41, controls from 0xa48.
 */
#define MOCK_IIO_MSR	0xa40
#define MOCK_IIO_PAIRS	4
#define MOCK_IIO_REGS	16
#define MOCK_IIO_CTL0	8
#define MOCK_IIO_CTR0	1
#define MOCK_MAX_DIES	8

struct mock_pmu {
	struct pmu pmu;
	const char *name;
	u32 msr;
	unsigned int pairs;
	u32 rdpmc;		/* first RDPMC index of its counters, but the DF's */
	u32 ctl_flags;		/* extra flags of its control ranges */
	u64 ctl_mask;		/* what a control may hold but enable */
	bool l3;		/* plays AMD's L3: its control mask */
	bool df;		/* plays AMD's DF: its RDPMC layout, Genoa's size */
	bool intel;		/* Intel's layout: controls, then counters */
	bool no_rdpmc;		/* its counters have no RDPMC index (UMC) */
	bool genoa;		/* only with genoa=1 */
	bool iio;		/* only with iio_stacks= */
	unsigned int nregs;	/* registers kept per package, from @msr */
	u32 ctl0, ctr0;		/* pair 0's control and counter, from @msr */
	u32 stride;		/* from one pair's control (counter) to the next */
	enum uncore_guest_scope scope;
	bool uncore;
	bool registered;
	u64 *regs;		/* [package][nregs]: AMD's CTL0, CTR0, CTL1, ... */
	atomic_long_t writes;
	struct perf_event *probe;	/* the scrub probe's host event */
	unsigned long probing;		/* bit 0: @probe in use */
};

static struct dentry *mock_debugfs;

/*
 * For the test that a host event opened while a unit comes up is counted:
 * the time between offering each uncore unit and registering its PMU.
 */
static unsigned int register_delay_ms;
module_param(register_delay_ms, uint, 0444);
MODULE_PARM_DESC(register_delay_ms, "test only: sleep between offering a unit and registering it");

/* The units of an AMD Genoa socket instead of the small default ones. */
static bool genoa;
module_param(genoa, bool, 0444);
MODULE_PARM_DESC(genoa, "test only: an AMD Genoa socket's DF of 16 counters and 12 UMCs");
/*
 * The PCIe root bus ("SSSS:BB") of the IIO stack on each die, in die
 * order: what the real driver reads from the CPU bus number MSRs and
 * shows in uncore_iio_N/dieD (skx_iio_mapping_show()).
 */
static char *iio_stacks;
module_param(iio_stacks, charp, 0444);
MODULE_PARM_DESC(iio_stacks, "test only: play an IIO stack with these root buses, one per die");
static char mock_iio_bus[MOCK_MAX_DIES][8];
static int mock_cpuhp = -1;

static u64 *mock_reg(struct mock_pmu *mp, u32 msr)
{
	unsigned int pkg = topology_logical_package_id(smp_processor_id());

	if (!mp->regs || msr - mp->msr >= mp->nregs ||
	    pkg >= topology_max_packages())
		return NULL;
	return &mp->regs[pkg * mp->nregs + msr - mp->msr];
}

/*
 * The mock's core fences, each by its owner's flag, and mock_core's events
 * that count in guests.  Like KVM's, they all go when the "vendor module"
 * does: debugfs kvmai_mock_pmu/drop_fences, written 1.
 */
#define MOCK_MAX_FENCES	KVMAI_MAX_PMU_VMS	/* one per VM record, at most */
static DEFINE_MUTEX(mock_fence_lock);
static bool *mock_fence_held[MOCK_MAX_FENCES];
static unsigned int mock_fences;
static unsigned int mock_include_guest;

int kvmai_mock_core_fence(bool *held)
{
	unsigned int i;

	guard(mutex)(&mock_fence_lock);
	if (mock_include_guest)
		return -EBUSY;
	for (i = 0; i < MOCK_MAX_FENCES; i++)
		if (!mock_fence_held[i])
			break;
	if (i == MOCK_MAX_FENCES)
		return -ENOSPC;
	mock_fence_held[i] = held;
	WRITE_ONCE(*held, true);
	mock_fences++;
	return 0;
}
EXPORT_SYMBOL_GPL(kvmai_mock_core_fence);

void kvmai_mock_core_unfence(bool *held)
{
	unsigned int i;

	guard(mutex)(&mock_fence_lock);
	for (i = 0; i < MOCK_MAX_FENCES; i++)
		if (mock_fence_held[i] == held)
			break;
	if (i == MOCK_MAX_FENCES)
		return;		/* dropped already */
	mock_fence_held[i] = NULL;
	WRITE_ONCE(*held, false);
	mock_fences--;
}
EXPORT_SYMBOL_GPL(kvmai_mock_core_unfence);

/* What KVM does to its fences when its vendor module is unloaded. */
static ssize_t mock_drop_fences_write(struct file *file, const char __user *buf, size_t len,
				      loff_t *ppos)
{
	unsigned int i;
	bool drop;
	int ret;

	ret = kstrtobool_from_user(buf, len, &drop);
	if (ret)
		return ret;
	if (!drop)
		return len;
	guard(mutex)(&mock_fence_lock);
	for (i = 0; i < MOCK_MAX_FENCES; i++) {
		if (!mock_fence_held[i])
			continue;
		WRITE_ONCE(*mock_fence_held[i], false);
		mock_fence_held[i] = NULL;
	}
	mock_fences = 0;
	return len;
}

static const struct file_operations mock_drop_fences_fops = {
	.write = mock_drop_fences_write,
};

static void mock_core_destroy(struct perf_event *event)
{
	guard(mutex)(&mock_fence_lock);
	mock_include_guest--;
}

/* As perf does for a PMU with the mediated vPMU while a VM has one. */
static int mock_core_event_init(struct perf_event *event)
{
	if (event->attr.exclude_guest)
		return 0;
	guard(mutex)(&mock_fence_lock);
	if (mock_fences)
		return -EOPNOTSUPP;
	mock_include_guest++;
	event->destroy = mock_core_destroy;
	return 0;
}

static int mock_event_init(struct perf_event *event)
{
	struct mock_pmu *mp = container_of(event->pmu, struct mock_pmu, pmu);

	if (event->attr.type != event->pmu->type)
		return -ENOENT;
	/* Like real uncore and this core stand-in: system-wide, per CPU. */
	if (event->cpu < 0 || is_sampling_event(event))
		return -EINVAL;
	return mp->uncore ? uncore_guest_event_init(event) : mock_core_event_init(event);
}

/* A host event on pair 0: programs it and leaves a count behind. */
static int mock_add(struct perf_event *event, int flags)
{
	struct mock_pmu *mp = container_of(event->pmu, struct mock_pmu, pmu);
	u64 *ctl = mock_reg(mp, mp->msr + mp->ctl0);
	u64 *ctr = mock_reg(mp, mp->msr + mp->ctr0);

	if (ctl && ctr) {
		WRITE_ONCE(*ctl, (event->attr.config & mp->ctl_mask) | MOCK_CTL_EN);
		WRITE_ONCE(*ctr, READ_ONCE(*ctr) + MOCK_HOST_COUNT);
	}
	return 0;
}

/* Stops the control; the count stays, as in real counters. */
static void mock_del(struct perf_event *event, int flags)
{
	struct mock_pmu *mp = container_of(event->pmu, struct mock_pmu, pmu);
	u64 *ctl = mock_reg(mp, mp->msr + mp->ctl0);

	if (ctl)
		WRITE_ONCE(*ctl, 0);
}

static void mock_start(struct perf_event *event, int flags)
{
}

static void mock_stop(struct perf_event *event, int flags)
{
}

static void mock_read(struct perf_event *event)
{
}

/*
 * What AMD's L3 driver sets in a control besides the event, by family:
 * from 17h the slices and threads it counts, from 19h as a thread mask,
 * slice id, core id and "all" bits.  A guest's driver writes them as the
 * host's would, and the series offers AMD's L3 to guests with the same
 * mask, so the mock takes it too on the AMD family it runs on.
 */
static u64 mock_l3_ctl_mask(void)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_AMD || boot_cpu_data.x86 < 0x17)
		return MOCK_CTL_MASK;
	if (boot_cpu_data.x86 <= 0x18)
		return MOCK_CTL_MASK | AMD64_L3_SLICE_MASK | AMD64_L3_THREAD_MASK;
	return MOCK_CTL_MASK | AMD64_L3_F19H_THREAD_MASK | AMD64_L3_SLICEID_MASK |
	       AMD64_L3_EN_ALL_CORES | AMD64_L3_EN_ALL_SLICES | AMD64_L3_COREID_MASK;
}

static struct mock_pmu mock_pmus[] = {
	/*
	 * Its controls choose the threads counted, and it counts for the
	 * CPUs of an LLC, as AMD's L3 from 17h.  (The mock keeps one instance
	 * per package whatever the scope says.)
	 */
	{ .name = "mock_uncore_l3", .msr = MOCK_L3_MSR, .pairs = MOCK_L3_PAIRS,
	  .rdpmc = 10, .uncore = true, .l3 = true, .ctl_flags = UNCORE_GUEST_MSR_CORE_SELECT,
	  .scope = UNCORE_GUEST_SCOPE_LLC },
	{ .name = "mock_uncore_df", .msr = MOCK_DF_MSR, .pairs = MOCK_DF_PAIRS,
	  .df = true, .uncore = true, .scope = UNCORE_GUEST_SCOPE_PKG },
#define MOCK_UMC(n) \
	{ .name = "mock_uncore_umc_" #n, .msr = MOCK_UMC_MSR + 2 * MOCK_UMC_PAIRS * (n), \
	  .pairs = MOCK_UMC_PAIRS, .uncore = true, .no_rdpmc = true, .genoa = true, \
	  .scope = UNCORE_GUEST_SCOPE_DIE }
	MOCK_UMC(0), MOCK_UMC(1), MOCK_UMC(2), MOCK_UMC(3), MOCK_UMC(4), MOCK_UMC(5),
	MOCK_UMC(6), MOCK_UMC(7), MOCK_UMC(8), MOCK_UMC(9), MOCK_UMC(10), MOCK_UMC(11),
	{ .name = "mock_uncore_cha", .msr = MOCK_CHA_MSR, .pairs = MOCK_CHA_PAIRS,
	  .uncore = true, .intel = true, .nregs = MOCK_CHA_REGS,
	  .ctl0 = MOCK_CHA_CTL0, .ctr0 = MOCK_CHA_CTR0, .stride = 1,
	  .scope = UNCORE_GUEST_SCOPE_DIE },
	{ .name = "mock_uncore_iio_0", .msr = MOCK_IIO_MSR, .pairs = MOCK_IIO_PAIRS,
	  .uncore = true, .intel = true, .iio = true, .nregs = MOCK_IIO_REGS,
	  .ctl0 = MOCK_IIO_CTL0, .ctr0 = MOCK_IIO_CTR0, .stride = 1,
	  .scope = UNCORE_GUEST_SCOPE_DIE },
#ifdef PERF_PMU_CAP_MEDIATED_VPMU
	{ .name = "mock_core" },
#endif
};

/*
 * CPU @cpu is about to come up (on the CPU bringing it up): if no CPU of
 * its package is online, "initialise the box" there as drivers do.
 */
static int mock_cpu_prepare(unsigned int cpu)
{
	unsigned int pkg = topology_logical_package_id(cpu), i;
	int other;

	for_each_online_cpu(other)
		if (topology_logical_package_id(other) == pkg)
			return 0;
	if (pkg >= topology_max_packages())
		return 0;
	for (i = 0; i < ARRAY_SIZE(mock_pmus); i++) {
		struct mock_pmu *mp = &mock_pmus[i];

		if (mp->uncore && mp->regs)
			WRITE_ONCE(mp->regs[pkg * mp->nregs + mp->ctl0], MOCK_INIT_CTL);
	}
	return 0;
}

/* The registry's accesses, on the current CPU's package. */
static int mock_guest_read(struct pmu *pmu, u32 msr, u64 *val)
{
	u64 *reg = mock_reg(container_of(pmu, struct mock_pmu, pmu), msr);

	if (!reg)
		return -EIO;
	*val = READ_ONCE(*reg);
	return 0;
}

static bool mock_probe_armed;
static atomic_t mock_probe_opened, mock_probe_refused;

/*
 * Would the registry take a host event on this CPU now?  Asked the way the
 * driver's event_init() asks; an accepted event is destroyed at once.
 */
static void mock_probe_host_event(struct mock_pmu *mp)
{
	struct perf_event *event = mp->probe;

	/*
	 * The registry's locks are not for hard interrupt context: probe only
	 * where the registry writes on the CPU that asked it to, which the
	 * test arranges by running on the package's first CPU.
	 */
	if (!READ_ONCE(mock_probe_armed) || !event || in_hardirq() ||
	    test_and_set_bit_lock(0, &mp->probing))
		return;
	event->cpu = smp_processor_id();
	event->destroy = NULL;
	if (!uncore_guest_event_init(event)) {
		atomic_inc(&mock_probe_opened);
		if (event->destroy)
			event->destroy(event);
	} else {
		atomic_inc(&mock_probe_refused);
	}
	clear_bit_unlock(0, &mp->probing);
}

static int mock_guest_write(struct pmu *pmu, u32 msr, u64 val)
{
	struct mock_pmu *mp = container_of(pmu, struct mock_pmu, pmu);
	u64 *reg = mock_reg(mp, msr);

	if (!reg)
		return -EIO;
	mock_probe_host_event(mp);
	WRITE_ONCE(*reg, val);
	atomic_long_inc(&mp->writes);
	return 0;
}

static const struct uncore_guest_ops mock_guest_ops = {
	.read = mock_guest_read,
	.write = mock_guest_write,
};

static int mock_regs_show(struct seq_file *m, void *unused)
{
	struct mock_pmu *mp = m->private;
	unsigned int pkg, i;

	seq_printf(m, "writes %ld\n", atomic_long_read(&mp->writes));
	for (pkg = 0; pkg < topology_max_packages(); pkg++)
		for (i = 0; i < mp->nregs; i++)
			seq_printf(m, "%u 0x%x 0x%llx\n", pkg, mp->msr + i,
				   READ_ONCE(mp->regs[pkg * mp->nregs + i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(mock_regs);

static int mock_probe_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "opened %d refused %d\n", atomic_read(&mock_probe_opened),
		   atomic_read(&mock_probe_refused));
	return 0;
}

static int mock_probe_open(struct inode *inode, struct file *file)
{
	return single_open(file, mock_probe_show, NULL);
}

/* 1 arms the probe with its counts cleared, 0 disarms it. */
static ssize_t mock_probe_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (on) {
		atomic_set(&mock_probe_opened, 0);
		atomic_set(&mock_probe_refused, 0);
	}
	WRITE_ONCE(mock_probe_armed, on);
	return len;
}

static const struct file_operations mock_probe_fops = {
	.owner = THIS_MODULE,
	.open = mock_probe_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = mock_probe_write,
};

/*
 * Control/counter pairs offered as AMD's driver offers them: controls
 * written (checked against a mask), counters read without exits, by RDPMC
 * with AMD's indices (DF 6-9, L3 10-15) and written within their 48 bits.
 * Or as the series offers Intel's boxes: controls written, counters
 * read-only for the guest and cleared by the registry's scrub.
 */
static int mock_offer(struct mock_pmu *mp)
{
	struct uncore_guest_msr_range ranges[2 * MOCK_MAX_PAIRS];
	unsigned int i;

	for (i = 0; i < mp->pairs; i++) {
		ranges[2 * i] = (struct uncore_guest_msr_range) {
			.base = mp->msr + mp->ctl0 + i * mp->stride, .nr = 1,
			.flags = UNCORE_GUEST_MSR_WRITE | mp->ctl_flags,
			.write_mask = mp->ctl_mask,
		};
		if (mp->intel)
			ranges[2 * i + 1] = (struct uncore_guest_msr_range) {
				.base = mp->msr + mp->ctr0 + i, .nr = 1,
				.flags = UNCORE_GUEST_MSR_READ | UNCORE_GUEST_MSR_CLEAR,
			};
		else
			ranges[2 * i + 1] = (struct uncore_guest_msr_range) {
				.base = mp->msr + mp->ctr0 + i * mp->stride, .nr = 1,
				.flags = UNCORE_GUEST_MSR_READ | UNCORE_GUEST_MSR_WRITE |
					 (mp->no_rdpmc ? 0 : UNCORE_GUEST_MSR_RDPMC),
				.rdpmc = mp->df ? amd_uncore_df_rdpmc(i) : mp->rdpmc + i,
				.write_mask = MOCK_CTR_MASK,
			};
	}
	mp->regs = kcalloc(topology_max_packages() * mp->nregs,
			   sizeof(*mp->regs), GFP_KERNEL);
	mp->probe = kzalloc_obj(*mp->probe);
	if (!mp->regs || !mp->probe)
		return -ENOMEM;
	mp->probe->pmu = &mp->pmu;
	debugfs_create_file(mp->name, 0400, mock_debugfs, mp, &mock_regs_fops);
	return uncore_guest_register(&mp->pmu, mp->scope, ranges, 2 * mp->pairs,
				     &mock_guest_ops);
}

static void mock_remove(void)
{
	int i;

	if (mock_cpuhp >= 0)
		cpuhp_remove_state_nocalls(mock_cpuhp);
	mock_cpuhp = -1;
	for (i = ARRAY_SIZE(mock_pmus) - 1; i >= 0; i--) {
		struct mock_pmu *mp = &mock_pmus[i];

		if (!mp->registered)
			continue;
		if (mp->uncore)
			uncore_guest_unregister(&mp->pmu);
		perf_pmu_unregister(&mp->pmu);
		mp->registered = false;
	}
	debugfs_remove_recursive(mock_debugfs);
	for (i = 0; i < ARRAY_SIZE(mock_pmus); i++) {
		kfree(mock_pmus[i].regs);
		mock_pmus[i].regs = NULL;
		kfree(mock_pmus[i].probe);
		mock_pmus[i].probe = NULL;
	}
}

static ssize_t mock_iio_die_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute, attr);

	return sysfs_emit(buf, "%s\n", mock_iio_bus[(unsigned long)ea->var]);
}

#define MOCK_IIO_DIE(d) \
	static struct dev_ext_attribute mock_iio_die##d = { \
		__ATTR(die##d, 0444, mock_iio_die_show, NULL), (void *)d##UL }
MOCK_IIO_DIE(0); MOCK_IIO_DIE(1); MOCK_IIO_DIE(2); MOCK_IIO_DIE(3);
MOCK_IIO_DIE(4); MOCK_IIO_DIE(5); MOCK_IIO_DIE(6); MOCK_IIO_DIE(7);

static struct attribute *mock_iio_attrs[] = {
	&mock_iio_die0.attr.attr, &mock_iio_die1.attr.attr, &mock_iio_die2.attr.attr,
	&mock_iio_die3.attr.attr, &mock_iio_die4.attr.attr, &mock_iio_die5.attr.attr,
	&mock_iio_die6.attr.attr, &mock_iio_die7.attr.attr, NULL,
};

/* Only the dies given a bus, as the real driver shows only dies there are. */
static umode_t mock_iio_visible(struct kobject *kobj, struct attribute *attr, int i)
{
	return mock_iio_bus[i][0] ? attr->mode : 0;
}

static const struct attribute_group mock_iio_group = {
	.attrs = mock_iio_attrs,
	.is_visible = mock_iio_visible,
};

static const struct attribute_group *mock_iio_groups[] = { &mock_iio_group, NULL };

/* iio_stacks: "SSSS:BB" per die, comma-separated. */
static int mock_iio_parse(void)
{
	char *copy __free(kfree) = kstrdup(iio_stacks, GFP_KERNEL);
	char *s = copy, *bus;
	unsigned int die = 0, seg, nr;

	while (s && (bus = strsep(&s, ",")) && *bus) {
		if (die >= MOCK_MAX_DIES || strlen(bus) != 7 ||
		    sscanf(bus, "%4x:%2x", &seg, &nr) != 2)
			return -EINVAL;
		snprintf(mock_iio_bus[die++], sizeof(mock_iio_bus[0]), "%04x:%02x", seg, nr);
	}
	return die ? 0 : -EINVAL;
}

static int __init mock_init(void)
{
	unsigned int i;
	int ret;

	if (iio_stacks && mock_iio_parse()) {
		pr_err("iio_stacks: want SSSS:BB[,SSSS:BB...], one per die\n");
		return -EINVAL;
	}
	mock_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("scrub_probe", 0600, mock_debugfs, NULL, &mock_probe_fops);
	debugfs_create_file("drop_fences", 0200, mock_debugfs, NULL, &mock_drop_fences_fops);
	for (i = 0; i < ARRAY_SIZE(mock_pmus); i++) {
		struct mock_pmu *mp = &mock_pmus[i];

		if ((mp->genoa && !genoa) || (mp->iio && !iio_stacks))
			continue;
		if (genoa && mp->df)
			mp->pairs = MOCK_GENOA_DF_PAIRS;
		mp->ctl_mask = mp->l3 ? mock_l3_ctl_mask() : MOCK_CTL_MASK;
		/* AMD's layout unless told: CTL0, CTR0, CTL1, CTR1, ... */
		if (!mp->nregs) {
			mp->nregs = 2 * mp->pairs;
			mp->ctr0 = 1;
			mp->stride = 2;
		}
		mp->pmu = (struct pmu) {
			.module = THIS_MODULE,
			.task_ctx_nr = perf_invalid_context,
			.event_init = mock_event_init,
			.add = mock_add,
			.del = mock_del,
			.start = mock_start,
			.stop = mock_stop,
			.read = mock_read,
			.capabilities = PERF_PMU_CAP_NO_EXCLUDE,
		};
#ifdef PERF_PMU_CAP_MEDIATED_VPMU
		if (!mp->uncore)
			mp->pmu.capabilities = PERF_PMU_CAP_MEDIATED_VPMU;
#endif
		if (mp->iio)
			mp->pmu.attr_groups = mock_iio_groups;
		/* As the series' drivers do: offered first, then registered. */
		if (mp->uncore) {
			ret = mock_offer(mp);
			if (ret)
				goto err;
			if (register_delay_ms)
				msleep(register_delay_ms);
		}
		ret = perf_pmu_register(&mp->pmu, mp->name, -1);
		if (ret) {
			if (mp->uncore)
				uncore_guest_unregister(&mp->pmu);
			goto err;
		}
		mp->registered = true;
	}
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "kvmai/mock_pmu:prepare",
					mock_cpu_prepare, NULL);
	if (ret < 0) {
		pr_err("cannot set up its CPU hotplug state: %d\n", ret);
		mock_remove();
		return ret;
	}
	mock_cpuhp = ret;
	for (i = 0, ret = 0; i < ARRAY_SIZE(mock_pmus); i++)
		ret += mock_pmus[i].registered;
	pr_info("%d test PMUs registered; not for production\n", ret);
	return 0;
err:
	pr_err("cannot register %s: %d\n", mock_pmus[i].name, ret);
	mock_remove();
	return ret;
}

static void __exit mock_exit(void)
{
	mock_remove();
}

module_init(mock_init);
module_exit(mock_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kvmai test-only mock core and uncore PMUs");
