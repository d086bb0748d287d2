// SPDX-License-Identifier: GPL-2.0-only
/*
 * A guest of the emulated host (L2) given a kvmai counters device the way
 * an operator gives it: the VM owns the unit (pmu assign), the operator
 * creates the mediated device and Debian's QEMU gets it as
 * -device vfio-pci,sysfsdev=...; no VMM change.  In L2 a stock kernel and
 * kvmaistat find the device by class and capability, and must report the
 * rates the test-only mock provider generates; read loops in L2 must leave
 * no I/O or MMIO exit in L1's KVM statistics through the mapping, and two
 * per read through ports 0xcf8/0xcfc; revocation must reach kvmaistat.
 * The L2 side is vmhost/l2/counters.sh.
 *
 * A guest store to the read-only BAR0 must be dropped with the VM running
 * on: that takes kvm-ai's QEMU patches (patches/qemu/; Debian's QEMU ends
 * the VM), which the nested profile puts in the emulated host.  The
 * L2 side is vmhost/l2/ctr-write.sh.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/pmu.h"
#include "lib/counters.h"
#include "lib/l2.h"

#define BW "mock_bw"
#define WORK "/tmp/l2-counters"
#define OUT WORK ".out"
/* The loops without reads and mapped: 6 s from 1 s after L2 announces each; count 3 s. */
#define WINDOW_START_US 1500000
#define WINDOW_US 3000000

FIXTURE(l2ctr) {
	struct kt_nl nl;
	char pkg0[64];
	char uuid[64];
	pid_t l2;
};

FIXTURE_SETUP(l2ctr)
{
	self->l2 = -1;
	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	if (access(KT_MOCK_COUNTERS_PATH, F_OK))
		SKIP(return, "no %s: this kernel has no mediated devices", KT_MOCK_COUNTERS_PATH);
	test_cmd_mod_load(KT_MOD_MOCK_COUNTERS, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	ASSERT_GT(kt_cpu_package(0, self->pkg0, sizeof(self->pkg0)), 0);
}

FIXTURE_TEARDOWN(l2ctr)
{
	struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "l2" };

	if (self->l2 > 0) {
		kill(self->l2, SIGKILL);
		waitpid(self->l2, NULL, 0);
	}
	if (!self->nl.sk)
		return;
	_test_cmd_pmu(&self->nl, &rel, NULL);
	kt_ctrdev_remove_all();
	kt_nl_close(&self->nl);
	EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_COUNTERS));
}

static bool results_have(const char *line)
{
	return kt_file_has(WORK "/results.log", line);
}

/* ctr_reads' line for @mode: its reads, their reads per second in L2, and ns per read. */
static int reads_of(const char *out, const char *mode, unsigned long *reads, double *per_s,
		    double *ns)
{
	char key[32];
	double secs;
	const char *p;

	snprintf(key, sizeof(key), "ctr_reads %s ", mode);
	p = strstr(out, key);
	if (!p || sscanf(p + strlen(key), "%*s reads %lu seconds %lf ns_per_read %lf",
			 reads, &secs, ns) != 3 || secs <= 0 || !*reads)
		return -1;
	*per_s = *reads / secs;
	return 0;
}

/*
 * L1's KVM statistics every 100 ms until L2 says @until, or its l2-run
 * @l2 ends (its wait status in @status): how many samples.
 */
static int sample_until(pid_t l2, int *status, const char *until, struct kt_l2_exits *s,
			int max)
{
	int n = 0;

	while (n < max) {
		kt_l2_exits_now(&s[n++]);
		if (results_have(until) || waitpid(l2, status, WNOHANG))
			break;
		usleep(100000);
	}
	return n;
}

/* Every rate in kvmaistat's JSON line @p against the mock's parameters. */
static int check_rates(struct __test_metadata *_metadata, const char *p)
{
	static const struct {
		const char *key, *param;
	} rates[] = {
		{ "\"in_gbps\":", "pcie_in_mbps" }, { "\"out_gbps\":", "pcie_out_mbps" },
		{ "\"read_gbps\":", "mem_read_mbps" }, { "\"write_gbps\":", "mem_write_mbps" },
	};
	const char *end = strchr(p, '\n');
	int checked = 0;

	for (unsigned int r = 0; r < 4; r++) {
		const char *q = p;
		int index = 0;

		/* Stack or channel i runs at (i + 1) times the parameter. */
		while ((q = strstr(q, rates[r].key)) && (!end || q < end)) {
			double got = atof(q + strlen(rates[r].key));
			double want = kt_mock_counters_param(rates[r].param) / 1000.0 * ++index;

			EXPECT_LT(got, want * 1.01)
				TH_LOG("%s%f GB/s, generated %f", rates[r].key, got, want);
			EXPECT_GT(got, want * 0.99)
				TH_LOG("%s%f GB/s, generated %f", rates[r].key, got, want);
			checked++;
			q++;
		}
	}
	return checked;
}

/*
 * As an operator gives a VM the unit's counters: the VM "l2" owns BW on
 * package 0, the unit's device is created, and L2 boots with it, by
 * "l2-run @l2run -w WORK -- @qemu -device vfio-pci,sysfsdev=..." with its
 * output in OUT; self->l2 is that l2-run.
 */
static void start_l2(struct __test_metadata *_metadata, struct _test_data_l2ctr *self,
		     const char *l2run, const char *qemu)
{
	struct kt_pmu_req own = {
		.cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "l2", .units = { BW }, .cpus = self->pkg0,
	};
	char cmd[512];

	test_cmd_pmu(&own, NULL) TH_LOG("%s", self->nl.ext);
	test_cmd_ctrdev_create(BW, self->uuid, sizeof(self->uuid));
	snprintf(cmd, sizeof(cmd),
		 "l2-run %s -w " WORK " -- %s -device vfio-pci,sysfsdev=/sys/bus/mdev/devices/%s >"
		 OUT " 2>&1", l2run, qemu, self->uuid);
	self->l2 = fork();
	ASSERT_LE(0, self->l2);
	if (!self->l2) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
}

/* What the read loops cost; make bench's bench-l2 scenario shows these lines. */
#define NO_READS_FMT "no reads (the same loop): %ld I/O, %ld MMIO exits (%ld exits of any kind) in %.2f s\n"
#define MAPPED_FMT "mapped: %.0f reads in %.2f s: %ld I/O, %ld MMIO exits (%ld exits of any kind); %.1f ns per read\n"
#define PIO_FMT "0xcf8/0xcfc: %lu reads: %ld I/O exits, %.3f per read; %.1f ns per read\n"
#define STORES_FMT "stores: 2; %lu mapped reads around them; %ld MMIO, %ld I/O exits (%ld of any kind) in %.2f s\n"

TEST_F_TIMEOUT(l2ctr, guest_reads_counters_without_exits, 420)
{
	struct kt_l2_exits n0 = {}, n1 = {}, m0 = {}, m1 = {};
	/* 100 ms apart from "begin pio" to "end pio", 11 s of L2's time. */
	static struct kt_l2_exits ps[600];
	bool none = false, mapped = false, revoked = false;
	double map_rate, map_ns, pio_rate, pio_ns, map_reads;
	unsigned long map_n, pio_n;
	static char out[131072];
	int status = -1, samples = 0, np = 0;
	long pio_exits;
	const char *p;

	start_l2(_metadata, self, "-s counters", "");

	/* Follow L2 through its announcements until it is done. */
	for (int waited = 0; waited < 4000 && !waitpid(self->l2, &status, WNOHANG); waited++) {
		if (!none && results_have("KVMAI-CTR begin none")) {
			none = kt_l2_exits_window(&n0, &n1, WINDOW_START_US, WINDOW_US);
		} else if (!mapped && results_have("KVMAI-CTR begin mapped")) {
			mapped = kt_l2_exits_window(&m0, &m1, WINDOW_START_US, WINDOW_US);
		} else if (!np && results_have("KVMAI-CTR begin pio")) {
			np = sample_until(self->l2, &status, "KVMAI-CTR end pio", ps,
					  ARRAY_SIZE(ps));
		} else if (!revoked && results_have("KVMAI-CTR revoke-now")) {
			struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = "l2" };

			/* Let kvmaistat take a few samples first. */
			usleep(1000000);
			EXPECT_EQ(0, _test_cmd_pmu(&self->nl, &rel, NULL));
			revoked = true;
		}
		usleep(100000);
	}
	self->l2 = -1;
	ASSERT_LE(0, kt_file_read(OUT, out, sizeof(out)));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("l2-run: %#x\n%s", status, out);

	/* kvmaistat in L2: three samples at the generated rates. */
	ASSERT_NE(NULL, strstr(out, "kvmaistat-exit 0")) TH_LOG("%s", out);
	for (p = out; (p = strstr(p, "{\"device\":")) && samples < 3; p++) {
		const char *iv = strstr(p, "\"interval_s\":");

		EXPECT_EQ(8, check_rates(_metadata, p)) TH_LOG("%.300s", p);
		EXPECT_NE(NULL, strstr(p, "\"clock\":\"device\""));
		/* The device's clock keeps L2's time too: kvmaistat ran with -i 1000. */
		ASSERT_NE(NULL, iv);
		EXPECT_GT(atof(iv + strlen("\"interval_s\":")), 0.9) TH_LOG("%.300s", p);
		EXPECT_LT(atof(iv + strlen("\"interval_s\":")), 1.25) TH_LOG("%.300s", p);
		samples++;
	}
	EXPECT_EQ(3, samples) TH_LOG("%s", out);

	/* Exits, counted by L1's KVM over the middle of each read loop. */
	ASSERT_TRUE(none && mapped && np) TH_LOG("L2 never announced its read loops:\n%s", out);
	ASSERT_LE(0, m0.io) TH_LOG("no KVM statistics in /sys/kernel/debug/kvm");
	ASSERT_EQ(0, reads_of(out, "mapped", &map_n, &map_rate, &map_ns)) TH_LOG("%s", out);
	ASSERT_EQ(0, reads_of(out, "pio", &pio_n, &pio_rate, &pio_ns)) TH_LOG("%s", out);
	map_reads = map_rate * (m1.t - m0.t);
	/* At least a tenth of the two exits per read of the loop's reads. */
	pio_exits = kt_l2_io_rise(ps, np, 1.5, pio_n / 5);
	ksft_print_msg(NO_READS_FMT, n1.io - n0.io, n1.mmio - n0.mmio, n1.all - n0.all,
		       n1.t - n0.t);
	ksft_print_msg(MAPPED_FMT, map_reads, m1.t - m0.t, m1.io - m0.io, m1.mmio - m0.mmio,
		       m1.all - m0.all, map_ns);
	ASSERT_LT(0, pio_exits)
		TH_LOG("no 1.5 s quiet around the I/O loop: %d samples, %.1f s, exits %ld to %ld",
		       np, ps[np - 1].t - ps[0].t, ps[0].io, ps[np - 1].io);
	ksft_print_msg(PIO_FMT, pio_n, pio_exits, (double)pio_exits / pio_n, pio_ns);
	ksft_print_msg("per read: port I/O / mapped = %.0fx the time\n", pio_ns / map_ns);
	EXPECT_GE(map_reads, 10000);
	EXPECT_EQ(0, m1.io - m0.io);
	EXPECT_EQ(0, m1.mmio - m0.mmio);
	/*
	 * Two port I/O exits per read (0xcf8, then 0xcfc), counted over the
	 * whole loop against its exact number of reads.  (An estimate of the
	 * reads in a window, from L2's average rate, read 1.45 to 2.12 under
	 * load.)  L2 takes no other port I/O exit meanwhile: the loop without
	 * reads takes none.
	 */
	EXPECT_GE((double)pio_exits / pio_n, 1.98);
	EXPECT_LE((double)pio_exits / pio_n, 2.02);

	/* Revocation: kvmaistat saw all ones, then the revoked state. */
	EXPECT_TRUE(revoked);
	EXPECT_NE(NULL, strstr(out, "unit " BW " was revoked by the host")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "kvmaistat-exit 3")) TH_LOG("%s", out);
	EXPECT_EQ(0, kt_perf_try(BW, 0, false)) TH_LOG("the host did not regain " BW);
}

TEST_F_TIMEOUT(l2ctr, guest_store_to_counters_is_dropped, 300)
{
	unsigned long long last0, last1, clk0, clk1, clk2;
	bool begun = false, ended = false;
	struct kt_l2_exits w0 = {}, w1 = {};
	static char out[65536], qlog[65536];
	unsigned long reads;
	int status = -1, n;
	const char *p;

	ASSERT_EQ(0, access(KT_KVMAI_QEMU, X_OK))
		TH_LOG(KT_KVMAI_QEMU_MISSING);
	/* -d guest_errors: QEMU says what it dropped, on its stderr (qemu.log). */
	start_l2(_metadata, self, "-q " KT_KVMAI_QEMU " -s ctr-write", "-d guest_errors");
	for (int waited = 0; waited < 2500 && !waitpid(self->l2, &status, WNOHANG); waited++) {
		if (!begun && results_have("KVMAI-CTR begin write")) {
			kt_l2_exits_now(&w0);
			begun = true;
		} else if (begun && !ended && results_have("KVMAI-CTR end write")) {
			kt_l2_exits_now(&w1);
			ended = true;
		}
		usleep(100000);
	}
	self->l2 = -1;
	ASSERT_LT(0, kt_file_read(OUT, out, sizeof(out)));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("l2-run: %#x\n%s", status, out);
	ASSERT_TRUE(begun && ended) TH_LOG("L2 did not get through its stores:\n%s", out);

	/* L2 lived on, its stores changed nothing, and the mapping kept counting. */
	p = strstr(out, "ctr_reads write ");
	p = p ? strstr(p, " stores 2 ") : NULL;
	ASSERT_NE(NULL, p) TH_LOG("%s", out);
	n = sscanf(p, " stores 2 last %llx -> %llx clock %llu %llu %llu reads %lu",
		   &last0, &last1, &clk0, &clk1, &clk2, &reads);
	ASSERT_EQ(6, n) TH_LOG("%s", p);
	EXPECT_EQ(last0, last1);
	EXPECT_NE(0x5a5a5a5a5a5a5a5aULL, clk1);
	EXPECT_LE(clk0, clk1);
	EXPECT_LT(clk1, clk2) TH_LOG("the device's clock stopped after the stores");
	EXPECT_NE(NULL, strstr(out, "ctr_reads-exit 0")) TH_LOG("%s", out);

	/* Each store exited to QEMU (a read-only slot); the reads did not. */
	ASSERT_LE(0, w0.mmio) TH_LOG("no KVM statistics in /sys/kernel/debug/kvm");
	ksft_print_msg(STORES_FMT, reads, w1.mmio - w0.mmio, w1.io - w0.io, w1.all - w0.all,
		       w1.t - w0.t);
	EXPECT_GE(w1.mmio - w0.mmio, 2);
	EXPECT_LT(w1.mmio - w0.mmio, 100);
	EXPECT_GE(reads, 10000);

	/* QEMU said which writes it dropped. */
	ASSERT_LT(0, kt_file_read(WORK "/qemu.log", qlog, sizeof(qlog)));
	p = strstr(qlog, "to read-only region");
	ASSERT_NE(NULL, p) TH_LOG("qemu.log:\n%s", qlog);
	while (p > qlog && p[-1] != '\n')
		p--;
	ksft_print_msg("QEMU: %.*s\n", (int)strcspn(p, "\n"), p);
}

TEST_HARNESS_MAIN
