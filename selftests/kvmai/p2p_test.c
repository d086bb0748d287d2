// SPDX-License-Identifier: GPL-2.0-only
/*
 * P2P groups in the emulated AI host.  Every ACS word is checked by reading
 * config space through sysfs, independently of the module: before, during
 * and after, bit for bit, on every port of the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kvm.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kvmai.h>
#include <netlink/attr.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/group.h"
#include "lib/counters.h"

/*
 * Endpoints the tests pass to "the VM": bound to vfio-pci for the run of
 * the binary (main()), and again by a case's setup where the case before
 * unbound one.  Binding them per case cost 30 cases x 11 host-driver
 * removes and probes: more than half of this binary's time under TCG.
 */
static const char *const vm_devs[] = { "gpu0", "gpu1", "nic0", "nic1", "gpu2", "gpu3",
				       "nic2", "gpu4", "gpu5", "nic3", "foreign1" };
#define NVM (ARRAY_SIZE(vm_devs))

FIXTURE(p2p) {
	struct kt_nl nl;
	struct kt_acs before;
	struct kt_group g;
};

FIXTURE_SETUP(p2p)
{
	char drv[NVM][64];
	size_t bound;

	if (!kt_dev("gpu0"))
		SKIP(return, "no device map at %s: not in the emulated host", KT_DEVICES_FILE);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	bound = kt_dev_bind_vfio(vm_devs, NVM, drv);
	ASSERT_EQ(NVM, bound) TH_LOG("cannot bind %s to vfio-pci", vm_devs[bound]);
	kt_acs_snap(&self->before);
	ASSERT_GE(self->before.n, 10);
}

FIXTURE_TEARDOWN(p2p)
{
	struct kt_acs after;
	char diff[1024];

	if (!self->nl.sk)
		return;
	/* A VF case that stopped half-way: its VFs, then the mock that moved them. */
	if (kt_mod_loaded(KT_MOD_MOCK_VFBUS)) {
		char path[128];

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_numvfs",
			 kt_dev_bdf("nic3"));
		kt_sysfs_write(path, "0");
		_test_cmd_mod_unload(KT_MOD_MOCK_VFBUS);
	}
	/* Whatever a test left behind goes now; the host must be as before. */
	_test_cmd_mod_unload(KT_MOD_KVMAI);
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff)))
		TH_LOG("ACS not restored:%s", diff);
	kt_nl_close(&self->nl);
}

/* Shorthands: requests by command word. */
static int req(struct _test_data_p2p *self, __u8 cmd, const char *name, const char *pci,
	       __u32 mode, __u32 state)
{
	struct kt_req r = { .cmd = cmd, .name = name, .pci = pci, .mode = mode,
			    .state = state, .vm = cmd == KVMAI_CMD_GROUP_NEW ? "vm-test" : NULL };

	return _test_cmd_group(&self->nl, &r, &self->g);
}

static int make_group(struct _test_data_p2p *self, const char *name, __u32 mode,
		      const char *const *members, int n)
{
	int ret = req(self, KVMAI_CMD_GROUP_NEW, name, NULL, mode, 0);

	for (int i = 0; !ret && i < n; i++)
		ret = req(self, KVMAI_CMD_DEV_ADD, name, kt_dev_bdf(members[i]), 0, 0);
	return ret;
}

static int get_group(struct _test_data_p2p *self, const char *name)
{
	return req(self, KVMAI_CMD_GROUP_GET, name, NULL, 0, 0);
}

static __u32 module_features(struct _test_data_p2p *self)
{
	struct kt_status st = {};

	_test_cmd_status_get(&self->nl, &st);
	return st.features;
}

/* Direct mode needs to know who opens members (patches/0002). */
static bool direct_mode(struct _test_data_p2p *self)
{
	return module_features(self) & KVMAI_FEATURE_VFIO_NOTIFY;
}

#define NO_DIRECT "kernel without vfio device notifications (patches/0002): direct mode refused"

TEST_F(p2p, translated_sets_dt_only_between_members)
{
	static const char *const m[] = { "gpu0", "nic0" };
	struct kt_acs during, after;
	char diff[1024], out[16384], cmd[64];

	ASSERT_EQ(0, make_group(self, "g1", KVMAI_MODE_TRANSLATED, m, 2))
		TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g1", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);

	kt_acs_snap(&during);
	EXPECT_EQ(2, kt_acs_diff(&self->before, &during, diff, sizeof(diff))) TH_LOG("%s", diff);
	for (int i = 0; i < 2; i++) {
		__u16 was = kt_dev_acs(&self->before, m[i]);

		EXPECT_EQ(was | PCI_ACS_DT, kt_dev_acs_now(m[i]))
			TH_LOG("port %s of %s", kt_dev_port(m[i]), m[i]);
		EXPECT_EQ(was & 0x1f, kt_dev_acs_now(m[i]) & 0x1f) TH_LOG("SV/TB/RR/CR/UF moved");
	}
	snprintf(cmd, sizeof(cmd), "lspci -vvv -s %s", kt_dev_port("gpu0"));
	ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "DirectTrans+")) TH_LOG("%s", out);

	ASSERT_EQ(0, get_group(self, "g1"));
	EXPECT_EQ(KVMAI_STATE_ENABLED, self->g.state);
	EXPECT_EQ(2, self->g.nmembers);
	ASSERT_EQ(2, self->g.nports);
	for (int i = 0; i < 2; i++) {
		struct kt_port *p = &self->g.ports[i];

		EXPECT_EQ(kt_acs_word(&self->before, p->addr), p->saved);
		EXPECT_EQ(p->saved | PCI_ACS_DT, p->target);
		EXPECT_EQ(p->target, p->current);
		EXPECT_EQ(1, p->users);
	}
	ASSERT_EQ(1, self->g.npairs);
	EXPECT_EQ(KVMAI_PATH_TYPE_HOST_BRIDGE, self->g.pairs[0].type);
	EXPECT_STREQ("pci0000:10", self->g.pairs[0].via);

	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g1", NULL, 0, KVMAI_STATE_DISABLED));
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "g1", NULL, 0, 0));
	EXPECT_EQ(-ENOENT, get_group(self, "g1"));
}

TEST_F(p2p, two_translated_groups_share_a_switch)
{
	static const char *const a[] = { "gpu0", "nic0" }, *const b[] = { "gpu1", "nic1" };
	struct kt_acs during;
	char diff[1024];

	ASSERT_EQ(0, make_group(self, "ga", KVMAI_MODE_TRANSLATED, a, 2));
	ASSERT_EQ(0, make_group(self, "gb", KVMAI_MODE_TRANSLATED, b, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "ga", NULL, 0, KVMAI_STATE_ENABLED));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gb", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	kt_acs_snap(&during);
	EXPECT_EQ(4, kt_acs_diff(&self->before, &during, diff, sizeof(diff))) TH_LOG("%s", diff);

	/* Disabling one leaves the other's ports alone. */
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "ga", NULL, 0, KVMAI_STATE_DISABLED));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu1") | PCI_ACS_DT, kt_dev_acs_now("gpu1"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic1") | PCI_ACS_DT, kt_dev_acs_now("nic1"));
}

/*
 * nic3 (igb, no ATS) and foreign1 (not in the VM) sit below one ACS root
 * port of sw2, via an x3130.  DT there would let either send translated
 * requests past the IOMMU to gpu4: translated mode refuses, naming the
 * device below the port, and changes nothing.
 */
#define FAIL_RESTORES "/sys/module/kvmai/parameters/fail_restores"

static __s64 restore_pending(struct _test_data_p2p *self)
{
	struct kt_status st = { .restore_pending = -2 };

	_test_cmd_status_get(&self->nl, &st);
	return st.restore_pending;
}

/*
 * A restore that fails (fault injection: the next 15 restore writes) is not
 * forgotten: the port stays kvmai's, is reported, blocks new plans through
 * it, and is retried until the saved word is back.
 */
TEST_F(p2p, failed_restore_is_kept_and_retried)
{
	static const char *const m[] = { "gpu0", "nic0" };
	const char *p = kt_dev_port("gpu0");
	FILE *f;
	int i;

	ASSERT_EQ(0, make_group(self, "gf", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gf", NULL, 0, KVMAI_STATE_ENABLED));
	ASSERT_NE(kt_acs_word(&self->before, p), kt_acs_now(p));
	f = fopen(FAIL_RESTORES, "w");
	ASSERT_NE(NULL, f) TH_LOG("kvmai.ko not built with KVMAI_TEST=y");
	fprintf(f, "15\n");
	fclose(f);
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "gf", NULL, 0, 0)) TH_LOG("%s", self->nl.ext);
	/* Both ports of the group failed their first restore. */
	EXPECT_EQ(2, restore_pending(self));
	EXPECT_NE(kt_acs_word(&self->before, p), kt_acs_now(p));
	/* Nothing new may be planned through a port kvmai still owes a restore. */
	ASSERT_EQ(0, make_group(self, "gg", KVMAI_MODE_TRANSLATED, m, 2));
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "gg", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has("restore");
	/* Retried every 200 ms: 15 failures, then the saved words are back. */
	for (i = 0; i < 100 && restore_pending(self) > 0; i++)
		usleep(100 * 1000);
	EXPECT_EQ(0, restore_pending(self));
	EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic0"), kt_dev_acs_now("nic0"));
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gg", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
}

/* The root port above @bdf: the first bridge below its host bridge. */
static void root_port_of(const char *bdf, char *out, size_t len)
{
	char path[128], real[PATH_MAX], *p;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	out[0] = 0;
	if (!realpath(path, real))
		return;
	p = strstr(real, "/pci");
	p = p ? strchr(p + 1, '/') : NULL;
	if (p)
		snprintf(out, len, "%.12s", p + 1);
}

TEST_F(p2p, translated_refused_with_others_below_a_dt_port)
{
	static const char *const m[] = { "gpu4", "nic3" };
	struct kt_acs after;
	char diff[1024], rp[16];

	root_port_of(kt_dev_bdf("nic3"), rp, sizeof(rp));
	ASSERT_EQ(0, make_group(self, "gt", KVMAI_MODE_TRANSLATED, m, 2));
	EXPECT_EQ(-EPERM, req(self, KVMAI_CMD_GROUP_SET, "gt", NULL, 0, KVMAI_STATE_ENABLED));
	EXPECT_NE(NULL, strstr(self->nl.ext, rp)) TH_LOG("extack: %s (port %s)", self->nl.ext, rp);
	EXPECT_TRUE(strstr(self->nl.ext, kt_dev_bdf("nic3")) ||
		    strstr(self->nl.ext, kt_dev_bdf("foreign1")))
		TH_LOG("extack: %s", self->nl.ext);
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	ASSERT_EQ(0, get_group(self, "gt"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
}

TEST_F(p2p, direct_refused_with_foreign_endpoint_on_switch)
{
	/* Every VM device on sw0: only the host's foreign0 is left out. */
	static const char *const m[] = { "gpu0", "gpu1", "nic0", "nic1" };
	struct kt_acs after;
	char diff[1024];

	ASSERT_EQ(0, make_group(self, "gd", KVMAI_MODE_DIRECT, m, 4));
	EXPECT_EQ(-EPERM, req(self, KVMAI_CMD_GROUP_SET, "gd", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has(kt_dev_bdf("foreign0"));
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	ASSERT_EQ(0, get_group(self, "gd"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
}

TEST_F(p2p, direct_clears_redirect_and_reports_bars)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	char path[128], line[256];

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);

	ASSERT_EQ(0, make_group(self, "gd", KVMAI_MODE_DIRECT, m, 3));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gd", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	for (int i = 0; i < 3; i++) {
		__u16 was = kt_dev_acs(&self->before, m[i]);

		EXPECT_EQ(was & ~(PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC), kt_dev_acs_now(m[i]));
		EXPECT_TRUE(kt_dev_acs_now(m[i]) & PCI_ACS_SV);
	}
	ASSERT_EQ(0, get_group(self, "gd"));
	EXPECT_EQ(3, self->g.npairs);
	ASSERT_EQ(3, self->g.nmembers);
	for (int i = 0; i < 3; i++) {
		struct kt_member *mem = &self->g.members[i];
		unsigned long long start, end, flags;
		FILE *f;
		int found = 0;

		ASSERT_GT(mem->nbars, 0) TH_LOG("%s reports no BAR", mem->addr);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", mem->addr);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%llx %llx %llx", &start, &end, &flags) == 3 &&
			    start == mem->bar_addr[0] && end - start + 1 == mem->bar_size[0])
				found = 1;
		fclose(f);
		EXPECT_TRUE(found) TH_LOG("%s BAR %#llx not in sysfs", mem->addr,
					  (unsigned long long)mem->bar_addr[0]);
	}
}

TEST_F(p2p, owner_killed_restores)
{
	int ready[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kt_req r = { .cmd = KVMAI_CMD_GROUP_NEW, .name = "gk", .vm = "vm-k",
				    .bind_socket = true };
		struct kt_nl nl;

		if (kt_nl_open(&nl) || _test_cmd_group(&nl, &r, NULL))
			_exit(1);
		r = (struct kt_req){ .cmd = KVMAI_CMD_DEV_ADD, .name = "gk",
				     .pci = kt_dev_bdf("gpu0") };
		if (_test_cmd_group(&nl, &r, NULL))
			_exit(2);
		r.pci = kt_dev_bdf("nic0");
		if (_test_cmd_group(&nl, &r, NULL))
			_exit(3);
		r = (struct kt_req){ .cmd = KVMAI_CMD_GROUP_SET, .name = "gk",
				     .state = KVMAI_STATE_ENABLED };
		if (_test_cmd_group(&nl, &r, NULL))
			_exit(4);
		if (write(ready[1], "r", 1) != 1)
			_exit(5);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("child failed to set up its group");
	ASSERT_EQ(0, get_group(self, "gk"));
	EXPECT_TRUE(self->g.bind_socket);
	EXPECT_EQ(KVMAI_STATE_ENABLED, self->g.state);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0") | PCI_ACS_DT, kt_dev_acs_now("gpu0"));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(-ENOENT, get_group(self, "gk"));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic0"), kt_dev_acs_now("nic0"));
}

TEST_F(p2p, member_unbound_disables_and_notifies)
{
	static const char *const m[] = { "gpu0", "nic0" };
	struct kt_nl mon;
	struct kt_group ntf;
	int got = 0;

	ASSERT_EQ(0, kt_nl_monitor_open(&mon));
	ASSERT_EQ(0, make_group(self, "gu", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gu", NULL, 0, KVMAI_STATE_ENABLED));
	test_cmd_pci_bind(kt_dev_bdf("nic0"), "");

	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic0"), kt_dev_acs_now("nic0"));
	ASSERT_EQ(0, get_group(self, "gu"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_GROUP_SET, "gu", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has(kt_dev_bdf("nic0"));

	/* create, 2 x change (dev-add), change (enable), change (disabled by unbind) */
	while (kt_nl_receive_group(&mon, &ntf, 500) == 1)
		if (!strcmp(ntf.name, "gu") && ntf.cmd == KVMAI_CMD_GROUP_CHANGE_NTF &&
		    ntf.state == KVMAI_STATE_DISABLED && ntf.nmembers == 2)
			got++;
	EXPECT_GE(got, 1) TH_LOG("no change notification for the unbind");
	kt_nl_close(&mon);
	test_cmd_pci_bind(kt_dev_bdf("nic0"), "vfio-pci");
}

/*
 * A member of a translated group loses ATS while the group is enabled, as
 * after a function reset that clears ATS Enable: its DT ports would
 * forward requests marked translated that the IOMMU never translated, so
 * the group must close within the ATS watch's period (100 ms), restoring
 * the ports, and say so.
 */
TEST_F(p2p, translated_group_closes_when_a_member_loses_ats)
{
	static const char *const m[] = { "gpu0", "nic0" };
	__u16 ctrl = 0;
	struct kt_nl mon;
	struct kt_group ntf;
	bool enabled = false;
	int ats, got = 0;

	ats = kt_pci_ext_cap(kt_dev_bdf("nic0"), PCI_EXT_CAP_ID_ATS);
	ASSERT_GT(ats, 0);
	ASSERT_EQ(0, kt_pci_read16(kt_dev_bdf("nic0"), ats + PCI_ATS_CTRL, &ctrl));
	ASSERT_TRUE(ctrl & PCI_ATS_CTRL_ENABLE) TH_LOG("nic0 ATS control %#06x: not enabled", ctrl);
	ASSERT_EQ(0, kt_nl_monitor_open(&mon));
	ASSERT_EQ(0, make_group(self, "ga", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "ga", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(kt_dev_acs(&self->before, "nic0") | PCI_ACS_DT, kt_dev_acs_now("nic0"));

	ASSERT_EQ(0, kt_pci_write16(kt_dev_bdf("nic0"), ats + PCI_ATS_CTRL,
				    ctrl & ~PCI_ATS_CTRL_ENABLE));
	usleep(1000 * 1000);
	kt_pci_write16(kt_dev_bdf("nic0"), ats + PCI_ATS_CTRL, ctrl);

	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic0"), kt_dev_acs_now("nic0"));
	ASSERT_EQ(0, get_group(self, "ga"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	/* create, 2 x change (dev-add), change (enabled), then the one to see */
	while (kt_nl_receive_group(&mon, &ntf, 500) == 1) {
		if (strcmp(ntf.name, "ga") || ntf.cmd != KVMAI_CMD_GROUP_CHANGE_NTF)
			continue;
		if (ntf.state == KVMAI_STATE_ENABLED)
			enabled = true;
		else if (enabled)
			got++;
	}
	EXPECT_EQ(1, got) TH_LOG("no change notification for the ATS loss");
	kt_nl_close(&mon);

	/* ATS back on: the group can be enabled again. */
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "ga", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
}

/* The bus number of PCI address @bdf (DDDD:BB:DD.F), ~0 if it has none. */
static unsigned int bus_of(const char *bdf)
{
	const char *p = strchr(bdf, ':');

	return p ? strtoul(p + 1, NULL, 16) : ~0u;
}

static int set_param(const char *param, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/kvmai/parameters/%s", param);
	return kt_sysfs_write(path, val);
}

/*
 * A port whose ACS the PCI core handles through a quirk (controls outside
 * the standard register) is never programmed: the series' override
 * refuses it, and the test-only build makes an emulated port look like
 * one.  The group is refused naming the port, and the port the plan had
 * already changed goes back.
 */
TEST_F(p2p, quirk_port_is_refused_by_name)
{
	static const char *const m[] = { "gpu0", "nic0" };
	struct kt_acs after;
	char diff[1024];

	if (access("/sys/module/kvmai/parameters/acs_quirk_port", F_OK))
		SKIP(return, "kvmai built without KVMAI_TEST");
	ASSERT_EQ(0, make_group(self, "gq", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, set_param("acs_quirk_port", kt_dev_port("nic0")));
	EXPECT_EQ(-EOPNOTSUPP, req(self, KVMAI_CMD_GROUP_SET, "gq", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has(kt_dev_port("nic0"));
	test_ext_has("quirk");
	ASSERT_EQ(0, set_param("acs_quirk_port", ""));
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	ASSERT_EQ(0, get_group(self, "gq"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
}

/*
 * How long the port stays blocked: longer than a loaded CI machine's TCG
 * guest takes from the block to each check.  Its end is waited for in
 * steps of 100 ms, for one and a half times as long.
 */
#define BLOCK_MS 10000
#define BLOCK_WAITS (BLOCK_MS * 3 / 2 / 100)

/*
 * With the series, kvmai never waits for a port whose config access is
 * blocked (a reset under way, error recovery, any other holder of
 * pci_cfg_access_lock()): enabling a group through it fails with EBUSY
 * and changes nothing, and a restore is left pending and retried until
 * the block ends.  The test-only build blocks the port from a work item,
 * for BLOCK_MS: what the test reads while the block lasts must come
 * within it.
 */
TEST_F(p2p, changes_to_a_blocked_port_are_refused_or_retried)
{
	static const char *const m[] = { "gpu0", "nic0" };
	const char *p = kt_dev_port("nic0");
	char arg[64];
	int i, ret;

	if (!(module_features(self) & KVMAI_FEATURE_ACS_OVERRIDE))
		SKIP(return, "kernel without pci_acs_override() (patches/0001)");
	if (access("/sys/module/kvmai/parameters/hold_cfg_access", F_OK))
		SKIP(return, "kvmai built without KVMAI_TEST");
	snprintf(arg, sizeof(arg), "%s %d", p, BLOCK_MS);
	ASSERT_EQ(0, make_group(self, "gw", KVMAI_MODE_TRANSLATED, m, 2));

	ASSERT_EQ(0, set_param("hold_cfg_access", arg));
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "gw", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has(p);
	test_ext_has("being reset");
	EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	EXPECT_EQ(0, restore_pending(self));
	/* Once the block ends, the same request succeeds. */
	for (i = 0; i < BLOCK_WAITS; i++) {
		ret = req(self, KVMAI_CMD_GROUP_SET, "gw", NULL, 0, KVMAI_STATE_ENABLED);
		if (ret != -EBUSY)
			break;
		usleep(100 * 1000);
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(kt_acs_word(&self->before, p) | PCI_ACS_DT, kt_acs_now(p));

	ASSERT_EQ(0, set_param("hold_cfg_access", arg));
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gw", NULL, 0, KVMAI_STATE_DISABLED));
	EXPECT_EQ(1, restore_pending(self));
	EXPECT_EQ(kt_acs_word(&self->before, p) | PCI_ACS_DT, kt_acs_now(p));
	for (i = 0; i < BLOCK_WAITS && restore_pending(self) > 0; i++)
		usleep(100 * 1000);
	EXPECT_EQ(0, restore_pending(self));
	EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
}

/*
 * AER recovery below a port locks the port (device lock, then config
 * access: pci_dev_lock()) and then each device below it; unbinding a
 * member holds the member's device lock while kvmai restores the port.
 * A restore that waited for the port's config access would wait for the
 * recovery, which waits for the member: neither would ever go on, and
 * lockdep does not see config access.  The test-only build's stand-in for
 * the recovery locks the port, waits until the unbind holds the member,
 * then tries for 3 s to take the member's device lock: it must get it, the
 * unbind must end, and the port's word must come back once the stand-in
 * lets go of the port.
 */
TEST_F(p2p, unbind_during_port_error_recovery)
{
	static const char *const m[] = { "gpu0", "nic0" };
	const char *p = kt_dev_port("nic0");
	char arg[64], res[64] = "";
	int status, i;
	pid_t pid;

	if (access("/sys/module/kvmai/parameters/recovery_lock", F_OK))
		SKIP(return, "kvmai built without KVMAI_TEST");
	ASSERT_EQ(0, make_group(self, "ge", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "ge", NULL, 0, KVMAI_STATE_ENABLED));
	ASSERT_NE(kt_acs_word(&self->before, p), kt_acs_now(p));

	snprintf(arg, sizeof(arg), "%s %s 3000", p, kt_dev_bdf("nic0"));
	ASSERT_EQ(0, set_param("recovery_lock", arg));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(_test_cmd_pci_bind(kt_dev_bdf("nic0"), "") ? 1 : 0);
	/* The stand-in gives up after 6 s at most, releasing the port. */
	for (i = 0; i < 100; i++) {
		kt_file_read("/sys/module/kvmai/parameters/recovery_lock", res, sizeof(res));
		res[strcspn(res, "\n")] = 0;
		if (strncmp(res, "running", 7))
			break;
		usleep(100 * 1000);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("unbinding %s failed", kt_dev_bdf("nic0"));
	EXPECT_EQ(0, strncmp(res, "locked", 6))
		TH_LOG("recovery stand-in on %s: %s, not locked: the unbind of %s kept its device lock",
		       p, res, kt_dev_bdf("nic0"));
	/* "locked after waiting": the unbind held the member first, as wanted. */
	TH_LOG("recovery stand-in: %s", res);

	/* The restore the port refused meanwhile is retried every 200 ms. */
	for (i = 0; i < 50 && restore_pending(self) > 0; i++)
		usleep(100 * 1000);
	EXPECT_EQ(0, restore_pending(self));
	EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
	ASSERT_EQ(0, get_group(self, "ge"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	test_cmd_pci_bind(kt_dev_bdf("nic0"), "vfio-pci");
}

TEST_F(p2p, rmmod_while_enabled_restores)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	struct kt_acs after;
	char diff[1024];

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);

	ASSERT_EQ(0, make_group(self, "gr", KVMAI_MODE_DIRECT, m, 3));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gr", NULL, 0, KVMAI_STATE_ENABLED));
	ASSERT_NE(kt_dev_acs(&self->before, "gpu2"), kt_dev_acs_now("gpu2"));
	test_cmd_mod_unload(KT_MOD_KVMAI);
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
}

TEST_F(p2p, unprivileged_mutation_refused)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (!pid) {
		struct kt_req r = { .cmd = KVMAI_CMD_GROUP_NEW, .name = "gp", .vm = "vm" };
		struct kt_req get = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
		struct kt_nl nl;

		if (kt_nl_open_unprivileged(&nl))
			_exit(11);
		if (_test_cmd_group(&nl, &r, NULL) != -EPERM)
			_exit(12);
		/* Reading too: replies carry BAR addresses and tenants' names. */
		_exit(_test_cmd_group(&nl, &get, NULL) != -EPERM ? 13 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed", WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, get_group(self, "gp"));
}

static void put_long_name(struct nl_msg *msg)
{
	nla_put_string(msg, KVMAI_A_GROUP_NAME, "a-group-name-far-longer-than-31-characters");
}

static void put_name_as_u32(struct nl_msg *msg)
{
	nla_put_u32(msg, KVMAI_A_GROUP_NAME, 0x61616161);
}

static void put_bad_mode(struct nl_msg *msg)
{
	nla_put_u32(msg, KVMAI_A_GROUP_MODE, 7);
}

TEST_F(p2p, malformed_and_refused_requests)
{
	static const char *const one[] = { "gpu0" };
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_NEW, .vm = "vm" };

	/* Missing, oversized and wrongly typed attributes. */
	test_err_group(EINVAL, &r, NULL);
	test_ext_has("missing group name");
	r.extra = put_long_name;
	test_err_group(EINVAL, &r, NULL);
	EXPECT_NE(0, self->nl.ext[0]) TH_LOG("no extack for an oversized name");
	r.extra = put_name_as_u32;
	test_err_group(EINVAL, &r, NULL);
	/* The netlink core answers a value outside the spec's enum with ERANGE. */
	r = (struct kt_req){ .cmd = KVMAI_CMD_GROUP_NEW, .name = "gx", .vm = "vm",
			     .extra = put_bad_mode };
	test_err_group(ERANGE, &r, NULL);
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_GROUP_NEW, "", NULL, 0, 0));
	test_ext_has("empty");

	/* Unknown objects. */
	EXPECT_EQ(-ENOENT, req(self, KVMAI_CMD_GROUP_DEL, "nosuch", NULL, 0, 0));
	test_ext_has("nosuch");
	ASSERT_EQ(0, make_group(self, "gx", KVMAI_MODE_TRANSLATED, one, 1));
	EXPECT_EQ(-EEXIST, req(self, KVMAI_CMD_GROUP_NEW, "gx", NULL, 0, 0));
	test_ext_has("gx");
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_DEV_ADD, "gx", "zz:1", 0, 0));
	test_ext_has("zz:1");
	EXPECT_EQ(-ENOENT, req(self, KVMAI_CMD_DEV_ADD, "gx", "0000:7f:1f.7", 0, 0));
	test_ext_has("0000:7f:1f.7");

	/* Devices that may not join. */
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_DEV_ADD, "gx", kt_dev_port("gpu1"), 0, 0));
	test_ext_has(kt_dev_port("gpu1"));
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_DEV_ADD, "gx", kt_dev_bdf("foreign0"), 0, 0));
	test_ext_has("not to vfio-pci");
	EXPECT_EQ(-EEXIST, req(self, KVMAI_CMD_DEV_ADD, "gx", kt_dev_bdf("gpu0"), 0, 0));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_NEW, "gy", NULL, 0, 0));
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_DEV_ADD, "gy", kt_dev_bdf("gpu0"), 0, 0));
	test_ext_has("gx");

	/* State rules. */
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_GROUP_SET, "gx", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has("two");
	ASSERT_EQ(0, req(self, KVMAI_CMD_DEV_ADD, "gx", kt_dev_bdf("nic0"), 0, 0));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gx", NULL, 0, KVMAI_STATE_ENABLED));
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "gx", NULL, KVMAI_MODE_DIRECT, 0));
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_DEV_DEL, "gx", kt_dev_bdf("nic0"), 0, 0));
	EXPECT_EQ(-EINVAL, req(self, KVMAI_CMD_GROUP_SET, "gx", NULL, 0, 0));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gx", NULL, 0, KVMAI_STATE_DISABLED));
	EXPECT_EQ(-ENOENT, req(self, KVMAI_CMD_DEV_DEL, "gx", kt_dev_bdf("gpu1"), 0, 0));
	EXPECT_EQ(0, req(self, KVMAI_CMD_DEV_DEL, "gx", kt_dev_bdf("nic0"), 0, 0));
}

TEST_F(p2p, enable_warns_about_what_stays_on_the_iommu)
{
	static const char *const apart[] = { "gpu0", "gpu2" };

	/* Two NUMA nodes, two host bridges: nothing to program, and it says so. */
	ASSERT_EQ(0, make_group(self, "gn", KVMAI_MODE_TRANSLATED, apart, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gn", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has("share no host bridge");
	ASSERT_EQ(0, get_group(self, "gn"));
	EXPECT_EQ(0, self->g.nports);
	ASSERT_EQ(1, self->g.npairs);
	EXPECT_EQ(KVMAI_PATH_TYPE_NONE, self->g.pairs[0].type);
}

TEST_F(p2p, member_removed_while_enabled)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	char path[128];

	ASSERT_EQ(0, make_group(self, "gm", KVMAI_MODE_TRANSLATED, m, 3));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	ASSERT_NE(kt_dev_acs(&self->before, "gpu3"), kt_dev_acs_now("gpu3"));

	/* Hot-removal of a member: the group closes and forgets it. */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", kt_dev_bdf("gpu3"));
	kt_sysfs_write(path, "1");
	ASSERT_NE(0, access(path, F_OK));
	ASSERT_EQ(0, get_group(self, "gm"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(2, self->g.nmembers);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu2"), kt_dev_acs_now("gpu2"));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu3"), kt_dev_acs_now("gpu3"));

	/* Re-enabling with what is left works; the device comes back unowned. */
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED));
	kt_sysfs_write("/sys/bus/pci/rescan", "1");
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%s did not come back", kt_dev_bdf("gpu3"));
	_test_cmd_pci_bind(kt_dev_bdf("gpu3"), "vfio-pci");
}

/*
 * IOMMU groups come from the kernel's ACS policy, never from an override
 * in force when a device appears (patches/0001): a function removed and
 * rescanned below a port whose redirect controls are overridden off gets
 * its own group again, not its port's.  The test-only build calls
 * pci_acs_override() directly, outside any group.
 */
TEST_F(p2p, iommu_group_ignores_override_at_rescan)
{
	const char *rp = kt_dev_port("gpu1");
	char path[128], arg[64];
	int before;

	if (access("/sys/module/kvmai/parameters/acs_override", F_OK))
		SKIP(return,
		     "kernel without pci_acs_override() (patches/0001), or kvmai without KVMAI_TEST");
	before = kt_pci_iommu_group(kt_dev_bdf("gpu1"));
	ASSERT_GE(before, 0);
	ASSERT_NE(kt_pci_iommu_group(rp), before) TH_LOG("gpu1 shares its port's group at boot");

	snprintf(arg, sizeof(arg), "%s %x 0", rp, PCI_ACS_RR | PCI_ACS_CR);
	ASSERT_EQ(0, set_param("acs_override", arg));
	ASSERT_EQ(0, kt_acs_now(rp) & (PCI_ACS_RR | PCI_ACS_CR));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", kt_dev_bdf("gpu1"));
	kt_sysfs_write(path, "1");
	ASSERT_NE(0, access(path, F_OK));
	kt_sysfs_write("/sys/bus/pci/rescan", "1");
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%s did not come back", kt_dev_bdf("gpu1"));

	EXPECT_NE(kt_pci_iommu_group(rp), kt_pci_iommu_group(kt_dev_bdf("gpu1")))
		TH_LOG("gpu1 joined port %s's IOMMU group %d", rp, kt_pci_iommu_group(rp));
	snprintf(arg, sizeof(arg), "%s 0 0", rp);
	ASSERT_EQ(0, set_param("acs_override", arg));
	EXPECT_EQ(kt_acs_word(&self->before, rp), kt_acs_now(rp));
	_test_cmd_pci_bind(kt_dev_bdf("gpu1"), "vfio-pci");
}

TEST_F(p2p, device_appearing_below_direct_group_disables_it)
{
	static const char *const m[] = { "gpu4", "gpu5", "nic3" };
	char path[128];
	FILE *f;

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);

	/* Take foreign1 away: then every endpoint below sw2 is a member. */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", kt_dev_bdf("foreign1"));
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("1", f);
	fclose(f);
	ASSERT_EQ(0, make_group(self, "gh", KVMAI_MODE_DIRECT, m, 3));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gh", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	ASSERT_NE(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));

	/* A rescan brings it back, below the opened switch: the group closes. */
	f = fopen("/sys/bus/pci/rescan", "w");
	ASSERT_NE(NULL, f);
	fputs("1", f);
	fclose(f);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%s did not come back", kt_dev_bdf("foreign1"));
	ASSERT_EQ(0, get_group(self, "gh"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic3"), kt_dev_acs_now("nic3"));
	/* foreign1 is a new device now: hand it back to vfio-pci for teardown. */
	_test_cmd_pci_bind(kt_dev_bdf("foreign1"), "vfio-pci");
}

/*
 * VFs created while a direct group is enabled are strangers below the
 * bridge where its traffic turns around: the group closes, and enabling it
 * again is refused, naming a VF.  With @vbus the VFs get routing IDs on
 * the bus after their PF's, as the VFs of a PF with many of them do: the
 * kernel puts them on a virtual bus that no bridge leads to and that
 * pci_walk_bus() never visits, yet they are below the PF's port.
 */
static void vfs_below_direct_group(struct __test_metadata *_metadata,
				   struct _test_data_p2p *self, bool vbus)
{
	static const char *const m[] = { "gpu4", "gpu5", "nic3" };
	char path[128], link[128], want[16], vf[PATH_MAX], offset[96];
	unsigned int pf_bus, vf_bus;
	long offset_was;

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);
	snprintf(offset, sizeof(offset), "/sys/bus/pci/devices/%s/sriov_offset",
		 kt_dev_bdf("nic3"));
	offset_was = kt_sysfs_read_long(offset);
	ASSERT_LT(0, offset_was);
	ASSERT_EQ(0, kt_sysfs_write("/sys/module/vfio_pci/parameters/enable_sriov", "Y"));
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", kt_dev_bdf("foreign1"));
	kt_sysfs_write(path, "1");
	if (vbus) {
		char pf[32];

		snprintf(pf, sizeof(pf), "pf=%s", kt_dev_bdf("nic3"));
		test_cmd_mod_load(KT_MOD_MOCK_VFBUS, pf);
	}
	ASSERT_EQ(0, make_group(self, "gv", KVMAI_MODE_DIRECT, m, 3));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gv", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	ASSERT_NE(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/sriov_numvfs", kt_dev_bdf("nic3"));
	ASSERT_EQ(0, kt_sysfs_write(path, "2"));
	/* Where the kernel put the first VF: the PF's bus, or the next. */
	snprintf(link, sizeof(link), "/sys/bus/pci/devices/%s/virtfn0", kt_dev_bdf("nic3"));
	ASSERT_LT(0, readlink(link, vf, sizeof(vf) - 1));
	vf[sizeof(vf) - 1] = '\0';
	pf_bus = bus_of(kt_dev_bdf("nic3"));
	vf_bus = bus_of(basename(vf));
	ASSERT_NE(~0u, vf_bus) TH_LOG("virtfn0 -> %s", vf);
	EXPECT_EQ(pf_bus + vbus, vf_bus) TH_LOG("virtfn0 -> %s", vf);

	ASSERT_EQ(0, get_group(self, "gv"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic3"), kt_dev_acs_now("nic3"));
	/* Enabling again is refused, naming a VF. */
	EXPECT_EQ(-EPERM, req(self, KVMAI_CMD_GROUP_SET, "gv", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has("is not a member");
	/* ...a device on the VFs' bus: nic3 itself is a member. */
	snprintf(want, sizeof(want), "%.5s%02x:", kt_dev_bdf("nic3"), vf_bus);
	EXPECT_NE(NULL, strstr(self->nl.ext, want))
		TH_LOG("extack: %s (want %s)", self->nl.ext, want);

	ASSERT_EQ(0, kt_sysfs_write(path, "0"));
	/* Once its VFs are gone the mock lets go of the PF, as it found it. */
	if (vbus)
		EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_VFBUS));
	EXPECT_EQ(offset_was, kt_sysfs_read_long(offset));
	kt_sysfs_write("/sys/module/vfio_pci/parameters/enable_sriov", "N");
	kt_sysfs_write("/sys/bus/pci/rescan", "1");
	_test_cmd_pci_bind(kt_dev_bdf("foreign1"), "vfio-pci");
}

TEST_F(p2p, vfs_created_below_direct_group_disable_it)
{
	vfs_below_direct_group(_metadata, self, false);
}

TEST_F(p2p, vfs_on_a_virtual_bus_below_direct_group_disable_it)
{
	vfs_below_direct_group(_metadata, self, true);
}

/*
 * The kernel reprograms ACS from its policy when the port's driver binds
 * again (and after resets): with pci_acs_override() the group's setting
 * survives it.  Without the patch series it would silently revert.
 */
TEST_F(p2p, override_survives_port_driver_rebind)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	const char *p = kt_dev_port("gpu2");
	char cmd[256], out[64];

	if (!(module_features(self) & KVMAI_FEATURE_ACS_OVERRIDE))
		SKIP(return, "kernel without pci_acs_override() (patches/0001)");
	snprintf(cmd, sizeof(cmd),
		 "echo %s > /sys/bus/pci/drivers/pcieport/unbind && echo %s > /sys/bus/pci/drivers/pcieport/bind",
		 p, p);
	/* Direct clears bits the policy sets, translated sets one it leaves. */
	for (__u32 mode = KVMAI_MODE_TRANSLATED; mode <= KVMAI_MODE_DIRECT; mode++) {
		__u16 want;

		ASSERT_EQ(0, make_group(self, "go", mode, m, 3));
		ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "go", NULL, 0, KVMAI_STATE_ENABLED));
		want = kt_acs_now(p);
		ASSERT_NE(kt_acs_word(&self->before, p), want);
		ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
		EXPECT_EQ(want, kt_acs_now(p))
			TH_LOG("mode %u: port %s reprogrammed on rebind", mode, p);
		/* ...and a second rebind must not have folded it into the policy. */
		ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
		ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "go", NULL, 0, 0));
		EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p))
			TH_LOG("mode %u: not restored", mode);
		/* And the kernel's own reprogramming keeps the restored word. */
		ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
		EXPECT_EQ(kt_acs_word(&self->before, p), kt_acs_now(p))
			TH_LOG("mode %u: override left", mode);
	}
}

/* How a fake VMM opens its devices. */
#define VMM_KVM			0x1	/* for a KVM VM of its own, as QEMU does */
#define VMM_CONTAINER_EACH	0x2	/* one container per device: QEMU behind a vIOMMU */

/* The KVM VFIO device of a new VM of our own, or -1. */
static int fake_vmm_kvm(void)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_VFIO };
	int kvm = open("/dev/kvm", O_RDWR), vm;

	if (kvm < 0)
		return -1;
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_CREATE_DEVICE, &cd))
		return -1;
	return cd.fd;
}

/*
 * Open @n devices (by BDF) as a VMM would: in one container of our own,
 * or one each, and with VMM_KVM each group handed to our VM's KVM VFIO
 * device first, which is how QEMU ties a device to its VM.
 */
static void fake_vmm(const char *const *devs, int n, int ready_fd, unsigned int flags)
{
	int container = -1, kvm_vfio = -1;

	if (flags & VMM_KVM)
		kvm_vfio = fake_vmm_kvm();
	if ((flags & VMM_KVM) && kvm_vfio < 0)
		_exit(19);
	for (int i = 0; i < n; i++) {
		struct vfio_group_status st = { .argsz = sizeof(st) };
		struct kvm_device_attr attr = {
			.group = KVM_DEV_VFIO_GROUP, .attr = KVM_DEV_VFIO_GROUP_ADD,
		};
		bool fresh = container < 0 || (flags & VMM_CONTAINER_EACH);
		char path[64];
		int group;

		if (fresh)
			container = open("/dev/vfio/vfio", O_RDWR);
		if (container < 0)
			_exit(20);
		snprintf(path, sizeof(path), "/dev/vfio/%d", kt_pci_iommu_group(devs[i]));
		group = open(path, O_RDWR);
		if (group < 0 || ioctl(group, VFIO_GROUP_GET_STATUS, &st) ||
		    ioctl(group, VFIO_GROUP_SET_CONTAINER, &container))
			_exit(21);
		if (fresh && ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
			_exit(22);
		attr.addr = (uintptr_t)&group;
		if (kvm_vfio >= 0 && ioctl(kvm_vfio, KVM_SET_DEVICE_ATTR, &attr))
			_exit(25);
		if (ioctl(group, VFIO_GROUP_GET_DEVICE_FD, devs[i]) < 0)
			_exit(23);
	}
	if (write(ready_fd, "r", 1) != 1)
		_exit(24);
	pause();
	_exit(0);
}

TEST_F(p2p, vmm_exit_disables_group)
{
	static const char *const m[] = { "gpu0", "nic0" };
	int ready[2], status;
	pid_t pid;
	char c;

	if (!(module_features(self) & KVMAI_FEATURE_VFIO_NOTIFY))
		SKIP(return, "kernel without vfio device notifications (patches/0002)");
	ASSERT_EQ(0, make_group(self, "gv", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		const char *devs[2];

		devs[0] = kt_dev_bdf("gpu0");
		devs[1] = kt_dev_bdf("nic0");
		fake_vmm(devs, 2, ready[1], 0);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("fake VMM could not open the devices");
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gv", NULL, 0, KVMAI_STATE_ENABLED));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0") | PCI_ACS_DT, kt_dev_acs_now("gpu0"));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, get_group(self, "gv"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state) TH_LOG("group outlived its VMM");
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu0"), kt_dev_acs_now("gpu0"));
}

/*
 * A group of 16 members, every VM device but nic3 and six of nic3's VFs,
 * read by a dumper whose receive buffer is one page: the module splits the
 * group over several messages and the reader gets it whole.
 */
TEST_F(p2p, sixteen_member_group_dumps_whole_to_a_4k_reader)
{
	struct kt_req dump = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
	const char *m[16];
	char vfs[6][16], cmd[192], out[64], path[96];
	struct kt_group *all;
	struct kt_nl nl;
	int n = 0, nm = 0;

	test_cmd_pci_bind(kt_dev_bdf("nic3"), "igb");
	snprintf(cmd, sizeof(cmd), "echo 6 > /sys/bus/pci/devices/%s/sriov_numvfs",
		 kt_dev_bdf("nic3"));
	ASSERT_EQ(0, kt_run(cmd, out, sizeof(out)));
	for (int i = 0; i < 6; i++) {
		char link[128];
		ssize_t len;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/virtfn%d",
			 kt_dev_bdf("nic3"), i);
		len = readlink(path, link, sizeof(link) - 1);
		ASSERT_GT(len, 0);
		link[len] = 0;
		snprintf(vfs[i], sizeof(vfs[i]), "%s", strrchr(link, '/') + 1);
		test_cmd_pci_bind(vfs[i], "vfio-pci") TH_LOG("VF %s", vfs[i]);
	}
	for (size_t i = 0; i < NVM; i++)
		if (strcmp(vm_devs[i], "nic3"))
			m[nm++] = kt_dev_bdf(vm_devs[i]);
	for (int i = 0; i < 6; i++)
		m[nm++] = vfs[i];
	ASSERT_EQ(16, nm);
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_NEW, "big", NULL, 0, 0));
	for (int i = 0; i < nm; i++)
		ASSERT_EQ(0, req(self, KVMAI_CMD_DEV_ADD, "big", m[i], 0, 0))
			TH_LOG("%s", self->nl.ext);

	ASSERT_EQ(0, kt_nl_open_buf(&nl, 4096));
	all = calloc(2, sizeof(*all));
	ASSERT_NE(NULL, all);
	EXPECT_EQ(0, _test_cmd_group_dump(&nl, &dump, all, 2, &n)) TH_LOG("%s", nl.ext);
	EXPECT_EQ(1, n);
	EXPECT_STREQ("big", all[0].name);
	EXPECT_GT(all[0].parts, 1) TH_LOG("the whole group fit one page: nothing was split");
	EXPECT_EQ(16, all[0].nmembers);
	for (int i = 0; i < all[0].nmembers; i++)
		EXPECT_STREQ(m[i], all[0].members[i].addr);
	/* Whole: the same lists as the one-message reply to a roomy reader. */
	ASSERT_EQ(0, get_group(self, "big"));
	EXPECT_EQ(1, self->g.parts);
	EXPECT_EQ(self->g.npairs, all[0].npairs);
	EXPECT_GT(all[0].npairs, 16);
	for (int i = 0; i < self->g.npairs && i < all[0].npairs; i++) {
		EXPECT_STREQ(self->g.pairs[i].a, all[0].pairs[i].a);
		EXPECT_STREQ(self->g.pairs[i].b, all[0].pairs[i].b);
		EXPECT_STREQ(self->g.pairs[i].via, all[0].pairs[i].via);
	}
	free(all);
	kt_nl_close(&nl);

	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "big", NULL, 0, 0));
	for (int i = 0; i < 6; i++)
		_test_cmd_pci_bind(vfs[i], "");
	snprintf(cmd, sizeof(cmd), "echo 0 > /sys/bus/pci/devices/%s/sriov_numvfs",
		 kt_dev_bdf("nic3"));
	EXPECT_EQ(0, kt_run(cmd, out, sizeof(out)));
	EXPECT_EQ(0, _test_cmd_pci_bind(kt_dev_bdf("nic3"), "vfio-pci"));
}

/*
 * A child running @child(@arg, fd), which writes a byte to fd once it holds
 * what it opens and then waits to be killed: its pid once it is ready, or
 * -1 if it ended first.
 */
static pid_t start_holder(void (*child)(const void *arg, int ready_fd), const void *arg)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (!pid) {
		close(ready[0]);
		child(arg, ready[1]);
		_exit(1);
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

struct vmm_args {
	const char *const *names;
	int n;
	unsigned int flags;
};

static void vmm_child(const void *arg, int ready_fd)
{
	const struct vmm_args *a = arg;
	const char *devs[8];

	for (int i = 0; i < a->n; i++)
		devs[i] = kt_dev_bdf(a->names[i]);
	fake_vmm(devs, a->n, ready_fd, a->flags);
}

/* A fake VMM holding @devs, started and ready; its pid, or -1. */
static pid_t start_vmm_flags(const char *const *names, int n, unsigned int flags)
{
	const struct vmm_args a = { .names = names, .n = n, .flags = flags };

	return start_holder(vmm_child, &a);
}

static pid_t start_vmm(const char *const *names, int n)
{
	return start_vmm_flags(names, n, 0);
}

static void stop_vmm(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* Without knowing who opens members, direct mode would trust blindly. */
TEST_F(p2p, direct_needs_vfio_notifications)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	struct kt_acs after;
	char diff[1024];

	if (module_features(self) & KVMAI_FEATURE_VFIO_NOTIFY)
		SKIP(return, "kernel has vfio device notifications (see the one-user cases)");
	ASSERT_EQ(0, make_group(self, "gd", KVMAI_MODE_DIRECT, m, 3));
	EXPECT_EQ(-EOPNOTSUPP, req(self, KVMAI_CMD_GROUP_SET, "gd", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has("direct mode");
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	/* Translated mode keeps the IOMMU in charge, and stays available. */
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gd", NULL, KVMAI_MODE_TRANSLATED,
			 KVMAI_STATE_ENABLED)) TH_LOG("%s", self->nl.ext);
}

/* Two VMMs (two containers) each holding a member: no group over both. */
TEST_F(p2p, enable_refused_while_two_users_hold_members)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	pid_t vmm1, vmm2;
	char want[128];

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);
	ASSERT_EQ(0, make_group(self, "g2", KVMAI_MODE_DIRECT, m, 3));
	vmm1 = start_vmm(&m[0], 1);
	ASSERT_GT(vmm1, 0) TH_LOG("first fake VMM could not open %s", m[0]);
	vmm2 = start_vmm(&m[1], 1);
	ASSERT_GT(vmm2, 0) TH_LOG("second fake VMM could not open %s", m[1]);
	for (__u32 mode = KVMAI_MODE_TRANSLATED; mode <= KVMAI_MODE_DIRECT; mode++) {
		EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, mode,
				      KVMAI_STATE_ENABLED)) TH_LOG("mode %u", mode);
		/* Whole: extack keeps 79 bytes and cuts the rest silently. */
		snprintf(want, sizeof(want), "%s and %s are held by different VFIO users",
			 kt_dev_bdf(m[0]), kt_dev_bdf(m[1]));
		EXPECT_STREQ(want, self->nl.ext);
		EXPECT_EQ(kt_dev_acs(&self->before, m[0]), kt_dev_acs_now(m[0]));
	}
	/* One VMM left: then the group is one VM's again. */
	stop_vmm(vmm2);
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	stop_vmm(vmm1);
}

/*
 * One VM is one user, however its VMM opens the devices: QEMU opens each
 * device behind a vIOMMU through a container of its own, all for one KVM
 * VM.  Its group enables; two VMs each with a KVM of their own still do
 * not share one.
 */
TEST_F(p2p, one_vm_is_one_user_across_containers)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	pid_t vmm1, vmm2;

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);
	ASSERT_EQ(0, make_group(self, "g2", KVMAI_MODE_DIRECT, m, 3));
	vmm1 = start_vmm_flags(m, 3, VMM_KVM | VMM_CONTAINER_EACH);
	ASSERT_GT(vmm1, 0) TH_LOG("fake VMM could not open its devices");
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	EXPECT_NE(kt_dev_acs(&self->before, "nic2"), kt_dev_acs_now("nic2"));
	EXPECT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, 0, KVMAI_STATE_DISABLED));
	stop_vmm(vmm1);

	vmm1 = start_vmm_flags(&m[0], 1, VMM_KVM | VMM_CONTAINER_EACH);
	ASSERT_GT(vmm1, 0);
	vmm2 = start_vmm_flags(&m[1], 2, VMM_KVM | VMM_CONTAINER_EACH);
	ASSERT_GT(vmm2, 0);
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, 0, KVMAI_STATE_ENABLED));
	EXPECT_EQ(kt_dev_acs(&self->before, "nic2"), kt_dev_acs_now("nic2"));
	stop_vmm(vmm2);
	stop_vmm(vmm1);
}

/*
 * A second VMM opening a member of an enabled group: the group is disabled
 * before that open returns, so the second VM never sees relaxed ports.
 */
TEST_F(p2p, second_user_open_disables_group_first)
{
	static const char *const m[] = { "gpu2", "gpu3", "nic2" };
	pid_t vmm1, vmm2;

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);
	ASSERT_EQ(0, make_group(self, "g2", KVMAI_MODE_DIRECT, m, 3));
	vmm1 = start_vmm(m, 2);
	ASSERT_GT(vmm1, 0) TH_LOG("first fake VMM could not open its devices");
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "g2", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	ASSERT_NE(kt_dev_acs(&self->before, "nic2"), kt_dev_acs_now("nic2"));
	/* Its open has returned when it says ready: the ports must be back. */
	vmm2 = start_vmm(&m[2], 1);
	ASSERT_GT(vmm2, 0) TH_LOG("second fake VMM could not open %s", m[2]);
	EXPECT_EQ(kt_dev_acs(&self->before, "nic2"), kt_dev_acs_now("nic2"));
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu2"), kt_dev_acs_now("gpu2"));
	ASSERT_EQ(0, get_group(self, "g2"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	stop_vmm(vmm2);
	stop_vmm(vmm1);
}

/*
 * mdevs as members.  foreign1 (edu, behind sw3, the switch without ACS)
 * becomes an mdev parent of the test-only vendor driver
 * (kmod/testing/kvmai_mock_mdev.c), as a GPU does under a vGPU driver with
 * mdevs: its mdevs' DMA carries its requester ID.
 */
#define MDEV_TYPE "kvmai_mock_mdev-quarter"
#define MDEV_A "6f1c2a3b-4d5e-4f60-8a1b-2c3d4e5f6a7b"
#define MDEV_B "7a2d3b4c-5e6f-4a71-9b2c-3d4e5f6a7b8c"

/* foreign1 as an mdev parent with @n mdevs (MDEV_A, MDEV_B); its driver saved in @drv. */
static int mdev_parent_up(char *drv, size_t len, int n)
{
	const char *bdf = kt_dev_bdf("foreign1");
	static const char *const uuid[] = { MDEV_A, MDEV_B };
	char path[160];

	if (kt_pci_driver(bdf, drv, len) || _test_cmd_mod_load(KT_MOD_MOCK_MDEV, NULL) ||
	    _test_cmd_pci_bind(bdf, "kvmai_mock_mdev"))
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/mdev_supported_types/"
		 MDEV_TYPE "/create", bdf);
	for (int i = 0; i < n; i++)
		if (kt_sysfs_write(path, uuid[i]))
			return -1;
	return 0;
}

/* Its mdevs removed (those left), its driver back, the mock unloaded. */
static int mdev_parent_down(const char *drv)
{
	static const char *const uuid[] = { MDEV_A, MDEV_B };
	char path[96];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/remove", uuid[i]);
		if (!access(path, F_OK))
			kt_sysfs_write(path, "1");
	}
	return _test_cmd_pci_bind(kt_dev_bdf("foreign1"), drv) |
	       _test_cmd_mod_unload(KT_MOD_MOCK_MDEV);
}

static int mdev_req(struct _test_data_p2p *self, __u8 cmd, const char *name, const char *uuid)
{
	struct kt_req r = { .cmd = cmd, .name = name, .mdev = uuid };

	return _test_cmd_group(&self->nl, &r, &self->g);
}

static void mdev_child(const void *uuid, int ready_fd)
{
	struct kt_vfio v;

	if (kt_vfio_open(uuid, &v) || write(ready_fd, "r", 1) != 1)
		return;
	pause();
}

/* A VMM of its own holding mdev @uuid open, as QEMU does with sysfsdev=. */
static pid_t hold_mdev(const char *uuid)
{
	return start_holder(mdev_child, uuid);
}

#define NO_MOCK_MDEV "no " KT_MOCK_MDEV_PATH ": a kernel without mdev"

/*
 * A direct group over every VM device below sw2's host bridge is refused
 * while foreign1 sits there too; with an mdev of foreign1 as a member it
 * enables, the
 * mdev placed at its parent.  Another VM opening the parent's other mdev
 * then disables it before the open returns, since that mdev's traffic is
 * the parent's too, and enabling is refused while it stays open; removing
 * the member mdev takes it out of the group, and the parent's driver can
 * go with no reference to its mdevs left behind.
 */
TEST_F(p2p, mdev_member_stands_for_its_parent_and_its_siblings)
{
	static const char *const m[] = { "gpu4", "gpu5", "nic3" };
	char drv[64], want[96], out[512];
	pid_t vmm, other;
	int i;

	if (!direct_mode(self))
		SKIP(return, NO_DIRECT);
	if (access(KT_MOCK_MDEV_PATH, F_OK))
		SKIP(return, NO_MOCK_MDEV);
	ASSERT_EQ(0, mdev_parent_up(drv, sizeof(drv), 2));
	ASSERT_EQ(0, make_group(self, "gm", KVMAI_MODE_DIRECT, m, 3));
	EXPECT_EQ(-EPERM, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED));
	test_ext_has(kt_dev_bdf("foreign1"));

	ASSERT_EQ(0, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_A)) TH_LOG("%s", self->nl.ext);
	ASSERT_EQ(0, get_group(self, "gm"));
	ASSERT_EQ(4, self->g.nmembers);
	for (i = 0; i < 4 && strcmp(self->g.members[i].mdev, MDEV_A); i++)
		;
	ASSERT_LT(i, 4) TH_LOG("no member %s", MDEV_A);
	EXPECT_STREQ(kt_dev_bdf("foreign1"), self->g.members[i].addr);
	EXPECT_STREQ("kvmai_mock_mdev", self->g.members[i].driver);
	EXPECT_EQ(0, self->g.members[i].nbars);

	vmm = start_vmm(m, 3);
	ASSERT_GT(vmm, 0) TH_LOG("fake VMM could not open its devices");
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	EXPECT_NE(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));

	/* Another VM opens the parent's other mdev: the ports come back first. */
	other = hold_mdev(MDEV_B);
	ASSERT_GT(other, 0) TH_LOG("could not open mdev %s", MDEV_B);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));
	ASSERT_EQ(0, get_group(self, "gm"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(-EBUSY, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED));
	snprintf(want, sizeof(want), "sibling mdev %s has a second VFIO user", MDEV_B);
	EXPECT_STREQ(want, self->nl.ext);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));
	stop_vmm(other);

	/*
	 * The member mdev removed while the group is enabled: kvmaictl refuses
	 * (a partition in an enabled group), sysfs does not.
	 */
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gm", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	EXPECT_NE(0, kt_sh(out, sizeof(out), "/kvmai/bin/kvmaictl partition del " MDEV_A));
	EXPECT_NE(NULL, strstr(out, "in enabled P2P group gm")) TH_LOG("%s", out);
	ASSERT_EQ(0, access("/sys/bus/mdev/devices/" MDEV_A, F_OK));
	ASSERT_EQ(0, kt_sysfs_write("/sys/bus/mdev/devices/" MDEV_A "/remove", "1"));
	ASSERT_EQ(0, get_group(self, "gm"));
	EXPECT_EQ(KVMAI_STATE_DISABLED, self->g.state);
	EXPECT_EQ(3, self->g.nmembers);
	EXPECT_EQ(kt_dev_acs(&self->before, "gpu4"), kt_dev_acs_now("gpu4"));
	stop_vmm(vmm);

	/* A member when its vendor driver goes: the group lets go of it. */
	ASSERT_EQ(0, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_B)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(0, mdev_parent_down(drv));
	ASSERT_EQ(0, get_group(self, "gm"));
	EXPECT_EQ(3, self->g.nmembers);
	for (i = 0; i < self->g.nmembers; i++)
		EXPECT_STREQ("", self->g.members[i].mdev);
}

/* What dev-add refuses of an mdev, one line each. */
TEST_F(p2p, mdev_member_refusals)
{
	static const char *const m[] = { "gpu4" };
	char drv[64], want[96], path[96];
	struct kt_req both = { .cmd = KVMAI_CMD_DEV_ADD, .name = "gm", .mdev = MDEV_A };

	if (access(KT_MOCK_MDEV_PATH, F_OK))
		SKIP(return, NO_MOCK_MDEV);
	ASSERT_EQ(0, mdev_parent_up(drv, sizeof(drv), 1));
	ASSERT_EQ(0, make_group(self, "gm", KVMAI_MODE_TRANSLATED, m, 1));
	ASSERT_EQ(0, make_group(self, "gn", KVMAI_MODE_TRANSLATED, m, 0));

	EXPECT_EQ(-ENOENT, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_B));
	EXPECT_STREQ("no mdev " MDEV_B, self->nl.ext);
	both.pci = kt_dev_bdf("nic3");
	EXPECT_EQ(-EINVAL, _test_cmd_group(&self->nl, &both, NULL));
	EXPECT_STREQ("give a PCI address or an mdev UUID, not both", self->nl.ext);
	EXPECT_EQ(-EINVAL, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", "6f1c2a3b;reboot"));
	test_ext_has("mdev UUID");

	ASSERT_EQ(0, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_A)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-EEXIST, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_A));
	EXPECT_STREQ(MDEV_A " is already in group gm", self->nl.ext);
	EXPECT_EQ(-EBUSY, mdev_req(self, KVMAI_CMD_DEV_ADD, "gn", MDEV_A));
	EXPECT_STREQ(MDEV_A " belongs to group gm", self->nl.ext);

	/* Unbound from its vendor driver, an mdev is no VFIO device. */
	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s/driver/unbind", MDEV_A);
	ASSERT_EQ(0, kt_sysfs_write(path, MDEV_A));
	EXPECT_EQ(-EINVAL, mdev_req(self, KVMAI_CMD_DEV_ADD, "gn", MDEV_A));
	EXPECT_STREQ("mdev " MDEV_A " is bound to no driver", self->nl.ext);
	EXPECT_EQ(0, mdev_req(self, KVMAI_CMD_DEV_DEL, "gm", MDEV_A)) TH_LOG("%s", self->nl.ext);
	EXPECT_EQ(-ENOENT, mdev_req(self, KVMAI_CMD_DEV_DEL, "gm", MDEV_A));
	snprintf(want, sizeof(want), "%s is not in group gm", MDEV_A);
	EXPECT_STREQ(want, self->nl.ext);
	EXPECT_EQ(0, mdev_parent_down(drv));
}

/* An mdev whose parent is no PCI device has no path to place it on. */
TEST_F(p2p, mdev_of_a_virtual_parent_is_refused)
{
	char out[256];

	if (access("/kvmai/mtty.ko", F_OK))
		SKIP(return, "no /kvmai/mtty.ko: samples/vfio-mdev not built for this kernel");
	ASSERT_EQ(0, kt_sh(out, sizeof(out), "insmod /kvmai/mtty.ko")) TH_LOG("%s", out);
	ASSERT_EQ(0, kt_sysfs_write("/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-1/create",
				    MDEV_B));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_NEW, "gm", NULL, 0, 0));
	EXPECT_EQ(-EINVAL, mdev_req(self, KVMAI_CMD_DEV_ADD, "gm", MDEV_B));
	EXPECT_STREQ("mdev " MDEV_B ": its parent mtty is not a PCI device", self->nl.ext);
	EXPECT_EQ(0, kt_sysfs_write("/sys/bus/mdev/devices/" MDEV_B "/remove", "1"));
	EXPECT_EQ(0, kt_sh(out, sizeof(out), "rmmod mtty")) TH_LOG("%s", out);
}

TEST_F(p2p, dump_lists_every_group)
{
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
	struct kt_group *all = calloc(8, sizeof(*all));
	int n = 0;

	ASSERT_NE(NULL, all);
	for (int i = 0; i < 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "gl%d", i);
		ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_NEW, name, NULL, 0, 0));
	}
	ASSERT_EQ(0, _test_cmd_group_dump(&self->nl, &r, all, 8, &n));
	EXPECT_EQ(5, n);
	EXPECT_STREQ("gl0", all[0].name);
	EXPECT_STREQ("gl4", all[4].name);
	free(all);
}

/*
 * Lock order (kvmai.h): device_lock -> kvmai_lock, and no PCI topology lock
 * under kvmai_lock.  AER recovery holds pci_bus_sem while it takes device
 * locks, and the bus notifier calls kvmai with a device lock held, so
 * kvmai_lock -> pci_bus_sem would close a cycle that lockdep cannot see
 * (device mutexes are not validated).  What lockdep does record is every
 * lock taken under kvmai_lock: after driving the planner, the notifiers
 * and the ATS watch, none may be a PCI topology lock.
 */
TEST_F(p2p, no_pci_topology_lock_under_kvmai_lock)
{
	static const char *const m[] = { "gpu0", "nic0" };
	char line[512], path[128];
	bool in = false, found = false;
	int bad = 0;
	FILE *f;

	if (access("/proc/lockdep", R_OK))
		SKIP(return, "kernel without lockdep (/proc/lockdep)");
	ASSERT_EQ(0, make_group(self, "gl", KVMAI_MODE_TRANSLATED, m, 2));
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_SET, "gl", NULL, 0, KVMAI_STATE_ENABLED))
		TH_LOG("%s", self->nl.ext);
	usleep(300 * 1000);	/* a few passes of the ATS watch */
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/remove", kt_dev_bdf("gpu5"));
	kt_sysfs_write(path, "1");
	kt_sysfs_write("/sys/bus/pci/rescan", "1");	/* device added, re-plan */
	_test_cmd_pci_bind(kt_dev_bdf("gpu5"), "vfio-pci");
	test_cmd_pci_bind(kt_dev_bdf("nic0"), "");	/* member unbound */
	test_cmd_pci_bind(kt_dev_bdf("nic0"), "vfio-pci");
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "gl", NULL, 0, 0));

	f = fopen("/proc/lockdep", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, " -> ", 4)) {
			size_t n = strlen(line);

			in = n >= 12 && !strcmp(line + n - 12, ": kvmai_lock");
			found |= in;
			continue;
		}
		if (in && (strstr(line, "pci_bus_sem") || strstr(line, "pci_rescan_remove_lock"))) {
			TH_LOG("kvmai_lock %s", line);
			bad++;
		}
	}
	fclose(f);
	EXPECT_TRUE(found) TH_LOG("no kvmai_lock class in /proc/lockdep");
	EXPECT_EQ(0, bad);
}

/* Whether group @g holds port @bdf. */
static bool holds_port(const struct kt_group *g, const char *bdf)
{
	for (int p = 0; p < g->nports; p++)
		if (!strcmp(g->ports[p].addr, bdf))
			return true;
	return false;
}

/*
 * The group of the @n devices @m in @mode, enabled if it may be: only the
 * ports it reports change, and deleting it restores every word.  Whether
 * it was enabled.
 */
static bool subset_restores(struct __test_metadata *_metadata, struct _test_data_p2p *self,
			    const char *const *m, int n, __u32 mode)
{
	struct kt_acs during, after;
	char diff[1024];
	int changed, ret;

	ASSERT_EQ(0, make_group(self, "gs", mode, m, n));
	ret = req(self, KVMAI_CMD_GROUP_SET, "gs", NULL, 0, KVMAI_STATE_ENABLED);
	kt_acs_snap(&during);
	changed = kt_acs_diff(&self->before, &during, diff, sizeof(diff));
	if (!ret) {
		ASSERT_EQ(0, get_group(self, "gs"));
		/* Each changed port is one the group holds. */
		for (int i = 0; i < during.n; i++) {
			if (kt_acs_word(&self->before, during.bdf[i]) == during.ctl[i])
				continue;
			ASSERT_TRUE(holds_port(&self->g, during.bdf[i]))
				TH_LOG("%s changed", during.bdf[i]);
		}
	} else {
		ASSERT_EQ(0, changed) TH_LOG("refused, yet%s", diff);
	}
	ASSERT_EQ(0, req(self, KVMAI_CMD_GROUP_DEL, "gs", NULL, 0, 0));
	kt_acs_snap(&after);
	ASSERT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff)))
		TH_LOG("%s+%s mode %u:%s", m[0], m[1], mode, diff);
	return !ret;
}

/*
 * For every set of two or three VM devices and both modes: enabling changes
 * only the ports the group reports, and disabling restores every word.
 * 880 enable/delete rounds: minutes on a lockdep kernel under TCG.
 */
TEST_F_TIMEOUT(p2p, exhaustive_subsets_restore_exactly, 1200)
{
	int sets = 0, enabled = 0;

	for (size_t a = 0; a < NVM; a++) {
		for (size_t b = a + 1; b < NVM; b++) {
			/* c == b: the pair alone; otherwise with vm_devs[c]. */
			for (size_t c = b; c < NVM; c++) {
				const char *m[3] = { vm_devs[a], vm_devs[b], vm_devs[c] };

				for (__u32 mode = 1; mode <= 2; mode++) {
					int n = c > b ? 3 : 2;

					enabled += subset_restores(_metadata, self, m, n, mode);
					sets++;
				}
			}
		}
	}
	TH_LOG("%d group configurations, %d enabled", sets, enabled);
	EXPECT_GT(enabled, 0);
}

int main(int argc, char **argv)
{
	return kt_dev_run_bound(vm_devs, NVM, test_harness_run, argc, argv);
}
