/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - all the rest of the module calls of the netlink layer: the
 * family's registration (main.c), and the notifications that monitors
 * get when a group or a PMU record changes, sent under kvmai_lock.
 */
#ifndef _KVMAI_NETLINK_H
#define _KVMAI_NETLINK_H

struct kvmai_group;
struct kvmai_pmu_vm;

int kvmai_nl_register(void);
void kvmai_nl_unregister(void);

void kvmai_group_create_ntf(struct kvmai_group *grp);
void kvmai_group_delete_ntf(struct kvmai_group *grp);
void kvmai_group_change_ntf(struct kvmai_group *grp);
void kvmai_pmu_change_ntf(struct kvmai_pmu_vm *pvm);

#endif /* _KVMAI_NETLINK_H */
