/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The payload's modules (kvmai.ko and the test-only mocks of kmod/testing,
 * all in /kvmai): each test loads what it needs itself.
 */
#ifndef KT_MODULE_H
#define KT_MODULE_H

#include "kt.h"

#define KT_KVMAI_PATH "/kvmai/kvmai.ko"
#define KT_MOCK_PMU_PATH "/kvmai/kvmai_mock_pmu.ko"
#define KT_MOCK_COUNTERS_PATH "/kvmai/kvmai_mock_counters.ko"
#define KT_MOCK_VFBUS_PATH "/kvmai/kvmai_mock_vfbus.ko"
#define KT_MOCK_VGPU_PATH "/kvmai/kvmai_mock_vgpu.ko"
#define KT_MOCK_MDEV_PATH "/kvmai/kvmai_mock_mdev.ko"

enum kt_mod {
	KT_MOD_KVMAI,		/* kvmai.ko */
	KT_MOD_MOCK_PMU,	/* test-only fake PMUs */
	KT_MOD_MOCK_COUNTERS,	/* test-only counter pages, on kernels with mdev */
	KT_MOD_MOCK_VFBUS,	/* test-only: an SR-IOV PF whose VFs sit on the next bus */
	KT_MOD_MOCK_VGPU,	/* test-only: NVIDIA's vGPU sysfs on a PF's VFs */
	KT_MOD_MOCK_MDEV,	/* test-only: an mdev parent on a PCI function */
};

bool kt_mod_loaded(enum kt_mod mod);

/*
 * Loads @mod with module parameters @params (NULL: none), what it needs
 * first: kvmai's copy of the uncore registry on kernels without the
 * series' (uncore_guest.ko, when the payload has it), kvmai for the
 * counters mock.  A module that is loaded already is left as it is, but
 * asked for @params it is -EBUSY.  0 or -errno.
 */
int _test_cmd_mod_load(enum kt_mod mod, const char *params);
/* Unloads @mod if it is loaded: 0 or -errno. */
int _test_cmd_mod_unload(enum kt_mod mod);
#define test_cmd_mod_load(mod, params) __kt_cmd(_test_cmd_mod_load(mod, params))
#define test_cmd_mod_unload(mod) __kt_cmd(_test_cmd_mod_unload(mod))

#endif /* KT_MODULE_H */
