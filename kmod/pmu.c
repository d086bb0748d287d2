// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - which VM owns which PMU resources.
 *
 * The core PMU: KVM's mediated vPMU hands the counters to a guest while its
 * vCPUs run, and fails with -EBUSY when the host has events that count in
 * guests.  An owner fences the host off from the moment of assignment
 * (KVM's fence, only where VMs get a mediated vPMU), so nothing appears
 * between the check and the VM.
 *
 * Uncore units count for whole packages: a unit is reserved in the uncore
 * registry (the kernel's; without the series, the header's stubs refuse)
 * for the packages of the VM's CPUs, which must be whole unless the
 * operator says the packages are shared.  The registry then refuses host
 * events there.  The operator takes a handle (a file) of the reservation
 * from /dev/kvmai (pmu_dev.c) and gives it to the VMM, which attaches its
 * VM with it in KVM.
 *
 * Everything here runs under kvmai_lock.  Lock order: kvmai_lock -> the
 * registry's mutex.  The registry calls kvmai_pmu_revoked() under its own
 * mutex, so that only marks the unit and defers the rest to a work item.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/netlink.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

/*
 * The kernel's uncore registry; on kernels without it the series' header
 * from compat/asm/, whose stubs offer nothing (test builds load the
 * registry itself as a module, Kbuild).
 */
#include <asm/uncore_guest.h>

#include "kvmai.h"
#include "counters.h"
#include "netlink.h"
#include "pmu.h"

static LIST_HEAD(kvmai_pmu_vms);
/* How many are on it; at most KVMAI_MAX_PMU_VMS. */
static unsigned int kvmai_pmu_nr_vms;

static void kvmai_pmu_revoke_work(struct work_struct *work);
static DECLARE_WORK(kvmai_pmu_work, kvmai_pmu_revoke_work);

struct kvmai_pmu_vm *kvmai_pmu_vm_find(const char *vm)
{
	struct kvmai_pmu_vm *pvm;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(pvm, &kvmai_pmu_vms, node)
		if (!strcmp(pvm->vm, vm))
			return pvm;
	return NULL;
}

struct kvmai_pmu_vm *kvmai_pmu_vm_next(struct kvmai_pmu_vm *pvm)
{
	lockdep_assert_held(&kvmai_lock);
	pvm = pvm ? list_next_entry(pvm, node) :
		    list_first_entry(&kvmai_pmu_vms, struct kvmai_pmu_vm, node);
	return list_entry_is_head(pvm, &kvmai_pmu_vms, node) ? NULL : pvm;
}

static struct kvmai_pmu_unit *kvmai_pmu_unit_in(struct list_head *units,
						const char *name)
{
	struct kvmai_pmu_unit *unit;

	list_for_each_entry(unit, units, node)
		if (!strcmp(unit->name, name))
			return unit;
	return NULL;
}

static struct kvmai_pmu_unit *kvmai_pmu_unit_find(struct kvmai_pmu_vm *pvm,
						  const char *name)
{
	return kvmai_pmu_unit_in(&pvm->units, name);
}

/* The VM owning uncore unit @name on some package, if kvmai assigned it. */
const char *kvmai_pmu_unit_owner(const char *name)
{
	struct kvmai_pmu_vm *pvm;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(pvm, &kvmai_pmu_vms, node)
		if (kvmai_pmu_unit_find(pvm, name))
			return pvm->vm;
	return NULL;
}

/*
 * The VM owning uncore unit @name on logical package @package: its CPUs,
 * whose packages the reservation covers, include one of that package.
 */
struct kvmai_pmu_vm *kvmai_pmu_unit_owner_on(const char *name, unsigned int package)
{
	struct kvmai_pmu_vm *pvm;
	unsigned int cpu;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(pvm, &kvmai_pmu_vms, node) {
		if (!kvmai_pmu_unit_find(pvm, name))
			continue;
		for_each_cpu(cpu, pvm->cpus)
			if (topology_logical_package_id(cpu) == package)
				return pvm;
	}
	return NULL;
}

static void kvmai_pmu_unit_free(struct kvmai_pmu_unit *unit)
{
	list_del(&unit->node);
	/* Mappings of its counters go first, then the registry's hold. */
	kvmai_counters_revoke(unit->name, unit->vm);
	uncore_guest_release(unit->res);
	pr_info("uncore %s released\n", unit->name);
	kfree(unit);
}

/* Registry callback, under the registry's mutex: the unit's driver left. */
static void kvmai_pmu_revoked(struct uncore_guest_res *res, void *data)
{
	struct kvmai_pmu_unit *unit = data;

	WRITE_ONCE(unit->revoked, true);
	schedule_work(&kvmai_pmu_work);
}

static void kvmai_pmu_vm_free(struct kvmai_pmu_vm *pvm)
{
	struct kvmai_pmu_unit *unit, *tmp;

	list_for_each_entry_safe(unit, tmp, &pvm->units, node)
		kvmai_pmu_unit_free(unit);
	if (pvm->core)
		kvmai_pmu_core_unfence(&pvm->core_fence);
	list_del(&pvm->node);
	kvmai_pmu_nr_vms--;
	put_pid(pvm->pid);
	free_cpumask_var(pvm->cpus);
	kfree(pvm);
}

/* Drops @pvm if it owns nothing any more; true if it did. */
static bool kvmai_pmu_vm_put_empty(struct kvmai_pmu_vm *pvm)
{
	if (pvm->core || !list_empty(&pvm->units))
		return false;
	kvmai_pmu_vm_free(pvm);
	return true;
}

static void kvmai_pmu_revoke_work(struct work_struct *work)
{
	struct kvmai_pmu_unit *unit, *tmp_unit;
	struct kvmai_pmu_vm *pvm, *tmp;
	bool changed;

	guard(mutex)(&kvmai_lock);
	list_for_each_entry_safe(pvm, tmp, &kvmai_pmu_vms, node) {
		changed = false;
		list_for_each_entry_safe(unit, tmp_unit, &pvm->units, node) {
			if (!READ_ONCE(unit->revoked))
				continue;
			pr_info("vm %s: uncore %s went away\n", pvm->vm, unit->name);
			kvmai_pmu_unit_free(unit);
			changed = true;
		}
		if (changed) {
			kvmai_pmu_change_ntf(pvm);
			kvmai_pmu_vm_put_empty(pvm);
		}
	}
}

/*
 * Uncore counters see every tenant of a package: unless @shared, each
 * package @cpus touches must be entirely in @cpus.
 */
static int kvmai_pmu_check_cpus(const struct cpumask *cpus, bool shared,
				struct netlink_ext_ack *extack)
{
	unsigned int cpu, other;

	for_each_cpu(cpu, cpus) {
		if (!cpu_online(cpu)) {
			NL_SET_ERR_MSG_FMT(extack, "cpus: CPU %u is not online", cpu);
			return -EINVAL;
		}
		if (shared)
			continue;
		for_each_cpu(other, topology_core_cpumask(cpu)) {
			if (cpumask_test_cpu(other, cpus))
				continue;
			NL_SET_ERR_MSG_FMT(extack,
					   "package %u: CPU %u is not in cpus (whole packages, or shared)",
					   topology_logical_package_id(cpu), other);
			return -EPERM;
		}
	}
	return 0;
}

static struct kvmai_pmu_vm *kvmai_pmu_vm_new(const struct kvmai_pmu_req *req)
{
	struct kvmai_pmu_vm *pvm = kzalloc_obj(*pvm);

	if (!pvm)
		return NULL;
	if (!zalloc_cpumask_var(&pvm->cpus, GFP_KERNEL)) {
		kfree(pvm);
		return NULL;
	}
	strscpy(pvm->vm, req->vm);
	INIT_LIST_HEAD(&pvm->units);
	if (req->has_cpus)
		cpumask_copy(pvm->cpus, req->cpus);
	pvm->has_cpus = req->has_cpus;
	pvm->shared = req->shared;
	/* Only units are for a VMM; core-only records have none. */
	if (req->nr_units || req->pid_given)
		pvm->pid = get_pid(req->pid);
	pvm->owner_portid = req->owner_portid;
	pvm->owner_net = req->owner_net;
	list_add_tail(&pvm->node, &kvmai_pmu_vms);
	kvmai_pmu_nr_vms++;
	return pvm;
}

/* Explains an uncore_guest_reserve() failure for unit @name. */
static void kvmai_pmu_reserve_error(const char *name, int err,
				    struct netlink_ext_ack *extack)
{
	const char *owner;

	switch (err) {
	case -ENODEV:
		NL_SET_ERR_MSG_FMT(extack, "%s: no uncore unit of that name takes guests",
				   name);
		break;
	case -EEXIST:
		owner = kvmai_pmu_unit_owner(name);
		NL_SET_ERR_MSG_FMT(extack, "%s: already owned on these packages by vm %s",
				   name, owner ?: "(not kvmai's)");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG_FMT(extack, "%s: host perf events are open on these packages",
				   name);
		break;
	case -EACCES:
		NL_SET_ERR_MSG_FMT(extack,
				   "%s: its controls choose the cores it counts: give the VM every CPU of its packages",
				   name);
		break;
	default:
		NL_SET_ERR_MSG_FMT(extack, "%s: cannot reserve (%d)", name, err);
	}
}

static int kvmai_pmu_reserve(struct kvmai_pmu_vm *pvm, const char *name,
			     struct list_head *added, struct netlink_ext_ack *extack)
{
	struct kvmai_pmu_unit *unit;
	int ret;

	if (kvmai_pmu_unit_find(pvm, name) || kvmai_pmu_unit_in(added, name)) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s already owns %s", pvm->vm, name);
		return -EEXIST;
	}
	unit = kzalloc_obj(*unit);
	if (!unit)
		return -ENOMEM;
	strscpy(unit->name, name);
	unit->vm = pvm->vm;
	unit->res = uncore_guest_reserve(name, pvm->cpus, kvmai_pmu_revoked, unit);
	if (IS_ERR(unit->res)) {
		ret = PTR_ERR(unit->res);
		kvmai_pmu_reserve_error(name, ret, extack);
		kfree(unit);
		return ret;
	}
	list_add_tail(&unit->node, added);
	return 0;
}

/**
 * kvmai_pmu_assign - give a VM the core PMU and/or uncore units
 * @req: what the request asked for
 * @extack: the reason for a refusal
 *
 * All or nothing: on failure nothing the request took is kept.
 *
 * Return: the VM's record, or an ERR_PTR.
 */
struct kvmai_pmu_vm *kvmai_pmu_assign(const struct kvmai_pmu_req *req,
				      struct netlink_ext_ack *extack)
{
	struct kvmai_pmu_unit *unit, *tmp;
	bool new_vm = false, fenced = false, set_cpus = false;
	struct kvmai_pmu_vm *pvm;
	struct pid *old_pid = NULL;
	LIST_HEAD(added);
	unsigned int i;
	int ret;

	lockdep_assert_held(&kvmai_lock);
	if (!req->core && !req->nr_units) {
		NL_SET_ERR_MSG(extack, "nothing to assign: give core and/or units");
		return ERR_PTR(-EINVAL);
	}
	pvm = kvmai_pmu_vm_find(req->vm);
	if (pvm && req->has_cpus && pvm->has_cpus && !cpumask_equal(pvm->cpus, req->cpus)) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s: cpus differ from %*pbl it has",
				   pvm->vm, cpumask_pr_args(pvm->cpus));
		return ERR_PTR(-EINVAL);
	}
	if (pvm && req->pid_given && pvm->pid && pvm->pid != req->pid &&
	    !list_empty(&pvm->units)) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s: its units are reserved for pid %d",
				   pvm->vm, pid_vnr(pvm->pid));
		return ERR_PTR(-EINVAL);
	}
	if (req->nr_units) {
		const struct cpumask *cpus = req->has_cpus ? req->cpus :
					     pvm && pvm->has_cpus ? pvm->cpus : NULL;

		if (!cpus) {
			NL_SET_ERR_MSG(extack, "uncore units need cpus (the VM's CPUs)");
			return ERR_PTR(-EINVAL);
		}
		ret = kvmai_pmu_check_cpus(cpus, pvm ? pvm->shared : req->shared, extack);
		if (ret)
			return ERR_PTR(ret);
	}
	if (req->core && pvm && kvmai_pmu_owns_core(pvm)) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s already owns the core PMU", pvm->vm);
		return ERR_PTR(-EEXIST);
	}
	if (!pvm && kvmai_pmu_nr_vms >= KVMAI_MAX_PMU_VMS) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s: %d VMs own PMU resources, the most there can be",
				   req->vm, KVMAI_MAX_PMU_VMS);
		return ERR_PTR(-ENOSPC);
	}
	if (!pvm) {
		pvm = kvmai_pmu_vm_new(req);
		if (!pvm) {
			ret = -ENOMEM;
			goto err;
		}
		new_vm = true;
	} else {
		/* A core-only VM gets what units need; undone on failure. */
		old_pid = pvm->pid;
		if (req->has_cpus && !pvm->has_cpus) {
			cpumask_copy(pvm->cpus, req->cpus);
			pvm->has_cpus = true;
			set_cpus = true;
		}
		if (((req->nr_units && !pvm->pid) || req->pid_given) && pvm->pid != req->pid)
			pvm->pid = get_pid(req->pid);
	}
	if (req->core) {
		/* KVM dropped the fence with its vendor module: let go of it first. */
		if (pvm->core) {
			kvmai_pmu_core_unfence(&pvm->core_fence);
			pvm->core = false;
		}
		ret = kvmai_pmu_core_fence(&pvm->core_fence, extack);
		if (ret)
			goto err;
		fenced = true;
	}
	for (i = 0; i < req->nr_units; i++) {
		ret = kvmai_pmu_reserve(pvm, req->units[i], &added, extack);
		if (ret)
			goto err;
	}
	if (!new_vm && pvm->pid != old_pid)
		put_pid(old_pid);

	list_for_each_entry(unit, &added, node)
		pr_info("vm %s: owns uncore %s on CPUs %*pbl%s\n", pvm->vm, unit->name,
			cpumask_pr_args(pvm->cpus), pvm->shared ? " (shared)" : "");
	list_splice_tail(&added, &pvm->units);
	if (fenced) {
		pvm->core = true;
		pr_info("vm %s: owns the core PMU\n", pvm->vm);
	}
	kvmai_pmu_change_ntf(pvm);
	return pvm;

err:
	list_for_each_entry_safe(unit, tmp, &added, node)
		kvmai_pmu_unit_free(unit);
	if (fenced)
		kvmai_pmu_core_unfence(&pvm->core_fence);
	if (new_vm) {
		kvmai_pmu_vm_free(pvm);
	} else if (pvm) {
		if (pvm->pid != old_pid) {
			put_pid(pvm->pid);
			pvm->pid = old_pid;
		}
		if (set_cpus)
			pvm->has_cpus = false;
	}
	return ERR_PTR(ret);
}

/* Everything @pvm owns goes back to the host; monitors hear of it. */
static void kvmai_pmu_vm_release_all(struct kvmai_pmu_vm *pvm, const char *why)
{
	struct kvmai_pmu_unit *unit, *tmp;

	lockdep_assert_held(&kvmai_lock);
	pr_info("vm %s: PMU resources %s\n", pvm->vm, why);
	list_for_each_entry_safe(unit, tmp, &pvm->units, node)
		kvmai_pmu_unit_free(unit);
	if (pvm->core) {
		kvmai_pmu_core_unfence(&pvm->core_fence);
		pvm->core = false;
	}
	kvmai_pmu_change_ntf(pvm);
	kvmai_pmu_vm_free(pvm);
}

/**
 * kvmai_pmu_release - take resources back from a VM
 * @pvm: the VM
 * @core: release the core PMU
 * @units: names of units to release
 * @nr_units: how many; with neither @core nor units, everything goes
 * @extack: names what the VM does not own
 *
 * Return: 0 or -ENOENT (nothing released then).
 */
int kvmai_pmu_release(struct kvmai_pmu_vm *pvm, bool core, const char *const *units,
		      unsigned int nr_units, struct netlink_ext_ack *extack)
{
	struct kvmai_pmu_unit *unit;
	unsigned int i;

	lockdep_assert_held(&kvmai_lock);
	if (!core && !nr_units) {
		kvmai_pmu_vm_release_all(pvm, "released");
		return 0;
	}
	if (core && !pvm->core) {
		NL_SET_ERR_MSG_FMT(extack, "vm %s does not own the core PMU", pvm->vm);
		return -ENOENT;
	}
	for (i = 0; i < nr_units; i++) {
		if (!kvmai_pmu_unit_find(pvm, units[i])) {
			NL_SET_ERR_MSG_FMT(extack, "vm %s does not own %s", pvm->vm, units[i]);
			return -ENOENT;
		}
	}
	for (i = 0; i < nr_units; i++) {
		unit = kvmai_pmu_unit_find(pvm, units[i]);
		if (unit)	/* not when a name is repeated */
			kvmai_pmu_unit_free(unit);
	}
	if (core) {
		kvmai_pmu_core_unfence(&pvm->core_fence);
		pvm->core = false;
		pr_info("vm %s: core PMU released\n", pvm->vm);
	}
	kvmai_pmu_change_ntf(pvm);
	kvmai_pmu_vm_put_empty(pvm);
	return 0;
}

void kvmai_pmu_release_owner(struct net *net, u32 portid)
{
	struct kvmai_pmu_vm *pvm, *tmp;

	guard(mutex)(&kvmai_lock);
	list_for_each_entry_safe(pvm, tmp, &kvmai_pmu_vms, node)
		if (pvm->owner_portid == portid && net_eq(read_pnet(&pvm->owner_net), net))
			kvmai_pmu_vm_release_all(pvm, "released: owner socket closed");
}

/**
 * kvmai_pmu_unit_file - a handle on the reservation of a VM's unit
 * @vm: the VM's record
 * @name: the unit
 *
 * Return: a new file of the registry (uncore_guest_res_file()), or
 * ERR_PTR(-ENOENT) if @vm has no record or it holds no unit @name,
 * -ENODEV if the unit's driver took it back.
 */
struct file *kvmai_pmu_unit_file(const char *vm, const char *name)
{
	struct kvmai_pmu_unit *unit;
	struct kvmai_pmu_vm *pvm;

	guard(mutex)(&kvmai_lock);
	pvm = kvmai_pmu_vm_find(vm);
	unit = pvm ? kvmai_pmu_unit_find(pvm, name) : NULL;
	if (!unit)
		return ERR_PTR(-ENOENT);
	if (READ_ONCE(unit->revoked))
		return ERR_PTR(-ENODEV);
	return uncore_guest_res_file(unit->res);
}

void kvmai_pmu_destroy(void)
{
	struct kvmai_pmu_vm *pvm, *tmp;

	scoped_guard(mutex, &kvmai_lock)
		list_for_each_entry_safe(pvm, tmp, &kvmai_pmu_vms, node)
			kvmai_pmu_vm_release_all(pvm, "released: module unload");
	/* Nothing is reserved any more, so nothing can queue it again. */
	cancel_work_sync(&kvmai_pmu_work);
}
