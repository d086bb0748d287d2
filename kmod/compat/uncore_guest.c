// SPDX-License-Identifier: GPL-2.0
/*
 * Uncore PMU units reserved for guests.
 *
 * Uncore drivers register the units whose registers a guest could own.  A
 * reservation covers whole packages of one unit: while it exists the host
 * cannot open events on those packages, and it cannot be taken while host
 * events are open there.  One VMM process, named at reservation time, may
 * then attach its VM so that KVM stops intercepting the unit's counters.
 *
 * Lock order: uncore_guest_mutex (registry changes, and every callback is
 * made under it) -> uncore_guest_lock (the state event_init() reads).
 */
#include <linux/bitmap.h>
#include <linux/cleanup.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>

#include <asm/uncore_guest.h>

struct uncore_guest_unit {
	struct list_head node;
	struct pmu *pmu;
	struct uncore_guest_msr_range *ranges;
	unsigned int nr_ranges;
	unsigned int *nr_events;	/* host events, per logical package */
	struct list_head reservations;
};

struct uncore_guest_res {
	struct kref kref;
	struct list_head node;			/* in unit->reservations */
	struct uncore_guest_unit *unit;		/* NULL once revoked */
	bool revoked;
	unsigned long *pkgs;
	struct pid *vmm;
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

static struct uncore_guest_unit *unit_by_type(int type)
{
	struct uncore_guest_unit *unit;

	list_for_each_entry(unit, &uncore_guest_units, node)
		if (unit->pmu->type == type)
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

/**
 * uncore_guest_register - offer an uncore PMU's registers to guests
 * @pmu: the registered perf PMU; its name is what owners reserve
 * @ranges: MSRs a guest may access while it owns the unit
 * @nr_ranges: number of @ranges
 *
 * The driver must also call uncore_guest_event_init() from its event_init().
 *
 * Return: 0, -EEXIST if @pmu is registered, -ENOMEM.
 */
int uncore_guest_register(struct pmu *pmu,
			  const struct uncore_guest_msr_range *ranges,
			  unsigned int nr_ranges)
{
	struct uncore_guest_unit *unit;

	unit = kzalloc_obj(*unit);
	if (!unit)
		return -ENOMEM;
	unit->pmu = pmu;
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

	put_pid(res->vmm);
	bitmap_free(res->pkgs);
	kfree(res->ranges);
	kfree(res);
}

/* Called with uncore_guest_mutex held; the caller drops the unit's ref. */
static void res_revoke(struct uncore_guest_res *res)
{
	spin_lock_irq(&uncore_guest_lock);
	list_del_init(&res->node);
	res->unit = NULL;
	WRITE_ONCE(res->revoked, true);
	spin_unlock_irq(&uncore_guest_lock);

	if (res->kvm_revoke)
		res->kvm_revoke(res, res->kvm_data);
}

/**
 * uncore_guest_unregister - withdraw a PMU before perf_pmu_unregister()
 * @pmu: the PMU given to uncore_guest_register()
 *
 * Every reservation of the unit is revoked: attached VMs and owners are told
 * through their revoke callbacks.  Owners still call uncore_guest_release().
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
 * @vmm: the process allowed to attach a VM (uncore_guest_attach())
 * @revoke: called, under the registry's mutex, if the unit goes away
 * @data: for @revoke
 *
 * Return: the reservation, or ERR_PTR(-ENODEV) for an unknown unit,
 * -EINVAL for an empty @cpus, -EEXIST if a package is already reserved,
 * -EBUSY if host events are open on a package, -ENOMEM.
 */
struct uncore_guest_res *uncore_guest_reserve(const char *name,
					      const struct cpumask *cpus,
					      struct pid *vmm,
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
	res->pkgs = bitmap_zalloc(nr_pkgs, GFP_KERNEL);
	if (!res->pkgs) {
		kfree(res);
		return ERR_PTR(-ENOMEM);
	}
	for_each_cpu(cpu, cpus)
		__set_bit(topology_logical_package_id(cpu), res->pkgs);
	res->vmm = get_pid(vmm);
	res->revoke = revoke;
	res->revoke_data = data;

	mutex_lock(&uncore_guest_mutex);
	unit = unit_by_name(name);
	if (!unit) {
		ret = -ENODEV;
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
		list_add_tail(&res->node, &unit->reservations);
	}
	spin_unlock_irq(&uncore_guest_lock);
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
 * An attached VM loses its access first (its revoke callback runs).
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

/**
 * uncore_guest_attach - let a VM use a reservation made for its VMM
 * @type: perf PMU type of the unit
 * @vmm: the calling VMM process
 * @revoke: called, under the registry's mutex, when the reservation ends
 * @data: for @revoke
 *
 * Return: the reservation, or ERR_PTR(-ENODEV) for an unknown unit, -EPERM
 * if no reservation names @vmm, -EBUSY if a VM is already attached.
 */
struct uncore_guest_res *uncore_guest_attach(int type, struct pid *vmm,
					     uncore_guest_revoke_t revoke,
					     void *data)
{
	struct uncore_guest_unit *unit;
	struct uncore_guest_res *res;

	guard(mutex)(&uncore_guest_mutex);
	unit = unit_by_type(type);
	if (!unit)
		return ERR_PTR(-ENODEV);
	list_for_each_entry(res, &unit->reservations, node) {
		if (res->vmm != vmm)
			continue;
		if (res->kvm_revoke)
			return ERR_PTR(-EBUSY);
		res->kvm_revoke = revoke;
		res->kvm_data = data;
		kref_get(&res->kref);
		return res;
	}
	return ERR_PTR(-EPERM);
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

MODULE_DESCRIPTION("Uncore PMU units reserved for guests");
MODULE_LICENSE("GPL");
