// SPDX-License-Identifier: GPL-2.0
/*
 * Uncore PMU units reserved for guests.
 *
 * Uncore drivers register the units whose registers a guest could own.  A
 * reservation covers whole packages of one unit: while it exists the host
 * cannot open events on those packages, and it cannot be taken while host
 * events are open there.  The owner hands the reservation out as a file
 * (uncore_guest_res_file()); whoever holds it, normally the VMM the owner
 * gave it to, may attach one VM so that KVM stops intercepting the unit's
 * counters.  The file keeps only the memory of the reservation: once the
 * owner releases it, attaching with the file fails.
 * The unit's registers are cleared when a reservation starts and when it
 * ends, so that neither the host nor the next tenant reads what the last
 * one counted, and no control the guest programmed keeps counting.
 *
 * A reserved package may lose its last online CPU.  The reservation stays,
 * and the package is reported offline (uncore_guest_res_pkg_offline()).
 * When a CPU of it comes back, the driver's own online callback, which
 * runs first, may have set the unit up for the host again: the registry
 * then clears its registers before any task can run there, and counts it
 * (uncore_guest_res_hotplug_scrubs()), so that the guest finds the unit
 * as a reservation leaves it and never in a state the host programmed.
 * A CPU that is not the reservation's may not come online in a package
 * reserved for a unit whose controls choose the cores it counts: the guest
 * could count it.
 *
 * Lock order: CPU hotplug lock (drivers register, and the registry's
 * hotplug callbacks run, under it) -> uncore_guest_mutex (registry changes,
 * and every callback is made under it) -> uncore_guest_lock (the state
 * event_init() reads).  A reservation's lock is taken last: it orders the
 * guest's register accesses (uncore_guest_res_read/write()) against the
 * end of the reservation.
 */
#include <linux/anon_inodes.h>
#include <linux/bitmap.h>
#include <linux/cleanup.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>

#include <asm/msr.h>
#include <asm/uncore_guest.h>

struct uncore_guest_unit {
	struct list_head node;
	struct pmu *pmu;
	const struct uncore_guest_ops *ops;
	struct uncore_guest_msr_range *ranges;
	unsigned int nr_ranges;
	unsigned int *nr_events;	/* host events, per logical package */
	enum uncore_guest_scope scope;
	struct list_head reservations;
};

struct uncore_guest_res {
	struct kref kref;
	struct list_head node;			/* in unit->reservations */
	struct uncore_guest_unit *unit;		/* NULL once revoked */
	/* Set under @lock, so no access checked before it lands after it. */
	spinlock_t lock;
	bool revoked;
	/* The unit's, kept to scrub it after the reservation is revoked. */
	struct pmu *pmu;
	const struct uncore_guest_ops *ops;
	unsigned long *pkgs;
	cpumask_var_t cpus;			/* the owner's, as reserved */
	unsigned int hotplug_scrubs;
	struct uncore_guest_msr_range *ranges;	/* the unit's, copied */
	unsigned int nr_ranges;
	uncore_guest_revoke_t revoke;		/* owner */
	void *revoke_data;
	uncore_guest_revoke_t kvm_revoke;	/* attached VM */
	void *kvm_data;
};

static DEFINE_MUTEX(uncore_guest_mutex);
static DEFINE_SPINLOCK(uncore_guest_lock);
static LIST_HEAD(uncore_guest_units);

static struct uncore_guest_unit *unit_by_pmu(struct pmu *pmu)
{
	struct uncore_guest_unit *unit;

	list_for_each_entry(unit, &uncore_guest_units, node)
		if (unit->pmu == pmu)
			return unit;
	return NULL;
}

static struct uncore_guest_unit *unit_by_name(const char *name)
{
	struct uncore_guest_unit *unit;

	list_for_each_entry(unit, &uncore_guest_units, node)
		if (unit->pmu->name && !strcmp(unit->pmu->name, name))
			return unit;
	return NULL;
}

static bool pkg_reserved(struct uncore_guest_unit *unit, unsigned int pkg)
{
	struct uncore_guest_res *res;

	list_for_each_entry(res, &unit->reservations, node)
		if (test_bit(pkg, res->pkgs))
			return true;
	return false;
}

static bool unit_core_select(struct uncore_guest_unit *unit)
{
	unsigned int i;

	for (i = 0; i < unit->nr_ranges; i++)
		if (unit->ranges[i].flags & UNCORE_GUEST_MSR_CORE_SELECT)
			return true;
	return false;
}

/* Whether an online CPU of a package in @pkgs is not in @cpus. */
static bool cpus_leave_out_some(const struct cpumask *cpus,
				const unsigned long *pkgs)
{
	int cpu;

	for_each_online_cpu(cpu)
		if (test_bit(topology_logical_package_id(cpu), pkgs) &&
		    !cpumask_test_cpu(cpu, cpus))
			return true;
	return false;
}

/* Online CPUs of logical package @pkg. */
static unsigned int pkg_online_cpus(unsigned int pkg)
{
	unsigned int n = 0;
	int cpu;

	for_each_online_cpu(cpu)
		if (topology_logical_package_id(cpu) == pkg)
			n++;
	return n;
}

/**
 * uncore_guest_register - offer an uncore PMU's registers to guests
 * @pmu: the registered perf PMU; its name is what owners reserve
 * @scope: the CPUs one instance of the unit counts for, for owners to show
 * @ranges: MSRs a guest may access while it owns the unit
 * @nr_ranges: number of @ranges
 * @ops: how to reach the registers, or NULL for the MSRs of the current CPU
 *
 * The driver must also call uncore_guest_event_init() from its event_init().
 * Writing 0 to every writable register of @ranges must stop the unit
 * counting and clear its counters: that is how reservations are scrubbed.
 *
 * Return: 0, -EEXIST if @pmu is registered, -ENOMEM.
 */
int uncore_guest_register(struct pmu *pmu, enum uncore_guest_scope scope,
			  const struct uncore_guest_msr_range *ranges,
			  unsigned int nr_ranges,
			  const struct uncore_guest_ops *ops)
{
	struct uncore_guest_unit *unit;

	unit = kzalloc_obj(*unit);
	if (!unit)
		return -ENOMEM;
	unit->pmu = pmu;
	unit->scope = scope;
	unit->ops = ops;
	unit->nr_ranges = nr_ranges;
	INIT_LIST_HEAD(&unit->reservations);
	unit->ranges = kmemdup_array(ranges, nr_ranges, sizeof(*ranges),
				     GFP_KERNEL);
	unit->nr_events = kcalloc(topology_max_packages(),
				  sizeof(*unit->nr_events), GFP_KERNEL);
	if ((nr_ranges && !unit->ranges) || !unit->nr_events) {
		kfree(unit->ranges);
		kfree(unit->nr_events);
		kfree(unit);
		return -ENOMEM;
	}

	guard(mutex)(&uncore_guest_mutex);
	if (unit_by_pmu(pmu)) {
		kfree(unit->ranges);
		kfree(unit->nr_events);
		kfree(unit);
		return -EEXIST;
	}
	spin_lock_irq(&uncore_guest_lock);
	list_add_tail(&unit->node, &uncore_guest_units);
	spin_unlock_irq(&uncore_guest_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(uncore_guest_register);

static void res_free(struct kref *kref)
{
	struct uncore_guest_res *res = container_of(kref, typeof(*res), kref);

	bitmap_free(res->pkgs);
	free_cpumask_var(res->cpus);
	kfree(res->ranges);
	kfree(res);
}

static int res_msr_read(struct uncore_guest_res *res, u32 msr, u64 *val)
{
	if (res->ops)
		return res->ops->read(res->pmu, msr, val);
	return rdmsrq_safe(msr, val);
}

static int res_msr_write(struct uncore_guest_res *res, u32 msr, u64 val)
{
	if (res->ops)
		return res->ops->write(res->pmu, msr, val);
	return wrmsrq_safe(msr, val);
}

/*
 * Zero every register the guest may write, twice: the first pass stops the
 * controls, the second clears what the counters counted meanwhile.
 */
static void res_scrub_cpu(void *data)
{
	struct uncore_guest_res *res = data;
	const struct uncore_guest_msr_range *r;
	unsigned int i, pass;
	u32 msr;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < res->nr_ranges; i++) {
			r = &res->ranges[i];
			if (!(r->flags & UNCORE_GUEST_MSR_WRITE))
				continue;
			for (msr = r->base; msr - r->base < r->nr; msr++)
				res_msr_write(res, msr, 0);
		}
	}
}

/*
 * Scrub the unit on each reserved package, from one of its online CPUs.
 * Called with uncore_guest_mutex held, while the unit is registered, and
 * with no guest access possible (not yet attached, or revoked).  Drivers
 * register from CPU hotplug callbacks, so the hotplug lock cannot be taken
 * here: a CPU that went offline meanwhile is skipped for the next one of
 * its package.
 */
static void res_scrub(struct uncore_guest_res *res)
{
	unsigned int pkg, nr_pkgs = topology_max_packages();
	unsigned long *done;
	int cpu;

	done = bitmap_zalloc(nr_pkgs, GFP_KERNEL);
	if (WARN_ON_ONCE(!done))
		return;
	for_each_online_cpu(cpu) {
		pkg = topology_logical_package_id(cpu);
		if (pkg >= nr_pkgs || !test_bit(pkg, res->pkgs) ||
		    test_bit(pkg, done))
			continue;
		if (!smp_call_function_single(cpu, res_scrub_cpu, res, true))
			__set_bit(pkg, done);
	}
	bitmap_free(done);
}

/*
 * Called with uncore_guest_mutex held; the caller drops the unit's ref.
 * When it returns, no guest access of the unit can happen any more, and
 * the unit is clean for the host.
 */
static void res_revoke(struct uncore_guest_res *res)
{
	spin_lock_irq(&uncore_guest_lock);
	list_del_init(&res->node);
	res->unit = NULL;
	spin_unlock_irq(&uncore_guest_lock);

	/* Waits for an access that passed its check before this. */
	spin_lock(&res->lock);
	WRITE_ONCE(res->revoked, true);
	spin_unlock(&res->lock);

	if (res->kvm_revoke)
		res->kvm_revoke(res, res->kvm_data);
	res_scrub(res);
}

/**
 * uncore_guest_unregister - withdraw a PMU before perf_pmu_unregister()
 * @pmu: the PMU given to uncore_guest_register()
 *
 * Every reservation of the unit is revoked (and its registers scrubbed):
 * attached VMs and owners are told through their revoke callbacks.  Owners
 * still call uncore_guest_release().
 */
void uncore_guest_unregister(struct pmu *pmu)
{
	struct uncore_guest_res *res, *tmp;
	struct uncore_guest_unit *unit;

	guard(mutex)(&uncore_guest_mutex);
	unit = unit_by_pmu(pmu);
	if (!unit)
		return;
	list_for_each_entry_safe(res, tmp, &unit->reservations, node) {
		res_revoke(res);
		if (res->revoke)
			res->revoke(res, res->revoke_data);
	}
	spin_lock_irq(&uncore_guest_lock);
	list_del(&unit->node);
	spin_unlock_irq(&uncore_guest_lock);
	kfree(unit->ranges);
	kfree(unit->nr_events);
	kfree(unit);
}
EXPORT_SYMBOL_GPL(uncore_guest_unregister);

static void uncore_guest_event_destroy(struct perf_event *event)
{
	unsigned int pkg = topology_logical_package_id(event->cpu);
	struct uncore_guest_unit *unit;
	unsigned long flags;

	spin_lock_irqsave(&uncore_guest_lock, flags);
	unit = unit_by_pmu(event->pmu);
	if (unit && !WARN_ON_ONCE(!unit->nr_events[pkg]))
		unit->nr_events[pkg]--;
	spin_unlock_irqrestore(&uncore_guest_lock, flags);
}

/**
 * uncore_guest_event_init - account a host event, or refuse it
 * @event: an event the driver's event_init() has accepted, event->cpu set
 *
 * Call last in event_init(); it takes over event->destroy.
 *
 * Return: 0, or -EBUSY while a guest owns the unit on the event's package.
 */
int uncore_guest_event_init(struct perf_event *event)
{
	struct uncore_guest_unit *unit;
	unsigned long flags;
	unsigned int pkg;
	int ret = 0;

	if (event->cpu < 0 || WARN_ON_ONCE(event->destroy))
		return -EINVAL;
	pkg = topology_logical_package_id(event->cpu);

	spin_lock_irqsave(&uncore_guest_lock, flags);
	unit = unit_by_pmu(event->pmu);
	if (unit) {
		if (pkg_reserved(unit, pkg)) {
			ret = -EBUSY;
		} else {
			unit->nr_events[pkg]++;
			event->destroy = uncore_guest_event_destroy;
		}
	}
	spin_unlock_irqrestore(&uncore_guest_lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(uncore_guest_event_init);

/**
 * uncore_guest_reserve - give a unit's packages to a guest
 * @name: perf PMU name of the unit
 * @cpus: CPUs whose packages are reserved
 * @revoke: called, under the registry's mutex, if the unit goes away
 * @data: for @revoke
 *
 * Before it returns, the unit's registers are scrubbed on the reserved
 * packages: what host events counted there is gone.
 *
 * A unit whose controls choose the cores it counts
 * (UNCORE_GUEST_MSR_CORE_SELECT) is reserved only if @cpus holds every
 * online CPU of the packages: the guest could point it at any of them.
 * For the same reason, while it is reserved no CPU of those packages
 * outside @cpus can come online.
 *
 * Return: the reservation, or ERR_PTR(-ENODEV) for an unknown unit,
 * -EINVAL for an empty @cpus, -EACCES if @cpus leaves out an online CPU of
 * such a unit's packages, -EEXIST if a package is already reserved, -EBUSY
 * if host events are open on a package, -ENOMEM.
 */
struct uncore_guest_res *uncore_guest_reserve(const char *name,
					      const struct cpumask *cpus,
					      uncore_guest_revoke_t revoke,
					      void *data)
{
	unsigned int pkg, nr_pkgs = topology_max_packages();
	struct uncore_guest_res *res;
	struct uncore_guest_unit *unit;
	int cpu, ret = 0;

	if (cpumask_empty(cpus))
		return ERR_PTR(-EINVAL);
	res = kzalloc_obj(*res);
	if (!res)
		return ERR_PTR(-ENOMEM);
	kref_init(&res->kref);
	INIT_LIST_HEAD(&res->node);
	spin_lock_init(&res->lock);
	res->pkgs = bitmap_zalloc(nr_pkgs, GFP_KERNEL);
	if (!res->pkgs || !zalloc_cpumask_var(&res->cpus, GFP_KERNEL)) {
		bitmap_free(res->pkgs);
		kfree(res);
		return ERR_PTR(-ENOMEM);
	}
	cpumask_copy(res->cpus, cpus);
	for_each_cpu(cpu, cpus)
		__set_bit(topology_logical_package_id(cpu), res->pkgs);
	res->revoke = revoke;
	res->revoke_data = data;

	mutex_lock(&uncore_guest_mutex);
	unit = unit_by_name(name);
	if (!unit) {
		ret = -ENODEV;
		goto out;
	}
	if (unit_core_select(unit) && cpus_leave_out_some(cpus, res->pkgs)) {
		ret = -EACCES;
		goto out;
	}
	res->ranges = kmemdup_array(unit->ranges, unit->nr_ranges,
				    sizeof(*unit->ranges), GFP_KERNEL);
	if (unit->nr_ranges && !res->ranges) {
		ret = -ENOMEM;
		goto out;
	}
	res->nr_ranges = unit->nr_ranges;

	spin_lock_irq(&uncore_guest_lock);
	for_each_set_bit(pkg, res->pkgs, nr_pkgs) {
		if (pkg_reserved(unit, pkg))
			ret = -EEXIST;
		else if (unit->nr_events[pkg] && !ret)
			ret = -EBUSY;
	}
	if (!ret) {
		res->unit = unit;
		res->pmu = unit->pmu;
		res->ops = unit->ops;
		list_add_tail(&res->node, &unit->reservations);
	}
	spin_unlock_irq(&uncore_guest_lock);
	/* Host events are refused from here on: nothing refills the unit. */
	if (!ret)
		res_scrub(res);
out:
	mutex_unlock(&uncore_guest_mutex);
	if (ret) {
		kref_put(&res->kref, res_free);
		return ERR_PTR(ret);
	}
	return res;
}
EXPORT_SYMBOL_GPL(uncore_guest_reserve);

/**
 * uncore_guest_release - end a reservation
 * @res: from uncore_guest_reserve(), revoked or not
 *
 * An attached VM loses its access first (its revoke callback runs), then
 * the unit's registers are scrubbed; only then can the host use it again.
 */
void uncore_guest_release(struct uncore_guest_res *res)
{
	mutex_lock(&uncore_guest_mutex);
	res->revoke = NULL;
	if (res->unit)
		res_revoke(res);
	mutex_unlock(&uncore_guest_mutex);
	kref_put(&res->kref, res_free);
}
EXPORT_SYMBOL_GPL(uncore_guest_release);

/**
 * uncore_guest_list_units - list the units guests could own
 * @fn: called under the registry's mutex; a non-zero return stops the walk
 * @data: for @fn
 *
 * Return: what @fn returned last.
 */
int uncore_guest_list_units(uncore_guest_unit_fn_t fn, void *data)
{
	struct uncore_guest_unit_info info;
	struct uncore_guest_unit *unit;
	unsigned int pkg;
	int ret = 0;

	guard(mutex)(&uncore_guest_mutex);
	list_for_each_entry(unit, &uncore_guest_units, node) {
		info = (struct uncore_guest_unit_info) {
			.name = unit->pmu->name,
			.type = unit->pmu->type,
			.nr_ranges = unit->nr_ranges,
			.core_select = unit_core_select(unit),
			.scope = unit->scope,
		};
		spin_lock_irq(&uncore_guest_lock);
		for (pkg = 0; pkg < topology_max_packages(); pkg++)
			info.host_events += unit->nr_events[pkg];
		info.reserved = !list_empty(&unit->reservations);
		spin_unlock_irq(&uncore_guest_lock);
		ret = fn(&info, data);
		if (ret)
			break;
	}
	return ret;
}
EXPORT_SYMBOL_GPL(uncore_guest_list_units);

static int res_file_release(struct inode *inode, struct file *file)
{
	struct uncore_guest_res *res = file->private_data;

	kref_put(&res->kref, res_free);
	return 0;
}

static const struct file_operations res_fops = {
	.owner = THIS_MODULE,
	.release = res_file_release,
};

/**
 * uncore_guest_res_file - a handle on a reservation, for its VMM
 * @res: from uncore_guest_reserve()
 *
 * The owner installs the file in a descriptor it gives to the VMM, which
 * passes it to KVM to attach its VM.  The file keeps @res allocated, not
 * reserved: once the owner releases @res, attaching with it fails.
 *
 * Return: a new file, or an ERR_PTR().
 */
struct file *uncore_guest_res_file(struct uncore_guest_res *res)
{
	struct file *file;

	kref_get(&res->kref);
	file = anon_inode_getfile("[uncore_guest]", &res_fops, res, O_RDWR);
	if (IS_ERR(file))
		kref_put(&res->kref, res_free);
	return file;
}
EXPORT_SYMBOL_GPL(uncore_guest_res_file);

/**
 * uncore_guest_file_res - the reservation of a file
 * @file: any file
 *
 * Return: the reservation @file is a handle of, valid as long as @file is,
 * or NULL if @file is not one of uncore_guest_res_file().
 */
struct uncore_guest_res *uncore_guest_file_res(struct file *file)
{
	return file->f_op == &res_fops ? file->private_data : NULL;
}
EXPORT_SYMBOL_GPL(uncore_guest_file_res);

/**
 * uncore_guest_attach - let a VM use a reservation
 * @res: from uncore_guest_file_res(), on a file the VMM was given
 * @revoke: called, under the registry's mutex, when the reservation ends
 * @data: for @revoke; identifies the VM
 *
 * On success, the VM holds @res until uncore_guest_detach().
 *
 * Return: 0, -ENODEV if the reservation ended, -EBUSY if another VM is
 * attached to it, -EEXIST if the VM is attached to it or to another
 * reservation of the same unit.
 */
int uncore_guest_attach(struct uncore_guest_res *res,
			uncore_guest_revoke_t revoke, void *data)
{
	struct uncore_guest_res *other;

	guard(mutex)(&uncore_guest_mutex);
	if (!res->unit)
		return -ENODEV;
	if (res->kvm_revoke)
		return res->kvm_data == data ? -EEXIST : -EBUSY;
	list_for_each_entry(other, &res->unit->reservations, node)
		if (other->kvm_revoke && other->kvm_data == data)
			return -EEXIST;
	res->kvm_revoke = revoke;
	res->kvm_data = data;
	kref_get(&res->kref);
	return 0;
}
EXPORT_SYMBOL_GPL(uncore_guest_attach);

/**
 * uncore_guest_detach - the VM is done with a reservation
 * @res: from uncore_guest_attach()
 */
void uncore_guest_detach(struct uncore_guest_res *res)
{
	mutex_lock(&uncore_guest_mutex);
	res->kvm_revoke = NULL;
	res->kvm_data = NULL;
	mutex_unlock(&uncore_guest_mutex);
	kref_put(&res->kref, res_free);
}
EXPORT_SYMBOL_GPL(uncore_guest_detach);

/**
 * uncore_guest_res_ranges - MSRs an attached VM may access
 * @res: the reservation
 * @ranges: set to the ranges, valid as long as @res is attached
 *
 * Return: the number of ranges, 0 once the reservation is revoked.
 */
int uncore_guest_res_ranges(struct uncore_guest_res *res,
			    const struct uncore_guest_msr_range **ranges)
{
	if (READ_ONCE(res->revoked))
		return 0;
	*ranges = res->ranges;
	return res->nr_ranges;
}
EXPORT_SYMBOL_GPL(uncore_guest_res_ranges);

/**
 * uncore_guest_res_has_cpu - whether @cpu is on a reserved package
 * @res: the reservation
 * @cpu: a CPU, usually where the vCPU runs
 *
 * Return: true while @res is not revoked and covers @cpu's package.
 */
bool uncore_guest_res_has_cpu(struct uncore_guest_res *res, int cpu)
{
	return !READ_ONCE(res->revoked) &&
	       test_bit(topology_logical_package_id(cpu), res->pkgs);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_has_cpu);

/**
 * uncore_guest_res_active - whether the reservation still lasts
 * @res: the reservation
 *
 * Return: false once it is revoked; it never lasts again.
 */
bool uncore_guest_res_active(struct uncore_guest_res *res)
{
	return !READ_ONCE(res->revoked);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_active);

static const struct uncore_guest_msr_range *
res_range(struct uncore_guest_res *res, u32 msr)
{
	unsigned int i;

	for (i = 0; i < res->nr_ranges; i++)
		if (msr - res->ranges[i].base < res->ranges[i].nr)
			return &res->ranges[i];
	return NULL;
}

/*
 * The guest's access to @msr: whether it may access the unit here and now,
 * and the access, as one step under the reservation's lock.
 */
static int res_access(struct uncore_guest_res *res, u32 msr, u64 *val,
		      bool write)
{
	int ret;

	guard(spinlock)(&res->lock);
	if (res->revoked)
		return -ENODEV;
	if (!test_bit(topology_logical_package_id(smp_processor_id()),
		      res->pkgs))
		return -ESRCH;
	ret = write ? res_msr_write(res, msr, *val) :
		      res_msr_read(res, msr, val);
	return ret ? -EIO : 0;
}

/**
 * uncore_guest_res_read - read a register of the unit for the guest
 * @res: the reservation, attached
 * @msr: an MSR of the reservation's ranges
 * @val: set to its value on the current CPU
 *
 * The check and the read are one step against the end of the reservation.
 *
 * Return: 0, -EPERM if @msr is not the unit's, -ENODEV once the reservation
 * is revoked, -ESRCH if the current CPU is not on a reserved package, -EIO
 * if the read faulted.
 */
int uncore_guest_res_read(struct uncore_guest_res *res, u32 msr, u64 *val)
{
	if (!res_range(res, msr))
		return -EPERM;
	return res_access(res, msr, val, false);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_read);

/**
 * uncore_guest_res_write - write a register of the unit for the guest
 * @res: the reservation, attached
 * @msr: an MSR of the reservation's ranges
 * @val: the value, for the current CPU
 *
 * Only ranges with UNCORE_GUEST_MSR_WRITE, and only bits of their write
 * mask.  The check and the write are one step against the end of the
 * reservation: once uncore_guest_release() returned, no write lands.
 *
 * Return: 0, -EPERM if the unit's driver does not allow the write, -ENODEV,
 * -ESRCH or -EIO as uncore_guest_res_read().
 */
int uncore_guest_res_write(struct uncore_guest_res *res, u32 msr, u64 val)
{
	const struct uncore_guest_msr_range *r = res_range(res, msr);

	if (!r || !(r->flags & UNCORE_GUEST_MSR_WRITE) ||
	    (val & ~r->write_mask))
		return -EPERM;
	return res_access(res, msr, &val, true);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_write);

/**
 * uncore_guest_res_rdpmc - read a counter of the unit by RDPMC index
 * @res: the reservation, attached
 * @idx: the RDPMC index (ECX) the guest used
 * @val: set to the counter's value on the current CPU
 *
 * The index selects the MSR of a range with UNCORE_GUEST_MSR_RDPMC, as the
 * instruction would on the host; the read is uncore_guest_res_read()'s.
 *
 * Return: 0, -EPERM if the unit answers no such index, or as
 * uncore_guest_res_read().
 */
int uncore_guest_res_rdpmc(struct uncore_guest_res *res, u32 idx, u64 *val)
{
	const struct uncore_guest_msr_range *r;
	unsigned int i;

	for (i = 0; i < res->nr_ranges; i++) {
		r = &res->ranges[i];
		if ((r->flags & UNCORE_GUEST_MSR_RDPMC) && idx - r->rdpmc < r->nr)
			return uncore_guest_res_read(res, r->base + idx - r->rdpmc,
						     val);
	}
	return -EPERM;
}
EXPORT_SYMBOL_GPL(uncore_guest_res_rdpmc);

/**
 * uncore_guest_res_pkg_offline - whether a reserved package has no online CPU
 * @res: the reservation
 * @pkg: a logical package id
 *
 * Return: true if @pkg is reserved and none of its CPUs is online.
 */
bool uncore_guest_res_pkg_offline(struct uncore_guest_res *res,
				  unsigned int pkg)
{
	return pkg < topology_max_packages() && test_bit(pkg, res->pkgs) &&
	       !pkg_online_cpus(pkg);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_pkg_offline);

/**
 * uncore_guest_res_hotplug_scrubs - how often a reserved package came back
 * @res: the reservation
 *
 * Return: the number of times a reserved package got its first online CPU
 * back and the unit's registers there were cleared.
 */
unsigned int uncore_guest_res_hotplug_scrubs(struct uncore_guest_res *res)
{
	return READ_ONCE(res->hotplug_scrubs);
}
EXPORT_SYMBOL_GPL(uncore_guest_res_hotplug_scrubs);

/*
 * A CPU comes online in a reserved package.  A unit whose controls choose
 * the cores it counts could count this one too: unless the reservation
 * has it, it stays offline until the reservation ends.
 */
static int res_cpu_online(struct uncore_guest_unit *unit,
			  struct uncore_guest_res *res, unsigned int cpu)
{
	if (!unit_core_select(unit) || cpumask_test_cpu(cpu, res->cpus))
		return 0;
	pr_warn("uncore_guest: %s: CPU %u stays offline: package %u is reserved without it and the unit could count it\n",
		unit->pmu->name, cpu, topology_logical_package_id(cpu));
	return -EBUSY;
}

/*
 * A reserved package got its first online CPU back.  This runs after the
 * uncore drivers' online callbacks (their states come before the dynamic
 * ones), which may have initialised the unit there for the host, on that
 * CPU and before it is active, so no vCPU can run on the package yet.
 */
static int res_pkg_online(struct uncore_guest_unit *unit,
			  struct uncore_guest_res *res, unsigned int cpu)
{
	scoped_guard(spinlock, &res->lock)
		res_scrub_cpu(res);
	WRITE_ONCE(res->hotplug_scrubs, res->hotplug_scrubs + 1);
	pr_info("uncore_guest: %s: reserved package %u is online again, its registers cleared\n",
		unit->pmu->name, topology_logical_package_id(cpu));
	return 0;
}

/* The last CPU of a reserved package goes offline: the reservation stays. */
static int res_pkg_offline(struct uncore_guest_unit *unit,
			   struct uncore_guest_res *res, unsigned int cpu)
{
	pr_info("uncore_guest: %s: reserved package %u has no online CPU; it stays reserved\n",
		unit->pmu->name, topology_logical_package_id(cpu));
	return 0;
}

/* Call @fn on every reservation of @cpu's package, until one fails. */
static int pkg_reservations(unsigned int cpu,
			    int (*fn)(struct uncore_guest_unit *unit,
				      struct uncore_guest_res *res,
				      unsigned int cpu))
{
	unsigned int pkg = topology_logical_package_id(cpu);
	struct uncore_guest_unit *unit;
	struct uncore_guest_res *res;
	int ret;

	lockdep_assert_held(&uncore_guest_mutex);
	list_for_each_entry(unit, &uncore_guest_units, node) {
		list_for_each_entry(res, &unit->reservations, node) {
			if (!test_bit(pkg, res->pkgs))
				continue;
			ret = fn(unit, res, cpu);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* A failure keeps @cpu offline: the hotplug core rolls its bring-up back. */
static int uncore_guest_cpu_online(unsigned int cpu)
{
	int ret;

	guard(mutex)(&uncore_guest_mutex);
	ret = pkg_reservations(cpu, res_cpu_online);
	if (!ret && pkg_online_cpus(topology_logical_package_id(cpu)) == 1)
		ret = pkg_reservations(cpu, res_pkg_online);
	return ret;
}

static int uncore_guest_cpu_offline(unsigned int cpu)
{
	guard(mutex)(&uncore_guest_mutex);
	if (pkg_online_cpus(topology_logical_package_id(cpu)) == 1)
		pkg_reservations(cpu, res_pkg_offline);
	return 0;
}

/* The state, for a modular build of this file to remove on unload. */
static enum cpuhp_state uncore_guest_cpuhp;

static int __init uncore_guest_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"perf/x86/uncore_guest:online",
					uncore_guest_cpu_online,
					uncore_guest_cpu_offline);
	if (ret < 0)
		return ret;
	uncore_guest_cpuhp = ret;
	return 0;
}
device_initcall(uncore_guest_init);
