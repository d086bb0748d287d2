// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guests of the emulated host (L2): the harness that later tests build on.
 * The emulated host, booted with the nested profile, runs Debian's QEMU under
 * KVM on nested SVM (guest/l2-run) and passes its own devices through with
 * vfio-pci; L2 must see them where the QEMU arguments put them.  L2 also
 * runs PMU cases that need a package of two CPUs, which the host lacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/sys.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/l2.h"
#include "lib/l2out.h"

static const struct kt_l2_dev *find_id(const struct kt_l2_dev *devs, int n, const char *id)
{
	const struct kt_l2_dev *found = NULL;

	for (int i = 0; i < n; i++) {
		if (strcmp(devs[i].id, id))
			continue;
		if (found)
			return NULL;	/* twice: ambiguous */
		found = &devs[i];
	}
	return found;
}

/* The vendor:device of a host device, as L2's probe scenario prints it. */
static int host_id(const char *bdf, char *buf, size_t len)
{
	__u16 ven, dev;

	if (kt_pci_read16(bdf, 0, &ven) || kt_pci_read16(bdf, 2, &dev))
		return -1;
	snprintf(buf, len, "%04x:%04x", ven, dev);
	return 0;
}

/* The parent directory of a sysfs path: the bridge above, as a path. */
static void parent_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	snprintf(buf, len, "%.*s", slash ? (int)(slash - path) : 0, path);
}

/*
 * Two host devices behind one switch under an expander on NUMA node 1, as
 * kvmaictl vm plan lays out a GPU and its NIC: L2 sees each once, below two
 * downstream ports of one upstream port, on node 1.
 */
FIXTURE(l2) {
};

FIXTURE_SETUP(l2)
{
}

FIXTURE_TEARDOWN(l2)
{
}

/* An L2 boot takes 15-20 s on an idle machine: leave room for a busy one. */
TEST_F_TIMEOUT(l2, sees_assigned_devices_below_one_switch, 300)
{
	const struct kt_dev *gpu = kt_dev("gpu0"), *nic = kt_dev("nic0");
	char gdrv[64], ndrv[64], gid[16], nid[16], cmd[1024], out[16384];
	char gp[256], np[256], gup[256], nup[256];
	const struct kt_l2_dev *g, *n;
	struct kt_l2_dev devs[64];
	int rc, nd;

	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	ASSERT_EQ(0, access("/dev/kvm", F_OK)) TH_LOG("no /dev/kvm: kvm_amd not loaded?");
	ASSERT_NE(NULL, gpu);
	ASSERT_NE(NULL, nic);
	ASSERT_EQ(0, host_id(gpu->bdf, gid, sizeof(gid)));
	ASSERT_EQ(0, host_id(nic->bdf, nid, sizeof(nid)));
	ASSERT_EQ(0, kt_pci_driver(gpu->bdf, gdrv, sizeof(gdrv)));
	ASSERT_EQ(0, kt_pci_driver(nic->bdf, ndrv, sizeof(ndrv)));
	test_cmd_pci_bind(gpu->bdf, "vfio-pci");
	test_cmd_pci_bind(nic->bdf, "vfio-pci");

	/* An expander on NUMA node 1, a root port, a switch with two ports. */
	snprintf(cmd, sizeof(cmd),
		 "l2-run -s probe -w /tmp/l2-nested_test -- %s %s %s %s %s -device vfio-pci,host=%s,bus=dp0 -device vfio-pci,host=%s,bus=dp1 2>&1",
		 "-device pxb-pcie,id=pxb1,bus_nr=0x40,numa_node=1,bus=pcie.0",
		 "-device pcie-root-port,id=rp0,bus=pxb1,chassis=1,slot=0",
		 "-device x3130-upstream,id=up0,bus=rp0",
		 "-device xio3130-downstream,id=dp0,bus=up0,chassis=2,slot=0",
		 "-device xio3130-downstream,id=dp1,bus=up0,chassis=3,slot=0",
		 gpu->bdf, nic->bdf);
	rc = kt_run(cmd, out, sizeof(out));
	_test_cmd_pci_bind(gpu->bdf, gdrv);
	_test_cmd_pci_bind(nic->bdf, ndrv);
	ASSERT_EQ(0, rc) TH_LOG("l2-run failed:\n%s", out);

	nd = kt_l2_parse_probe(out, devs, 64);
	ASSERT_GT(nd, 2) TH_LOG("%s", out);
	g = find_id(devs, nd, gid);
	n = find_id(devs, nd, nid);
	ASSERT_NE(NULL, g) TH_LOG("%s not seen once in L2:\n%s", gid, out);
	ASSERT_NE(NULL, n) TH_LOG("%s not seen once in L2", nid);
	EXPECT_EQ(1, g->numa);
	EXPECT_EQ(1, n->numa);
	EXPECT_NE(NULL, strstr(g->path, "pci0000:40/")) TH_LOG("%s", g->path);
	/* Two downstream ports, one upstream port above both. */
	parent_of(g->path, gp, sizeof(gp));
	parent_of(n->path, np, sizeof(np));
	EXPECT_STRNE(gp, np);
	parent_of(gp, gup, sizeof(gup));
	parent_of(np, nup, sizeof(nup));
	EXPECT_STREQ(gup, nup);
}

/*
 * The planned guest's host devices: two GPUs and two NICs from two NUMA
 * nodes and two switches, and the words that plan it.
 */
static const char *const planned[] = { "gpu0", "gpu2", "nic0", "nic2" };
#define PLAN_WORDS "gpu0 gpu2 nic0 nic2 vcpus 2 memory 256 firmware bios"
/*
 * OVMF keeps more of the guest's memory than SeaBIOS does: in 256 MiB,
 * L2's initramfs no longer fits ("Initramfs unpacking failed").
 */
#define PLAN_WORDS_UEFI "gpu0 gpu2 nic0 nic2 vcpus 2 memory 512 firmware uefi"
/* The image vm plan names for firmware uefi (tools/kvmaictl/vm/platform.h). */
#define KT_OVMF "/usr/share/ovmf/OVMF.fd"
/* Red Hat's virtio range is 0x1000-0x107f: OVMF and Linux leave this one. */
#define NOT_VIRTIO_ID "0x10f0"

/* @planned to vfio-pci, their drivers kept in @drv; what failed, or 0. */
static int bind_planned(char drv[4][64])
{
	for (int i = 0; i < 4; i++)
		drv[i][0] = 0;
	for (int i = 0; i < 4; i++) {
		const struct kt_dev *d = kt_dev(planned[i]);

		if (!d || kt_pci_driver(d->bdf, drv[i], 64) ||
		    _test_cmd_pci_bind(d->bdf, "vfio-pci"))
			return -1;
	}
	return 0;
}

/* Back to the drivers bind_planned() found. */
static void unbind_planned(char drv[4][64])
{
	for (int i = 0; i < 4; i++)
		if (drv[i][0])
			_test_cmd_pci_bind(kt_dev(planned[i])->bdf, drv[i]);
}

/*
 * The dogfood: two GPUs and two NICs from two NUMA nodes and two switches
 * of the emulated host (its expanders, which it treats as ACS switches),
 * laid out for L2 by `kvmaictl vm plan @words` and booted with exactly its
 * QEMU arguments, then @extra.  kvmaictl topo inside L2 must show every
 * pair with the path class it has on the host, and every device on its
 * host node's guest node (plan numbers guest nodes in host order).
 * `kvmaictl vm nccl-topo` for the same words must name each device once by
 * the bus id L2 gives it, below the bridges L2 shows above it, under its
 * L2 NUMA node.
 */
static void boot_planned_guest(struct __test_metadata *_metadata, const char *words,
			       const char *extra)
{
	/* Host names, and what L2's kvmaictl calls them (in bus order). */
	const char *const *host = planned;
	static const char *const guest[] = { "gpu0", "gpu1", "nic0", "nic1" };
	static char l1[65536], l2[65536], xml[16384];
	char drv[4][64], why[256], hport[4][16], gport[4][16];
	const char *hbdf[4];
	struct kt_nccl_leaf leaves[16];
	struct kt_l2_dev devs[64];
	char cmd[512];
	int rc, nl, nd;

	rc = bind_planned(drv);
	if (!rc)
		rc = kt_run("/kvmai/bin/kvmaictl -j topo", l1, sizeof(l1));
	snprintf(cmd, sizeof(cmd), "/kvmai/bin/kvmaictl vm nccl-topo %s", words);
	if (!rc)
		rc = kt_run(cmd, xml, sizeof(xml));
	snprintf(cmd, sizeof(cmd), "plan=$(/kvmai/bin/kvmaictl vm plan %s) && "
		 "l2-run -s topo -w /tmp/l2-plan -- $plan %s 2>&1", words, extra);
	if (!rc)
		rc = kt_run(cmd, l2, sizeof(l2));
	unbind_planned(drv);
	ASSERT_EQ(0, rc) TH_LOG("binding, plan or l2-run failed:\n%s\n%s", xml, l2);
	ASSERT_NE(NULL, strstr(l2, "\"devices\":"))
		TH_LOG("no kvmaictl -j topo from L2:\n%.4000s", l2);

	EXPECT_EQ(0, kt_topo_same_layout(l1, l2, host, guest, 4, why, sizeof(why)))
		TH_LOG("%s", why);
	for (int i = 0; i < 4; i++) {
		kt_topo_port(l1, host[i], hport[i]);
		kt_topo_port(l2, guest[i], gport[i]);
	}

	/*
	 * kvmaictl check in L2 knows it runs in a guest, and finds there what
	 * the plan promised NCCL: every device on a NUMA node, and behind
	 * switch ports rather than on the root bus.
	 */
	EXPECT_NE(NULL, strstr(l2, "\"place\":\"guest\""))
		TH_LOG("L2's kvmaictl check does not know it is a guest:\n%.4000s", l2);
	for (int i = 0; i < 2; i++) {
		static const char *const ids[] = { "numa", "switches" };
		char want[64];

		snprintf(want, sizeof(want), "\"id\":\"%s\",\"status\":\"pass\"", ids[i]);
		EXPECT_NE(NULL, strstr(l2, want)) TH_LOG("no %s in L2:\n%.4000s", want, l2);
	}

	/* topo prints what probe does after the JSON. */
	nd = kt_l2_parse_probe(l2, devs, 64);
	nl = kt_parse_nccl(xml, leaves, 16);
	/* Each planned root port shows its host port's link (x-speed, x-width). */
	EXPECT_EQ(0, kt_same_port_links(hport, gport, 4, devs, nd, why, sizeof(why)))
		TH_LOG("%s", why);
	ASSERT_EQ(4, nl) TH_LOG("NCCL file: %d leaves", nl);
	/* The firmware placed every BAR of the assigned devices, at the host's size. */
	for (int i = 0; i < 4; i++)
		hbdf[i] = kt_dev(host[i])->bdf;
	EXPECT_EQ(0, kt_same_bars(hbdf, leaves, 4, devs, nd, why, sizeof(why))) TH_LOG("%s", why);
	for (int i = 0; i < nl; i++) {
		char want[256] = "", got[256] = "", root[32], synth[16] = "";
		const struct kt_l2_dev *d = NULL;
		char comp[16][32];
		int seen = 0, nc = 0;

		for (int j = 0; j < nd; j++) {
			if (!strcmp(devs[j].bdf, leaves[i].busid)) {
				d = &devs[j];
				seen++;
			}
		}
		for (int j = 0; j < nl; j++)
			seen += j != i && !strcmp(leaves[j].busid, leaves[i].busid);
		ASSERT_EQ(1, seen) TH_LOG("%s: in L2 and the file once each?", leaves[i].busid);
		EXPECT_EQ(d->numa, leaves[i].numaid) TH_LOG("%s", d->bdf);

		/*
		 * NCCL's parents of a device: every second bridge up its sysfs
		 * path (pciDDDD:BB/port/.../device), below the root bus.
		 */
		for (const char *c = d->path, *slash; c && nc < 16; c = slash ? slash + 1 : NULL) {
			slash = strchr(c, '/');
			snprintf(comp[nc++], sizeof(comp[0]), "%.*s",
				 slash ? (int)(slash - c) : (int)strlen(c), c);
		}
		for (int k = nc % 2 ? 2 : 1; k < nc - 2; k += 2)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "/%s", comp[k]);
		/* The file's, less the synthetic switch standing for the expander. */
		for (int k = 0; k < leaves[i].depth; k++) {
			if (!strncmp(leaves[i].bridges[k], "ffff:", 5)) {
				EXPECT_EQ(0, k) TH_LOG("%s: synthetic bridge inside", d->bdf);
				memcpy(synth, leaves[i].bridges[k], sizeof(synth));
				continue;
			}
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "/%s",
				 leaves[i].bridges[k]);
		}
		EXPECT_STREQ(want, got) TH_LOG("L2 path %s", d->path);
		/* Each L2 root bus (expander) is one synthetic switch, as on the host. */
		EXPECT_NE(0, synth[0]) TH_LOG("%s: no synthetic switch", d->bdf);
		snprintf(root, sizeof(root), "%s", comp[0]);
		for (int j = 0; j < i; j++) {
			const struct kt_l2_dev *o = NULL;

			for (int k = 0; k < nd; k++)
				if (!strcmp(devs[k].bdf, leaves[j].busid))
					o = &devs[k];
			if (!o || !leaves[j].depth)
				continue;
			EXPECT_EQ(!strncmp(o->path, root, strlen(root)) &&
				  o->path[strlen(root)] == '/',
				  !strcmp(leaves[j].bridges[0], synth))
				TH_LOG("%s and %s: one root bus iff one synthetic switch", d->bdf,
				       o->bdf);
		}
	}
}

/* Whether the emulated host runs on kvm-ai's QEMU (vmhost.py, [machine]). */
static bool emulated_by_kvmai(void)
{
	char buf[32] = "";
	FILE *f = fopen("/etc/kvmai/emulator", "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	return !strcmp(buf, "kvmai\n");
}

/* Under SeaBIOS, which numbers the buses the way the plan assumes. */
TEST_F_TIMEOUT(l2, planned_guest_keeps_paths_and_numa, 400)
{
	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	boot_planned_guest(_metadata, PLAN_WORDS, "");
}

/*
 * The same guest under OVMF (firmware uefi: the plan's default, with its
 * 64-bit MMIO window).  OVMF connects every PCI display device as a
 * console, and it has a driver for virtio-gpu, which the emulated host's
 * GPUs are: an L2 it drives them in does not boot (emulated-host.rst,
 * "Guests of the emulated host").  A real GPU has no OVMF driver, so L2
 * is shown the model's devices under a device ID no virtio driver takes
 * (vfio-pci's x-pci-device-id): the test's adaptation of the model, not
 * part of the plan.  The emulated host must run on kvm-ai's QEMU
 * (vmhost.py --emulator kvmai), whose TCG fix OVMF in L2 needs: the
 * nested-uefi boot runs this case there (boots.toml, make check-nested).
 */
TEST_F_TIMEOUT(l2, planned_guest_keeps_paths_and_numa_under_uefi, 400)
{
	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	if (access(KT_OVMF, F_OK))
		SKIP(return, "no OVMF in this host (" KT_OVMF ")");
	if (!emulated_by_kvmai())
		SKIP(return, "emulator is Debian's QEMU, which OVMF in L2 aborts (nested-uefi)");
	boot_planned_guest(_metadata, PLAN_WORDS_UEFI,
			   "-global vfio-pci.x-pci-device-id=" NOT_VIRTIO_ID);
}

/*
 * The plan under a firmware that numbers the buses below the root ports
 * otherwise: SeaBIOS keeps two bus numbers free behind each root port that
 * asks (QEMU's bus-reserve), as firmware reserving buses for hotplug does.
 * The host's NCCL file then names bus ids L2 does not give its devices;
 * vm nccl-map in L2, from the plan's JSON, must give each device of the
 * file the bus id L2 shows it at, on the file's NUMA node.
 */
TEST_F_TIMEOUT(l2, nccl_file_follows_the_firmwares_bus_numbers, 400)
{
	static char l2[65536], xml[16384], out[65536];
	struct kt_nccl_leaf host[16], mapped[16];
	struct kt_l2_dev devs[64];
	int rc, nh, nm, nd, moved = 0;
	char drv[4][64];

	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	rc = bind_planned(drv);
	if (!rc)
		rc = kt_run("d=/tmp/l2-map/files/kvmai/map && rm -rf /tmp/l2-map && mkdir -p $d && "
			    "/kvmai/bin/kvmaictl -j vm plan " PLAN_WORDS " >$d/plan.json && "
			    "/kvmai/bin/kvmaictl vm nccl-topo " PLAN_WORDS " >$d/topo.xml && "
			    "cat $d/topo.xml && (cd /tmp/l2-map/files && find . | cpio -o -H newc | "
			    "gzip) >/tmp/l2-map/files.cpio.gz", xml, sizeof(xml));
	if (!rc)
		rc = kt_run("plan=$(/kvmai/bin/kvmaictl vm plan " PLAN_WORDS ") && "
			    "l2-run -s nccl-map -w /tmp/l2-map/run -i /tmp/l2-map/files.cpio.gz -- "
			    "$plan -global pcie-root-port.bus-reserve=2 2>&1", l2, sizeof(l2));
	unbind_planned(drv);
	ASSERT_EQ(0, rc) TH_LOG("binding, plan or l2-run failed:\n%s\n%s", xml, l2);

	/* The mapped file, then the probe lines: both cut their buffers up. */
	snprintf(out, sizeof(out), "%s", l2);
	nh = kt_parse_nccl(xml, host, 16);
	nm = kt_parse_nccl(out, mapped, 16);
	nd = kt_l2_parse_probe(l2, devs, 64);
	ASSERT_EQ(4, nh) TH_LOG("the host's file: %d devices", nh);
	ASSERT_EQ(nh, nm) TH_LOG("the mapped file: %d devices", nm);
	for (int i = 0; i < nm; i++) {
		int seen = 0;

		for (int j = 0; j < nd; j++) {
			if (strcmp(devs[j].bdf, mapped[i].busid))
				continue;
			seen++;
			EXPECT_EQ(mapped[i].numaid, devs[j].numa) TH_LOG("%s", devs[j].bdf);
		}
		EXPECT_EQ(1, seen) TH_LOG("%s of the mapped file: %d in L2", mapped[i].busid, seen);
		EXPECT_EQ(host[i].numaid, mapped[i].numaid) TH_LOG("%s", mapped[i].busid);
		moved += !!strcmp(host[i].busid, mapped[i].busid);
	}
	/* Else the firmware numbered as the plan did, and nothing was shown. */
	EXPECT_LT(0, moved) TH_LOG("no bus id moved: bus-reserve did not take");
}

/*
 * @in with "#   " before each line, so that L2's own KTAP lines in a log
 * are not counted as cases of this test.
 */
static const char *commented(const char *in, char *buf, size_t len)
{
	size_t o = 0;

	for (const char *p = in; *p && o + 6 < len; p++) {
		if (p == in || p[-1] == '\n') {
			memcpy(buf + o, "#   ", 4);
			o += 4;
		}
		buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

/* The KTAP line of case @name in @out, or NULL. */
static const char *ktap_line(const char *out, const char *name, char *line, size_t len)
{
	const char *p, *end;
	char want[160];

	snprintf(want, sizeof(want), " %s", name);
	for (p = out; p && *p; p = end ? end + 1 : NULL) {
		end = strchr(p, '\n');
		snprintf(line, len, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
		if ((!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7)) &&
		    strstr(line, want))
			return line;
	}
	return NULL;
}

/*
 * The emulated host has one CPU per package, so the PMU cases about part of
 * a package skip there.  An L2 with one package of two CPUs runs pmu_test
 * with kvmai and the mock provider of its own: those cases must run and pass.
 */
TEST_F_TIMEOUT(l2, pmu_cases_in_a_two_cpu_package, 600)
{
	static const char *const cases[] = {
		"pmu.partial_package_needs_shared",
		"pmu.core_select_unit_needs_every_cpu_of_the_package",
		"pmu.cpu_joining_an_owned_package_is_refused",
	};
	static char out[65536], log[80000];
	char line[256];
	int rc;

	if (access(KT_L2_KERNEL, F_OK))
		SKIP(return, KT_L2_SKIP);
	/* One package of two CPUs. */
	rc = kt_sh(out, sizeof(out), "l2-run -s selftests -a kvmai.selftests=pmu_test -w %s -- %s",
		   "/tmp/l2-pmu", "-smp 2,sockets=1,cores=2,threads=1 -m 512M");
	ASSERT_EQ(0, rc) TH_LOG("l2-run or pmu_test in L2 failed:\n%s",
				commented(out, log, sizeof(log)));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_NE(NULL, ktap_line(out, cases[i], line, sizeof(line)))
			TH_LOG("%s did not run in L2:\n%s", cases[i],
			       commented(out, log, sizeof(log)));
		EXPECT_EQ(0, strncmp(line, "ok ", 3)) TH_LOG("%s", line);
		EXPECT_EQ(NULL, strstr(line, "# SKIP")) TH_LOG("%s", line);
	}
}

TEST_HARNESS_MAIN
