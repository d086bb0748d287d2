/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - the hooks test builds (make KVMAI_TEST=y) put into the module:
 * fault injection, and the mock provider's core fence standing in for
 * KVM's.  testing/test.c implements them; in the product they are empty and
 * compile away.
 */
#ifndef _KVMAI_TESTING_H
#define _KVMAI_TESTING_H

#include <linux/types.h>

struct kvmai_core_fence;
struct pci_dev;

#ifdef KVMAI_TEST
void kvmai_test_unload_delay(void);
bool kvmai_test_fail_restore(void);
bool kvmai_test_acs_quirk(struct pci_dev *pdev);
bool kvmai_test_core_fence(struct kvmai_core_fence *fence, int *ret);
bool kvmai_test_core_unfence(struct kvmai_core_fence *fence);
bool kvmai_test_core_held(const struct kvmai_core_fence *fence);
#else
static inline void kvmai_test_unload_delay(void) { }
static inline bool kvmai_test_fail_restore(void) { return false; }
static inline bool kvmai_test_acs_quirk(struct pci_dev *pdev) { return false; }

static inline bool kvmai_test_core_fence(struct kvmai_core_fence *fence, int *ret)
{
	return false;
}

static inline bool kvmai_test_core_unfence(struct kvmai_core_fence *fence)
{
	return false;
}

static inline bool kvmai_test_core_held(const struct kvmai_core_fence *fence)
{
	return false;
}
#endif

#endif /* _KVMAI_TESTING_H */
