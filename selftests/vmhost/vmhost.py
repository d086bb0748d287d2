#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot the emulated AI host (QEMU/TCG) and run one scenario in it.

The host is described once, in aihost.toml.  This program turns that into a
QEMU command line, an initramfs (a cached base: busybox, kernel modules,
pciutils; plus a per-run payload: kvmai.ko, kvmaictl, selftests, scenario
scripts, each with the shared libraries it needs) and a device map the guest
resolves into /run/kvmai/devices.  A host profile (aihost.toml's
[profile.NAME]) changes the machine and adds initramfs parts: guests of its
own (L2), kvm-ai's QEMU, libvirtd.

The guest writes the scenario's output to its second serial port; we stream it
to stdout as it arrives and exit with the scenario's exit code.  Kernel
messages go to the first serial port and are kept in a log, shown when the
guest fails to report.  A hard timeout ends QEMU whatever the guest does.
"""

import argparse
import gzip
import hashlib
import lzma
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))
import boots  # noqa: E402  (selftests/boots.py: which selftests run where)

CACHE = Path(os.environ.get("KVMAI_CACHE") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kvmai")
# Bump when the layout of the base initramfs changes.
BASE_FORMAT = 3
EXIT_MARK = "KVMAI-EXIT "
INIT_MARK = "KVMAI-INIT "
# The emulator failed rather than a test: QEMU died, or the guest kernel
# reported an RCU stall (a TCG vCPU stopped being run), or the guest went
# silent for silence_s (aihost.toml), or the guest reset with no word from
# its kernel (see emulator_failure()).  check.py boots once more on it.
EXIT_QEMU_CRASHED = 3
RCU_STALL = re.compile(r"rcu: INFO: rcu_\w+ (self-)?detected stalls?", re.A)
# An emulated-host vCPU that stays in an L2 guest's guest mode: the task
# the watchdog names is the L2 guest's QEMU.  Under TCG's nested SVM such a
# vCPU does not come out again, and the watchdog repeats its report every
# half minute while nothing else is said, so these reports alone are
# silence, not news.
STUCK_IN_L2 = re.compile(r"^.*watchdog: BUG: soft lockup - CPU#\d+ stuck for \d+s! "
                         r"\[qemu-system-x86:\d+\]\n?", re.M)
# The same failure where the stuck vCPU's own watchdog never runs (its
# timer does not bring it out of guest mode either): the other vCPU
# reports the tasks that wait for it, such as khugepaged, and the boot
# would otherwise go on until timeout_s.  Counted as the emulator's only in
# hosts that run guests of their own (the l2 part): elsewhere a hung task
# is a deadlock of ours.
HUNG_TASK = re.compile(r"INFO: task \S+ blocked for more than \d+ seconds", re.A)
# The same failure where the task that waits for the stuck vCPU spins
# instead: the other vCPU's watchdog reports it (khugepaged, in a
# cross-CPU call the stuck vCPU never answers), every half minute, so
# it is news and the boot would go on until timeout_s (seen in the
# libvirt profile, 470 s of it).  Taken once a report says 100 s.
SPINNING = re.compile(r"watchdog: BUG: soft lockup - CPU#\d+ stuck for (\d+)s! "
                      r"\[(?!qemu-system-x86:)", re.A)
SPINNING_S = 100
# The same failure as guest/l2-run sees it: its L2 guest's QEMU outlived
# SIGKILL with a thread still running, which only a vCPU that stays in
# guest mode does.  Said about two and a half minutes into the L2 boot,
# where the silence would take silence_s more.
L2_OUTLIVED = re.compile(r"^l2-run: L2 '[^'\n]*' outlived SIGKILL with a thread running", re.M)
# What a guest kernel prints when it, not the emulator, ends the run:
# panic=-1 and -no-reboot turn a panic into QEMU exiting 0.
KERNEL_DEATH = re.compile(r"Kernel panic|kernel BUG|BUG: |Oops|general protection fault|"
                          r"double fault|reboot: (Restarting|Power down)")


def console_news(console_text):
    """What of the console counts as hearing from the guest: all of it but
    the reports of a vCPU stuck in an L2 guest (STUCK_IN_L2).  A first
    such report stays in the console, where kernel_health fails on it if
    the boot goes on."""
    return STUCK_IN_L2.sub("", console_text)


def stuck_in_l2(console_text, runs_l2):
    """Whether the console shows an emulated-host vCPU stuck in an L2
    guest's guest mode that its watchdog cannot report (HUNG_TASK,
    L2_OUTLIVED)."""
    return runs_l2 and (HUNG_TASK.search(console_text) is not None or
                        L2_OUTLIVED.search(console_text) is not None or
                        any(int(s) >= SPINNING_S for s in SPINNING.findall(console_text)))


def emulator_failure(returncode, console_text):
    """Why QEMU's ending before the scenario reported is the emulator's
    failure rather than the guest's, or None if it may be the guest's.

    Killed by a signal: QEMU crashed.  Exited 0 (the guest reset, which
    -no-reboot turns into an exit) with nothing from the guest kernel about
    why: a triple fault, which under TCG's nested SVM the emulated host takes
    now and then while an L2 boots (emulated-host.rst), its last console
    line a KVM message.  A kernel that panics, oopses or reboots says so
    first, and that stays the guest's failure."""
    if returncode < 0:
        return f"QEMU was killed by signal {-returncode}"
    if returncode == 0 and not KERNEL_DEATH.search(console_text):
        return "the guest reset with no message from its kernel (a triple fault)"
    return None


def die(msg):
    print(f"vmhost: error: {msg}", file=sys.stderr)
    sys.exit(2)


# Initramfs parts a host profile may add (aihost.toml).
PARTS = ("l2", "kvmai-qemu", "libvirt")


class Topology:
    """aihost.toml, checked, with the PCI locations of every device."""

    def __init__(self, path):
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
        self.cfg = cfg
        self.machine = cfg["machine"]
        self.switches = {s["name"]: s for s in cfg.get("switch", [])}
        self.devices = cfg.get("device", [])
        names = set()
        for d in self.devices:
            if d["name"] in names or d["name"] in self.switches:
                die(f"{path}: name '{d['name']}' used twice")
            names.add(d["name"])
            if d.get("switch") not in self.switches:
                die(f"{path}: device '{d['name']}': unknown switch '{d.get('switch')}'")
            if d.get("role") not in ("gpu", "nic", "other"):
                die(f"{path}: device '{d['name']}': role must be gpu, nic or other")

    def use_profile(self, name, cpu=None):
        """Boot as host profile @name ([profile.NAME]): its keys replace
        [machine]'s, "append" adds to the kernel command line; @cpu, when
        given, replaces the CPU model.  Returns the initramfs parts it adds
        (PARTS)."""
        profiles = self.cfg.get("profile", {})
        if name not in profiles:
            die(f"no [profile.{name}] in the topology")
        profile = dict(profiles[name])
        parts = profile.pop("parts", [])
        for part in parts:
            if part not in PARTS:
                die(f"[profile.{name}]: unknown part '{part}' (known: {', '.join(PARTS)})")
        if "append" in profile:
            self.machine["cmdline"] += " " + profile.pop("append")
        for key, value in profile.items():
            if key not in self.machine:
                die(f"[profile.{name}]: '{key}' is no key of [machine]")
            self.machine[key] = value
        if cpu:
            self.machine["cpu"] = cpu
        if "l2" in parts and "l2" not in self.cfg:
            die(f"[profile.{name}] runs guests of its own, but the topology has no [l2]")
        return parts

    def qemu_args(self, tcg_thread=None):
        """Machine, NUMA, IOMMU, switches and endpoints as QEMU arguments.

        Also returns the device map for the guest: one line per device,
        'name role switch numa flags locator', where locator is the path of
        devfns from the expander's root bus down to the device, e.g.
        0000:10:02.0/00.0 (root port 10:02.0, then function 00.0 below it).
        """
        m = self.machine
        nodes = m["numa_nodes"]
        cpus = m["cpus"]
        mem = m["memory_mib"]
        thread = tcg_thread or m.get("tcg_thread", "multi")
        args = ["-machine", "q35,kernel-irqchip=split", "-accel", f"tcg,thread={thread}",
                # One socket per NUMA node, as on a real multi-socket host (and
                # so the kernel finds no cache shared across nodes).
                "-cpu", m.get("cpu", "max"), "-smp", f"{cpus},sockets={nodes},cores={cpus // nodes},threads=1",
                "-m", f"{mem}M",
                "-nodefaults", "-display", "none", "-no-reboot"]
        for n in range(nodes):
            # QEMU numbers CPUs socket by socket: node n is socket n.
            node_cpus = [c for c in range(cpus) if c // (cpus // nodes) == n]
            args += ["-object", f"memory-backend-ram,id=mem{n},size={mem // nodes}M",
                     "-numa", f"node,nodeid={n},memdev=mem{n}" +
                     "".join(f",cpus={c}" for c in node_cpus)]
        # The IOMMU must exist before the devices it translates for.
        args += ["-device", m["iommu"]]

        chassis = 0
        devmap = []
        port_of = {}      # switch name -> list of (child name, port id, locator)

        def add_ports(sw, model, bus, locator, children, extra=""):
            """One port of QEMU device @model on @bus per child, in order,
            with the QEMU properties @extra ("x-speed=32,...") if any."""
            nonlocal chassis
            ports = []
            for i, name in enumerate(children):
                chassis += 1
                pid = f"{sw['name']}p{i}"
                args.extend(["-device", f"{model},id={pid},bus={bus},addr={i:#x},"
                             f"chassis={chassis},slot={chassis}" + (f",{extra}" if extra else "")])
                ports.append((name, pid, locator(i)))
            port_of[sw["name"]] = ports

        slot = 0
        for sw in self.switches.values():
            if sw["kind"] != "expander":
                continue
            pxb = f"{sw['name']}-pxb"
            args += ["-device", f"pxb-pcie,id={pxb},bus_nr={sw['bus_nr']},"
                     f"numa_node={sw['numa_node']},bus=pcie.0,addr={0x10 + slot:#x}"]
            slot += 1
            # One ACS root port per endpoint, then one per switch hanging below.
            below = [d["name"] for d in self.devices if d["switch"] == sw["name"]]
            below += [c["name"] for c in self.switches.values() if c.get("parent") == sw["name"]]
            add_ports(sw, "pcie-root-port", pxb,
                      lambda i, b=sw["bus_nr"]: f"0000:{b:02x}:{i:02x}.0", below,
                      sw.get("port_qemu", ""))

        def take_port(parent, child):
            for i, (name, pid, loc) in enumerate(port_of[parent]):
                if name == child:
                    return port_of[parent].pop(i)[1:]
            die(f"no port of '{parent}' left for '{child}'")

        for sw in self.switches.values():
            if sw["kind"] == "expander":
                continue
            if sw["kind"] != "x3130" or sw.get("parent") not in self.switches:
                die(f"switch '{sw['name']}': kind must be expander, or x3130 with a parent")
            rp, loc = take_port(sw["parent"], sw["name"])
            up = f"{sw['name']}-up"
            args += ["-device", f"x3130-upstream,id={up},bus={rp},addr=0x0"]
            members = [d["name"] for d in self.devices if d["switch"] == sw["name"]]
            add_ports(sw, "xio3130-downstream", up,
                      lambda i, loc=loc: f"{loc}/00.0/{i:02x}.0", members)

        for d in self.devices:
            pid, loc = take_port(d["switch"], d["name"])
            args += d.get("backend", [])
            args += ["-device", f"{d['qemu']},id={d['name']},bus={pid},addr=0x0"]
            flags = [f for f in ("ats", "sriov") if d.get(f)]
            if self.switches[d["switch"]]["kind"] == "expander":
                flags.append("acsport")     # its port is an ACS root port
            flags = flags or ["-"]
            sw = self.switches[d["switch"]]
            numa = sw.get("numa_node", self.switches.get(sw.get("parent"), {}).get("numa_node"))
            devmap.append(f"{d['name']} {d['role']} {d['switch']} {numa} "
                          f"{','.join(flags)} {loc}/00.0")
        return args, devmap


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def elf_deps(paths):
    """Shared libraries (and the loader) that ELF programs need, via ldd."""
    libs = set()
    for p in paths:
        out = subprocess.run(["ldd", str(p)], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
                libs.add(parts[2])
            elif parts and parts[0].startswith("/"):
                libs.add(parts[0])
    return sorted(libs)


def is_elf(p):
    with open(p, "rb") as f:
        return f.read(4) == b"\x7fELF"


def copy_into(root, src, dst=None):
    dst = root / (dst or str(src).lstrip("/"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst, follow_symlinks=True)
    return dst


def cpio_gz(stage, out):
    """newc cpio of a staged tree, gzip -1 (boot speed matters more than size)."""
    files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=stage, check=True,
                           capture_output=True).stdout
    data = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"], cwd=stage,
                          input=files, check=True, capture_output=True).stdout
    with gzip.open(out, "wb", compresslevel=1) as f:
        f.write(data)


def cached_part(name, key_material, fill):
    """An initramfs part that changes rarely, cached by content as
    $KVMAI_CACHE/vm/NAME-KEY.cpio.gz, KEY a hash of key_material;
    fill(root) stages its tree when the cache lacks it."""
    key = hashlib.sha256(repr(key_material).encode()).hexdigest()[:16]
    out = CACHE / "vm" / f"{name}-{key}.cpio.gz"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fill(root)
        # Two emulated hosts booting at once may fill the same part: each
        # writes its own file, and the rename keeps one whole.
        tmp_out = out.with_suffix(f".tmp{os.getpid()}")
        cpio_gz(root, tmp_out)
        tmp_out.rename(out)
    return out


class Kernel:
    """A kernel to boot: vmlinuz plus its modules tree, as unpacked by make deps
    (DIR/boot/vmlinuz-VER, DIR/lib/modules/VER) or installed by make kernel."""

    def __init__(self, kdir):
        self.dir = Path(kdir)
        images = sorted(self.dir.glob("boot/vmlinuz-*"))
        if not images:
            die(f"no boot/vmlinuz-* under {self.dir} (run 'make deps')")
        self.image = images[-1]
        self.version = self.image.name[len("vmlinuz-"):]
        self.modules = self.dir / "lib/modules" / self.version

    def module_chain(self, name):
        """Module files to insmod, dependencies first, for one module name."""
        res = subprocess.run(["modprobe", "-d", str(self.dir), "-S", self.version,
                              "--show-depends", name], capture_output=True, text=True)
        if res.returncode:
            die(f"kernel {self.version}: module '{name}': {res.stderr.strip()}")
        return [Path(l.split()[1]) for l in res.stdout.splitlines()
                if l.startswith("insmod ")]


def build_base(kernel, modules):
    """The part of the initramfs that changes rarely; cached by content."""
    busybox = Path("/bin/busybox")
    tools = [Path(shutil.which(t) or die(f"{t} not found (run 'make deps')"))
             for t in ("lspci", "setpci")]
    key = (BASE_FORMAT, str(kernel.image), kernel.image.stat().st_mtime, modules,
           busybox.stat().st_mtime, [t.stat().st_mtime for t in tools])

    def fill(root):
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "run",
                  "tmp", "etc/kvmai", "lib/modules/boot", "root"):
            (root / d).mkdir(parents=True, exist_ok=True)
        copy_into(root, busybox, "bin/busybox")
        applets = subprocess.run([busybox, "--list-full"], capture_output=True,
                                 text=True, check=True).stdout.split()
        for a in applets:
            link = root / a
            if not link.exists():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to("/bin/busybox")
        for t in tools:
            copy_into(root, t, f"usr/bin/{t.name}")
        for lib in elf_deps(tools):
            copy_into(root, lib)
        ids = Path("/usr/share/misc/pci.ids")
        if ids.exists():
            copy_into(root, ids)
        # Modules, decompressed (busybox insmod reads plain .ko), in load order.
        order = []
        for name in modules:
            for ko in kernel.module_chain(name):
                plain = ko.name.removesuffix(".xz").removesuffix(".zst")
                if plain in order:
                    continue
                dst = root / "lib/modules/boot" / plain
                if ko.suffix == ".xz":
                    dst.write_bytes(lzma.decompress(ko.read_bytes()))
                else:
                    shutil.copy2(ko, dst)
                order.append(plain)
        (root / "etc/kvmai/modules").write_text("".join(f"{m}\n" for m in order))
        # lspci -k looks drivers up in the module indexes.
        for idx in kernel.modules.glob("modules.*"):
            copy_into(root, idx, f"lib/modules/{kernel.version}/{idx.name}")

    return cached_part(f"base-{kernel.version}", key, fill)


# Bump when the layout of the l2 part changes.
L2_FORMAT = 5
# Where QEMU's firmware comes from on the build machine, searched in order.
FIRMWARE_DIRS = [Path("/usr/share/qemu"), Path("/usr/share/seabios")]
# Debian's OVMF (package ovmf): code and variable store in one image, at
# the path `kvmaictl vm plan ... firmware uefi` names (vm/platform.h).
OVMF = Path("/usr/share/ovmf/OVMF.fd")


def find_firmware(cfg):
    """The firmware files [l2] names, from the build machine's QEMU."""
    firmware = []
    for name in cfg["firmware"]:
        found = [d / name for d in FIRMWARE_DIRS if (d / name).exists()]
        firmware.append(found[0] if found else die(f"QEMU firmware {name} not found"))
    return firmware


def kvmai_qemu():
    """kvm-ai's QEMU (make qemu, tools/devenv/qemu.sh), or None if it is not
    built: the selftests that need it then fail saying so."""
    qdir = subprocess.run([str(TOP / "tools/devenv/qemu.sh"), "dir"], capture_output=True,
                          text=True).stdout.strip()
    return Path(qdir) / "bin/qemu-system-x86_64" if qdir else None


def emulator(machine):
    """The QEMU that runs the emulated host, as the start of its command line:
    Debian's, or with [machine] emulator = "kvmai" kvm-ai's (make qemu), which
    has the series' TCG fixes (patches/qemu/series) and is told where
    Debian's firmware is, since it installs none.  $KVMAI_EMULATOR names
    another binary, for debugging the emulator."""
    if os.environ.get("KVMAI_EMULATOR"):
        return [os.environ["KVMAI_EMULATOR"]]
    which = machine.get("emulator", "debian")
    if which == "debian":
        return ["qemu-system-x86_64"]
    if which != "kvmai":
        die(f"emulator = \"{which}\": want \"debian\" or \"kvmai\"")
    qemu = kvmai_qemu() or die("emulator = \"kvmai\", but kvm-ai's QEMU is not built "
                               "(run 'make qemu')")
    return [str(qemu)] + [a for d in FIRMWARE_DIRS for a in ("-L", str(d))]


def build_l2(kernel, base, cfg, kvmai_qemu=None):
    """What the emulated host needs to run guests of its own (L2, under KVM on
    nested SVM), cached by content: Debian's QEMU with its libraries and the
    firmware it loads, Debian's OVMF where plans for UEFI guests name it,
    and the kernel and base initramfs L2 boots, the same as
    the emulated host's, so that an L2 guest runs the same /init (guest/l2-run
    adds the run's payload); the kernel may be another (--l2-kernel-dir),
    which boots without modules: L2's /init loads none.  With kvmai_qemu,
    also that QEMU (kvm-ai's patches) as
    /usr/libexec/kvmai/qemu-system-x86_64, for the tests that
    need it.  L2 also gets Debian's perf (linux-perf), in an initramfs part
    of its own that only L2 loads (l2-run), for the uncore PMU tests."""
    qemu = Path(shutil.which("qemu-system-x86_64") or die("qemu-system-x86_64 not found"))
    qemus = [qemu] + ([Path(kvmai_qemu)] if kvmai_qemu else [])
    perf = Path(shutil.which("perf") or die("perf not found (run 'make deps')"))
    firmware = find_firmware(cfg)
    if not OVMF.exists():
        die(f"{OVMF} not found (run 'make deps')")
    firmware_stats = [(str(f), f.stat().st_mtime) for f in firmware + [OVMF]]
    key = (L2_FORMAT, [(str(q), q.stat().st_mtime) for q in qemus],
           firmware_stats,
           str(kernel.image), kernel.image.stat().st_mtime, base.name,
           perf.stat().st_mtime)

    def fill(root):
        copy_into(root, qemu, "usr/bin/qemu-system-x86_64")
        if kvmai_qemu:
            # Without its debug information (kept in the cache, for the
            # emulated host's own runs of it): less than half the size.
            dst = copy_into(root, Path(kvmai_qemu), "usr/libexec/kvmai/qemu-system-x86_64")
            subprocess.run(["strip", "--strip-debug", str(dst)], check=True)
        for lib in elf_deps(qemus):
            copy_into(root, lib)
        for f in firmware:
            copy_into(root, f, f"usr/share/kvmai-l2/firmware/{f.name}")
        copy_into(root, OVMF)
        copy_into(root, kernel.image, "usr/share/kvmai-l2/vmlinuz")
        copy_into(root, base, "usr/share/kvmai-l2/base.cpio.gz")
        with tempfile.TemporaryDirectory() as tmp:
            copy_into(Path(tmp), perf, "usr/bin/perf")
            for lib in elf_deps([perf]):
                copy_into(Path(tmp), lib)
            cpio_gz(Path(tmp), root / "usr/share/kvmai-l2/perf.cpio.gz")

    return cached_part(f"l2-{kernel.version}", key, fill)


# Bump when the layout of the libvirt part changes.
LIBVIRT_FORMAT = 2


def build_libvirt(cfg):
    """What the emulated host needs to run libvirt (the libvirt part of a
    host profile), cached by content: Debian's libvirtd and its QEMU driver as make deps
    unpacked them, virsh, their libraries, libvirt's CPU map, the daemon's
    configuration (libvirt/) and kvm-ai's hook installed as the kvmaictl
    package installs it (the script in /usr/libexec/kvmai, calling
    /kvmai/bin/kvmaictl, and a symbolic link to it where Debian's libvirt
    looks), and QEMU's firmware ([l2]) where QEMU looks
    when libvirt starts it.  QEMU itself comes from the l2 part."""
    lvd = CACHE / "libvirt-daemon"
    if not (lvd / ".complete").exists():
        die(f"no libvirt daemon unpacked at {lvd} (run 'make deps')")
    libvirtd = lvd / "usr/sbin/libvirtd"
    driver = lvd / "usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so"
    virsh = Path(shutil.which("virsh") or die("virsh not found (run 'make deps')"))
    cpu_map = Path("/usr/share/libvirt/cpu_map")
    conf = sorted((HERE / "libvirt").glob("*.conf"))
    hook = TOP / "tools/kvmaictl/libvirt-hook.sh.in"
    firmware = find_firmware(cfg)
    inputs = [libvirtd, driver, virsh, hook, *conf, *firmware]
    key = (LIBVIRT_FORMAT, (lvd / ".version").read_text(),
           [(str(f), f.stat().st_mtime, f.read_bytes() if f in conf else b"") for f in inputs])

    def fill(root):
        copy_into(root, libvirtd, "usr/sbin/libvirtd")
        copy_into(root, driver, str(driver.relative_to(lvd)))
        copy_into(root, virsh, "usr/bin/virsh")
        missing = subprocess.run(["ldd", str(libvirtd), str(driver)], capture_output=True,
                                 text=True).stdout
        if "not found" in missing:
            die("libraries of libvirtd missing on this machine (run 'make deps'):\n" + missing)
        for lib in elf_deps([libvirtd, driver, virsh]):
            copy_into(root, lib)
        shutil.copytree(cpu_map, root / str(cpu_map).lstrip("/"))
        for f in conf:
            copy_into(root, f, f"etc/libvirt/{f.name}")
        # What CMake's configure_file does for an install, with the
        # emulated host's kvmaictl.
        script = root / "usr/libexec/kvmai/libvirt-hook"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(hook.read_text().replace("@KVMAICTL@", "/kvmai/bin/kvmaictl"))
        script.chmod(0o755)
        (root / "etc/libvirt/hooks/qemu.d").mkdir(parents=True)
        (root / "etc/libvirt/hooks/qemu.d/kvmai").symlink_to("/usr/libexec/kvmai/libvirt-hook")
        # libvirt looks up its built-in QEMU user and group (Debian's) before
        # it reads qemu.conf's.
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                         "libvirt-qemu:x:64055:108::/var/lib/libvirt:/bin/false\n")
        (root / "etc/group").write_text("root:x:0:\nkvm:x:108:\nlibvirt-qemu:x:64055:\n")
        (root / "etc/nsswitch.conf").write_text("passwd: files\ngroup: files\n")
        for f in firmware:
            copy_into(root, f, f"usr/share/qemu/{f.name}")
        for d in ("var/lib/libvirt/qemu", "var/cache/libvirt/qemu", "var/log/libvirt/qemu"):
            (root / d).mkdir(parents=True, exist_ok=True)
        # virsh finds libvirtd's socket below /var/run.
        (root / "var/run").symlink_to("/run")

    return cached_part("libvirt", key, fill)


def build_payload(payload_dir, devmap, profile, out, emulator_name="debian"):
    """Per-run part: /init, the project's files and the libraries they need,
    and what the check scenario runs: the host profile and the selftests
    table (../boots.toml).  /etc/kvmai/emulator names the QEMU the host runs
    on ([machine] emulator), for the tests that need kvm-ai's."""
    try:
        table = boots.Table()
    except boots.TableError as e:
        die(str(e))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copy_into(root, HERE / "guest/init", "init")
        (root / "etc/kvmai").mkdir(parents=True)
        (root / "etc/kvmai/topology").write_text("".join(f"{l}\n" for l in devmap))
        (root / "etc/kvmai/profile").write_text(f"{profile}\n")
        (root / "etc/kvmai/emulator").write_text(f"{emulator_name}\n")
        (root / "etc/kvmai/selftests").write_text("".join(f"{l}\n"
                                                          for l in table.guest_lines()))
        # Users a VMM is started as (kvmaictl pmu exec --user nobody --group
        # kvm), and the group /init gives /dev/kvm to, as Debian's udev does.
        (root / "etc/passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                         "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
        (root / "etc/group").write_text("root:x:0:\nkvm:x:108:\nnogroup:x:65534:\n")
        shutil.copytree(HERE / "guest", root / "kvmai/vmhost")
        shutil.copytree(HERE / "scenarios", root / "kvmai/scenarios")
        shutil.copytree(HERE / "l2", root / "kvmai/l2", ignore=shutil.ignore_patterns("*.c"))
        elves = []
        if payload_dir:
            # Symlinks stay symlinks: recorded sysfs trees are made of them.
            shutil.copytree(payload_dir, root / "kvmai", symlinks=True, dirs_exist_ok=True)
            elves = [p for p in (root / "kvmai").rglob("*")
                     if p.is_file() and not p.is_symlink() and os.access(p, os.X_OK)
                     and is_elf(p)]
        for lib in elf_deps(elves):
            copy_into(root, lib)
        cpio_gz(root, out)


def boot(args):
    topo = Topology(args.topology)
    parts = topo.use_profile(args.profile, args.cpu)
    if args.emulator:
        topo.machine["emulator"] = args.emulator
    kernel = Kernel(args.kernel_dir)
    qargs, devmap = topo.qemu_args(args.tcg_thread)

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    console, results = work / "console.log", work / "results.log"
    for f in (console, results):
        f.unlink(missing_ok=True)

    t0 = time.monotonic()
    base = build_base(kernel, topo.machine.get("modules", []))
    payload = work / "payload.cpio.gz"
    build_payload(args.payload, devmap, args.profile, payload,
                  topo.machine.get("emulator", "debian"))
    images = [base, payload]
    if "l2" in parts:
        # L2 boots base + this run's payload too: both go in as files.
        l2 = work / "l2.cpio.gz"
        cfg = topo.cfg["l2"]
        with tempfile.TemporaryDirectory() as tmp:
            copy_into(Path(tmp), payload, "usr/share/kvmai-l2/payload.cpio.gz")
            (Path(tmp) / "etc/kvmai").mkdir(parents=True)
            (Path(tmp) / "etc/kvmai/l2").write_text(
                "".join(f"L2_{k.upper()}={cfg[k]}\n"
                        for k in ("memory_mib", "cpus", "numa_nodes", "timeout_s")))
            cpio_gz(Path(tmp), l2)
        qemu = kvmai_qemu() if "kvmai-qemu" in parts else None
        l2_kernel = Kernel(args.l2_kernel_dir) if args.l2_kernel_dir else kernel
        images += [build_l2(l2_kernel, base, cfg, qemu), l2]
    if "libvirt" in parts:
        images.append(build_libvirt(topo.cfg["l2"]))
    initrd = work / "initrd.img"
    with open(initrd, "wb") as f:
        for image in images:
            f.write(image.read_bytes())
    t_initrd = time.monotonic() - t0

    append = f"{topo.machine['cmdline']} kvmai.scenario={args.scenario}"
    if args.append:
        append += " " + " ".join(args.append)
    cmd = [*emulator(topo.machine), *qargs, "-kernel", str(kernel.image), "-initrd", str(initrd),
           "-append", append, "-serial", f"file:{console}", "-serial", f"file:{results}"]
    (work / "qemu.cmd").write_text(shlex.join(cmd) + "\n")
    if args.verbose:
        print(f"vmhost: kernel {kernel.version}, initramfs {initrd.stat().st_size >> 20} MiB "
              f"in {t_initrd:.1f}s", file=sys.stderr)
        print("vmhost: " + shlex.join(cmd), file=sys.stderr)

    timeout = args.timeout or topo.machine["timeout_s"]
    t0 = time.monotonic()
    qemu_log = open(work / "qemu.log", "wb")
    qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qemu_log,
                            stderr=subprocess.STDOUT)
    silence = topo.machine.get("silence_s", timeout)
    rc, shown, timed_out, init_at, stalled, silent = None, 0, False, None, False, False
    hung = False
    heard, last_sizes = time.monotonic(), None
    while True:
        done = qemu.poll() is not None
        # One read of the console a poll, for both the silence and the stall.
        text = console.read_text(errors="replace") if console.exists() else ""
        sizes = (len(console_news(text)), results.stat().st_size if results.exists() else 0)
        if sizes != last_sizes:
            heard, last_sizes = time.monotonic(), sizes
        elif not done and time.monotonic() - heard > silence:
            silent = True
            qemu.kill()
            qemu.wait()
            break
        if not done and RCU_STALL.search(text):
            stalled = True
            qemu.kill()
            qemu.wait()
            break
        if not done and stuck_in_l2(text, "l2" in parts):
            hung = True
            qemu.kill()
            qemu.wait()
            break
        if results.exists():
            text = results.read_bytes().decode(errors="replace").replace("\r", "")
            complete = text[:text.rfind("\n") + 1]
            for line in complete[shown:].splitlines():
                if line.startswith(EXIT_MARK):
                    rc = int(line[len(EXIT_MARK):])
                elif line.startswith(INIT_MARK):
                    init_at = line[len(INIT_MARK):]
                else:
                    print(line, flush=True)
            shown = len(complete)
        if done:
            break
        if time.monotonic() - t0 > timeout:
            timed_out = True
            qemu.kill()
            qemu.wait()
            break
        time.sleep(0.2)
    elapsed = time.monotonic() - t0
    qemu_log.close()
    qemu_out = (work / "qemu.log").read_bytes().decode(errors="replace").strip()

    print(f"vmhost: {kernel.version} ({args.profile}): /init at {init_at or '?'}s guest uptime, "
          f"scenario '{args.scenario}' done after {elapsed:.1f}s wall", file=sys.stderr)
    if args.verbose or rc is None or rc:
        print(f"vmhost: console log: {console}", file=sys.stderr)
    if stalled or silent or hung:
        why = ("the guest kernel reports an RCU stall (an emulated vCPU is not being run)"
               if stalled else
               "the guest reports hung or long-spinning tasks, or an L2 guest that outlived "
               "SIGKILL, while it "
               "runs guests of its own (a vCPU stuck in an L2 guest)" if hung else
               f"the guest printed nothing for {silence}s (silence_s) "
               "but reports of a vCPU stuck in an L2 guest, if any")
        print(f"vmhost: error: scenario '{args.scenario}' stopped: {why}", file=sys.stderr)
        tail = console.read_bytes().decode(errors="replace").splitlines()[-8:]
        print("vmhost: last console lines:\n  " + "\n  ".join(tail), file=sys.stderr)
        return EXIT_QEMU_CRASHED
    if rc is None:
        text = console.read_bytes().decode(errors="replace") if console.exists() else ""
        crashed = None if timed_out else emulator_failure(qemu.returncode, text)
        why = (f"timed out after {timeout}s" if timed_out else
               f"QEMU exited ({qemu.returncode}) before the scenario reported"
               + (f": {crashed}" if crashed else ""))
        print(f"vmhost: error: scenario '{args.scenario}' {why}", file=sys.stderr)
        if qemu_out:
            print("vmhost: qemu said:\n  " + "\n  ".join(qemu_out.splitlines()[-10:]),
                  file=sys.stderr)
        if text:
            tail = text.splitlines()[-30:]
            print("vmhost: last console lines:\n  " + "\n  ".join(tail), file=sys.stderr)
        # The emulator itself died: callers may tell this apart from a guest failure.
        return EXIT_QEMU_CRASHED if crashed else 1
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topology", default=HERE / "aihost.toml")
    ap.add_argument("--kernel-dir", default=CACHE / "linux-6.12",
                    help="tree with boot/vmlinuz-VER and lib/modules/VER")
    ap.add_argument("--l2-kernel-dir",
                    help="the kernel L2 guests boot, as --kernel-dir (default: the emulated "
                    "host's): to tell which of two kernels a fault of L2's follows")
    ap.add_argument("--payload", help="directory copied to /kvmai in the guest")
    ap.add_argument("--workdir", default=TOP / "build/vm")
    ap.add_argument("--scenario", default="shell",
                    help="script in scenarios/ the guest runs (kvmai.scenario=)")
    ap.add_argument("--append", action="append", default=[],
                    help="extra kernel command line (each one given is added)")
    ap.add_argument("--timeout", type=int, help="seconds (default: from the topology)")
    ap.add_argument("--tcg-thread", choices=("single", "multi"),
                    help="TCG threading (default: the topology's tcg_thread)")
    ap.add_argument("--profile", default="plain",
                    help="host profile: [profile.NAME] of the topology (plain, nested, "
                         "uncore-guests, libvirt)")
    ap.add_argument("--cpu", help="QEMU CPU model instead of the profile's (the same host "
                                   "on another platform model, e.g. EPYC-Genoa)")
    ap.add_argument("--emulator", choices=("debian", "kvmai"),
                    help="the QEMU the emulated host runs on, instead of the profile's "
                         "([machine] emulator)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--print-qemu-args", action="store_true",
                    help="print the machine's QEMU arguments and the device map, then exit")
    args = ap.parse_args()

    if args.print_qemu_args:
        topo = Topology(args.topology)
        topo.use_profile(args.profile, args.cpu)
        qargs, devmap = topo.qemu_args(args.tcg_thread)
        print(shlex.join(qargs))
        print("\n".join(devmap))
        return 0
    if not (HERE / "scenarios" / f"{args.scenario}.sh").exists():
        die(f"no scenario '{args.scenario}' in {HERE / 'scenarios'}")
    return boot(args)


if __name__ == "__main__":
    sys.exit(main())
