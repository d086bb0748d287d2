/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - PMU ownership (pmu.c): which VM owns the core PMU and which
 * uncore units, and /dev/kvmai (pmu_dev.c), where the operator takes the
 * units' reservations to give them to the VMMs.
 */
#ifndef _KVMAI_PMU_H
#define _KVMAI_PMU_H

#include <linux/cpumask.h>
#include <linux/list.h>
#include <linux/types.h>
#include <net/net_namespace.h>

#include <uapi/linux/kvmai.h>

#include "pmu_core.h"

struct file;
struct netlink_ext_ack;
struct pid;
struct uncore_guest_res;

/* A uncore unit a VM owns. */
struct kvmai_pmu_unit {
	struct list_head node;
	char name[KVMAI_UNIT_LEN];
	const char *vm;			/* its owner's name */
	struct uncore_guest_res *res;
	bool revoked;			/* its driver went away */
};

/* What one VM owns; exists while it owns something. */
struct kvmai_pmu_vm {
	struct list_head node;
	char vm[KVMAI_VM_LEN];
	bool core;
	struct kvmai_core_fence core_fence;	/* held while @core */
	struct list_head units;
	cpumask_var_t cpus;
	bool has_cpus;
	bool shared;
	struct pid *pid;		/* the VMM the units are for, as told; set with units */
	u32 owner_portid;		/* nonzero: released when that socket closes */
	possible_net_t owner_net;
};

/* Two AMD Genoa/Turin sockets: a DF, an L3 and 24 UMCs; KVM's limit too. */
#define KVMAI_PMU_MAX_UNITS 32

/* @pvm owns the core PMU: KVM drops a fence when its vendor module goes. */
static inline bool kvmai_pmu_owns_core(const struct kvmai_pmu_vm *pvm)
{
	return pvm->core && kvmai_pmu_core_held(&pvm->core_fence);
}

/* A pmu-assign request, parsed. */
struct kvmai_pmu_req {
	const char *vm;
	bool core;
	const char *units[KVMAI_PMU_MAX_UNITS];
	unsigned int nr_units;
	bool has_cpus;
	const struct cpumask *cpus;
	bool shared;
	struct pid *pid;		/* the requester's unless pid_given */
	bool pid_given;
	u32 owner_portid;
	possible_net_t owner_net;
};

/* Requests (pmu_netlink.c) and counters.c: each requires kvmai_lock. */
struct kvmai_pmu_vm *kvmai_pmu_vm_find(const char *vm);
struct kvmai_pmu_vm *kvmai_pmu_vm_next(struct kvmai_pmu_vm *pvm);
const char *kvmai_pmu_unit_owner(const char *name);
struct kvmai_pmu_vm *kvmai_pmu_unit_owner_on(const char *name, unsigned int package);
struct kvmai_pmu_vm *kvmai_pmu_assign(const struct kvmai_pmu_req *req,
				      struct netlink_ext_ack *extack);
int kvmai_pmu_release(struct kvmai_pmu_vm *pvm, bool core, const char *const *units,
		      unsigned int nr_units, struct netlink_ext_ack *extack);

/* These take kvmai_lock: events (notify.c), /dev/kvmai, module unload. */
void kvmai_pmu_release_owner(struct net *net, u32 portid);
struct file *kvmai_pmu_unit_file(const char *vm, const char *unit);
void kvmai_pmu_destroy(void);

/* pmu_dev.c: /dev/kvmai */
int kvmai_dev_register(void);
void kvmai_dev_unregister(void);

#endif /* _KVMAI_PMU_H */
