/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/kvmai.yaml */
/* YNL-GEN kernel header */
/* To regenerate run: tools/net/ynl/ynl-regen.sh */

#ifndef _LINUX_KVMAI_GEN_H
#define _LINUX_KVMAI_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/kvmai.h>

/* Common nested types */
extern const struct nla_policy kvmai_msr_range_nl_policy[KVMAI_A_MSR_RANGE_PAD + 1];
extern const struct nla_policy kvmai_unit_nl_policy[KVMAI_A_UNIT_SCOPE + 1];

int kvmai_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		      struct genl_info *info);
int kvmai_nl_dump_start(struct netlink_callback *cb);

int kvmai_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_group_new_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_group_del_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_group_get_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_group_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int kvmai_nl_group_set_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_dev_add_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_pmu_host_get_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_pmu_get_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_pmu_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int kvmai_nl_pmu_assign_doit(struct sk_buff *skb, struct genl_info *info);
int kvmai_nl_pmu_release_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	KVMAI_NLGRP_MONITOR,
};

extern struct genl_family kvmai_nl_family;

#endif /* _LINUX_KVMAI_GEN_H */
