// SPDX-License-Identifier: GPL-2.0-only
/*
 * How late do timer wakeups arrive on each vCPU of the emulated host?
 *
 * An emulator diagnostic, not a test: one thread per online CPU, pinned to
 * it, sleeps for a short period again and again (so that CPU keeps entering
 * and leaving NOHZ idle, as a busybox guest does between test steps) and
 * records how far past its deadline each wakeup came.  A wakeup the
 * emulator loses shows up as lateness of seconds, until some other interrupt
 * happens to run that vCPU; that is what makes the guest kernel report
 * "rcu_preempt kthread timer wakeup didn't happen".
 *
 *   timer_probe [SECONDS [PERIOD_US]]      (default 60 s, 2000 us)
 *
 * Prints one line per CPU and a total; exits 0 whatever it measured.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct probe {
	pthread_t thread;
	int cpu;
	long long sleeps;
	double late_max_ms;
	double late_sum_ms;
	long long late_100ms;	/* wakeups more than 100 ms late */
	long long late_1s;	/* ... more than 1 s late: a lost wakeup */
};

static double seconds_total;
static long period_us;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct probe *p = arg;
	struct timespec req = { .tv_sec = period_us / 1000000,
				.tv_nsec = (period_us % 1000000) * 1000 };
	double end, t0, late;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(p->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "timer_probe: cpu%d: sched_setaffinity: %s\n", p->cpu,
			strerror(errno));
	end = now_s() + seconds_total;
	while ((t0 = now_s()) < end) {
		while (clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == EINTR)
			;
		late = (now_s() - t0) * 1e3 - period_us / 1e3;
		p->sleeps++;
		p->late_sum_ms += late;
		if (late > p->late_max_ms)
			p->late_max_ms = late;
		if (late > 100)
			p->late_100ms++;
		if (late > 1000) {
			p->late_1s++;
			printf("timer_probe: cpu%d: wakeup %.3f s late at %.1f s\n", p->cpu,
			       late / 1e3, seconds_total - (end - t0));
			fflush(stdout);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct probe *probes;
	long long lost = 0, slow = 0, sleeps = 0;
	double worst = 0;
	int i;

	seconds_total = argc > 1 ? atof(argv[1]) : 60;
	period_us = argc > 2 ? atol(argv[2]) : 2000;
	if (seconds_total <= 0 || period_us <= 0 || ncpu < 1) {
		fprintf(stderr, "usage: timer_probe [SECONDS [PERIOD_US]]\n");
		return 2;
	}
	probes = calloc(ncpu, sizeof(*probes));
	if (!probes)
		return 1;
	for (i = 0; i < ncpu; i++) {
		probes[i].cpu = i;
		if (pthread_create(&probes[i].thread, NULL, run, &probes[i])) {
			fprintf(stderr, "timer_probe: cannot start thread %d\n", i);
			return 1;
		}
	}
	for (i = 0; i < ncpu; i++) {
		struct probe *p = &probes[i];

		pthread_join(p->thread, NULL);
		printf("timer_probe: cpu%d: %lld sleeps of %ld us, late mean %.2f ms max %.1f ms, "
		       ">100ms %lld, >1s %lld\n", p->cpu, p->sleeps, period_us,
		       p->sleeps ? p->late_sum_ms / p->sleeps : 0, p->late_max_ms,
		       p->late_100ms, p->late_1s);
		sleeps += p->sleeps;
		slow += p->late_100ms;
		lost += p->late_1s;
		if (p->late_max_ms > worst)
			worst = p->late_max_ms;
	}
	printf("timer_probe: total: %ld cpus, %.0f s, %lld sleeps, max late %.1f ms, "
	       ">100ms %lld, >1s %lld\n", ncpu, seconds_total, sleeps, worst, slow, lost);
	free(probes);
	return 0;
}
