// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the core PMU.  A VM given the core PMU holds KVM's fence for VMs
 * with a mediated vPMU (asm/kvm_pmu_fence.h), and perf says which events
 * stand in its way (linux/perf/guest_owner.h); both come with the kvm-ai
 * patch series.  Without them the module cannot fence or see host events,
 * so it refuses to record an ownership it could not honour.
 *
 * KVM drops the fence when its vendor module is unloaded (a reload may
 * give VMs no mediated vPMU at all): the record then no longer owns the
 * core PMU, says so in pmu-get, and may take it again.
 */
#include <linux/netlink.h>
#include <linux/string.h>

#include "pmu_core.h"
#include "testing.h"

#ifdef KVMAI_HAVE_PERF_GUEST_OWNER
#include <linux/perf/guest_owner.h>
#endif

#ifdef KVMAI_HAVE_CORE_FENCE
static int kvmai_first_conflict(const struct perf_guest_conflict *c, void *data)
{
	*(struct perf_guest_conflict *)data = *c;
	return 1;
}

/* Why the fence is refused while events count in guests: the first of them. */
static void kvmai_core_busy(struct netlink_ext_ack *extack)
{
	struct perf_guest_core_info info;
	struct perf_guest_conflict c;

	perf_guest_core_info(&info);
	if (perf_guest_core_for_each_conflict(kvmai_first_conflict, &c) <= 0)
		NL_SET_ERR_MSG_FMT(extack, "core PMU: %u task-bound host events count in guests",
				   info.nr_include_guest_events);
	else if (c.pid)
		/* A task names itself: its bytes are escaped, not sent to terminals. */
		NL_SET_ERR_MSG_FMT(extack, "core PMU: %*pE[%d] counts guests (%s event, CPU %d)",
				   (int)strnlen(c.comm, sizeof(c.comm)), c.comm, c.pid, c.pmu,
				   c.cpu);
	else
		NL_SET_ERR_MSG_FMT(extack, "core PMU: kernel %s event on CPU %d counts guests",
				   c.pmu, c.cpu);
}

int kvmai_pmu_core_fence(struct kvmai_core_fence *fence, struct netlink_ext_ack *extack)
{
	int ret;

	/* Test builds: the mock provider stands in for KVM while it is loaded. */
	if (!kvmai_test_core_fence(fence, &ret)) {
		ret = kvm_mediated_pmu_fence(&fence->kvm);
		/* Without a mediated vPMU no guest could use what the fence keeps. */
		if (ret == -EOPNOTSUPP)
			NL_SET_ERR_MSG(extack,
				       "core PMU: KVM gives VMs no mediated vPMU (enable_mediated_pmu)");
	}
	if (ret == -EBUSY)
		kvmai_core_busy(extack);
	return ret;
}

void kvmai_pmu_core_unfence(struct kvmai_core_fence *fence)
{
	/* Test builds: a fence the mock gave goes back to the mock. */
	if (!kvmai_test_core_unfence(fence))
		kvm_mediated_pmu_unfence(&fence->kvm);
}

bool kvmai_pmu_core_held(const struct kvmai_core_fence *fence)
{
	return kvmai_test_core_held(fence) || READ_ONCE(fence->kvm.held);
}
#else
int kvmai_pmu_core_fence(struct kvmai_core_fence *fence, struct netlink_ext_ack *extack)
{
	NL_SET_ERR_MSG(extack,
		       "core PMU: kernel lacks the KVM core PMU fence (kvm-ai patch series)");
	return -EOPNOTSUPP;
}

void kvmai_pmu_core_unfence(struct kvmai_core_fence *fence)
{
}

bool kvmai_pmu_core_held(const struct kvmai_core_fence *fence)
{
	return false;
}
#endif
