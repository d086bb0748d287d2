// SPDX-License-Identifier: GPL-2.0-only
/*
 * msr_reads - run by a guest of the emulated host (L2): read one MSR of
 * CPU 0 in a loop for a while through /dev/cpu/0/msr, as a monitoring
 * agent reads an uncore counter, from a thread pinned to CPU 0 so that the
 * kernel executes RDMSR in place.  Prints how many reads it made, how many
 * the kernel refused (a #GP, e.g. an MSR KVM does not know) and their
 * cost; the host counts the exits (nested_uncore_test.c).
 *
 *   msr_reads SECONDS MSR
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long reads = 0, refused = 0;
	__u64 val;
	double secs, t0, t;
	cpu_set_t cpu0;
	off_t msr;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: msr_reads SECONDS MSR\n");
		return 2;
	}
	secs = atof(argv[1]);
	msr = strtoul(argv[2], NULL, 0);
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0)) {
		perror("msr_reads: CPU 0");
		return 1;
	}
	fd = open("/dev/cpu/0/msr", O_RDONLY);
	if (fd < 0) {
		perror("msr_reads: /dev/cpu/0/msr");
		return 1;
	}
	t0 = now();
	do {
		for (int i = 0; i < 100; i++)
			if (pread(fd, &val, sizeof(val), msr) != sizeof(val))
				refused++;
		reads += 100;
	} while ((t = now()) - t0 < secs);
	printf("msr_reads %#llx reads %lu refused %lu seconds %.3f ns_per_read %.1f\n",
	       (unsigned long long)msr, reads, refused, t - t0, (t - t0) * 1e9 / reads);
	close(fd);
	return 0;
}
