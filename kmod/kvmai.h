/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - internal interfaces shared by the module's files.
 *
 * Locking: kvmai_lock (group.c) protects every group, member and port.
 * Lock order: device_lock (held by the driver core around the bus notifier)
 * -> kvmai_lock.  Nothing under kvmai_lock may take a device lock or a PCI
 * topology lock (pci_bus_sem, pci_rescan_remove_lock): AER recovery takes
 * pci_bus_sem and then device locks, so topology is read from the driver
 * core's device list (topo.c).
 */
#ifndef _KVMAI_H
#define _KVMAI_H

#include <linux/list.h>
#include <linux/mdev.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/pci.h>
#include <linux/vfio.h>
#include <net/net_namespace.h>

/*
 * The kernel's uncore registry; on kernels without it the series' header
 * from compat/asm/, whose stubs offer nothing (test builds load the
 * registry itself as a module, Kbuild).
 */
#include <asm/uncore_guest.h>

#include "compat.h"
#include "kvmai/counter_page.h"
#include "plan.h"

#ifdef KVMAI_HAVE_CORE_FENCE
#include <linux/kvm_host.h>
#endif

#define KVMAI_NAME "kvmai"
#define KVMAI_PCI_NAME_LEN 16

/* Protects every group, member and port (group.c). */
extern struct mutex kvmai_lock;

struct kvmai_member {
	struct list_head node;
	struct pci_dev *pdev;		/* reference held */
};

/* A port some enabled group programmed; shared by reference count. */
struct kvmai_port {
	struct list_head node;		/* in kvmai_ports */
	struct pci_dev *pdev;		/* reference held */
	u16 acs_pos;
	u16 cap;
	u16 saved;			/* ACS control before kvmai, restored at 0 users */
	u16 target;
	unsigned int users;
	bool restore_pending;		/* no users, saved word not back yet (acs.c) */
};

struct kvmai_pair {
	char a[KVMAI_PCI_NAME_LEN];
	char b[KVMAI_PCI_NAME_LEN];
	char via[KVMAI_PCI_NAME_LEN];
	u8 type;			/* enum kvmai_path_type */
};

struct kvmai_group {
	u32 id;
	char name[KVMAI_NAME_LEN];
	char vm[KVMAI_VM_LEN];
	enum kvmai_mode mode;
	bool enabled;
	u32 owner_portid;		/* nonzero: deleted when that socket closes */
	possible_net_t owner_net;
	struct list_head members;
	unsigned int nmembers;
	/* While enabled: the ports this group holds a use of. */
	unsigned int nports;
	struct kvmai_port *ports[KVMAI_PLAN_MAX_PORTS];
	/* How members reach each other, as last planned. */
	unsigned int npairs;
	struct kvmai_pair pairs[KVMAI_PLAN_MAX_PAIRS];
};

/* group.c: everything below requires kvmai_lock. */
struct kvmai_group *kvmai_group_find(const char *name);
struct kvmai_group *kvmai_group_next(unsigned long *index);
struct kvmai_group *kvmai_group_new(const char *name, const char *vm,
				    enum kvmai_mode mode, struct netlink_ext_ack *extack);
void kvmai_group_del(struct kvmai_group *grp);
/* True (with extack set) if @grp is enabled, so cannot be changed. */
bool kvmai_group_busy(struct kvmai_group *grp, struct netlink_ext_ack *extack);
int kvmai_group_add_dev(struct kvmai_group *grp, struct pci_dev *pdev,
			struct netlink_ext_ack *extack);
int kvmai_group_del_dev(struct kvmai_group *grp, struct pci_dev *pdev,
			struct netlink_ext_ack *extack);
int kvmai_group_enable(struct kvmai_group *grp, struct netlink_ext_ack *extack);
void kvmai_group_disable(struct kvmai_group *grp);
struct kvmai_member *kvmai_group_member(struct kvmai_group *grp, struct pci_dev *pdev);
bool kvmai_group_uses_port(struct kvmai_group *grp, struct pci_dev *pdev);
void kvmai_groups_release_owner(struct net *net, u32 portid);
void kvmai_groups_device_unbind(struct pci_dev *pdev);
void kvmai_groups_device_opened(struct pci_dev *pdev);
void kvmai_groups_device_closed(struct pci_dev *pdev);
void kvmai_groups_device_added(struct pci_dev *pdev);
void kvmai_groups_device_removed(struct pci_dev *pdev);
void kvmai_groups_destroy(void);

/* ats.c: translated groups need ATS on every member. */
bool kvmai_ats_on(struct pci_dev *pdev);

/* acs.c: the ports registry and every ACS config write. */
struct kvmai_port *kvmai_port_find(struct pci_dev *pdev);
struct kvmai_port *kvmai_port_get(struct pci_dev *pdev, u16 want, const char *group,
				  struct netlink_ext_ack *extack);
void kvmai_port_put(struct kvmai_port *port, const char *group);
u16 kvmai_port_read(struct pci_dev *pdev);
int kvmai_port_check(struct pci_dev *pdev, u16 want, struct netlink_ext_ack *extack);
unsigned int kvmai_ports_restore_pending(void);
void kvmai_ports_device_removed(struct pci_dev *pdev);
void kvmai_ports_destroy(void);

/* topo.c: live PCI topology as planner input. */
struct kvmai_topo {
	int n;
	struct kvmai_node *nodes;
	struct pci_dev **pdevs;		/* NULL for host bridges */
	struct pci_bus **buses;		/* the root bus of host bridge nodes */
};

int kvmai_topo_build(struct pci_dev *const *members, unsigned int nmembers,
		     struct kvmai_topo *topo);
void kvmai_topo_free(struct kvmai_topo *topo);
const char *kvmai_topo_name(const struct kvmai_topo *topo, int i, char *buf, size_t len);

/* A uncore unit a VM owns. */
struct kvmai_pmu_unit {
	struct list_head node;
	char name[KVMAI_UNIT_LEN];
	const char *vm;			/* its owner's name */
	struct uncore_guest_res *res;
	bool revoked;			/* its driver went away */
};

/* The core PMU fence a VM's record holds: KVM's handle (pmu_core.c). */
struct kvmai_core_fence {
#ifdef KVMAI_HAVE_CORE_FENCE
	struct kvm_mediated_pmu_fence kvm;
#endif
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

#define KVMAI_PMU_MAX_UNITS 16

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

/* pmu.c: everything but destroy, release_owner and unit_file requires kvmai_lock. */
struct genl_info;
struct sk_buff;

struct kvmai_pmu_vm *kvmai_pmu_vm_find(const char *vm);
struct kvmai_pmu_vm *kvmai_pmu_vm_next(struct kvmai_pmu_vm *pvm);
const char *kvmai_pmu_unit_owner(const char *name);
struct kvmai_pmu_vm *kvmai_pmu_unit_owner_on(const char *name, unsigned int package);
struct kvmai_pmu_vm *kvmai_pmu_assign(const struct kvmai_pmu_req *req,
				      struct netlink_ext_ack *extack);
int kvmai_pmu_release(struct kvmai_pmu_vm *pvm, bool core, const char *const *units,
		      unsigned int nr_units, struct netlink_ext_ack *extack);
void kvmai_pmu_vm_release_all(struct kvmai_pmu_vm *pvm, const char *why);
void kvmai_pmu_release_owner(struct net *net, u32 portid);
void kvmai_pmu_destroy(void);
struct file *kvmai_pmu_unit_file(const char *vm, const char *unit);

/* pmu_dev.c: /dev/kvmai */
int kvmai_dev_register(void);
void kvmai_dev_unregister(void);

/* pmu_core.c: the core PMU, fenced through KVM, its blockers listed by perf. */
int kvmai_pmu_core_fence(struct kvmai_core_fence *fence, struct netlink_ext_ack *extack);
void kvmai_pmu_core_unfence(struct kvmai_core_fence *fence);

/* pmu_netlink.c */
void kvmai_pmu_change_ntf(struct kvmai_pmu_vm *pvm);

/* netlink.c */
int kvmai_nl_register(void);
void kvmai_nl_unregister(void);
bool kvmai_missing(struct genl_info *info, int type, const char *what);
/* What kvmai_bad_name() allows, in its message. */
#define KVMAI_NAME_CHARS_DOC "letters, digits and ._:@+- only"
bool kvmai_bad_name(struct genl_info *info, int type, const char *what);
struct sk_buff *kvmai_msg(size_t size, u32 portid, u32 seq, u8 cmd,
			  int (*fill)(struct sk_buff *msg, void *obj), void *obj);
void kvmai_multicast(struct sk_buff *msg);

/* group_netlink.c */
void kvmai_group_create_ntf(struct kvmai_group *grp);
void kvmai_group_delete_ntf(struct kvmai_group *grp);
void kvmai_group_change_ntf(struct kvmai_group *grp);

/* notify.c */
int kvmai_notifiers_register(void);
void kvmai_notifiers_unregister(void);

/* test.c: fault injection, only in test builds (make KVMAI_TEST=y). */
#ifdef KVMAI_TEST
void kvmai_test_unload_delay(void);
bool kvmai_test_fail_restore(void);
bool kvmai_test_acs_quirk(struct pci_dev *pdev);
bool kvmai_test_core_fence(const struct kvmai_core_fence *fence, int *ret);
bool kvmai_test_core_unfence(const struct kvmai_core_fence *fence);
#else
static inline void kvmai_test_unload_delay(void) { }
static inline bool kvmai_test_fail_restore(void) { return false; }
static inline bool kvmai_test_acs_quirk(struct pci_dev *pdev) { return false; }
static inline bool kvmai_test_core_fence(const struct kvmai_core_fence *fence, int *ret)
{
	return false;
}

static inline bool kvmai_test_core_unfence(const struct kvmai_core_fence *fence)
{
	return false;
}
#endif

/*
 * counters.c, ctrdev.c: uncore counter pages mapped into the VM owning
 * their unit, as a mediated device (kernels with VFIO_MDEV).
 */
#ifdef KVMAI_HAVE_COUNTERS
struct kvmai_ctrdev;

struct kvmai_ctr_parent {
	struct device dev;
	struct mdev_parent parent;
	struct mdev_type type;
	struct mdev_type *types[1];
	struct kvmai_counter_page *cp;
	void __iomem *regs;		/* @cp's MMIO page, for read() */
	struct list_head node;		/* in kvmai_ctr_parents */
	struct kvmai_ctrdev *cd;	/* its one device, under kvmai_ctr_lock */
};

struct kvmai_ctrdev {
	struct vfio_device vdev;
	struct kvmai_ctr_parent *kp;
	char vm[KVMAI_VM_LEN];		/* the owner it was created for */
	struct rw_semaphore lock;	/* faults, config and reads vs. revoke */
	bool revoked;
	u8 config[PCI_CFG_SPACE_SIZE];
	void *layout;			/* BAR2 */
	struct page *ones;		/* mapped once revoked */
};

extern const struct vfio_device_ops kvmai_ctrdev_ops;
int kvmai_ctrdev_init(struct kvmai_ctrdev *cd);
void kvmai_ctrdev_free(struct kvmai_ctrdev *cd);
void kvmai_ctrdev_revoke(struct kvmai_ctrdev *cd);

int kvmai_counters_init(void);
void kvmai_counters_exit(void);
void kvmai_counters_intel_init(void);
void kvmai_counters_intel_exit(void);
void kvmai_counters_revoke(const char *unit, const char *vm);
#else
static inline int kvmai_counters_init(void) { return 0; }
static inline void kvmai_counters_exit(void) { }
static inline void kvmai_counters_intel_init(void) { }
static inline void kvmai_counters_intel_exit(void) { }
static inline void kvmai_counters_revoke(const char *unit, const char *vm) { }
#endif

/* debugfs.c */
void kvmai_debugfs_init(void);
void kvmai_debugfs_exit(void);

#endif /* _KVMAI_H */
