// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/kvmai.yaml */
/* YNL-GEN kernel source */
/* To regenerate run: tools/net/ynl/ynl-regen.sh */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "kvmai_nl.h"

#include <uapi/linux/kvmai.h>

/* Common nested types */
const struct nla_policy kvmai_msr_range_nl_policy[KVMAI_A_MSR_RANGE_PAD + 1] = {
	[KVMAI_A_MSR_RANGE_BASE] = { .type = NLA_U32, },
	[KVMAI_A_MSR_RANGE_COUNT] = { .type = NLA_U32, },
	[KVMAI_A_MSR_RANGE_READ] = { .type = NLA_FLAG, },
	[KVMAI_A_MSR_RANGE_WRITE] = { .type = NLA_FLAG, },
	[KVMAI_A_MSR_RANGE_WRITE_MASK] = { .type = NLA_U64, },
};

const struct nla_policy kvmai_unit_nl_policy[KVMAI_A_UNIT_SCOPE + 1] = {
	[KVMAI_A_UNIT_NAME] = { .type = NLA_NUL_STRING, .len = 63, },
	[KVMAI_A_UNIT_TYPE] = { .type = NLA_U32, },
	[KVMAI_A_UNIT_MSR_RANGES] = { .type = NLA_U32, },
	[KVMAI_A_UNIT_HOST_EVENTS] = { .type = NLA_U32, },
	[KVMAI_A_UNIT_VM] = { .type = NLA_NUL_STRING, },
	[KVMAI_A_UNIT_MSR] = NLA_POLICY_NESTED(kvmai_msr_range_nl_policy),
	[KVMAI_A_UNIT_OFFLINE_PACKAGE] = { .type = NLA_U32, },
	[KVMAI_A_UNIT_HOTPLUG_SCRUBS] = { .type = NLA_U32, },
	[KVMAI_A_UNIT_CORE_SELECT] = { .type = NLA_FLAG, },
	[KVMAI_A_UNIT_SCOPE] = NLA_POLICY_RANGE(NLA_U32, 1, 3),
};

/* KVMAI_CMD_GROUP_NEW - do */
static const struct nla_policy kvmai_group_new_nl_policy[KVMAI_A_GROUP_BIND_SOCKET + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
	[KVMAI_A_GROUP_VM] = { .type = NLA_NUL_STRING, .len = 63, },
	[KVMAI_A_GROUP_MODE] = NLA_POLICY_RANGE(NLA_U32, 1, 2),
	[KVMAI_A_GROUP_BIND_SOCKET] = { .type = NLA_FLAG, },
};

/* KVMAI_CMD_GROUP_DEL - do */
static const struct nla_policy kvmai_group_del_nl_policy[KVMAI_A_GROUP_NAME + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
};

/* KVMAI_CMD_GROUP_GET - do */
static const struct nla_policy kvmai_group_get_nl_policy[KVMAI_A_GROUP_NAME + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
};

/* KVMAI_CMD_GROUP_SET - do */
static const struct nla_policy kvmai_group_set_nl_policy[KVMAI_A_GROUP_STATE + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
	[KVMAI_A_GROUP_MODE] = NLA_POLICY_RANGE(NLA_U32, 1, 2),
	[KVMAI_A_GROUP_STATE] = NLA_POLICY_RANGE(NLA_U32, 1, 2),
};

/* KVMAI_CMD_DEV_ADD - do */
static const struct nla_policy kvmai_dev_add_nl_policy[KVMAI_A_GROUP_MDEV + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
	[KVMAI_A_GROUP_PCI_ADDR] = { .type = NLA_NUL_STRING, .len = 15, },
	[KVMAI_A_GROUP_MDEV] = { .type = NLA_NUL_STRING, .len = 36, },
};

/* KVMAI_CMD_DEV_DEL - do */
static const struct nla_policy kvmai_dev_del_nl_policy[KVMAI_A_GROUP_MDEV + 1] = {
	[KVMAI_A_GROUP_NAME] = { .type = NLA_NUL_STRING, .len = 31, },
	[KVMAI_A_GROUP_PCI_ADDR] = { .type = NLA_NUL_STRING, .len = 15, },
	[KVMAI_A_GROUP_MDEV] = { .type = NLA_NUL_STRING, .len = 36, },
};

/* KVMAI_CMD_PMU_GET - do */
static const struct nla_policy kvmai_pmu_get_nl_policy[KVMAI_A_PMU_VM + 1] = {
	[KVMAI_A_PMU_VM] = { .type = NLA_NUL_STRING, .len = 63, },
};

/* KVMAI_CMD_PMU_ASSIGN - do */
static const struct nla_policy kvmai_pmu_assign_nl_policy[KVMAI_A_PMU_BIND_SOCKET + 1] = {
	[KVMAI_A_PMU_VM] = { .type = NLA_NUL_STRING, .len = 63, },
	[KVMAI_A_PMU_CORE] = { .type = NLA_FLAG, },
	[KVMAI_A_PMU_UNIT] = NLA_POLICY_NESTED(kvmai_unit_nl_policy),
	[KVMAI_A_PMU_CPUS] = { .type = NLA_NUL_STRING, .len = 255, },
	[KVMAI_A_PMU_SHARED] = { .type = NLA_FLAG, },
	[KVMAI_A_PMU_PID] = { .type = NLA_U32, },
	[KVMAI_A_PMU_BIND_SOCKET] = { .type = NLA_FLAG, },
};

/* KVMAI_CMD_PMU_RELEASE - do */
static const struct nla_policy kvmai_pmu_release_nl_policy[KVMAI_A_PMU_UNIT + 1] = {
	[KVMAI_A_PMU_VM] = { .type = NLA_NUL_STRING, .len = 63, },
	[KVMAI_A_PMU_CORE] = { .type = NLA_FLAG, },
	[KVMAI_A_PMU_UNIT] = NLA_POLICY_NESTED(kvmai_unit_nl_policy),
};

/* Ops table for kvmai */
static const struct genl_split_ops kvmai_nl_ops[] = {
	{
		.cmd	= KVMAI_CMD_STATUS_GET,
		.doit	= kvmai_nl_status_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_GROUP_NEW,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_group_new_doit,
		.policy		= kvmai_group_new_nl_policy,
		.maxattr	= KVMAI_A_GROUP_BIND_SOCKET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_GROUP_DEL,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_group_del_doit,
		.policy		= kvmai_group_del_nl_policy,
		.maxattr	= KVMAI_A_GROUP_NAME,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_GROUP_GET,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_group_get_doit,
		.policy		= kvmai_group_get_nl_policy,
		.maxattr	= KVMAI_A_GROUP_NAME,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= KVMAI_CMD_GROUP_GET,
		.start	= kvmai_nl_dump_start,
		.dumpit	= kvmai_nl_group_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= KVMAI_CMD_GROUP_SET,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_group_set_doit,
		.policy		= kvmai_group_set_nl_policy,
		.maxattr	= KVMAI_A_GROUP_STATE,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_DEV_ADD,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_dev_add_doit,
		.policy		= kvmai_dev_add_nl_policy,
		.maxattr	= KVMAI_A_GROUP_MDEV,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_DEV_DEL,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_dev_del_doit,
		.policy		= kvmai_dev_del_nl_policy,
		.maxattr	= KVMAI_A_GROUP_MDEV,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_PMU_HOST_GET,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_pmu_host_get_doit,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_PMU_GET,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_pmu_get_doit,
		.policy		= kvmai_pmu_get_nl_policy,
		.maxattr	= KVMAI_A_PMU_VM,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd	= KVMAI_CMD_PMU_GET,
		.start	= kvmai_nl_dump_start,
		.dumpit	= kvmai_nl_pmu_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= KVMAI_CMD_PMU_ASSIGN,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_pmu_assign_doit,
		.policy		= kvmai_pmu_assign_nl_policy,
		.maxattr	= KVMAI_A_PMU_BIND_SOCKET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= KVMAI_CMD_PMU_RELEASE,
		.pre_doit	= kvmai_nl_pre_doit,
		.doit		= kvmai_nl_pmu_release_doit,
		.policy		= kvmai_pmu_release_nl_policy,
		.maxattr	= KVMAI_A_PMU_UNIT,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group kvmai_nl_mcgrps[] = {
	[KVMAI_NLGRP_MONITOR] = { "monitor", },
};

struct genl_family kvmai_nl_family __ro_after_init = {
	.name		= KVMAI_FAMILY_NAME,
	.version	= KVMAI_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= kvmai_nl_ops,
	.n_split_ops	= ARRAY_SIZE(kvmai_nl_ops),
	.mcgrps		= kvmai_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(kvmai_nl_mcgrps),
};
