// SPDX-License-Identifier: GPL-2.0-only
/*
 * ctr_reads - run by a guest of the emulated host (L2) on the kvmai
 * counters device: read one counter in a loop for a while, either through
 * the mapped BAR0 (no exits expected) or as a configuration-space
 * register through sysfs, which the kernel reads with mechanism #1, ports
 * 0xcf8/0xcfc (two port accesses, two exits, per read: the path agents
 * reading uncore PCI registers take today).  Port I/O from user space
 * itself (iopl/ioperm) faults in L2 under TCG's nested SVM.  Prints how many reads
 * it made and their cost; the host counts the exits (nested_test.c).
 *
 * Mode none runs the same loop without reads: the exits L2 takes anyway.
 * Mode write maps BAR0 writable (the guest kernel lets root do that), reads
 * for half the time, stores to the clock counter and to the page's last
 * qword (which the mock leaves zero), reads both back and reads for the
 * other half: the device offers BAR0 read-only, so the stores must be
 * dropped and the mapping must keep working.
 *
 *   ctr_reads mapped|pio|none|write SECONDS
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvmai_counters.h>

#include "lib/kt.h"

#define SYS_PCI "/sys/bus/pci/devices"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The first function of class KVMAI_CTRDEV_CLASS, as kvmaistat finds it. */
static int find_device(char *bdf, size_t len)
{
	DIR *d = opendir(SYS_PCI);
	struct dirent *e;
	int found = -1;

	while (d && (e = readdir(d)) && found) {
		char path[320];
		unsigned int class = 0;
		FILE *f;

		snprintf(path, sizeof(path), SYS_PCI "/%s/class", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x", &class) == 1 && class == KVMAI_CTRDEV_CLASS) {
			snprintf(bdf, len, "%s", e->d_name);
			found = 0;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* Reads of the clock counter (offset 0) for @secs; how many. */
static unsigned long read_for(const __u64 *bar0, double secs)
{
	unsigned long reads = 0;
	double t0 = now();

	do {
		for (int i = 0; i < 10000; i++)
			kt_read_once(bar0[0]);
		reads += 10000;
	} while (now() - t0 < secs);
	return reads;
}

/* BAR0 of @bdf through its sysfs resource file, writable if asked; NULL on error. */
static __u64 *map_bar0(const char *bdf, bool writable)
{
	char path[320];
	void *p;
	int fd;

	snprintf(path, sizeof(path), SYS_PCI "/%s/resource0", bdf);
	fd = open(path, writable ? O_RDWR : O_RDONLY);
	p = fd < 0 ? MAP_FAILED :
		mmap(NULL, 4096, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror(path);
		return NULL;
	}
	return p;
}

#define PATTERN 0x5a5a5a5a5a5a5a5aULL
#define LAST (4096 / 8 - 1)

static int write_and_read(const char *bdf, double secs)
{
	__u64 last0, last1, clk0, clk1, clk2;
	__u64 *bar0;
	unsigned long reads;

	bar0 = map_bar0(bdf, true);
	if (!bar0)
		return 1;
	reads = read_for(bar0, secs / 2);
	last0 = kt_read_once(bar0[LAST]);
	clk0 = kt_read_once(bar0[0]);
	/* Announced first: with a VMM that cannot drop them, L2 ends here. */
	printf("ctr_reads write %s storing\n", bdf);
	fflush(stdout);
	kt_write_once(bar0[0], PATTERN);
	kt_write_once(bar0[LAST], PATTERN);
	clk1 = kt_read_once(bar0[0]);
	last1 = kt_read_once(bar0[LAST]);
	reads += read_for(bar0, secs / 2);
	clk2 = kt_read_once(bar0[0]);
	printf("ctr_reads write %s stores 2 last %#llx -> %#llx clock %llu %llu %llu reads %lu\n",
	       bdf, (unsigned long long)last0, (unsigned long long)last1,
	       (unsigned long long)clk0, (unsigned long long)clk1, (unsigned long long)clk2,
	       reads);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int dom, bus, dev, fn;
	double secs, t0, t;
	unsigned long reads = 0;
	char bdf[256], path[320];
	int pio;

	if (argc != 3 || (strcmp(argv[1], "mapped") && strcmp(argv[1], "pio") &&
			  strcmp(argv[1], "none") && strcmp(argv[1], "write"))) {
		fprintf(stderr, "usage: ctr_reads mapped|pio|none|write SECONDS\n");
		return 2;
	}
	pio = !strcmp(argv[1], "pio");
	secs = atof(argv[2]);
	if (find_device(bdf, sizeof(bdf))) {
		fprintf(stderr, "ctr_reads: no kvmai counters device\n");
		return 1;
	}
	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4 || dom)
		return 1;
	if (!strcmp(argv[1], "write"))
		return write_and_read(bdf, secs);
	t0 = now();
	if (!strcmp(argv[1], "none")) {
		do
			reads++;
		while ((t = now()) - t0 < secs);
	} else if (pio) {
		__u32 val;
		int fd;

		/*
		 * Linux on x86 reads the first 256 bytes of configuration
		 * space of domain 0 with mechanism #1 even where ECAM exists:
		 * one dword read is an outl to 0xcf8 and an inl from 0xcfc.
		 */
		snprintf(path, sizeof(path), SYS_PCI "/%s/config", bdf);
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			return 1;
		}
		do {
			for (int i = 0; i < 100; i++) {
				if (pread(fd, &val, 4, 0) != 4) {
					perror(path);
					return 1;
				}
			}
			reads += 100;
		} while ((t = now()) - t0 < secs);
	} else {
		const __u64 *bar0 = map_bar0(bdf, false);

		if (!bar0)
			return 1;
		reads = read_for(bar0, secs);
		t = now();
	}
	printf("ctr_reads %s %s reads %lu seconds %.3f ns_per_read %.1f\n", argv[1], bdf,
	       reads, t - t0, (t - t0) * 1e9 / reads);
	return 0;
}
