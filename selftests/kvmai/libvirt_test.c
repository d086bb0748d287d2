// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvm-ai under a real libvirt: Debian's libvirtd in the emulated host
 * (the libvirt profile) starts domains under KVM with devices passed
 * through by vfio-pci, and runs kvmaictl's hook, installed as
 * /etc/libvirt/hooks/qemu.d/kvmai, as it would on an operator's host.
 * What the tests look at is what an operator would: virsh's word, the
 * ACS words in config space (lspci and direct reads), the module's groups
 * and PMU records, QEMU's pid.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/kvmai.h>
#include <linux/pci_regs.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/group.h"
#include "lib/pmu.h"
#include "lib/counters.h"
#include "lib/l2.h"
#include "lib/l2out.h"

#define LIBVIRTD "/usr/sbin/libvirtd"
#define VIRSH "virsh -c qemu:///system "
#define KVMAICTL "/kvmai/bin/kvmaictl"
#define MOCK_UNIT "mock_uncore_l3"
/* The mock unit with a counter page (kvmai_mock_counters), for counters devices. */
#define BW_UNIT "mock_bw"
#define KVMAI_NS "https://kvm-ai.dev/xmlns/libvirt/1"
/* virsh's arguments that set the kvm-ai metadata of @dom to a %s. */
#define SET_METADATA(dom) "metadata " dom " " KVMAI_NS " --key kvmai --config --set %s"
#define STOP_LIBVIRTD "kill $(cat /run/libvirtd.pid) && while [ -e /run/libvirtd.pid ]; do sleep 0.2; done"
/* A <kvmai:pmu> element of units made with UNIT(). */
#define PMU_ELEMENT(units) "<kvmai:pmu>" units "</kvmai:pmu>"
#define UNIT(name) "<kvmai:unit name=\"" name "\"/>"

/*
 * Devices the domains are given: bound to vfio-pci once for the run (main()),
 * as an operator's host keeps them for its domains (managed='no').
 */
static const char *const vm_devs[] = {
	"gpu0", "gpu1", "nic0", "nic1", "gpu4", "nic3", "gpu2", "nic2",
};

#define NVM (ARRAY_SIZE(vm_devs))

static double now_s(void)
{
	double up = 0;
	FILE *f = fopen("/proc/uptime", "r");

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return up;
}

/* `virsh ARGS` with stderr folded in: its exit status, output in @out. */
static int virsh(char *out, size_t len, const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), VIRSH);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - n, fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return kt_run(cmd, out, len);
}

/*
 * libvirtd up and answering.  Started once per boot (it daemonizes and
 * outlives the test that started it); its first start probes QEMU's
 * capabilities, which takes half a minute under emulation.
 */
static int libvirtd_up(void)
{
	char out[4096];

	if (!virsh(out, sizeof(out), "version"))
		return 0;
	if (system(LIBVIRTD " -d"))
		return -1;
	for (int i = 0; i < 240; i++) {
		if (!virsh(out, sizeof(out), "version"))
			return 0;
		usleep(500 * 1000);
	}
	return -1;
}

/* 2 MiB pages on each NUMA node for the planned domains (hugepages /dev/hugepages). */
#define HUGEPAGES "grep -q ' /dev/hugepages hugetlbfs' /proc/mounts || { mkdir -p /dev/hugepages && mount -t hugetlbfs none /dev/hugepages; } && for n in /sys/devices/system/node/node*; do echo 48 >$n/hugepages/hugepages-2048kB/nr_hugepages || exit 1; done"

static int hugepages_up(void)
{
	return system(HUGEPAGES);
}

/* QEMU's pid as libvirt records it, 0 if there is none. */
static pid_t qemu_pid(const char *dom)
{
	char path[128];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", dom);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid;
}

/* The domain's state word as virsh domstate prints it ("running", "shut off"). */
static void dom_state(const char *dom, char *state, size_t len)
{
	virsh(state, len, "domstate %s", dom);
	state[strcspn(state, "\n")] = 0;
}

/*
 * libvirtd answers before it has reconnected to the domains it found
 * running: each reconnect, the hook's included, runs in a thread of its
 * own under a domain job.  A monitor command needs a job too, so it
 * returns only once the reconnect, and with it the hook, is over.  It
 * waits 30 s for the job at most, then fails with "cannot acquire state
 * change lock"; a reconnect on a loaded host (a stopped QEMU, monitor
 * queries and the hook, all under emulation) can hold the job longer, so
 * that answer is asked again, for up to five minutes in all.
 */
static int reconnected(const char *dom, char *out, size_t len)
{
	int rc;

	for (int i = 0; i < 10; i++) {
		rc = virsh(out, len, "qemu-monitor-command %s '{\"execute\":\"query-status\"}'",
			   dom);
		if (!rc || !strstr(out, "cannot acquire state change lock"))
			break;
	}
	return rc;
}

/* Whether lspci shows DirectTrans+ in the ACS control of @bdf. */
static int lspci_dt(const char *bdf)
{
	char cmd[64], out[16384], *ctl;

	snprintf(cmd, sizeof(cmd), "lspci -vvv -s %s", bdf);
	if (kt_run(cmd, out, sizeof(out)))
		return -1;
	ctl = strstr(out, "ACSCtl:");
	if (!ctl)
		return -1;
	ctl[strcspn(ctl, "\n")] = 0;
	return strstr(ctl, "DirectTrans+") ? 1 : 0;
}

FIXTURE(libvirt) {
	struct kt_nl nl;
	struct kt_acs before;
	char out[16384];
};

FIXTURE_SETUP(libvirt)
{
	char drv[NVM][64];
	size_t bound;

	if (access(LIBVIRTD, X_OK))
		SKIP(return, "emulated host booted without libvirt (vmhost.py --profile libvirt)");
	ASSERT_NE(NULL, kt_dev("gpu0"));
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	bound = kt_dev_bind_vfio(vm_devs, NVM, drv);
	ASSERT_EQ(NVM, bound) TH_LOG("cannot bind %s to vfio-pci", vm_devs[bound]);
	ASSERT_EQ(0, hugepages_up());
	ASSERT_EQ(0, libvirtd_up())
		TH_LOG("libvirtd did not answer: see /var/log/libvirt/libvirtd.log");
	kt_acs_snap(&self->before);
	ASSERT_GE(self->before.n, 10);
}

FIXTURE_TEARDOWN(libvirt)
{
	struct kt_pmu_req dump = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	struct kt_group groups[4];
	struct kt_req gdump = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
	struct kt_pmu vms[4];
	struct kt_acs after;
	char diff[1024], out[4096];
	int n = 0;

	if (!self->nl.sk)
		return;
	/* Nothing of a test may outlive its domains. */
	kt_run("for d in $(" VIRSH "list --name); do " VIRSH "destroy $d; done; "
		    "for d in $(" VIRSH "list --all --name); do " VIRSH "undefine $d; done 2>&1",
		    out, sizeof(out));
	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff)))
		TH_LOG("ACS not restored after the domains went:%s", diff);
	EXPECT_EQ(0, _test_cmd_group_dump(&self->nl, &gdump, groups, 4, &n));
	EXPECT_EQ(0, n) TH_LOG("%d group(s) left, the first %s", n, n ? groups[0].name : "");
	n = 0;
	EXPECT_EQ(0, _test_cmd_pmu_dump(&self->nl, &dump, vms, 4, &n));
	EXPECT_EQ(0, n) TH_LOG("PMU record of %s left", n ? vms[0].vm : "");
	kt_nl_close(&self->nl);
	/* Counters devices hold kvmai_mock_counters, which holds kvmai. */
	kt_ctrdev_remove_all();
	if (kt_mod_loaded(KT_MOD_MOCK_COUNTERS))
		EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_COUNTERS));
	_test_cmd_mod_unload(KT_MOD_MOCK_PMU);
	_test_cmd_mod_unload(KT_MOD_KVMAI);
}

/*
 * Define @dom as `kvmaictl vm plan DEV... format libvirt group GROUP` lays
 * it out, with a name, and with @pmu (an element, or "") added to the
 * kvm-ai metadata the plan wrote.  Under SeaBIOS (firmware bios): the
 * emulated host has no OVMF for libvirt to find.
 */
static int define_planned(struct __test_metadata *_metadata, struct _test_data_libvirt *self,
			  const char *dom, const char *devs, const char *group, const char *pmu)
{
	char cmd[1024], sed[512];
	int rc;

	snprintf(sed, sizeof(sed),
		 "sed -e 's|<domain type=\"kvm\"[^>]*>|&<name>%s</name>|' -e 's|</kvmai:vm>|%s&|' /tmp/%s.plan >/tmp/%s.xml",
		 dom, pmu, dom, dom);
	snprintf(cmd, sizeof(cmd),
		 "%s vm plan %s vcpus 1 memory 64 hugepages /dev/hugepages firmware bios format libvirt group %s >/tmp/%s.plan 2>&1 && %s && %s define /tmp/%s.xml 2>&1 || { cat /tmp/%s.plan; false; }",
		 KVMAICTL, devs, group, dom, sed, VIRSH, dom, dom);
	rc = kt_run(cmd, self->out, sizeof(self->out));
	if (rc)
		TH_LOG("plan or define failed:\n%s", self->out);
	return rc;
}

/*
 * @dom defined anew from /tmp/@dom.xml without its <@element> (the lines
 * from its start tag to its end tag): the plan names no UUID, so a second
 * define would clash.  0 or the shell's status, its output in self->out.
 */
static int redefine_without(struct _test_data_libvirt *self, const char *dom,
			    const char *element)
{
	return kt_sh(self->out, sizeof(self->out),
		     "%s undefine %s && sed -i -e '/^ *<%s>/,/^ *<\\/%s>/d' /tmp/%s.xml && %s define /tmp/%s.xml",
		     VIRSH, dom, element, element, dom, VIRSH, dom);
}

/* virsh start @dom, logging its exit status and how long it took. */
static int start_dom(struct __test_metadata *_metadata, struct _test_data_libvirt *self,
		     const char *dom)
{
	double t0 = now_s();
	int rc = virsh(self->out, sizeof(self->out), "start %s", dom);

	TH_LOG("virsh start %s: exit %d after %.1f s", dom, rc, now_s() - t0);
	return rc;
}

static void show_logs(struct __test_metadata *_metadata, const char *dom)
{
	char cmd[256], out[8192];

	snprintf(cmd, sizeof(cmd), "tail -n 15 /var/log/libvirt/qemu/%s.log; "
		 "tail -n 15 /var/log/libvirt/libvirtd.log", dom);
	kt_run(cmd, out, sizeof(out));
	TH_LOG("logs:\n%s", out);
}

/* The group as the module holds it: 0, or -errno (-ENOENT: none). */
static int get_group(struct _test_data_libvirt *self, const char *name, struct kt_group *g)
{
	struct kt_req r = { .cmd = KVMAI_CMD_GROUP_GET, .name = name };

	return _test_cmd_group(&self->nl, &r, g);
}

static int get_pmu(struct _test_data_libvirt *self, const char *vm, struct kt_pmu *p)
{
	struct kt_pmu_req r = { .cmd = KVMAI_CMD_PMU_GET, .vm = vm };

	return _test_cmd_pmu(&self->nl, &r, p);
}

/*
 * The host CPUs @dom's vCPU 0 is pinned to, as its live XML says: what
 * `vm plan` wrote into <cputune> (its domains have one vCPU).
 */
static void vcpu0_cpuset(const char *dom, char *cpus, size_t len)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 VIRSH "dumpxml %s | sed -n \"s/.*<vcpupin vcpu='0' cpuset='\\([^']*\\)'.*/\\1/p\"",
		 dom);
	if (kt_run(cmd, cpus, len))
		cpus[0] = 0;
	cpus[strcspn(cpus, "\n")] = 0;
}

/*
 * What the kernel said last, where a group's words are not what the test
 * expects: whether kvmai disabled the group (a member's ATS went off, its
 * user closed it) and when.
 */
static void show_kernel_log(struct __test_metadata *_metadata)
{
	char log[8192];

	kt_run("dmesg | grep -E 'kvmai|group |ACS control|vfio-pci' | tail -30", log, sizeof(log));
	TH_LOG("the kernel's last words:\n%s", log);
}

/*
 * While vm1 runs: its group enabled with DT set on exactly the two ports
 * above gpu0 and nic0 (as lspci shows them), nothing else moved, and the
 * mock unit (and @nunits units in all) owned by vm1 for the QEMU libvirt
 * started, on the CPUs its <cputune> pins its vCPU to.
 */
static void expect_running_units(struct __test_metadata *_metadata,
				 struct _test_data_libvirt *self, int nunits)
{
	static const char *const m[] = { "gpu0", "nic0" };
	struct kt_acs during;
	struct kt_group g = {};
	struct kt_pmu p = {};
	char diff[1024], pinned[256];
	pid_t pid = qemu_pid("vm1");
	bool moved = false;

	ASSERT_GT(pid, 0) TH_LOG("no /run/libvirt/qemu/vm1.pid");
	ASSERT_EQ(0, get_group(self, "vm1-p2p", &g)) TH_LOG("%s", self->nl.ext);
	EXPECT_STREQ("vm1", g.vm);
	EXPECT_EQ(KVMAI_STATE_ENABLED, g.state);
	EXPECT_EQ(2, g.nmembers);
	kt_acs_snap(&during);
	EXPECT_EQ(2, kt_acs_diff(&self->before, &during, diff, sizeof(diff))) TH_LOG("%s", diff);
	for (int i = 0; i < 2; i++) {
		__u16 was = kt_dev_acs(&self->before, m[i]);
		__u16 now = kt_dev_acs_now(m[i]);

		EXPECT_EQ(was | PCI_ACS_DT, now)
			TH_LOG("port %s of %s", kt_dev_port(m[i]), m[i]);
		EXPECT_EQ(1, lspci_dt(kt_dev_port(m[i])))
			TH_LOG("lspci: no DirectTrans+ on %s", kt_dev_port(m[i]));
		moved |= now != (was | PCI_ACS_DT);
	}
	if (moved)
		show_kernel_log(_metadata);
	ASSERT_EQ(0, get_pmu(self, "vm1", &p)) TH_LOG("no PMU record of vm1: %s", self->nl.ext);
	EXPECT_EQ((__u32)pid, p.pid);
	ASSERT_EQ(nunits, p.nunits);
	EXPECT_STREQ(MOCK_UNIT, p.units[0].name);
	/* The metadata names no CPUs: the hook took the vCPU's pinning. */
	vcpu0_cpuset("vm1", pinned, sizeof(pinned));
	EXPECT_NE(0, pinned[0]) TH_LOG("no <vcpupin> in vm1's XML");
	EXPECT_STREQ(pinned, p.cpus);
	EXPECT_FALSE(p.shared);
}

static void expect_running(struct __test_metadata *_metadata, struct _test_data_libvirt *self)
{
	expect_running_units(_metadata, self, 1);
}

/* After vm1 went, however it went: every word back, nothing held. */
static void expect_gone(struct __test_metadata *_metadata, struct _test_data_libvirt *self)
{
	struct kt_acs after;
	struct kt_group g;
	char diff[1024];

	kt_acs_snap(&after);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &after, diff, sizeof(diff))) TH_LOG("%s", diff);
	EXPECT_EQ(0, lspci_dt(kt_dev_port("gpu0")));
	EXPECT_EQ(0, lspci_dt(kt_dev_port("nic0")));
	EXPECT_EQ(-ENOENT, get_group(self, "vm1-p2p", &g));
	EXPECT_EQ(-ENOENT, get_pmu(self, "vm1", NULL)) TH_LOG("vm1 still owns PMU resources");
}

/* No cpus: the hook takes them from the <cputune> that `vm plan` writes. */
static int define_vm1(struct __test_metadata *_metadata, struct _test_data_libvirt *self)
{
	return define_planned(_metadata, self, "vm1", "gpu0 nic0", "vm1-p2p",
			      "<kvmai:pmu><kvmai:unit name=\"" MOCK_UNIT "\"/></kvmai:pmu>");
}

/* Start and destroy of a planned domain: the hook's whole cycle. */
TEST_F_TIMEOUT(libvirt, start_applies_metadata_destroy_restores, 300)
{
	ASSERT_EQ(0, define_vm1(_metadata, self));
	if (start_dom(_metadata, self, "vm1"))
		show_logs(_metadata, "vm1");
	ASSERT_NE(NULL, strstr(self->out, "Domain 'vm1' started")) TH_LOG("%s", self->out);
	expect_running(_metadata, self);

	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "destroy vm1")) TH_LOG("%s", self->out);
	expect_gone(_metadata, self);
}

/* QEMU killed: libvirt sees its monitor close and runs the stop operations. */
TEST_F_TIMEOUT(libvirt, qemu_killed_restores, 300)
{
	char state[64] = "";
	pid_t pid;

	ASSERT_EQ(0, define_vm1(_metadata, self));
	ASSERT_EQ(0, start_dom(_metadata, self, "vm1")) TH_LOG("%s", self->out);
	expect_running(_metadata, self);
	pid = qemu_pid("vm1");
	ASSERT_EQ(0, kill(pid, SIGKILL));
	for (int i = 0; i < 120; i++) {
		dom_state("vm1", state, sizeof(state));
		if (!strcmp(state, "shut off"))
			break;
		usleep(500 * 1000);
	}
	ASSERT_STREQ("shut off", state);
	expect_gone(_metadata, self);
}

/*
 * libvirtd restarts while the domain runs, and meanwhile kvmai.ko was
 * reloaded, which deletes every group and releases every PMU record: the
 * hook's `reconnect` puts both back for the running QEMU, with the same
 * ACS words as before; the later destroy still restores everything.
 */
TEST_F_TIMEOUT(libvirt, libvirtd_restart_reconnects_lost_state, 300)
{
	struct kt_acs during, later;
	char diff[1024], state[64];
	struct kt_group g;
	pid_t pid;

	ASSERT_EQ(0, define_vm1(_metadata, self));
	ASSERT_EQ(0, start_dom(_metadata, self, "vm1")) TH_LOG("%s", self->out);
	expect_running(_metadata, self);
	pid = qemu_pid("vm1");
	kt_acs_snap(&during);

	ASSERT_EQ(0, kt_run(STOP_LIBVIRTD, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	kt_nl_close(&self->nl);
	test_cmd_mod_unload(KT_MOD_MOCK_PMU);
	test_cmd_mod_unload(KT_MOD_KVMAI);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL);
	test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	ASSERT_EQ(-ENOENT, get_group(self, "vm1-p2p", &g));
	kt_acs_snap(&later);
	EXPECT_EQ(0, kt_acs_diff(&self->before, &later, diff, sizeof(diff)))
		TH_LOG("the unload left:%s", diff);

	/*
	 * QEMU busy when libvirtd comes back: libvirt's reconnect waits on
	 * the monitor with the domain unlocked, so virsh already answers
	 * while the hook has not run yet.  Before the test waited for the
	 * reconnect, this failed every time; CI had hit it by chance.
	 */
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(0, system("(sleep 5; kill -CONT $(cat /run/libvirt/qemu/vm1.pid)) >&- 2>&- &"));
	ASSERT_EQ(0, libvirtd_up());
	ASSERT_EQ(0, reconnected("vm1", self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	dom_state("vm1", state, sizeof(state));
	EXPECT_STREQ("running", state);
	EXPECT_EQ(pid, qemu_pid("vm1"));
	expect_running(_metadata, self);
	kt_acs_snap(&later);
	EXPECT_EQ(0, kt_acs_diff(&during, &later, diff, sizeof(diff))) TH_LOG("%s", diff);

	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "destroy vm1")) TH_LOG("%s", self->out);
	expect_gone(_metadata, self);
}

/*
 * The case: kvm-ai's element taken out of the running domain's
 * live XML, then the domain destroyed.  The stop operations clean up by
 * the domain's name all the same: no group, no PMU record, every ACS word
 * back, and the counters device vm1 had (where the kernel has mediated
 * devices) revoked with the unit.
 */
TEST_F_TIMEOUT(libvirt, metadata_removed_then_destroyed_leaves_nothing, 300)
{
	bool ctr = !access(KT_MOCK_COUNTERS_PATH, F_OK);
	char uuid[64] = "", attr[64] = "";

	if (ctr) {
		test_cmd_mod_load(KT_MOD_MOCK_COUNTERS, NULL);
	} else {
		TH_LOG("no %s: this kernel has no mediated devices, no counters device",
		       KT_MOCK_COUNTERS_PATH);
	}
	ASSERT_EQ(0, define_planned(_metadata, self, "vm1", "gpu0 nic0", "vm1-p2p",
				    ctr ? PMU_ELEMENT(UNIT(MOCK_UNIT) UNIT(BW_UNIT))
					: PMU_ELEMENT(UNIT(MOCK_UNIT))));
	if (start_dom(_metadata, self, "vm1"))
		show_logs(_metadata, "vm1");
	ASSERT_NE(NULL, strstr(self->out, "Domain 'vm1' started")) TH_LOG("%s", self->out);
	expect_running_units(_metadata, self, ctr ? 2 : 1);
	if (ctr) {
		/* vm1 owns mock_bw: the operator makes its counters device. */
		test_cmd_ctrdev_create(BW_UNIT, uuid, sizeof(uuid));
		ASSERT_EQ(0, kt_ctrdev_attr(uuid, "vm", attr, sizeof(attr)));
		EXPECT_STREQ("vm1", attr);
		ASSERT_EQ(0, kt_ctrdev_attr(uuid, "state", attr, sizeof(attr)));
		EXPECT_STREQ("live", attr);
	}

	ASSERT_EQ(0, virsh(self->out, sizeof(self->out),
			   "metadata vm1 " KVMAI_NS " --live --remove")) TH_LOG("%s", self->out);
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "dumpxml vm1")) TH_LOG("%s", self->out);
	ASSERT_EQ(NULL, strstr(self->out, KVMAI_NS))
		TH_LOG("the live XML still has kvm-ai's element");

	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "destroy vm1")) TH_LOG("%s", self->out);
	expect_gone(_metadata, self);
	if (ctr) {
		ASSERT_EQ(0, kt_ctrdev_attr(uuid, "state", attr, sizeof(attr)));
		EXPECT_STREQ("revoked", attr) TH_LOG("vm1's counters device outlived the domain");
		EXPECT_EQ(0, _test_cmd_ctrdev_remove(uuid));
	}
}

/* Write @xml to /tmp/@dom.xml and define it. */
static int define_xml(struct _test_data_libvirt *self, const char *dom, const char *xml)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/%s.xml", dom);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(xml, f);
	fclose(f);
	return virsh(self->out, sizeof(self->out), "define %s", path);
}

/*
 * A start refused at `started`: libvirt's error carries kvm-ai's line,
 * QEMU is gone, no group of @group's name is left and no ACS word moved
 * (the fixture's teardown compares them all).
 */
static void expect_refused_started(struct __test_metadata *_metadata,
				   struct _test_data_libvirt *self, const char *dom,
				   const char *group)
{
	char state[64], want[64];

	EXPECT_NE(0, start_dom(_metadata, self, dom));
	TH_LOG("virsh said: %s", self->out);
	snprintf(want, sizeof(want), "%s started begin", dom);
	EXPECT_NE(NULL, strstr(self->out, want));
	snprintf(want, sizeof(want), "kvmai: group %s: enable: ", group);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no kvm-ai line in libvirt's error");
	dom_state(dom, state, sizeof(state));
	EXPECT_STREQ("shut off", state);
	EXPECT_EQ(0, qemu_pid(dom));
	EXPECT_EQ(-ENOENT, get_group(self, group, NULL));
}

/*
 * A translated group of gpu4 and nic3 would set DT on the port of sw2
 * above the x3130 switch, below which sits foreign1, a device of no VM,
 * beside nic3, which has no ATS.  The domain is written by hand: `vm
 * plan` refuses it already (nic3 shares its IOMMU group with foreign1).
 */
TEST_F_TIMEOUT(libvirt, group_below_shared_port_fails_start, 300)
{
	static const char *const m[] = { "gpu4", "nic3" };
	char xml[2048], host[2][160];

	/* DDDD:BB:SS.F: the address's bus, slot and function as hex numbers. */
	for (int i = 0; i < 2; i++) {
		const char *bdf = kt_dev_bdf(m[i]);

		snprintf(host[i], sizeof(host[i]),
			 "<hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x0000' bus='0x%.2s' slot='0x%.2s' function='0x%.1s'/></source></hostdev>",
			 bdf + 5, bdf + 8, bdf + 11);
	}
	snprintf(xml, sizeof(xml),
		 "<domain type='kvm'><name>vm2</name><metadata><kvmai:vm xmlns:kvmai='%s'><kvmai:group name='vm2-p2p' from='hostdevs'/></kvmai:vm></metadata><memory unit='MiB'>64</memory><vcpu>1</vcpu><os><type arch='x86_64' machine='q35'>hvm</type></os><cpu mode='host-passthrough'/><devices>%s%s</devices></domain>",
		 KVMAI_NS, host[0], host[1]);
	ASSERT_EQ(0, define_xml(self, "vm2", xml)) TH_LOG("%s", self->out);
	expect_refused_started(_metadata, self, "vm2", "vm2-p2p");
	/* Named: whichever of the two the planner meets first below the port. */
	EXPECT_TRUE((strstr(self->out, kt_dev_bdf("foreign1")) &&
		     strstr(self->out, "is not a member")) ||
		    (strstr(self->out, kt_dev_bdf("nic3")) &&
		     strstr(self->out, "has no ATS enabled"))) TH_LOG("%s", self->out);
}

#define VM4_DIRECT "'<vm><group name=\"vm4-p2p\" mode=\"direct\" from=\"hostdevs\"/></vm>'"

/*
 * The case: a direct-mode group of every device the domain has
 * on sw0, where the host's own foreign0 also sits.  Clearing the redirect
 * bits there would let the guest's devices reach foreign0 without the
 * IOMMU; the module refuses, naming foreign0, and libvirt says so.
 */
TEST_F_TIMEOUT(libvirt, direct_group_beside_host_device_fails_start, 300)
{
	struct kt_status st = {};

	_test_cmd_status_get(&self->nl, &st);
	if (!(st.features & KVMAI_FEATURE_VFIO_NOTIFY))
		SKIP(return, "kernel without vfio device notifications (patches/0002)");
	ASSERT_EQ(0, define_planned(_metadata, self, "vm4", "gpu0 gpu1 nic0 nic1", "vm4-p2p", ""));
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), SET_METADATA("vm4"), VM4_DIRECT))
		TH_LOG("%s", self->out);
	expect_refused_started(_metadata, self, "vm4", "vm4-p2p");
	EXPECT_NE(NULL, strstr(self->out, kt_dev_bdf("foreign0")));
}

/*
 * A group naming a device the domain is not given: refused at `prepare`,
 * before libvirt starts QEMU, with the device named.
 */
TEST_F_TIMEOUT(libvirt, foreign_member_refused_before_qemu_starts, 300)
{
	char meta[256], state[64];

	ASSERT_EQ(0, define_planned(_metadata, self, "vm3", "gpu0 nic0", "vm3-p2p", ""));
	snprintf(meta, sizeof(meta),
		 "'<vm><group name=\"vm3-p2p\"><device address=\"%s\"/><device address=\"%s\"/></group></vm>'",
		 kt_dev_bdf("gpu0"), kt_dev_bdf("gpu4"));
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), SET_METADATA("vm3"), meta))
		TH_LOG("%s", self->out);

	EXPECT_NE(0, start_dom(_metadata, self, "vm3"));
	TH_LOG("virsh said: %s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "prepare begin"));
	EXPECT_NE(NULL, strstr(self->out, kt_dev_bdf("gpu4")));
	EXPECT_NE(NULL, strstr(self->out, "not a PCI hostdev of domain vm3"));
	dom_state("vm3", state, sizeof(state));
	EXPECT_STREQ("shut off", state);
	EXPECT_EQ(-ENOENT, get_group(self, "vm3-p2p", NULL));
}

/*
 * Starting @dom must fail at the hook's `prepare`, before QEMU starts:
 * the domain stays shut off with neither @group nor a PMU record left.
 * virsh's output stays in self->out for the caller's checks.
 */
static void expect_refused_at_prepare(struct __test_metadata *_metadata,
				      struct _test_data_libvirt *self, const char *dom,
				      const char *group)
{
	char state[64];

	EXPECT_NE(0, start_dom(_metadata, self, dom));
	TH_LOG("virsh said: %s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "prepare begin"));
	dom_state(dom, state, sizeof(state));
	EXPECT_STREQ("shut off", state);
	EXPECT_EQ(-ENOENT, get_group(self, group, NULL));
	EXPECT_EQ(-ENOENT, get_pmu(self, dom, NULL));
}

/*
 * Uncore units need the vCPUs pinned: without the <cputune> `vm plan`
 * writes, vm5's vCPU may run on any host CPU, and the hook refuses at
 * `prepare`, before QEMU starts, whatever cpus the metadata claims.
 */
TEST_F_TIMEOUT(libvirt, units_without_pinned_vcpus_refused, 300)
{
	ASSERT_EQ(0, define_planned(_metadata, self, "vm5", "gpu0 nic0", "vm5-p2p",
				    "<kvmai:pmu cpus=\"0\"><kvmai:unit name=\"" MOCK_UNIT
				    "\"/></kvmai:pmu>"));
	ASSERT_EQ(0, redefine_without(self, "vm5", "cputune")) TH_LOG("%s", self->out);
	expect_refused_at_prepare(_metadata, self, "vm5", "vm5-p2p");
	EXPECT_NE(NULL, strstr(self->out, "uncore units need the domain's vCPUs pinned"));
}

/*
 * A memory-side unit (here the L3 mock) counts the package's memory
 * traffic: the domain must have its memory strictly on the package's
 * nodes.  Without the <numatune> `vm plan` writes, vm6 is refused at
 * `prepare`, by name, before QEMU starts.
 */
TEST_F_TIMEOUT(libvirt, memory_unit_without_strict_numa_refused, 300)
{
	ASSERT_EQ(0, define_planned(_metadata, self, "vm6", "gpu0 nic0", "vm6-p2p",
				    PMU_ELEMENT(UNIT(MOCK_UNIT))));
	ASSERT_EQ(0, redefine_without(self, "vm6", "numatune")) TH_LOG("%s", self->out);
	expect_refused_at_prepare(_metadata, self, "vm6", "vm6-p2p");
	EXPECT_NE(NULL, strstr(self->out, "kvmai: pmu: unit " MOCK_UNIT " counts the memory traffic "
			       "of package 0, so domain vm6 must have its memory strictly on node"));
	EXPECT_NE(NULL, strstr(self->out, "but it has no <numatune><memory>"));
}

/* The root bus ("SSSS:BB") of the PCIe hierarchy device @name sits in. */
static int root_bus(const char *name, char *bus, size_t len)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "readlink -f /sys/bus/pci/devices/%s | cut -d/ -f4 | cut -c4-",
		 kt_dev_bdf(name));
	return kt_run(cmd, bus, len) || strlen(bus) < 7 ? -1 : (bus[7] = 0, 0);
}

/*
 * An IIO unit counts every function below its PCIe stack.  The mock's
 * stack on package 0 is sw0's root bus, where gpu1, nic1 and foreign0 sit
 * beside vm7's gpu0 and nic0: the unit is refused at `prepare`, naming the
 * stack and vm7, and nothing is left behind.
 */
TEST_F_TIMEOUT(libvirt, iio_unit_refused_while_a_foreign_device_is_below_its_stack, 300)
{
	char sw0[16], sw1[16], params[64], want[128];

	ASSERT_EQ(0, root_bus("gpu0", sw0, sizeof(sw0)));
	ASSERT_EQ(0, root_bus("gpu2", sw1, sizeof(sw1)));
	ASSERT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU));
	snprintf(params, sizeof(params), "iio_stacks=%s,%s", sw0, sw1);
	test_cmd_mod_load(KT_MOD_MOCK_PMU, params);
	ASSERT_EQ(0, define_planned(_metadata, self, "vm7", "gpu0 nic0", "vm7-p2p",
				    PMU_ELEMENT(UNIT("mock_uncore_iio_0"))));
	expect_refused_at_prepare(_metadata, self, "vm7", "vm7-p2p");
	snprintf(want, sizeof(want), "kvmai: pmu: unit mock_uncore_iio_0 counts PCIe stack %s, where ",
		 sw0);
	EXPECT_NE(NULL, strstr(self->out, want));
	EXPECT_NE(NULL, strstr(self->out, " is not a PCI hostdev of domain vm7"));
}

/*
 * A counters device belongs to the VM it was made for: vm2's, given to
 * vm1, is refused at `prepare`, naming both, before QEMU could open it.
 */
TEST_F_TIMEOUT(libvirt, another_vms_counters_device_refused, 300)
{
	struct kt_pmu_req own = { .cmd = KVMAI_CMD_PMU_ASSIGN, .vm = "vm2", .units = { BW_UNIT } };
	char pkg0[64], uuid[64], xml[256], state[64];
	FILE *f;

	if (access(KT_MOCK_COUNTERS_PATH, F_OK))
		SKIP(return, "no %s: this kernel has no mediated devices", KT_MOCK_COUNTERS_PATH);
	test_cmd_mod_load(KT_MOD_MOCK_COUNTERS, NULL);
	ASSERT_GT(kt_cpu_package(0, pkg0, sizeof(pkg0)), 0);
	own.cpus = pkg0;
	test_cmd_pmu(&own, NULL) TH_LOG("%s", self->nl.ext);
	test_cmd_ctrdev_create(BW_UNIT, uuid, sizeof(uuid));

	ASSERT_EQ(0, define_planned(_metadata, self, "vm1", "gpu0 nic0", "vm1-p2p", ""));
	snprintf(xml, sizeof(xml),
		 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='%s'/></source></hostdev>",
		 uuid);
	f = fopen("/tmp/vm1-ctr.xml", "w");
	ASSERT_NE(NULL, f);
	fputs(xml, f);
	fclose(f);
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out),
			   "attach-device vm1 /tmp/vm1-ctr.xml --config")) TH_LOG("%s", self->out);
	EXPECT_NE(0, start_dom(_metadata, self, "vm1"));
	TH_LOG("virsh said: %s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "prepare begin"));
	snprintf(xml, sizeof(xml), "kvmai: counters device %s belongs to vm vm2, not to domain vm1",
		 uuid);
	EXPECT_NE(NULL, strstr(self->out, xml));
	dom_state("vm1", state, sizeof(state));
	EXPECT_STREQ("shut off", state);
	EXPECT_EQ(-ENOENT, get_group(self, "vm1-p2p", NULL));

	/* A QEMU that got the device would hold its removal up. */
	virsh(self->out, sizeof(self->out), "destroy vm1");
	EXPECT_EQ(0, _test_cmd_ctrdev_remove(uuid));
	own.cmd = KVMAI_CMD_PMU_RELEASE;
	own.units[0] = NULL;
	own.cpus = NULL;
	EXPECT_EQ(0, _test_cmd_pmu(&self->nl, &own, NULL)) TH_LOG("%s", self->nl.ext);
}

/* The kernel's sample mdev driver, built for the kernel the host runs. */
#define MTTY_KO "/kvmai/mtty.ko"
#define PART_UUID "6b3c2c8e-1f0a-4d6e-9a51-3e2f00c0beef"
#define PART_ELEMENT(uuid) "<kvmai:partition parent=\"mtty\" type=\"mtty-2\" uuid=\"" uuid \
	"\" remove=\"yes\"/>"

static int mtty_instances(void)
{
	char out[32];

	if (kt_run("ls /sys/class/mdev_bus/mtty/mdev_supported_types/mtty-2/devices | wc -l",
		   out, sizeof(out)))
		return -1;
	return atoi(out);
}

/* vm1, planned, given the mdev @uuid, with @partition in its metadata. */
static int define_with_mdev(struct __test_metadata *_metadata, struct _test_data_libvirt *self,
			    const char *uuid, const char *partition)
{
	char xml[256];
	FILE *f;

	if (define_planned(_metadata, self, "vm1", "gpu0 nic0", "vm1-p2p", partition))
		return -1;
	snprintf(xml, sizeof(xml),
		 "<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='%s'/></source></hostdev>",
		 uuid);
	f = fopen("/tmp/vm1-mdev.xml", "w");
	if (!f)
		return -1;
	fputs(xml, f);
	fclose(f);
	return virsh(self->out, sizeof(self->out), "attach-device vm1 /tmp/vm1-mdev.xml --config");
}

/*
 * A domain names a partition it needs, which does not exist: the hook
 * makes it at prepare (the host's hook.conf lets domains partition mtty),
 * QEMU gets it, and the domain's destroy, removal asked, leaves mtty as it
 * was.  What the host did not allow, and a partition that is not the
 * domain's own hostdev, are refused before anything is made.
 */
TEST_F_TIMEOUT(libvirt, named_partition_made_at_start_removed_at_destroy, 300)
{
	char path[96], want[160], state[64];
	FILE *f;

	if (access(MTTY_KO, F_OK))
		SKIP(return, "no %s: samples/vfio-mdev not built for this kernel", MTTY_KO);
	kt_run("insmod " MTTY_KO " 2>&1", self->out, sizeof(self->out));
	ASSERT_EQ(0, access("/sys/class/mdev_bus/mtty", F_OK)) TH_LOG("%s", self->out);
	ASSERT_EQ(0, mtty_instances());
	snprintf(path, sizeof(path), "/sys/bus/mdev/devices/%s", PART_UUID);

	/* Without the host's word, the metadata partitions nothing. */
	unlink("/etc/kvmai/hook.conf");
	ASSERT_EQ(0, define_with_mdev(_metadata, self, PART_UUID, PART_ELEMENT(PART_UUID)))
		TH_LOG("%s", self->out);
	EXPECT_NE(0, start_dom(_metadata, self, "vm1"));
	EXPECT_NE(NULL, strstr(self->out, "kvmai: partition: parent mtty is not the domains' to "
					  "partition")) TH_LOG("%s", self->out);
	EXPECT_NE(0, access(path, F_OK));

	mkdir("/etc/kvmai", 0755);
	f = fopen("/etc/kvmai/hook.conf", "w");
	ASSERT_NE(NULL, f);
	fputs("[partition]\nparent = mtty\n", f);
	fclose(f);
	chmod("/etc/kvmai/hook.conf", 0644);

	if (start_dom(_metadata, self, "vm1"))
		show_logs(_metadata, "vm1");
	ASSERT_NE(NULL, strstr(self->out, "Domain 'vm1' started")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, access(path, F_OK));
	EXPECT_EQ(1, mtty_instances());
	EXPECT_EQ(0, kt_sh(self->out, sizeof(self->out), KVMAICTL " partition show mtty"));
	snprintf(want, sizeof(want), "mdev %s type mtty-2 used: open by pid %d", PART_UUID,
		 qemu_pid("vm1"));
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no \"%s\" in %s", want, self->out);
	/* While QEMU holds it, no one removes it. */
	EXPECT_EQ(1, kt_sh(self->out, sizeof(self->out), KVMAICTL " partition del " PART_UUID));

	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "destroy vm1")) TH_LOG("%s", self->out);
	EXPECT_NE(0, access(path, F_OK)) TH_LOG("the mdev outlived its domain");
	EXPECT_EQ(0, mtty_instances());

	/* A partition that is not one of the domain's hostdevs. */
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "undefine vm1"));
	ASSERT_EQ(0, define_with_mdev(_metadata, self, PART_UUID,
				      PART_ELEMENT("11111111-2222-4333-8444-555555555555")))
		TH_LOG("%s", self->out);
	EXPECT_NE(0, start_dom(_metadata, self, "vm1"));
	EXPECT_NE(NULL, strstr(self->out, "is not one of the domain's mdev hostdevs"))
		TH_LOG("%s", self->out);
	dom_state("vm1", state, sizeof(state));
	EXPECT_STREQ("shut off", state);
	EXPECT_EQ(0, mtty_instances());

	unlink("/etc/kvmai/hook.conf");
	kt_run("rmmod mtty 2>&1", self->out, sizeof(self->out));
}

static long pf_long(const char *pf, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", pf, attr);
	return kt_sysfs_read_long(path);
}

/*
 * A domain names VF 1 of nic3 (QEMU's 82576), which has no VFs: the hook
 * gives nic3 two VFs at prepare, all on vfio-pci, VF 1 at the address the
 * domain's hostdev names (the PF's routing ID plus its SR-IOV offset and
 * stride).  On hardware the domain would start with it.  Here it cannot:
 * nic3 sits below sw3, a switch without ACS (aihost.toml), so its VFs
 * share an IOMMU group with nic3 itself and foreign1, and VFIO gives QEMU
 * no part of a group whose other devices stay on host drivers, as on any
 * host with such a switch.  QEMU's refusal names the VF, which proves that
 * the hook made it where the domain wanted it, bound to vfio-pci (libvirt
 * checks both before QEMU runs); the failed start's release, removal
 * asked, leaves nic3 as it was.
 */
TEST_F_TIMEOUT(libvirt, named_vf_made_at_prepare_removed_at_release, 300)
{
	const char *pf = kt_dev_bdf("nic3");
	unsigned int dom, bus, dev, fn, rid;
	char meta[160], xml[320], vf[32], want[128];
	long offset, stride;
	FILE *f;

	test_cmd_pci_bind(pf, "igb");
	ASSERT_EQ(0, pf_long(pf, "sriov_numvfs"));
	ASSERT_EQ(1, pf_long(pf, "sriov_drivers_autoprobe"));
	offset = pf_long(pf, "sriov_offset");
	stride = pf_long(pf, "sriov_stride");
	ASSERT_LT(0, offset);
	ASSERT_EQ(4, sscanf(pf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn));
	rid = (bus << 8 | dev << 3 | fn) + offset + stride;
	snprintf(vf, sizeof(vf), "%04x:%02x:%02x.%x", dom & 0xffff, (rid >> 8) & 0xff,
		 (rid >> 3) & 0x1f, rid & 7);

	mkdir("/etc/kvmai", 0755);
	f = fopen("/etc/kvmai/hook.conf", "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "[partition]\nparent = %s\n", pf);
	fclose(f);
	chmod("/etc/kvmai/hook.conf", 0644);

	snprintf(meta, sizeof(meta),
		 "<kvmai:partition parent=\"%s\" vfs=\"2\" vf=\"1\" remove=\"yes\"/>", pf);
	ASSERT_EQ(0, define_planned(_metadata, self, "vm1", "gpu0 nic0", "vm1-p2p", meta));
	snprintf(xml, sizeof(xml),
		 "<hostdev mode='subsystem' type='pci' managed='no'><source><address domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'/></source></hostdev>",
		 dom, (rid >> 8) & 0xff, (rid >> 3) & 0x1f, rid & 7);
	f = fopen("/tmp/vm1-vf.xml", "w");
	ASSERT_NE(NULL, f);
	fputs(xml, f);
	fclose(f);
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "attach-device vm1 /tmp/vm1-vf.xml --config"))
		TH_LOG("%s", self->out);

	EXPECT_NE(0, start_dom(_metadata, self, "vm1"));
	snprintf(want, sizeof(want), "vfio %s: group", vf);
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("no \"%s\" in %s", want, self->out);
	EXPECT_NE(NULL, strstr(self->out, "is not viable")) TH_LOG("%s", self->out);

	EXPECT_EQ(0, pf_long(pf, "sriov_numvfs")) TH_LOG("the VFs outlived the failed start");
	EXPECT_EQ(1, pf_long(pf, "sriov_drivers_autoprobe"));
	unlink("/etc/kvmai/hook.conf");
}

/* The words of the planned guest: two GPUs and two NICs, two nodes, two switches. */
#define PLANNED_DEVS "gpu0 gpu2 nic0 nic2 vcpus 2 memory 512 firmware bios"
/* Its boot source: L2's kernel and initramfs, the topo scenario (l2-run's). */
#define L2_SHARE "/usr/share/kvmai-l2"
#define PLANNED_OS "<kernel>" KT_L2_KERNEL "</kernel><initrd>/tmp/planned.initrd</initrd>" \
	"<cmdline>console=ttyS0 panic=-1 quiet kvmai.level=2 kvmai.scenario=topo</cmdline>"
#define PLANNED_SERIALS "<serial type=\"file\"><source path=\"/tmp/planned.console\"/>" \
	"<target port=\"0\"/></serial><serial type=\"file\">" \
	"<source path=\"/tmp/planned.results\"/><target port=\"1\"/></serial>"

#define RETRY_LINE "echo 'libvirt_test planned: L2 reset before it reported' >>/tmp/kvmai-retries"

/*
 * Start the planned domain and wait until L2 has powered off; what it
 * reported into @l2.  An L2 that resets before it reported, with nothing
 * on its console, met the emulator's failure as l2-run counts it: it is
 * booted again, at most twice, and check's summary says so.  0 when L2
 * reported.
 */
static int boot_planned(struct __test_metadata *_metadata, struct _test_data_libvirt *self,
			char *l2, size_t len)
{
	char state[64];
	struct stat st;
	FILE *f;
	int i;

	for (int attempt = 1; attempt <= 3; attempt++) {
		kt_run("rm -f /tmp/planned.console /tmp/planned.results", state, sizeof(state));
		if (start_dom(_metadata, self, "planned"))
			show_logs(_metadata, "planned");
		if (!strstr(self->out, "Domain 'planned' started")) {
			TH_LOG("%s", self->out);
			return -1;
		}
		/* L2 powers off once it has reported; a panic reboots, which stops it too. */
		state[0] = 0;
		for (i = 0; i < 300 && strcmp(state, "shut off"); i++) {
			usleep(500 * 1000);
			dom_state("planned", state, sizeof(state));
		}
		if (strcmp(state, "shut off")) {
			TH_LOG("L2 still %s after %d s", state, i / 2);
			return -1;
		}
		l2[0] = 0;
		f = fopen("/tmp/planned.results", "r");
		if (f) {
			l2[fread(l2, 1, len - 1, f)] = 0;
			fclose(f);
		}
		if (strstr(l2, "KVMAI-EXIT "))
			return 0;
		if (!stat("/tmp/planned.console", &st) && st.st_size > 0)
			return -1;	/* L2 said why: its own failure */
		TH_LOG("L2 reset before it reported (boot %d, empty console)", attempt);
		/* check.sh lists these lines as retries. */
		kt_run(RETRY_LINE, state, sizeof(state));
	}
	return -1;
}

/*
 * A planned domain boots as planned.  libvirt defines exactly what
 * `kvmaictl vm plan ... format libvirt` prints, plus a name and a boot
 * source (L2's kernel running the topo scenario, two serial ports for what
 * it reports), and starts it.  Inside, kvmaictl topo must give every
 * device its host node's guest node and every GPU-NIC pair the host's path
 * class, kvmaictl check must find the guest's NUMA nodes and switches, and
 * every bus id of the NCCL file for the same words must be a device of the
 * guest, on the file's node.  Without <acpi/> in the plan libvirt starts
 * q35 with ACPI off: no SRAT, and no description of the expanders' root
 * buses, whose devices the guest then does not find.  Under SeaBIOS: the
 * emulated host has no OVMF for its guests.
 */
TEST_F_TIMEOUT(libvirt, planned_domain_boots_as_planned, 400)
{
	static const char *const host[] = { "gpu0", "gpu2", "nic0", "nic2" };
	static const char *const guest[] = { "gpu0", "gpu1", "nic0", "nic1" };
	static char l1[65536], l2[65536], xml[16384], cmd[4096];
	struct kt_nccl_leaf leaves[16];
	struct kt_l2_dev devs[64];
	char why[256], hport[4][16], gport[4][16];
	const char *hbdf[4];
	struct utsname u;
	int nl, nd, i;

	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	/*
	 * L2 boots the emulated host's own kernel; the patched 7.x kernel's L2
	 * guests fault now and then under TCG's nested SVM, which is why
	 * boots.toml runs nested-kernel on request only.
	 */
	if (uname(&u) || strncmp(u.release, "6.", 2))
		SKIP(return, "patched kernel: its L2 guests fault under TCG's nested SVM");
	ASSERT_EQ(0, kt_run(KVMAICTL " -j topo", l1, sizeof(l1)));
	ASSERT_EQ(0, kt_run(KVMAICTL " vm nccl-topo " PLANNED_DEVS, xml, sizeof(xml)))
		TH_LOG("%s", xml);
	snprintf(cmd, sizeof(cmd),
		 "cat %s/base.cpio.gz %s/payload.cpio.gz $(ls %s/perf.cpio.gz 2>/dev/null) >/tmp/planned.initrd",
		 L2_SHARE, L2_SHARE, L2_SHARE);
	ASSERT_EQ(0, kt_run(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, kt_run(KVMAICTL " vm plan " PLANNED_DEVS " format libvirt >/tmp/planned.plan",
			    self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	snprintf(cmd, sizeof(cmd),
		 "sed -e 's|<domain type=\"kvm\"[^>]*>|&<name>planned</name><on_reboot>destroy</on_reboot>|' -e 's|</os>|%s&|' -e 's|</devices>|%s&|' /tmp/planned.plan >/tmp/planned.xml",
		 PLANNED_OS, PLANNED_SERIALS);
	ASSERT_EQ(0, kt_run(cmd, self->out, sizeof(self->out))) TH_LOG("%s", self->out);
	ASSERT_EQ(0, virsh(self->out, sizeof(self->out), "define /tmp/planned.xml"))
		TH_LOG("%s", self->out);
	if (boot_planned(_metadata, self, l2, sizeof(l2))) {
		kt_run("tail -n 40 /tmp/planned.console", cmd, sizeof(cmd));
		ASSERT_NE(NULL, strstr(l2, "KVMAI-EXIT 0"))
			TH_LOG("L2 did not report:\n%.4000s\nconsole:\n%s", l2, cmd);
	}
	ASSERT_NE(NULL, strstr(l2, "KVMAI-EXIT 0")) TH_LOG("%.4000s", l2);

	EXPECT_EQ(0, kt_topo_same_layout(l1, l2, host, guest, 4, why, sizeof(why)))
		TH_LOG("%s:\n%.4000s", why, l2);
	for (int i = 0; i < 4; i++) {
		kt_topo_port(l1, host[i], hport[i]);
		kt_topo_port(l2, guest[i], gport[i]);
	}
	EXPECT_NE(NULL, strstr(l2, "\"place\":\"guest\"")) TH_LOG("%.4000s", l2);
	EXPECT_NE(NULL, strstr(l2, "\"id\":\"numa\",\"status\":\"pass\"")) TH_LOG("%.4000s", l2);
	EXPECT_NE(NULL, strstr(l2, "\"id\":\"switches\",\"status\":\"pass\""))
		TH_LOG("%.4000s", l2);

	/* After the JSON: the probe lines, each device's bus id and node. */
	nd = kt_l2_parse_probe(l2, devs, 64);
	nl = kt_parse_nccl(xml, leaves, 16);
	/* Each planned root port shows its host port's link (x-speed, x-width). */
	EXPECT_EQ(0, kt_same_port_links(hport, gport, 4, devs, nd, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(4, nl) TH_LOG("NCCL file: %d leaves", nl);
	/* SeaBIOS placed every BAR of the assigned devices, at the host's size. */
	for (i = 0; i < 4; i++)
		hbdf[i] = kt_dev(host[i])->bdf;
	EXPECT_EQ(0, kt_same_bars(hbdf, leaves, 4, devs, nd, why, sizeof(why))) TH_LOG("%s", why);
	for (i = 0; i < nl; i++) {
		int seen = 0;

		for (int j = 0; j < nd; j++) {
			if (strcmp(devs[j].bdf, leaves[i].busid))
				continue;
			seen++;
			EXPECT_EQ(leaves[i].numaid, devs[j].numa) TH_LOG("%s", devs[j].bdf);
		}
		EXPECT_EQ(1, seen) TH_LOG("%s of the NCCL file: %d in L2", leaves[i].busid, seen);
	}
}

int main(int argc, char **argv)
{
	return kt_dev_run_bound(vm_devs, NVM, test_harness_run, argc, argv);
}
