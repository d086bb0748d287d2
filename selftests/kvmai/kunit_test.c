// SPDX-License-Identifier: GPL-2.0-only
/*
 * The series' KUnit suites, which the test kernel runs at boot
 * (patches/kernel.config), read back from debugfs: each must have run, and
 * every case of it passed.  They test decisions no emulated host can reach
 * through its own hardware, such as KVM's RDPMC intercept for AMD uncore
 * counters under a mediated vPMU (TCG has no PMU).  A kernel without the
 * series has none of them: the test skips there.
 */
#include <stdio.h>
#include <string.h>

#include "kselftest_harness.h"
#include "lib/sys.h"

static const char *const suites[] = { "kvm_uncore_rdpmc" };

TEST(series_kunit_suites_pass)
{
	static char buf[65536];
	char path[128], *line, *save;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(suites); i++) {
		int ok = 0, failed = 0;

		snprintf(path, sizeof(path), "/sys/kernel/debug/kunit/%s/results", suites[i]);
		if (kt_file_read(path, buf, sizeof(buf)) < 0)
			SKIP(return, "kernel without the series' KUnit suite %s", suites[i]);
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			line += strspn(line, " \t");
			if (!strncmp(line, "not ok ", 7)) {
				failed++;
				TH_LOG("%s: %s", suites[i], line);
			} else if (!strncmp(line, "ok ", 3)) {
				ok++;
			}
		}
		EXPECT_EQ(0, failed) TH_LOG("suite %s failed", suites[i]);
		EXPECT_LT(1, ok) TH_LOG("suite %s: nothing ran", suites[i]);
		TH_LOG("%s: %d results ok", suites[i], ok);
	}
}

TEST_HARNESS_MAIN
