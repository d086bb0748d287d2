// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the nested tests count while a guest of the emulated host (L2)
 * runs: L1's KVM statistics of the one VM it runs, L2's QEMU, around the
 * read loops L2 announces in its results file.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "l2.h"

long kt_l2_stat(const char *name)
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

void kt_l2_exits_now(struct kt_l2_exits *e)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	e->t = ts.tv_sec + ts.tv_nsec / 1e9;
	e->io = kt_l2_stat("io_exits");
	e->mmio = kt_l2_stat("mmio_exits");
	e->all = kt_l2_stat("exits");
}

bool kt_l2_exits_window(struct kt_l2_exits *from, struct kt_l2_exits *to,
			unsigned int start_us, unsigned int len_us)
{
	usleep(start_us);
	kt_l2_exits_now(from);
	usleep(len_us);
	kt_l2_exits_now(to);
	return true;
}

/*
 * Quiet stretches, in order: runs of samples with the same io_exits that
 * last @quiet_s or more.  The first counts as the level before the loop
 * until one at least @min_rise higher comes: the loop's end.  A smaller
 * rise between them (the tail of the console line that announced the
 * loop) moves the level before it up, so only the loop is counted.
 */
long kt_l2_io_rise(const struct kt_l2_exits *s, int n, double quiet_s, long min_rise)
{
	long before = -1;
	int i = 0;

	while (i < n) {
		int j = i;

		while (j + 1 < n && s[j + 1].io == s[i].io)
			j++;
		if (s[i].io >= 0 && s[j].t - s[i].t >= quiet_s) {
			if (before >= 0 && s[i].io - before >= min_rise)
				return s[i].io - before;
			before = s[i].io;
		}
		i = j + 1;
	}
	return -1;
}

/* Tracepoint kvm:kvm_msr's id, from tracefs wherever it is mounted, or -errno. */
static long kvm_msr_event_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/kvm/kvm_msr/id",
		"/sys/kernel/debug/tracing/events/kvm/kvm_msr/id",
		NULL,
	};
	long id = -ENOENT;

	for (int i = 0; paths[i] && id < 0; i++) {
		FILE *f = fopen(paths[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%ld", &id) != 1)
			id = -EINVAL;
		fclose(f);
	}
	return id;
}

int kt_l2_msr_exits_open(struct kt_l2_msr_exits *c, __u32 msr)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char filter[64];
	long id = kvm_msr_event_id();
	int ret = 0;

	c->n = 0;
	if (id < 0)
		return id;
	if (cpus < 1 || cpus > KT_L2_MAX_CPUS)
		return -ERANGE;
	attr.config = id;
	/* write is 0 for RDMSR, answered (exception 0) or refused (1). */
	snprintf(filter, sizeof(filter), "ecx == %#x && write == 0", msr);
	for (int cpu = 0; cpu < cpus && !ret; cpu++) {
		int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);

		if (fd < 0) {
			ret = -errno;
			break;
		}
		c->fd[c->n++] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter))
			ret = -errno;
	}
	if (ret)
		kt_l2_msr_exits_close(c);
	return ret;
}

long kt_l2_msr_exits_read(const struct kt_l2_msr_exits *c)
{
	long sum = 0;

	for (int i = 0; i < c->n; i++) {
		__u64 val;

		if (read(c->fd[i], &val, sizeof(val)) != sizeof(val))
			return -1;
		sum += val;
	}
	return c->n ? sum : -1;
}

void kt_l2_msr_exits_close(struct kt_l2_msr_exits *c)
{
	while (c->n > 0)
		close(c->fd[--c->n]);
}
