// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - per-VM P2P and PMU control for virtualized AI hosts.
 *
 * This file wires the module together and holds its one lock (kvmai.h).
 * The rest is one concern per file, and one header per part:
 *
 * P2P groups
 *   group.c [group.h]       groups: members, enabling (plan, check,
 *                           program), the ATS watch, every way one ends
 *   plan.c [plan.h]         which ports get which ACS bits: pure, built
 *                           into the selftests' plan_test too
 *   topo.c [topo.h]         the live PCI tree around some devices
 *   acs.c [acs.h]           the ports registry, every ACS write
 *   ats.c [ats.h]           whether a device has ATS on
 *   debugfs.c [group.h]     the groups, in debugfs
 * PMU ownership (x86)
 *   pmu.c [pmu.h]           which VM owns the core PMU, which uncore units
 *   pmu_core.c [pmu_core.h] the core PMU fence
 *   pmu_dev.c [pmu.h]       /dev/kvmai: handles of uncore reservations
 *   counters.c [counters.h] uncore counter pages, as mediated devices for
 *                           the VM owning their unit
 *   ctrdev.c [counters.h]   one such device
 *   counters_intel.c        a provider of such pages: Ice Lake-SP's
 *                           [counters.h]
 * Generic netlink
 *   kvmai_nl.[ch]           generated from the YNL spec
 *                           (Documentation/netlink/specs/kvmai.yaml)
 *   netlink.c               the family, status-get, what handlers share
 *                           [netlink_priv.h]
 *   group_netlink.c         group-* and dev-* handlers
 *   pmu_netlink.c           pmu-* handlers
 *   netlink.h               all that the rest calls: the family's
 *                           registration, one *_ntf() per notification
 * notify.c [notify.h]       events: unbind, removal, an owner's socket
 *                           closing, vfio open and close
 * compat.h                  what differs between the kernels kvmai builds for
 * testing.h                 hooks of test builds, empty in the product;
 *                           testing/ implements them and holds the mock
 *                           providers (make KVMAI_TEST=y only)
 *
 * The only call cycles between files are a group and its handlers, which
 * notify monitors of its changes, and PMU ownership, its handlers and the
 * counters devices that follow ownership (tools/devenv/kmod-graph.py
 * checks it on the built objects).
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
	ret = kvmai_mdev_notifier_register();
	if (ret) {
		pr_err("cannot register the mdev bus notifier: %d\n", ret);
		goto err_counters_driver;
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
	kvmai_mdev_notifier_unregister();
err_counters_driver:
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
	/* After the groups: none holds an mdev the bus could remove unheard. */
	kvmai_mdev_notifier_unregister();
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
