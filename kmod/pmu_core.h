/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - the core PMU fence a VM's record holds while the VM owns the
 * core PMU (pmu_core.c): KVM's, on kernels with the kvm-ai series.
 */
#ifndef _KVMAI_PMU_CORE_H
#define _KVMAI_PMU_CORE_H

#include "compat.h"

#ifdef KVMAI_HAVE_CORE_FENCE
#include <linux/kvm_host.h>
#endif

struct netlink_ext_ack;

struct kvmai_core_fence {
#ifdef KVMAI_HAVE_CORE_FENCE
	struct kvm_mediated_pmu_fence kvm;
#endif
#ifdef KVMAI_TEST
	/* A fence of the mock provider's, which sets and clears it. */
	bool mock_held;
#endif
};

int kvmai_pmu_core_fence(struct kvmai_core_fence *fence, struct netlink_ext_ack *extack);
void kvmai_pmu_core_unfence(struct kvmai_core_fence *fence);
/* Still in force: KVM drops its fences when its vendor module goes. */
bool kvmai_pmu_core_held(const struct kvmai_core_fence *fence);

#endif /* _KVMAI_PMU_CORE_H */
