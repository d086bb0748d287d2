// SPDX-License-Identifier: GPL-2.0-only
/*
 * The payload's modules, loaded and unloaded by the tests (insmod, rmmod:
 * the emulated host has no modprobe database for them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "module.h"

/* kvmai's copy of the uncore registry, only for kernels without the series'. */
#define COMPAT_NAME "uncore_guest"
#define COMPAT_PATH "/kvmai/uncore_guest.ko"

static const struct {
	const char *name, *path;
} mods[] = {
	[KT_MOD_KVMAI] = { "kvmai", KT_KVMAI_PATH },
	[KT_MOD_MOCK_PMU] = { "kvmai_mock_pmu", KT_MOCK_PMU_PATH },
	[KT_MOD_MOCK_COUNTERS] = { "kvmai_mock_counters", KT_MOCK_COUNTERS_PATH },
	[KT_MOD_MOCK_VFBUS] = { "kvmai_mock_vfbus", KT_MOCK_VFBUS_PATH },
	[KT_MOD_MOCK_VGPU] = { "kvmai_mock_vgpu", KT_MOCK_VGPU_PATH },
	[KT_MOD_MOCK_MDEV] = { "kvmai_mock_mdev", KT_MOCK_MDEV_PATH },
};

static bool loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

/* insmod @path with @params unless @name is loaded: 0 or -EIO. */
static int load(const char *name, const char *path, const char *params)
{
	char cmd[256];

	if (loaded(name))
		return 0;
	snprintf(cmd, sizeof(cmd), "insmod %s %s", path, params ?: "");
	return system(cmd) == 0 ? 0 : -EIO;
}

bool kt_mod_loaded(enum kt_mod mod)
{
	return loaded(mods[mod].name);
}

int _test_cmd_mod_load(enum kt_mod mod, const char *params)
{
	int ret = 0;

	if (params && loaded(mods[mod].name))
		return -EBUSY;
	switch (mod) {
	case KT_MOD_KVMAI:
	case KT_MOD_MOCK_PMU:
		/* Their uncore registry, before its users. */
		if (!access(COMPAT_PATH, F_OK))
			ret = load(COMPAT_NAME, COMPAT_PATH, NULL);
		break;
	case KT_MOD_MOCK_COUNTERS:
		ret = _test_cmd_mod_load(KT_MOD_KVMAI, NULL);
		break;
	case KT_MOD_MOCK_VFBUS:
	case KT_MOD_MOCK_VGPU:
	case KT_MOD_MOCK_MDEV:
		break;
	}
	return ret ?: load(mods[mod].name, mods[mod].path, params);
}

int _test_cmd_mod_unload(enum kt_mod mod)
{
	char cmd[128];

	if (!loaded(mods[mod].name))
		return 0;
	snprintf(cmd, sizeof(cmd), "rmmod %s", mods[mod].name);
	return system(cmd) == 0 ? 0 : -EIO;
}
