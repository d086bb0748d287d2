// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmaictl end to end in the emulated host: the operator's commands drive
 * the module, and topo's verdict for gpu0-nic0 follows what they did.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"

#define KVMAICTL "/kvmai/bin/kvmaictl"

/* The value of "key" in topo's JSON object for the gpu0/nic0 pair. */
static void pair_field(const char *json, const char *key, char *val, size_t len)
{
	const char *p = strstr(json, "\"gpu\":\"gpu0\",\"nic\":\"nic0\"");
	char pat[64];

	val[0] = '\0';
	if (!p)
		return;
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	p = strstr(p, pat);
	if (p) {
		p += strlen(pat);
		snprintf(val, len, "%.*s", (int)strcspn(p, "\""), p);
	}
}

FIXTURE(cli) {
	char out[65536];
	char saved[2][64];
};

/* kvmaictl with the arguments @fmt makes: its exit status, its output in self->out. */
#define ctl(fmt, ...) kt_sh(self->out, sizeof(self->out), KVMAICTL " " fmt, ##__VA_ARGS__)

FIXTURE_SETUP(cli)
{
	if (!kt_dev("gpu0") || access(KVMAICTL, X_OK))
		SKIP(return, "not in the emulated host (no device map or %s)", KVMAICTL);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, kt_pci_driver(kt_dev("gpu0")->bdf, self->saved[0], 64));
	ASSERT_EQ(0, kt_pci_driver(kt_dev("nic0")->bdf, self->saved[1], 64));
	test_cmd_pci_bind(kt_dev("gpu0")->bdf, "vfio-pci");
	test_cmd_pci_bind(kt_dev("nic0")->bdf, "vfio-pci");
}

FIXTURE_TEARDOWN(cli)
{
	if (!kt_dev("gpu0"))
		return;
	_test_cmd_mod_unload(KT_MOD_KVMAI);
	_test_cmd_pci_bind(kt_dev("gpu0")->bdf, "");
	_test_cmd_pci_bind(kt_dev("nic0")->bdf, "");
}

TEST_F(cli, topo_follows_a_translated_group)
{
	char val[64];

	ASSERT_EQ(0, ctl("-j topo"));
	pair_field(self->out, "path", val, sizeof(val));
	EXPECT_STREQ("PIX", val);
	pair_field(self->out, "verdict", val, sizeof(val));
	EXPECT_STREQ("root-complex", val) TH_LOG("%s", self->out);

	ASSERT_EQ(0, ctl("group add gt vm vm1"));
	ASSERT_EQ(0, ctl("dev add gt %s", kt_dev("gpu0")->bdf)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ctl("dev add gt %s", kt_dev("nic0")->bdf)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ctl("group enable gt"))
		TH_LOG("%s", self->out);

	ASSERT_EQ(0, ctl("-j topo"));
	pair_field(self->out, "verdict", val, sizeof(val));
	EXPECT_STREQ("direct-translated", val) TH_LOG("%s", self->out);

	ASSERT_EQ(0, ctl("group del gt"));
	ASSERT_EQ(0, ctl("-j topo"));
	pair_field(self->out, "verdict", val, sizeof(val));
	EXPECT_STREQ("root-complex", val);
}

TEST_F(cli, refusals_are_one_line_with_the_kernel_reason)
{
	ASSERT_EQ(0, ctl("group add gd vm vm1 mode direct"));
	ASSERT_EQ(0, ctl("dev add gd %s", kt_dev("gpu0")->bdf));
	ASSERT_EQ(0, ctl("dev add gd %s", kt_dev("nic0")->bdf));
	EXPECT_EQ(1, ctl("group enable gd"));
	EXPECT_NE(NULL, strstr(self->out, "Error: group enable: direct mode:"))
		TH_LOG("%s", self->out);
	EXPECT_EQ(NULL, strchr(self->out, '\n') ? strchr(strchr(self->out, '\n') + 1, '\n') : NULL)
		TH_LOG("more than one line: %s", self->out);
	EXPECT_EQ(1, ctl("group del nosuch"));
	EXPECT_NE(NULL, strstr(self->out, "no group nosuch")) TH_LOG("%s", self->out);
	EXPECT_EQ(2, ctl("group add"));
	EXPECT_EQ(0, ctl("group del gd"));
}

/* VFs the host creates appear in topo with their PF and number. */
TEST_F(cli, topo_lists_new_vfs_with_their_pf)
{
	const char *pf = kt_dev("nic3")->bdf;
	char want[128], ignored[256];

	ASSERT_EQ(0, kt_sh(self->out, sizeof(self->out),
			   "echo 2 > /sys/bus/pci/devices/%s/sriov_numvfs", pf))
		TH_LOG("%s", self->out);
	EXPECT_EQ(0, ctl("-j topo"));
	kt_sh(ignored, sizeof(ignored), "echo 0 > /sys/bus/pci/devices/%s/sriov_numvfs", pf);
	ASSERT_NE(NULL, strstr(self->out, "\"vfs\":[{")) TH_LOG("%s", self->out);
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "\"pf\":\"%s\",\"pf_name\":\"nic3\",\"index\":%d,",
			 pf, i);
		EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no %s in:\n%s", want, self->out);
	}
	/* As a VF names its PF: a BAR's "index" is no VF's. */
	snprintf(want, sizeof(want), "\"pf\":\"%s\",\"pf_name\":\"nic3\",\"index\":2,", pf);
	EXPECT_EQ(NULL, strstr(self->out, want)) TH_LOG("a third VF");
}

/*
 * A recording of the emulated host (check record) reads as the host
 * itself: topo and check give the same answers from it as live.
 */
TEST_F(cli, a_recording_reads_as_the_machine)
{
	static const char *const cmds[] = { "-j topo", "-j topo matrix", "-j topo tree",
					    "-j check" };

	ASSERT_EQ(0, kt_sh(self->out, sizeof(self->out),
			   "rm -rf /tmp/kvmai-rec && " KVMAICTL " check record /tmp/kvmai-rec"))
		TH_LOG("%s", self->out);
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(0, kt_sh(self->out, sizeof(self->out),
				   KVMAICTL " %s > /tmp/kvmai-live.json; "
				   KVMAICTL " %s --root /tmp/kvmai-rec > /tmp/kvmai-rec.json; "
				   "diff /tmp/kvmai-live.json /tmp/kvmai-rec.json",
				   cmds[i], cmds[i]))
			TH_LOG("%s differs:\n%s", cmds[i], self->out);
	}
	kt_sh(self->out, sizeof(self->out), "rm -rf /tmp/kvmai-rec /tmp/kvmai-*.json");
}

TEST(without_module_group_add_fails_cleanly)
{
	char out[4096];

	if (!kt_dev("gpu0") || access(KVMAICTL, X_OK))
		SKIP(return, "not in the emulated host");
	test_cmd_mod_unload(KT_MOD_KVMAI);
	EXPECT_EQ(1, kt_sh(out, sizeof(out), KVMAICTL " group add g vm vm1"));
	EXPECT_NE(NULL, strstr(out, "kvmai module not loaded")) TH_LOG("%s", out);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
}

TEST_HARNESS_MAIN
