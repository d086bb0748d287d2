// SPDX-License-Identifier: GPL-2.0-only
/*
 * The emulated host's devices by name, from the map its /init writes
 * (guest/resolve-devices): tests name devices, never addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev.h"
#include "pci.h"

#define MAX_DEVS 64

static struct kt_dev devs[MAX_DEVS];
static int ndevs = -1;

static void load_map(void)
{
	char flags[64];
	FILE *f;

	if (ndevs >= 0)
		return;
	ndevs = 0;
	f = fopen(KT_DEVICES_FILE, "r");
	if (!f)
		return;
	while (ndevs < MAX_DEVS) {
		struct kt_dev *d = &devs[ndevs];

		if (fscanf(f, "%31s %15s %7s %15s %d %63s %15s", d->name, d->bdf,
			   d->role, d->sw, &d->numa, flags, d->port) != 7)
			break;
		d->ats = strstr(flags, "ats");
		d->sriov = strstr(flags, "sriov");
		d->acs_port = strstr(flags, "acsport");
		ndevs++;
	}
	fclose(f);
}

const struct kt_dev *kt_dev(const char *name)
{
	load_map();
	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

int kt_devs(const struct kt_dev **out, int max)
{
	int i;

	load_map();
	for (i = 0; i < ndevs && i < max; i++)
		out[i] = &devs[i];
	return i;
}

const char *kt_dev_bdf(const char *name)
{
	const struct kt_dev *d = kt_dev(name);

	return d ? d->bdf : "none";
}

const char *kt_dev_port(const char *name)
{
	const struct kt_dev *d = kt_dev(name);

	return d ? d->port : "none";
}

__u16 kt_dev_acs(const struct kt_acs *s, const char *name)
{
	return kt_acs_word(s, kt_dev_port(name));
}

__u16 kt_dev_acs_now(const char *name)
{
	return kt_acs_now(kt_dev_port(name));
}

size_t kt_dev_bind_vfio(const char *const *names, size_t n, char saved[][64])
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (kt_pci_driver(kt_dev_bdf(names[i]), saved[i], 64))
			break;
		/* Rebinding costs a host driver's remove and probe: ~0.25 s under TCG. */
		if (strcmp(saved[i], "vfio-pci") &&
		    _test_cmd_pci_bind(kt_dev_bdf(names[i]), "vfio-pci"))
			break;
	}
	return i;
}

int kt_dev_run_bound(const char *const *names, size_t n, int (*run)(int, char **),
		     int argc, char **argv)
{
	char (*saved)[64] = calloc(n, sizeof(*saved));
	size_t bound = 0;
	int ret;

	if (saved && kt_dev("gpu0"))
		bound = kt_dev_bind_vfio(names, n, saved);
	ret = run(argc, argv);
	for (size_t i = 0; i < bound; i++)
		if (strcmp(saved[i], "vfio-pci"))
			_test_cmd_pci_bind(kt_dev_bdf(names[i]), "");
	free(saved);
	return ret;
}
