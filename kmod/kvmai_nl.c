// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/kvmai.yaml */
/* YNL-GEN kernel source */
/* To regenerate run: tools/net/ynl/ynl-regen.sh */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "kvmai_nl.h"

#include <uapi/linux/kvmai.h>

/* Ops table for kvmai */
static const struct genl_split_ops kvmai_nl_ops[] = {
	{
		.cmd	= KVMAI_CMD_STATUS_GET,
		.doit	= kvmai_nl_status_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
};

struct genl_family kvmai_nl_family __ro_after_init = {
	.name		= KVMAI_FAMILY_NAME,
	.version	= KVMAI_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= kvmai_nl_ops,
	.n_split_ops	= ARRAY_SIZE(kvmai_nl_ops),
};
