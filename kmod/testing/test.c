// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - fault injection for the selftests, and the mock provider's core
 * fence standing in for KVM's: the hooks of ../testing.h.  Built only with
 * 'make KVMAI_TEST=y' (the project's own build); packages never have it,
 * as upstream compiles iommufd's selftest.c only with CONFIG_IOMMUFD_TEST.
 */
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/list.h>
#include <linux/sysfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "../kvmai.h"
#include "../pmu_core.h"
#include "../testing.h"
#include "kvmai_mock.h"

static unsigned int unload_delay_ms;
module_param(unload_delay_ms, uint, 0600);
MODULE_PARM_DESC(unload_delay_ms,
		 "test only: pause module unload after its first step, to widen races");

/* Config-access blocks in flight (hold_cfg_access below). */
static atomic_t kvmai_test_holds = ATOMIC_INIT(0);

void kvmai_test_unload_delay(void)
{
	if (unload_delay_ms)
		msleep(unload_delay_ms);
	/* Their work items run module code: let them end first. */
	while (atomic_read(&kvmai_test_holds))
		msleep(20);
}

static atomic_t fail_restores = ATOMIC_INIT(0);

static int fail_restores_set(const char *val, const struct kernel_param *kp)
{
	int n, ret = kstrtoint(val, 0, &n);

	if (ret)
		return ret;
	atomic_set(&fail_restores, n);
	return 0;
}

static int fail_restores_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fail_restores));
}

static const struct kernel_param_ops fail_restores_ops = {
	.set = fail_restores_set,
	.get = fail_restores_get,
};
module_param_cb(fail_restores, &fail_restores_ops, NULL, 0600);
MODULE_PARM_DESC(fail_restores, "test only: make the next N ACS restores fail with -EIO");

/* True (and one fewer to fail) if the next ACS restore is to fail. */
bool kvmai_test_fail_restore(void)
{
	return atomic_dec_if_positive(&fail_restores) >= 0;
}

static char acs_quirk_port[16];
module_param_string(acs_quirk_port, acs_quirk_port, sizeof(acs_quirk_port), 0600);
MODULE_PARM_DESC(acs_quirk_port,
		 "test only: treat this port's ACS as quirk-handled, as on hardware QEMU lacks");

/* True if @pdev is to look as if a PCI quirk implemented its ACS. */
bool kvmai_test_acs_quirk(struct pci_dev *pdev)
{
	return acs_quirk_port[0] && sysfs_streq(acs_quirk_port, pci_name(pdev));
}

/*
 * The emulated host's KVM has no mediated vPMU, so it refuses the core
 * fence: while kvmai_mock_pmu is loaded, its fence stands in for KVM's.
 * The fences it gave, by the VM record holding them (under kvmai_lock, as
 * every fence); the mock stays pinned while one is held.
 */
struct kvmai_test_fence {
	struct list_head node;
	struct kvmai_core_fence *fence;
};

static LIST_HEAD(kvmai_test_fences);

/* False (nothing done) when the mock is not loaded. */
bool kvmai_test_core_fence(struct kvmai_core_fence *fence, int *ret)
{
	typeof(kvmai_mock_core_fence) *fence_fn = symbol_get(kvmai_mock_core_fence);
	struct kvmai_test_fence *tf;

	lockdep_assert_held(&kvmai_lock);
	if (!fence_fn)
		return false;
	tf = kzalloc_obj(*tf);
	*ret = tf ? fence_fn(&fence->mock_held) : -ENOMEM;
	if (*ret) {
		kfree(tf);
		symbol_put(kvmai_mock_core_fence);
		return true;
	}
	tf->fence = fence;
	list_add(&tf->node, &kvmai_test_fences);
	return true;
}

/* Whether the mock holds @fence for its owner. */
bool kvmai_test_core_held(const struct kvmai_core_fence *fence)
{
	return READ_ONCE(fence->mock_held);
}

/* Give back @fence if the mock gave it, and drop the mock's pin: true then. */
bool kvmai_test_core_unfence(struct kvmai_core_fence *fence)
{
	typeof(kvmai_mock_core_unfence) *unfence;
	struct kvmai_test_fence *tf;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(tf, &kvmai_test_fences, node)
		if (tf->fence == fence)
			break;
	if (list_entry_is_head(tf, &kvmai_test_fences, node))
		return false;
	list_del(&tf->node);
	kfree(tf);
	unfence = symbol_get(kvmai_mock_core_unfence);
	if (!WARN_ON_ONCE(!unfence)) {
		unfence(&fence->mock_held);
		symbol_put(kvmai_mock_core_unfence);
	}
	symbol_put(kvmai_mock_core_fence);
	return true;
}

#ifdef KVMAI_HAVE_ACS_OVERRIDE
/*
 * "BDF MASK VAL": call the series' pci_acs_override() directly, outside
 * any group, so tests can look at what the PCI core does under an
 * override (IOMMU groups of devices added meanwhile).  "BDF 0 0" drops it.
 */
static int acs_override_set(const char *val, const struct kernel_param *kp)
{
	char name[16];
	struct device *dev;
	u16 mask, bits;
	int ret;

	if (sscanf(val, "%15s %hx %hx", name, &mask, &bits) != 3)
		return -EINVAL;
	dev = bus_find_device_by_name(&pci_bus_type, NULL, name);
	if (!dev)
		return -ENODEV;
	ret = pci_acs_override(to_pci_dev(dev), mask, bits);
	put_device(dev);
	return ret;
}

static const struct kernel_param_ops acs_override_ops = {
	.set = acs_override_set,
};
module_param_cb(acs_override, &acs_override_ops, NULL, 0200);
MODULE_PARM_DESC(acs_override, "test only: \"BDF MASK VAL\" for pci_acs_override()");
#endif

/*
 * "BDF MS": block config access to a device for MS milliseconds from a
 * work item, as a reset (pci_dev_lock()) or any other holder of
 * pci_cfg_access_lock() does.  Returns once the block is in place.
 */
struct kvmai_test_hold {
	struct work_struct work;
	struct completion held;
	struct pci_dev *pdev;
	unsigned int ms;
};

static void kvmai_test_hold_fn(struct work_struct *work)
{
	struct kvmai_test_hold *h = container_of(work, struct kvmai_test_hold, work);

	pci_cfg_access_lock(h->pdev);
	complete(&h->held);
	msleep(h->ms);
	pci_cfg_access_unlock(h->pdev);
	pci_dev_put(h->pdev);
	kfree(h);
	atomic_dec(&kvmai_test_holds);
}

static int hold_cfg_access_set(const char *val, const struct kernel_param *kp)
{
	struct kvmai_test_hold *h;
	struct device *dev;
	char name[16];
	unsigned int ms;

	if (sscanf(val, "%15s %u", name, &ms) != 2 || ms > 10000)
		return -EINVAL;
	dev = bus_find_device_by_name(&pci_bus_type, NULL, name);
	if (!dev)
		return -ENODEV;
	h = kzalloc_obj(*h);
	if (!h) {
		put_device(dev);
		return -ENOMEM;
	}
	h->pdev = to_pci_dev(dev);	/* the reference goes with it */
	h->ms = ms;
	init_completion(&h->held);
	INIT_WORK(&h->work, kvmai_test_hold_fn);
	atomic_inc(&kvmai_test_holds);
	schedule_work(&h->work);
	wait_for_completion(&h->held);
	return 0;
}

static const struct kernel_param_ops hold_cfg_access_ops = {
	.set = hold_cfg_access_set,
};
module_param_cb(hold_cfg_access, &hold_cfg_access_ops, NULL, 0200);
MODULE_PARM_DESC(hold_cfg_access, "test only: \"BDF MS\" blocks config access as a reset does");

/*
 * "PORT EP MS": a stand-in for AER recovery below PORT, which locks the
 * port and then each device below it, as __pci_bus_lock() does with
 * pci_dev_lock(): PORT's device lock and config access first, then, from
 * the work item, EP's device lock.  The stand-in first waits (up to MS
 * milliseconds) until someone holds EP's device lock or EP has lost its
 * driver, so that an unbind of EP started meanwhile is inside its notifiers
 * when the stand-in asks, then tries for MS milliseconds more.  Never a
 * blocking wait: if the unbind waits for PORT, the stand-in gives up,
 * which releases PORT, and says so.  Reading gives the last outcome:
 * "running", "locked" (EP's lock was taken, and "after waiting" when it
 * was seen held first) or "timeout" (EP's lock holder never let go).
 */
struct kvmai_test_recovery {
	struct work_struct work;
	struct completion held;
	struct pci_dev *port, *ep;
	unsigned int ms;
};

static const char *kvmai_test_recovery_result = "none";

static bool kvmai_test_trylock_for(struct device *dev, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		if (device_trylock(dev))
			return true;
		msleep(20);
	} while (time_before(jiffies, end));
	return false;
}

static void kvmai_test_recovery_fn(struct work_struct *work)
{
	struct kvmai_test_recovery *r = container_of(work, struct kvmai_test_recovery, work);
	unsigned long end = jiffies + msecs_to_jiffies(r->ms);
	bool seen = false;

	pci_dev_lock(r->port);
	complete(&r->held);
	while (time_before(jiffies, end) && READ_ONCE(r->ep->dev.driver)) {
		if (mutex_is_locked(&r->ep->dev.mutex)) {
			seen = true;
			break;
		}
		usleep_range(500, 1000);
	}
	if (kvmai_test_trylock_for(&r->ep->dev, r->ms)) {
		kvmai_test_recovery_result = seen ? "locked after waiting" : "locked";
		device_unlock(&r->ep->dev);
	} else {
		kvmai_test_recovery_result = "timeout";
		pci_warn(r->ep, "kvmai: test: device lock still held after %u ms, port %s locked meanwhile\n",
			 r->ms, pci_name(r->port));
	}
	pci_dev_unlock(r->port);
	pci_dev_put(r->ep);
	pci_dev_put(r->port);
	kfree(r);
	atomic_dec(&kvmai_test_holds);
}

static struct pci_dev *kvmai_test_pci_dev(const char *name)
{
	struct device *dev = bus_find_device_by_name(&pci_bus_type, NULL, name);

	return dev ? to_pci_dev(dev) : NULL;	/* the reference goes with it */
}

static int recovery_lock_set(const char *val, const struct kernel_param *kp)
{
	struct kvmai_test_recovery *r;
	char port[16], ep[16];
	unsigned int ms;

	if (sscanf(val, "%15s %15s %u", port, ep, &ms) != 3 || ms > 10000)
		return -EINVAL;
	r = kzalloc_obj(*r);
	if (!r)
		return -ENOMEM;
	r->port = kvmai_test_pci_dev(port);
	r->ep = kvmai_test_pci_dev(ep);
	if (!r->port || !r->ep) {
		pci_dev_put(r->port);
		pci_dev_put(r->ep);
		kfree(r);
		return -ENODEV;
	}
	r->ms = ms;
	init_completion(&r->held);
	INIT_WORK(&r->work, kvmai_test_recovery_fn);
	kvmai_test_recovery_result = "running";
	atomic_inc(&kvmai_test_holds);
	schedule_work(&r->work);
	wait_for_completion(&r->held);
	return 0;
}

static int recovery_lock_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", kvmai_test_recovery_result);
}

static const struct kernel_param_ops recovery_lock_ops = {
	.set = recovery_lock_set,
	.get = recovery_lock_get,
};
module_param_cb(recovery_lock, &recovery_lock_ops, NULL, 0600);
MODULE_PARM_DESC(recovery_lock,
		 "test only: \"PORT EP MS\" locks PORT, then tries EP's device lock, as AER recovery does");
