// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - per-VM P2P and PMU control for virtualized AI hosts.
 *
 * This file only wires the module together; each concern lives in its own
 * file: netlink.c (requests), group.c (P2P groups), plan.c (which ports,
 * which bits), acs.c (ports and ACS writes), topo.c (the live PCI tree),
 * notify.c (unbind, removal, owner exit), debugfs.c, and for PMU ownership
 * pmu.c (who owns what), pmu_core.c (the core PMU), pmu_nl.c and pmu_dev.c
 * (/dev/kvmai, which hands out reservation handles); counters.c
 * and ctrdev.c map uncore counter pages into the VM owning their unit.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <net/genetlink.h>

#include <uapi/linux/kvmai.h>

#include "kvmai.h"
#include "acs.h"
#include "counters.h"
#include "group.h"
#include "netlink.h"
#include "notify.h"
#include "pmu.h"
#include "testing.h"

/* The one lock; what it protects and the lock order: kvmai.h. */
DEFINE_MUTEX(kvmai_lock);

static int __init kvmai_init(void)
{
	int ret;

	ret = kvmai_notifiers_register();
	if (ret) {
		pr_err("cannot register notifiers: %d\n", ret);
		return ret;
	}
	ret = kvmai_counters_init();
	if (ret) {
		pr_err("cannot register the counters device driver: %d\n", ret);
		goto err_notifiers;
	}
	/* Providers inside kvmai register their pages as outside ones do. */
	kvmai_counters_intel_init();
	ret = kvmai_dev_register();
	if (ret) {
		pr_err("cannot register /dev/kvmai: %d\n", ret);
		goto err_counters;
	}
	ret = kvmai_nl_register();
	if (ret) {
		pr_err("cannot register generic netlink family: %d\n", ret);
		goto err_dev;
	}
	kvmai_debugfs_init();
	pr_info("version %s loaded\n", KVMAI_VERSION);
	return 0;

err_dev:
	kvmai_dev_unregister();
err_counters:
	kvmai_counters_intel_exit();
	kvmai_counters_exit();
err_notifiers:
	kvmai_notifiers_unregister();
	return ret;
}

static void __exit kvmai_exit(void)
{
	/* First, so that no request can run during or after the teardown. */
	kvmai_nl_unregister();
	kvmai_dev_unregister();
	kvmai_test_unload_delay();
	kvmai_debugfs_exit();
	kvmai_notifiers_unregister();
	/* Restores every port and releases every PMU resource. */
	kvmai_groups_destroy();
	kvmai_ports_destroy();
	kvmai_pmu_destroy();
	kvmai_counters_intel_exit();
	kvmai_counters_exit();
}

module_init(kvmai_init);
module_exit(kvmai_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-VM P2P and PMU control for virtualized AI hosts");
MODULE_VERSION(KVMAI_VERSION);
MODULE_ALIAS_GENL_FAMILY(KVMAI_FAMILY_NAME);
