// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the nested tests count while a guest of the emulated host (L2)
 * runs: L1's KVM statistics of the one VM it runs, L2's QEMU, around the
 * read loops L2 announces in its results file.
 */
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kvmai_test.h"

long kt_kvm_vm_stat(const char *name)
{
	char pattern[128];
	long val = -1;
	glob_t g;
	FILE *f;

	/* One VM runs: L2's QEMU (pid-fd). */
	snprintf(pattern, sizeof(pattern), "/sys/kernel/debug/kvm/*-*/%s", name);
	if (glob(pattern, 0, NULL, &g) || g.gl_pathc != 1) {
		globfree(&g);
		return -1;
	}
	f = fopen(g.gl_pathv[0], "r");
	if (f) {
		if (fscanf(f, "%ld", &val) != 1)
			val = -1;
		fclose(f);
	}
	globfree(&g);
	return val;
}

void kt_exits_now(struct kt_exits *e)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	e->t = ts.tv_sec + ts.tv_nsec / 1e9;
	e->io = kt_kvm_vm_stat("io_exits");
	e->mmio = kt_kvm_vm_stat("mmio_exits");
	e->all = kt_kvm_vm_stat("exits");
}

bool kt_exits_window(struct kt_exits *from, struct kt_exits *to, unsigned int start_us,
		     unsigned int len_us)
{
	usleep(start_us);
	kt_exits_now(from);
	usleep(len_us);
	kt_exits_now(to);
	return true;
}

long kt_slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

bool kt_file_has(const char *path, const char *line)
{
	static char buf[65536];

	return kt_slurp(path, buf, sizeof(buf)) >= 0 && strstr(buf, line);
}
