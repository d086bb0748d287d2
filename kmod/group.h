/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - P2P groups (group.c): one VM's devices, the ports between them
 * that the group holds while enabled, and how its members reach each
 * other.  debugfs.c shows them.
 */
#ifndef _KVMAI_GROUP_H
#define _KVMAI_GROUP_H

#include <linux/list.h>
#include <linux/types.h>
#include <net/net_namespace.h>

#include "plan.h"

struct device;
struct kvmai_port;
struct netlink_ext_ack;
struct pci_dev;

#define KVMAI_PCI_NAME_LEN 16

/*
 * A PCI function bound to vfio-pci, or a mediated device (mdev) of a PCI
 * parent, whose peer traffic is its parent's: the plan places it there.
 */
struct kvmai_member {
	struct list_head node;
	struct pci_dev *pdev;		/* reference held; an mdev's parent */
	struct device *mdev;		/* reference held, or NULL */
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

/* Requests (group_netlink.c): each requires kvmai_lock. */
struct kvmai_group *kvmai_group_find(const char *name);
struct kvmai_group *kvmai_group_next(unsigned long *index);
struct kvmai_group *kvmai_group_new(const char *name, const char *vm,
				    enum kvmai_mode mode, struct netlink_ext_ack *extack);
void kvmai_group_del(struct kvmai_group *grp);
/* True (with extack set) if @grp is enabled, so cannot be changed. */
bool kvmai_group_busy(struct kvmai_group *grp, struct netlink_ext_ack *extack);
/* A member: a PCI function (@mdev NULL), or mdev @mdev of parent @pdev. */
int kvmai_group_add_dev(struct kvmai_group *grp, struct pci_dev *pdev, struct device *mdev,
			struct netlink_ext_ack *extack);
int kvmai_group_del_dev(struct kvmai_group *grp, struct pci_dev *pdev, struct device *mdev,
			struct netlink_ext_ack *extack);
/* The mdev member named @uuid, gone from the bus or not. */
struct device *kvmai_group_mdev_member(struct kvmai_group *grp, const char *uuid);
int kvmai_group_enable(struct kvmai_group *grp, struct netlink_ext_ack *extack);
void kvmai_group_disable(struct kvmai_group *grp);

/* Events (notify.c): each takes kvmai_lock. */
void kvmai_groups_release_owner(struct net *net, u32 portid);
void kvmai_groups_device_unbind(struct device *dev);
void kvmai_groups_device_opened(struct device *dev);
void kvmai_groups_device_closed(struct device *dev);
void kvmai_groups_device_added(struct pci_dev *pdev);
void kvmai_groups_device_removed(struct device *dev);

/* Module unload (main.c). */
void kvmai_groups_destroy(void);

/* debugfs.c */
void kvmai_debugfs_init(void);
void kvmai_debugfs_exit(void);

#endif /* _KVMAI_GROUP_H */
