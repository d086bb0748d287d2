// SPDX-License-Identifier: GPL-2.0-only
/*
 * Benchmark, not a test: enable and disable one translated group holding
 * every GPU and NIC stand-in N times through kvmai, then make the same ACS
 * writes the usual manual way (a setpci per port) N times, and print both.
 * Figures only; nothing here passes or fails on time.
 *
 *   p2p_bench [N]    (default 200)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <linux/kvmai.h>

#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"
#include "lib/group.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double sys_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
}

static int set_state(struct kt_nl *nl, __u32 state)
{
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_SET, .name = "bench", .state = state };

	return _test_cmd_group(nl, &r, NULL);
}

int main(int argc, char **argv)
{
	/*
	 * Every GPU and NIC the group may hold: not nic3, which shares the
	 * ACS-less switch with foreign1, a device of no VM (refused since the
	 * group checks translated mode for foreign devices too).
	 */
	static const char *const devs[] = { "gpu0", "gpu1", "nic0", "nic1", "gpu2", "gpu3",
					    "nic2", "gpu4", "gpu5" };
	int n = argc > 1 ? atoi(argv[1]) : 200, nports;
	struct kt_group *g = calloc(1, sizeof(*g));
	double t0, s0, en = 0, dis = 0, sys_en = 0, setpci = 0;
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_NEW, .name = "bench", .vm = "bench" };
	char cmd[8192], out[256];
	struct kt_nl nl;

	if (!g || n <= 0 || _test_cmd_mod_load(KT_MOD_KVMAI, NULL)) {
		fprintf(stderr, "p2p_bench: no kvmai module\n");
		return 1;
	}
	if (kt_nl_open(&nl) || _test_cmd_group(&nl, &r, NULL)) {
		fprintf(stderr, "p2p_bench: cannot create the group\n");
		return 1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(devs); i++) {
		const struct kt_dev *d = kt_dev(devs[i]);

		if (!d || _test_cmd_pci_bind(d->bdf, "vfio-pci")) {
			fprintf(stderr, "p2p_bench: cannot bind %s to vfio-pci\n", devs[i]);
			return 1;
		}
		r = (struct kt_req){ .cmd = KVMAI_CMD_DEV_ADD, .name = "bench", .pci = d->bdf };
		if (_test_cmd_group(&nl, &r, NULL)) {
			fprintf(stderr, "p2p_bench: cannot add %s\n", devs[i]);
			return 1;
		}
	}

	for (int i = 0; i < n; i++) {
		t0 = now_us();
		s0 = sys_us();
		if (set_state(&nl, KVMAI_STATE_ENABLED)) {
			fprintf(stderr, "p2p_bench: enable refused (round %d)\n", i);
			return 1;
		}
		en += now_us() - t0;
		sys_en += sys_us() - s0;
		t0 = now_us();
		if (set_state(&nl, KVMAI_STATE_DISABLED)) {
			fprintf(stderr, "p2p_bench: disable refused (round %d)\n", i);
			return 1;
		}
		dis += now_us() - t0;
	}

	/* The same writes by hand: what the group programs, then restore. */
	set_state(&nl, KVMAI_STATE_ENABLED);
	r = (struct kt_req){ .cmd = KVMAI_CMD_GROUP_GET, .name = "bench" };
	if (_test_cmd_group(&nl, &r, g))
		return 1;
	set_state(&nl, KVMAI_STATE_DISABLED);
	nports = g->nports;
	cmd[0] = '\0';
	for (int p = 0; p < nports; p++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
			 "setpci -s %s ECAP_ACS+6.w=%04x; ", g->ports[p].addr, g->ports[p].target);
	for (int p = 0; p < nports; p++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
			 "setpci -s %s ECAP_ACS+6.w=%04x; ", g->ports[p].addr, g->ports[p].saved);
	for (int i = 0; i < n; i++) {
		t0 = now_us();
		if (kt_run(cmd, out, sizeof(out)))
			return 1;
		setpci += now_us() - t0;
	}

	printf("p2p_bench: group of %zu devices, %d ports, %d rounds (%s)\n",
	       ARRAY_SIZE(devs), nports, n, "TCG guest: compare ratios, not absolutes");
	printf("p2p_bench: kvmai enable   %9.1f us/op (system time %.1f us/op)\n", en / n,
	       sys_en / n);
	printf("p2p_bench: kvmai disable  %9.1f us/op\n", dis / n);
	printf("p2p_bench: setpci loop    %9.1f us per enable+restore (%d setpci runs)\n",
	       setpci / n, 2 * nports);
	printf("p2p_bench: ratio setpci / kvmai (enable+disable) = %.1f\n", setpci / (en + dis));
	r = (struct kt_req){ .cmd = KVMAI_CMD_GROUP_DEL, .name = "bench" };
	_test_cmd_group(&nl, &r, NULL);
	kt_nl_close(&nl);
	return 0;
}
