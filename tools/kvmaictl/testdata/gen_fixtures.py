#!/usr/bin/env python3
"""Writes the synthesized sysfs/procfs trees kvmaictl's tests read.

Each fixture is a directory <name>/ with sys/ and proc/ laid out like the
live ones: devices under sys/devices/pciDDDD:BB/..., relative symlinks from
sys/bus/pci/devices, iommu_group and driver links, binary `config`
files with real capability chains (PCIe, ACS, ATS, SR-IOV), and the perf
PMUs under sys/devices with their sys/bus/event_source/devices links.

    ./gen_fixtures.py            # rewrite every fixture here
    ./gen_fixtures.py OUTDIR     # write them elsewhere

The trees are committed; tests never run this. After changing it, run it,
then refresh the goldens (see README.md).
"""
import os
import shutil
import struct
import sys

# ACS bits, as in the PCIe spec and the kernel's PCI_ACS_*.
SV, TB, RR, CR, UF, EC, DT = (1 << i for i in range(7))
ACS_CAP_FULL = SV | TB | RR | CR | UF | DT        # 0x5f, what most switches offer
ACS_KERNEL_DEFAULT = SV | RR | CR | UF            # 0x1d, set by Linux with an IOMMU
ACS_NVIDIA_VM = SV | RR | CR | UF | DT            # 0x5d, NVIDIA's VM guidance

PT_ENDPOINT, PT_ROOT_PORT, PT_UPSTREAM, PT_DOWNSTREAM, PT_RCIEP = 0x0, 0x4, 0x5, 0x6, 0x9

# perf PMUs every kernel registers, with their perf types; hardware PMUs
# (Host.pmus) come on top.
SOFTWARE_PMUS = {"software": 1, "tracepoint": 2, "breakpoint": 5, "kprobe": 6, "uprobe": 7}
CORE_PMUS = ("cpu", "cpu_core", "cpu_atom")
# An Intel host's core PMU and the non-uncore PMUs next to it.
INTEL_PMUS = {"cpu": 4, "msr": 8, "power": 9, "cstate_core": 10, "cstate_pkg": 11}

# What the kernel prints as a resource's flags in a function's sysfs
# `resource` file (IORESOURCE_* in include/linux/ioport.h), with the BAR's
# own low bits (PCI_BASE_ADDRESS_*: I/O; 64-bit; prefetchable).
IORESOURCE_IO, IORESOURCE_MEM, IORESOURCE_PREFETCH = 0x100, 0x200, 0x2000
IORESOURCE_SIZEALIGN, IORESOURCE_MEM_64 = 0x40000, 0x100000
BAR_FLAGS = {
    "io": IORESOURCE_IO | IORESOURCE_SIZEALIGN | 0x1,
    "mem32": IORESOURCE_MEM | IORESOURCE_SIZEALIGN,
    "mem64pref": (IORESOURCE_MEM | IORESOURCE_MEM_64 | IORESOURCE_PREFETCH | IORESOURCE_SIZEALIGN
                  | 0xC),
}
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


def vtd_cap(sllps, fl1gp=False, caching_mode=False, mgaw=48):
    """A VT-d capability register as sysfs shows it (intel-iommu/cap), built
    from the fields that matter here, not recorded from hardware: ND 2:0
    (64K domains), CM 7, SAGAW 12:8, MGAW 21:16, SLLPS 37:34 (second-stage
    large pages: bit 34 2 MiB, bit 35 1 GiB), PSI 39, FL1GP 56 (first-stage
    1 GiB pages); see cap_* in drivers/iommu/intel/iommu.h."""
    sagaw = 0x4 if mgaw <= 48 else 0xC  # 4-level tables, and 5-level
    return (0x6 | int(caching_mode) << 7 | sagaw << 8 | (mgaw - 1) << 16 | sllps << 34 | 1 << 39
            | int(fl1gp) << 56)


def vtd_ecap(scalable):
    """The extended capability register (intel-iommu/ecap): QI 1, DT 2, IR 3,
    PT 6; with `scalable`, scalable mode (SMTS 43) with second- and
    first-stage translation (SLTS 46, FLTS 47)."""
    e = 1 << 1 | 1 << 2 | 1 << 3 | 1 << 6
    return e | (1 << 43 | 1 << 46 | 1 << 47 if scalable else 0)


# A server's unit (Sapphire Rapids-like: 5-level, scalable mode, 2M and 1G
# pages in both stages) and QEMU's intel-iommu with caching-mode=on (SLLPS
# 2M and 1G as hw/i386/intel_iommu_internal.h sets it, no scalable mode).
VTD_SERVER = (vtd_cap(0b11, fl1gp=True, mgaw=57), vtd_ecap(True))
VTD_QEMU = (vtd_cap(0b11, caching_mode=True), vtd_ecap(False))


def mps_code(n):
    return {128: 0, 256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}[n]


class Dev:
    """One PCI function. Bridges carry `sec`, the bus behind them."""

    def __init__(self, parent, bus, slot, fn, vendor, device, cls, **kw):
        self.parent, self.bus, self.slot, self.fn = parent, bus, slot, fn
        self.vendor, self.device, self.cls = vendor, device, cls
        self.children = []
        self.kw = kw
        self.sec = kw.get("sec")
        self.root = parent.root if isinstance(parent, Dev) else parent
        self.domain = self.root.domain

    @property
    def bdf(self):
        return "%04x:%02x:%02x.%x" % (self.domain, self.bus, self.slot, self.fn)

    def add(self, slot, fn, vendor, device, cls, **kw):
        d = Dev(self, self.sec, slot, fn, vendor, device, cls, **kw)
        self.children.append(d)
        self.root.host.devices.append(d)
        return d

    def is_bridge(self):
        return self.cls >> 8 == 0x0604


class Root:
    """A root bus: sys/devices/pciDDDD:BB."""

    def __init__(self, host, domain, bus, numa):
        self.host, self.domain, self.sec, self.numa = host, domain, bus, numa
        self.root = self
        self.children = []

    @property
    def name(self):
        return "pci%04x:%02x" % (self.domain, self.sec)

    def add(self, slot, fn, vendor, device, cls, **kw):
        d = Dev(self, self.sec, slot, fn, vendor, device, cls, **kw)
        self.children.append(d)
        self.host.devices.append(d)
        return d


class Host:
    def __init__(self, name, iommu=True, config_size=4096):
        self.name, self.iommu, self.config_size = name, iommu, config_size
        self.roots, self.devices = [], []
        self.group_type = "DMA-FQ"
        self.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on"
        self.modules = ["vfio_pci", "vfio_iommu_type1", "vfio", "kvm_intel", "kvm"]
        self.module_params = {"kvm_intel": {"enable_mediated_pmu": "N"}}
        self.nmi_watchdog = "1"
        self.pmus = dict(INTEL_PMUS)  # name -> perf type
        self.pmu_name = "icelake"     # the core PMU's caps/pmu_name; None: no caps (AMD)
        self.hugepages = {"1048576kB": 0, "2048kB": 0}
        # node -> (nr, free) 1G pages under sys/devices/system/node; none
        # written when empty.
        self.node_hugepages = {}
        # (name, cap, ecap) of each VT-d unit in sys/class/iommu.
        self.iommu_units = [("dmar0", *VTD_SERVER)] if iommu else []
        self.mem_kb = 2 * 1024 * 1024 * 1024
        # Dev -> (device minor, {gpu instance: [compute instances]}): the
        # NVIDIA driver's procfs entries for a GPU (MIG when not empty).
        self.nvidia_gpus = {}
        # /proc/cpuinfo: the CPU's vendor and model, and whether CPUID says
        # a hypervisor runs it; DMI's system vendor and product (None: no
        # SMBIOS, as in Firecracker); files of the machine's /etc.
        self.cpu = ("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+")
        # The CPU's physical address bits (Sapphire Rapids: 46), which a
        # guest with host-phys-bits gets.
        self.phys_bits = 46
        self.hypervisor = False
        self.dmi = None
        self.etc = {}
        # NUMA node -> its CPU list, for each function's local_cpulist
        # (emit_topo_extras); none written when empty.
        self.node_cpus = {}

    def root(self, bus, numa=-1, domain=0):
        r = Root(self, domain, bus, numa)
        self.roots.append(r)
        return r


def config_space(d, size):
    """A type 0/1 header and capability chain for `d` (the Dev's kw)."""
    kw = d.kw
    c = bytearray(4096)
    struct.pack_into("<HH", c, 0, d.vendor, d.device)
    pcie = kw.get("pcie", True)
    struct.pack_into("<HH", c, 4, 0x0406, 0x0010 if pcie else 0)  # cmd; status: cap list
    struct.pack_into("<I", c, 8, (d.cls << 8) | kw.get("rev", 1))
    header = 1 if d.is_bridge() else 0
    if kw.get("multifunction"):
        header |= 0x80
    c[0x0E] = header
    if d.is_bridge():
        c[0x18], c[0x19], c[0x1A] = d.bus, d.sec, kw.get("sub", d.sec)
    if pcie:
        c[0x34] = 0x40
        # PM at 0x40 -> PCIe at 0x50 -> MSI-X at 0x90
        c[0x40], c[0x41] = 0x01, 0x50
        struct.pack_into("<H", c, 0x42, 0x0003)
        ptype = kw.get("ptype", PT_ENDPOINT)
        c[0x50], c[0x51] = 0x10, 0x90
        struct.pack_into("<H", c, 0x52, 0x0002 | (ptype << 4))
        struct.pack_into("<I", c, 0x54, mps_code(kw.get("mps_sup", 512)) | (1 << 15))
        devctl = (mps_code(kw.get("mps", 256)) << 5) | (mps_code(kw.get("mrrs", 512)) << 12)
        devctl |= 0x000F  # error reporting enables
        if kw.get("relaxed_ordering"):
            devctl |= 0x0010
        struct.pack_into("<H", c, 0x58, devctl)
        speed = {"Unknown": 0, "2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4,
                 "32.0": 5}[kw.get("max_speed", "16.0")]
        struct.pack_into("<I", c, 0x5C, speed | (kw.get("max_width", 16) << 4))
        c[0x90], c[0x91] = 0x11, 0x00
        # Extended capabilities: AER first, then the ones we care about.
        ext = [(0x0001, 0x48, None)]
        if kw.get("acs") is not None:
            ext.append((0x000D, 0x08, kw["acs"]))
        if kw.get("ats") is not None:
            ext.append((0x000F, 0x08, kw["ats"]))
        if kw.get("sriov") is not None:
            ext.append((0x0010, 0x40, kw["sriov"]))
        off = 0x100
        for i, (cid, length, val) in enumerate(ext):
            nxt = off + length if i + 1 < len(ext) else 0
            struct.pack_into("<I", c, off, cid | (1 << 16) | (nxt << 20))
            if cid == 0x000D:
                struct.pack_into("<HH", c, off + 4, val[0], val[1])
            elif cid == 0x000F:
                struct.pack_into("<HH", c, off + 4, 0x0020, 0x8000 if val else 0)
            elif cid == 0x0010:
                struct.pack_into("<HHHH", c, off + 0x0C, val[0], val[0], val[1], 0)
            off = nxt
    else:
        size = min(size, 256)
    return bytes(c[:size])


def resources(host):
    """Each function's `resource` lines, for the functions that declare BARs
    (kw bars: (index, size, kind[, address])), the VF BAR regions of a PF
    (kw vf_bars: (index, size per VF, kind), on lines 7-12) and its VFs
    (slice vf_index of each region). Lines 0-5 are BARs 0-5 (a 64-bit
    BAR's upper half a line of zeros), 6 the ROM. Addresses are handed out
    in BDF order, each BAR aligned to its size as the kernel assigns them,
    so two sub-page BARs can share a page; an explicit address overrides."""
    cursor = {"io": 0x1000, "mem32": 0xC0000000, "mem64pref": 0x200000000000}

    def take(kind, size):
        start = (cursor[kind] + size - 1) // size * size
        cursor[kind] = start + size
        return start

    out = {}
    for d in sorted(host.devices, key=lambda x: x.bdf):
        kw = d.kw
        pf = kw.get("physfn")
        if not (kw.get("bars") or kw.get("vf_bars") or (pf and pf.kw.get("vf_bars"))):
            continue
        lines = [(0, 0, 0)] * 13
        for bar in kw.get("bars", []):
            index, size, kind = bar[:3]
            start = bar[3] if len(bar) > 3 else take(kind, size)
            lines[index] = (start, start + size - 1, BAR_FLAGS[kind])
        for index, size, kind in kw.get("vf_bars", []):
            total = size * kw["sriov"][0]
            start = (cursor[kind] + total - 1) // total * total
            cursor[kind] = start + total
            lines[7 + index] = (start, start + total - 1, BAR_FLAGS[kind])
        if pf and pf.kw.get("vf_bars"):
            for index, size, kind in pf.kw["vf_bars"]:
                start = out[pf][7 + index][0] + kw["vf_index"] * size
                lines[index] = (start, start + size - 1, BAR_FLAGS[kind])
        out[d] = lines
    return out


# Drivers that register an RDMA device (sysfs infiniband/<name> below the
# PCI function) for each function they bind, and the name prefix they use.
RDMA_DRIVERS = {"mlx5_core": "mlx5_", "irdma": "irdmap", "bnxt_en": "bnxt_re"}


def rdma_devices(host):
    """Dev -> the RDMA device its driver registers ("mlx5_0"), numbered per
    prefix in BDF order, as the drivers probe them at boot."""
    out, count = {}, {}
    for d in sorted(host.devices, key=lambda x: x.bdf):
        prefix = RDMA_DRIVERS.get(d.kw.get("driver"))
        if prefix:
            out[d] = prefix + str(count.get(prefix, 0))
            count[prefix] = count.get(prefix, 0) + 1
    return out


def emit_topo_extras(host, d, p, rdma):
    """What topo's matrix and device views read beyond the PCI basics: the
    RDMA device below a function, and its CPUs (local_cpulist)."""
    if d in rdma:
        write(os.path.join(p, "infiniband", rdma[d], "node_type"), "1: CA\n")
    numa = d.kw.get("numa", d.root.numa)
    if numa in host.node_cpus:
        write(os.path.join(p, "local_cpulist"), host.node_cpus[numa] + "\n")


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def symlink(target_abs, link_abs):
    os.makedirs(os.path.dirname(link_abs), exist_ok=True)
    os.symlink(os.path.relpath(target_abs, os.path.dirname(link_abs)), link_abs)


def emit(host, out):
    top = os.path.join(out, host.name)
    if os.path.exists(top):
        shutil.rmtree(top)
    sysd, procd = os.path.join(top, "sys"), os.path.join(top, "proc")

    def dev_dir(d):
        parts = []
        n = d
        while isinstance(n, Dev):
            parts.append(n.bdf)
            n = n.parent
        return os.path.join(sysd, "devices", n.name, *reversed(parts))

    drivers, group = set(), 0
    res = resources(host)
    rdma = rdma_devices(host)
    for r in host.roots:
        write(os.path.join(sysd, "devices", r.name, "uevent"), "")
    for d in sorted(host.devices, key=lambda x: x.bdf):
        kw, p = d.kw, dev_dir(d)
        write(os.path.join(p, "class"), "0x%06x\n" % d.cls)
        write(os.path.join(p, "vendor"), "0x%04x\n" % d.vendor)
        write(os.path.join(p, "device"), "0x%04x\n" % d.device)
        # The board's ids; by default the chip vendor's, with device 0 (as
        # Broadcom's PEX switch ports at the top level of their hierarchy,
        # which NCCL's ncclTopoFlattenBcmSwitches tells by them).
        sv, sd = kw.get("subsystem", (d.vendor, 0))
        write(os.path.join(p, "subsystem_vendor"), "0x%04x\n" % sv)
        write(os.path.join(p, "subsystem_device"), "0x%04x\n" % sd)
        write(os.path.join(p, "numa_node"), "%d\n" % kw.get("numa", d.root.numa))
        write(os.path.join(p, "config"), config_space(d, kw.get("config_size", host.config_size)))
        if d in res:
            write(os.path.join(p, "resource"),
                  "".join("0x%016x 0x%016x 0x%016x\n" % line for line in res[d]))
        emit_topo_extras(host, d, p, rdma)
        if kw.get("pcie", True):
            width = kw.get("max_width", 16)

            def speed_text(v):  # the kernel's pci_speed_string()
                return "Unknown\n" if v == "Unknown" else "%s GT/s PCIe\n" % v
            write(os.path.join(p, "max_link_speed"), speed_text(kw.get("max_speed", "16.0")))
            write(os.path.join(p, "max_link_width"), "%d\n" % width)
            write(os.path.join(p, "current_link_speed"),
                  speed_text(kw.get("cur_speed", kw.get("max_speed", "16.0"))))
            write(os.path.join(p, "current_link_width"), "%d\n" % kw.get("cur_width", width))
        if kw.get("sriov") is not None:
            write(os.path.join(p, "sriov_totalvfs"), "%d\n" % kw["sriov"][0])
            write(os.path.join(p, "sriov_numvfs"), "%d\n" % kw["sriov"][1])
        if kw.get("physfn"):
            symlink(dev_dir(kw["physfn"]), os.path.join(p, "physfn"))
            symlink(p, os.path.join(dev_dir(kw["physfn"]), "virtfn%d" % kw["vf_index"]))
        for tid, name, avail, api in kw.get("mdev_types", []):
            t = os.path.join(p, "mdev_supported_types", tid)
            write(os.path.join(t, "name"), name + "\n")
            write(os.path.join(t, "available_instances"), "%d\n" % avail)
            write(os.path.join(t, "device_api"), api + "\n")
        if kw.get("mdev_types"):
            symlink(p, os.path.join(sysd, "class/mdev_bus", d.bdf))
        if kw.get("vgpu"):
            current, types, header = kw["vgpu"]
            write(os.path.join(p, "nvidia/current_vgpu_type"), "%d\n" % current)
            write(os.path.join(p, "nvidia/creatable_vgpu_types"),
                  ("ID    : vGPU Name\n" if header else "")
                  + "".join("%d : %s\n" % t for t in types))
        if d.cls >> 8 == 0x0300:
            write(os.path.join(p, "boot_vga"), "1\n" if kw.get("boot_vga") else "0\n")
        if kw.get("driver"):
            drivers.add(kw["driver"])
            symlink(os.path.join(sysd, "bus/pci/drivers", kw["driver"]), os.path.join(p, "driver"))
        if host.iommu:
            g = kw.get("group")
            if g is None:
                g = group
                group += 1
            gdir = os.path.join(sysd, "kernel/iommu_groups", str(g))
            write(os.path.join(gdir, "type"), host.group_type + "\n")
            symlink(p, os.path.join(gdir, "devices", d.bdf))
            symlink(gdir, os.path.join(p, "iommu_group"))
        symlink(p, os.path.join(sysd, "bus/pci/devices", d.bdf))
        # Instances, as the mdev core lays them out: below the parent, on
        # the mdev bus, bound to the vendor's mdev driver, each in an IOMMU
        # group of its own (vfio_register_emulated_iommu_dev()).
        for tid, uuid, drv in kw.get("mdevs", []):
            m = os.path.join(p, uuid)
            symlink(os.path.join(p, "mdev_supported_types", tid), os.path.join(m, "mdev_type"))
            symlink(m, os.path.join(p, "mdev_supported_types", tid, "devices", uuid))
            symlink(os.path.join(sysd, "bus/mdev/drivers", drv), os.path.join(m, "driver"))
            write(os.path.join(sysd, "bus/mdev/drivers", drv, "uevent"), "")
            symlink(m, os.path.join(sysd, "bus/mdev/devices", uuid))
            if host.iommu:
                gdir = os.path.join(sysd, "kernel/iommu_groups", str(group))
                group += 1
                symlink(m, os.path.join(gdir, "devices", uuid))
                symlink(gdir, os.path.join(m, "iommu_group"))
    for drv in sorted(drivers):
        write(os.path.join(sysd, "bus/pci/drivers", drv, "bind"), "")
    for name, cap, ecap in host.iommu_units:
        unit = os.path.join(sysd, "devices/virtual/iommu", name)
        write(os.path.join(unit, "uevent"), "")
        write(os.path.join(unit, "intel-iommu/cap"), "%x\n" % cap)  # the kernel's "%llx"
        write(os.path.join(unit, "intel-iommu/ecap"), "%x\n" % ecap)
        symlink(unit, os.path.join(sysd, "class/iommu", name))
    for size, n in host.hugepages.items():
        write(os.path.join(sysd, "kernel/mm/hugepages/hugepages-" + size, "nr_hugepages"), "%d\n" % n)
    for node, cpus in sorted(host.node_cpus.items()):
        write(os.path.join(sysd, "devices/system/node/node%d/cpulist" % node), cpus + "\n")
    for node, (nr, free) in sorted(host.node_hugepages.items()):
        d = os.path.join(sysd, "devices/system/node/node%d/hugepages/hugepages-1048576kB" % node)
        write(os.path.join(d, "nr_hugepages"), "%d\n" % nr)
        write(os.path.join(d, "free_hugepages"), "%d\n" % free)
    for mod in host.modules:
        write(os.path.join(sysd, "module", mod, "initstate"), "live\n")
        for k, v in host.module_params.get(mod, {}).items():
            write(os.path.join(sysd, "module", mod, "parameters", k), v + "\n")
    for name, ptype in sorted({**SOFTWARE_PMUS, **host.pmus}.items()):
        d = os.path.join(sysd, "devices", name)
        write(os.path.join(d, "type"), "%d\n" % ptype)
        if name in CORE_PMUS and host.pmu_name:
            write(os.path.join(d, "caps", "pmu_name"), host.pmu_name + "\n")
        symlink(d, os.path.join(sysd, "bus/event_source/devices", name))
    vendor, model = host.cpu
    flags = "fpu vme de pse tsc msr pae mce cx8 apic sep" + (" hypervisor" if host.hypervisor else "")
    write(os.path.join(procd, "cpuinfo"), "".join(
        "processor\t: %d\nvendor_id\t: %s\nmodel name\t: %s\nflags\t\t: %s\n"
        "address sizes\t: %d bits physical, 57 bits virtual\n\n"
        % (cpu, vendor, model, flags, host.phys_bits) for cpu in range(2)))
    # systemd mounts /dev/hugepages (the default size); 1G pages reserved
    # per node get a mount of their own, as the admin guide says.
    mounts = ["sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0",
              "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0",
              "hugetlbfs /dev/hugepages hugetlbfs rw,nosuid,nodev,relatime,pagesize=2M 0 0"]
    if host.node_hugepages:
        mounts.append("hugetlbfs /dev/hugepages1G hugetlbfs rw,relatime,pagesize=1024M 0 0")
    write(os.path.join(procd, "mounts"), "".join(m + "\n" for m in mounts))
    if host.dmi:
        for key, value in zip(("sys_vendor", "product_name"), host.dmi):
            write(os.path.join(sysd, "devices/virtual/dmi/id", key), value + "\n")
        symlink(os.path.join(sysd, "devices/virtual/dmi/id"), os.path.join(sysd, "class/dmi/id"))
    for rel, text in host.etc.items():
        write(os.path.join(top, "etc", rel), text)
    write(os.path.join(procd, "cmdline"), host.cmdline + "\n")
    write(os.path.join(procd, "modules"), "".join(
        "%s 16384 0 - Live 0x0000000000000000\n" % m for m in host.modules))
    huge_2m = host.hugepages.get("2048kB", 0)
    write(os.path.join(procd, "meminfo"),
          "MemTotal:       %d kB\nHugePages_Total: %d\nHugepagesize:    2048 kB\n"
          % (host.mem_kb, huge_2m))
    write(os.path.join(procd, "sys/kernel/nmi_watchdog"), host.nmi_watchdog + "\n")
    for d, (minor, mig) in host.nvidia_gpus.items():
        write(os.path.join(procd, "driver/nvidia/gpus", d.bdf, "information"),
              "Model: \t\t NVIDIA GPU\nIRQ:   \t\t 0\nBus Location: \t %s\n"
              "Device Minor: \t %d\n" % (d.bdf, minor))
        caps = os.path.join(procd, "driver/nvidia/capabilities/gpu%d" % minor)
        write(os.path.join(caps, "mig/config"), "DeviceFileMinor: 1\n")
        for gi, cis in mig.items():
            write(os.path.join(caps, "mig/gi%d/access" % gi), "DeviceFileMinor: %d\n" % (10 + gi))
            for ci in cis:
                write(os.path.join(caps, "mig/gi%d/ci%d/access" % (gi, ci)),
                      "DeviceFileMinor: %d\n" % (100 + 10 * gi + ci))


# --- Hosts -----------------------------------------------------------------

INTEL, NVIDIA, MELLANOX, BROADCOM, SAMSUNG, ASPEED = 0x8086, 0x10DE, 0x15B3, 0x1000, 0x144D, 0x1A03
DISPLAY_OTHER = 0x038000  # virtio-gpu-pci: QEMU cannot give it 0x0302
GPU_3D, VGA, ETH, IB, NVME, HOST_BRIDGE, PCI_BRIDGE, OTHER_BRIDGE, SYSTEM = (
    0x030200, 0x030000, 0x020000, 0x020700, 0x010802, 0x060000, 0x060400, 0x068000, 0x088000)


def intel_uncore(first_type, **boxes):
    """uncore_<box>_<n> PMUs, one per box as the kernel registers them."""
    pmus = {}
    for box, n in boxes.items():
        for i in range(n):
            pmus["uncore_%s_%d" % (box, i)] = first_type + len(pmus)
    return pmus


def chipset(root):
    """Things every Intel server has on bus 0: none of them GPUs or NICs."""
    root.add(0x00, 0, INTEL, 0x09A2, HOST_BRIDGE, pcie=False, driver=None)
    for fn in range(1, 5):
        root.add(0x00, fn, INTEL, 0x09A3 + fn, SYSTEM, ptype=PT_RCIEP)
    root.add(0x17, 0, INTEL, 0xA1D2, 0x010601, pcie=False, driver="ahci")
    root.add(0x14, 0, INTEL, 0xA1AF, 0x0C0330, pcie=False, driver="xhci_hcd")
    bmc_rp = root.add(0x1C, 0, INTEL, 0xA190, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x02,
                      acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    bmc_br = bmc_rp.add(0x00, 0, ASPEED, 0x1150, PCI_BRIDGE, ptype=0x7, sec=0x03)
    bmc_br.add(0x00, 0, ASPEED, 0x2000, VGA, pcie=False, boot_vga=True, driver="ast")


def switch(parent, rp_slot, rp_bus, acs_ctl, members, nested=None, dsp_acs=True):
    """Root port -> Broadcom PEX switch -> one downstream port per member.

    members: (vendor, device, class, kwargs) per endpoint. Buses are
    allocated from rp_bus upwards.
    """
    rp = parent.add(rp_slot, 0, INTEL, 0x352A, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=rp_bus,
                    sub=rp_bus + 16, acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport",
                    max_speed="32.0")
    usp = rp.add(0x00, 0, BROADCOM, 0xC030, PCI_BRIDGE, ptype=PT_UPSTREAM, sec=rp_bus + 1,
                 sub=rp_bus + 16, driver="pcieport", max_speed="32.0")
    eps, bus = [], rp_bus + 2
    for i, (vendor, device, cls, kw) in enumerate(members):
        acs = (ACS_CAP_FULL, acs_ctl) if dsp_acs else None
        dsp = usp.add(i, 0, BROADCOM, 0xC030, PCI_BRIDGE, ptype=PT_DOWNSTREAM, sec=bus,
                      acs=acs, driver="pcieport", max_speed="32.0")
        eps.append(dsp.add(0x00, 0, vendor, device, cls, **kw))
        bus += 1
    return rp, usp, eps, bus


def gpu(**kw):
    base = dict(driver="nvidia", mps_sup=256, mps=256, mrrs=512, ats=False, max_speed="32.0")
    base.update(kw)
    return (NVIDIA, 0x2330, GPU_3D, base)


def cx7(**kw):
    base = dict(driver="mlx5_core", mps_sup=512, mps=256, mrrs=4096, ats=True, max_speed="32.0",
                sriov=(16, 0), bars=[(0, 32 * MIB, "mem64pref")])
    base.update(kw)
    return (MELLANOX, 0x1021, IB, base)


def nvme(**kw):
    base = dict(driver="nvme", mps=256, mrrs=512, max_width=4)
    base.update(kw)
    return (SAMSUNG, 0xA80A, NVME, base)


def nvswitch():
    return (NVIDIA, 0x22A3, OTHER_BRIDGE, dict(driver="nvidia", max_width=2))


def hgx(name="hgx", vfio=False):
    """Two sockets, 8 GPUs, 8 NICs, 4 PEX switches, each with 2 GPUs and
    2 NICs. Socket 0: one switch per host bridge (pci0000:15, pci0000:37),
    tuned like NVIDIA's VM guidance on switch 0 (ACS 0x5d, ATS on) and left
    at the kernel default on switch 1. Socket 1: both switches behind root
    ports of one host bridge (pci0000:97); switch 2 has redirect cleared,
    switch 3's second NIC sits behind a nested switch (a BlueField-like
    card). NVMe and NVSwitches hang off the switches; a dual-port
    management NIC is multi-function; the BMC's VGA is not a GPU."""
    h = Host(name)
    # hgx-vm: every GPU and NIC bound to vfio-pci, as before VMs start.
    g = (lambda **kw: gpu(**{**kw, "driver": "vfio-pci"})) if vfio else gpu
    c = (lambda **kw: cx7(**{**kw, "driver": "vfio-pci"})) if vfio else cx7
    bf_driver = "vfio-pci" if vfio else "mlx5_core"
    # The NVSwitches too: a VM given the whole baseboard takes them along.
    nvs = (lambda: nvswitch()[:3] + ({**nvswitch()[3], "driver": "vfio-pci"},)) if vfio \
        else nvswitch
    h.cmdline += " iommu.passthrough=0 default_hugepagesz=1G hugepagesz=1G hugepages=1536"
    h.hugepages = {"1048576kB": 1536, "2048kB": 0}
    h.node_hugepages = {0: (768, 768), 1: (768, 512)}  # node 1 already backs a VM
    h.modules += ["kvmai"]
    h.module_params = {"kvm_intel": {"enable_mediated_pmu": "Y"}}
    h.nmi_watchdog = "0"
    h.pmu_name = "sapphire_rapids"
    h.pmus.update(intel_uncore(12, cha=4, imc=8, upi=4, iio=6))
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    mgmt_rp = r0.add(0x1C, 4, INTEL, 0xA194, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x04,
                     acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    mgmt_rp.add(0x00, 0, INTEL, 0x1563, ETH, multifunction=True, driver="ixgbe",
                mps=256, mrrs=512, max_speed="8.0", max_width=8, cur_width=4, sriov=(64, 0),
                group=90)
    mgmt_rp.add(0x00, 1, INTEL, 0x1563, ETH, driver="ixgbe", mps=256, mrrs=512, max_speed="8.0",
                max_width=8, cur_width=4, sriov=(64, 0), group=90)

    r15 = h.root(0x15, numa=0)
    switch(r15, 0x01, 0x16, ACS_NVIDIA_VM,
           [g(ats=True), g(ats=True), c(), c(), nvme(), nvs()])
    r37 = h.root(0x37, numa=0)
    switch(r37, 0x01, 0x38, ACS_KERNEL_DEFAULT,
           [g(), g(), c(mrrs=512), c(), nvme(), nvs()])
    r97 = h.root(0x97, numa=1)
    switch(r97, 0x01, 0x98, SV | UF,
           [g(), g(), c(), c(), nvme(), nvs()])
    _, usp3, eps, _ = switch(r97, 0x03, 0xB8, ACS_KERNEL_DEFAULT,
                             [g(cur_speed="16.0"), g(), c(), nvme(), nvs()])
    # The BlueField-like card: its own switch behind a fifth downstream port.
    dsp = usp3.add(0x05, 0, BROADCOM, 0xC030, PCI_BRIDGE, ptype=PT_DOWNSTREAM, sec=0xC0,
                   sub=0xC2, acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    bf_usp = dsp.add(0x00, 0, MELLANOX, 0x1978, PCI_BRIDGE, ptype=PT_UPSTREAM, sec=0xC1, sub=0xC2,
                     driver="pcieport")
    bf_dsp = bf_usp.add(0x00, 0, MELLANOX, 0x1978, PCI_BRIDGE, ptype=PT_DOWNSTREAM, sec=0xC2,
                        driver="pcieport")
    bf_dsp.add(0x00, 0, MELLANOX, 0xA2DC, IB, driver=bf_driver, mps=256, mrrs=4096, ats=False,
               max_speed="32.0", multifunction=True, sriov=(16, 0),
               bars=[(0, 32 * MIB, "mem64pref")])
    bf_dsp.add(0x00, 1, MELLANOX, 0xA2DC, IB, driver=bf_driver, mps=256, mrrs=4096, ats=False,
               max_speed="32.0", sriov=(16, 0), bars=[(0, 32 * MIB, "mem64pref")])
    hgx_topo_extras(h)
    return h


def hgx_topo_extras(h):
    """Two 56-core sockets with SMT (CPU lists as the kernel prints them),
    and the H100's BARs: BAR0 16 MiB registers, BAR1 128 GiB of
    framebuffer and BAR3 32 MiB, both 64-bit prefetchable."""
    h.node_cpus = {0: "0-55,112-167", 1: "56-111,168-223"}
    for d in h.devices:
        if (d.vendor, d.device) == (NVIDIA, 0x2330) and "bars" not in d.kw:
            d.kw["bars"] = [(0, 16 * MIB, "mem32"), (1, 128 * GIB, "mem64pref"),
                            (3, 32 * MIB, "mem64pref")]


def flat():
    """A workstation: GPUs and a NIC straight on root ports of one host
    bridge, no switches, IOMMU in passthrough mode."""
    h = Host("flat")
    h.group_type = "identity"
    h.cmdline += " iommu=pt"
    h.hugepages = {"1048576kB": 0, "2048kB": 1024}
    h.modules = ["kvm_intel", "kvm"]
    # Hybrid client CPU: two core PMUs, free-running uncore counters.
    h.pmus = {"cpu_core": 4, "cpu_atom": 8, "msr": 9, "power": 10, "uncore_clock": 11,
              "uncore_imc_free_running_0": 12, "uncore_imc_free_running_1": 13}
    h.pmu_name = "alderlake_hybrid"
    r = h.root(0x00)
    chipset(r)
    rp1 = r.add(0x01, 0, INTEL, 0x460D, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x01,
                acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    rp1.add(0x00, 0, NVIDIA, 0x2684, VGA, multifunction=True, driver="nvidia", mps=256, mrrs=512,
            group=20)
    rp1.add(0x00, 1, NVIDIA, 0x22BA, 0x040300, driver="snd_hda_intel", group=20)
    rp2 = r.add(0x06, 0, INTEL, 0x464D, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x05,
                acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    rp2.add(0x00, 0, NVIDIA, 0x2684, VGA, driver="nvidia", mps=256, mrrs=512, cur_width=8)
    rp3 = r.add(0x1D, 0, INTEL, 0x7AB0, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x06,
                acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    rp3.add(0x00, 0, INTEL, 0x125C, ETH, driver="igc", mps=128, mrrs=512, max_speed="5.0",
            max_width=1, pcie=True)
    return h


# The mdev the second GPU of multifunction holds (a T4-4Q vGPU).
MDEV_UUID = "6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d10"


def multifunction():
    """A switch with a dual-port NIC (two functions of one device, one
    with SR-IOV VFs enabled, one VF bound to vfio-pci; each VF's BAR 0 a
    1 MiB slice of its PF's VF BAR region), a GPU with its audio function,
    and a second GPU."""
    h = Host("multifunction")
    h.modules += ["kvmai"]
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    r = h.root(0x3A, numa=0)
    # The second GPU offers vGPU profiles as mdev types (pre-SR-IOV vGPU).
    vgpu = [("nvidia-222", "GRID T4-4Q", 4, "vfio-pci"), ("nvidia-223", "GRID T4-8Q", 2, "vfio-pci")]
    rp, usp, eps, _ = switch(r, 0x01, 0x3B, ACS_KERNEL_DEFAULT,
                             [gpu(multifunction=True, group=40, driver="vfio-pci"),
                              gpu(mdev_types=vgpu, mdevs=[
                                  ("nvidia-222", MDEV_UUID, "nvidia-vgpu-vfio")])])
    gpu0 = eps[0]
    # gpu0 and its audio function are bound to vfio-pci, as for a VM.
    gpu0.parent.add(0x00, 1, NVIDIA, 0x22A6, 0x040300, driver="vfio-pci", group=40)
    dsp = usp.add(0x02, 0, BROADCOM, 0xC030, PCI_BRIDGE, ptype=PT_DOWNSTREAM, sec=0x3F,
                  acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    pf_bars = dict(bars=[(0, 32 * MIB, "mem64pref")], vf_bars=[(0, MIB, "mem64pref")])
    pf0 = dsp.add(0x00, 0, MELLANOX, 0x101D, ETH, multifunction=True, driver="mlx5_core",
                  mps=256, mrrs=512, ats=True, sriov=(8, 2), group=41, **pf_bars)
    dsp.add(0x00, 1, MELLANOX, 0x101D, ETH, driver="mlx5_core", mps=256, mrrs=512, ats=True,
            sriov=(8, 0), group=41, **pf_bars)
    # VF 1 is bound to vfio-pci, as for a VM that gets a VF, not the PF.
    for i in range(2):
        dsp.add(0x00, 2 + i, MELLANOX, 0x101E, ETH, physfn=pf0, vf_index=i, ats=True,
                driver="vfio-pci" if i else "mlx5_core", group=42 + i)
    return h


def noacs():
    """A cheap switch whose downstream ports have no ACS capability: P2P is
    direct, but nothing isolates the devices from each other."""
    h = Host("noacs")
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    switch(r0, 0x02, 0x10, 0, [gpu(group=50), cx7(group=50)], dsp_acs=False)
    return h


def iommu_off():
    """No IOMMU: no groups, no /sys/class/iommu, and ACS left at 0 by the
    kernel. Also no hugepages, no vfio."""
    h = Host("iommu-off", iommu=False)
    h.cpu = ("AuthenticAMD", "AMD EPYC 9654 96-Core Processor")
    h.phys_bits = 52  # Genoa: 52 bits physical (48 with SME on)
    h.cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro"
    h.modules = ["kvm_amd", "kvm"]
    h.module_params = {}
    h.pmus = {"cpu": 4, "msr": 8, "power": 9, "ibs_fetch": 10, "ibs_op": 11, "amd_df": 12,
              "amd_l3": 13, "amd_umc_0": 14, "amd_umc_1": 15}
    h.pmu_name = None
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    switch(r0, 0x02, 0x10, 0, [gpu(mrrs=4096), cx7(mrrs=4096, ats=False)])
    return h


def emulated(dt, name=None, nic_driver="virtio-pci"):
    """The project's QEMU host: q35, each "switch" a pxb-pcie expander
    (1b36:000b on bus 0) whose root bus holds root ports (1b36:000c, ACS
    cap 0x5f) with a GPU and a virtio NIC (ats=on); intel-iommu with
    device-iotlb. With `dt`, ACS DT is set on those root ports and ATS is
    enabled on both ends (translated P2P). The GPUs are virtio-gpu-pci,
    display controllers of class 0x0380; the NICs modern-only virtio-net
    (MSI-X in a 4 KiB BAR 1, the virtio structures in a 16 KiB BAR 4)."""
    h = Host(name or ("emulated-dt" if dt else "emulated"))
    h.group_type = "DMA"
    h.modules += ["kvmai"]
    # TCG runs it, so CPUID says hypervisor; it loads kvm: a nested host.
    h.hypervisor, h.dmi = True, ("QEMU", "Standard PC (Q35 + ICH9, 2009)")
    h.hugepages = {"1048576kB": 0, "2048kB": 512}
    h.mem_kb = 8 * 1024 * 1024
    h.pmus, h.pmu_name = {}, None  # TCG emulates no PMU: software events only
    h.iommu_units = [("dmar0", *VTD_QEMU)]
    r0 = h.root(0x00, numa=0)
    r0.add(0x00, 0, INTEL, 0x29C0, HOST_BRIDGE, pcie=False)
    r0.add(0x01, 0, 0x1234, 0x1111, VGA, pcie=False, boot_vga=True, driver="bochs-drm")
    r0.add(0x02, 0, 0x1B36, 0x000B, HOST_BRIDGE, pcie=False, rev=0)
    r0.add(0x03, 0, 0x1B36, 0x000B, HOST_BRIDGE, pcie=False, rev=0)
    r0.add(0x1F, 0, INTEL, 0x2918, 0x060100, pcie=False)
    ctl = ACS_KERNEL_DEFAULT | (DT if dt else 0)
    for n, bus in enumerate((0x20, 0x40)):
        r = h.root(bus, numa=n)
        rp_a = r.add(0x00, 0, 0x1B36, 0x000C, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=bus + 1,
                     acs=(ACS_CAP_FULL, ctl), driver="pcieport")
        rp_b = r.add(0x01, 0, 0x1B36, 0x000C, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=bus + 2,
                     acs=(ACS_CAP_FULL, ctl), driver="pcieport")
        rp_a.add(0x00, 0, 0x1AF4, 0x1050, DISPLAY_OTHER, driver="vfio-pci", ats=dt, mps=128,
                 mrrs=512)
        rp_b.add(0x00, 0, 0x1AF4, 0x1041, ETH, driver=nic_driver, ats=dt, mps=128, mrrs=512,
                 bars=[(1, 4 * KIB, "mem32"), (4, 16 * KIB, "mem64pref")])
    return h


def unprivileged():
    """The multi-function host read by a non-root user: 64 bytes of config
    space each, so capabilities are unknown."""
    h = multifunction()
    h.name, h.config_size = "unprivileged", 64
    return h


def pmu_server():
    """A one-socket server ready for PMU passthrough but for the NMI
    watchdog: core PMU and uncore units, mediated vPMU enabled, kvmai
    loaded; one switch with 2 GPUs and 2 NICs tuned for translated P2P."""
    h = Host("pmu-server")
    h.cmdline += " default_hugepagesz=1G hugepagesz=1G hugepages=256"
    h.hugepages = {"1048576kB": 256, "2048kB": 0}
    h.modules += ["kvmai"]
    h.module_params = {"kvm_intel": {"enable_mediated_pmu": "Y"}}
    h.nmi_watchdog = "1"
    h.pmu_name = "sapphire_rapids"
    h.pmus.update(intel_uncore(12, cha=2, imc=4, upi=2))
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    r15 = h.root(0x15, numa=0)
    switch(r15, 0x01, 0x16, ACS_NVIDIA_VM, [gpu(ats=True), gpu(ats=True), cx7(), cx7()])
    return h


def no_pmu():
    """A cloud GPU VM used as a host: no vPMU (software events only), no
    nested KVM, a GPU and a NIC on root ports of a virtual IOMMU."""
    h = Host("no-pmu")
    h.hypervisor, h.dmi = True, ("QEMU", "Standard PC (Q35 + ICH9, 2009)")
    h.group_type = "DMA"
    h.modules = ["vfio_pci", "vfio_iommu_type1", "vfio"]
    h.module_params = {}
    h.nmi_watchdog = "0"
    h.pmus, h.pmu_name = {}, None
    h.iommu_units = [("dmar0", *VTD_QEMU)]
    h.hugepages = {"1048576kB": 16, "2048kB": 0}
    r0 = h.root(0x00, numa=0)
    r0.add(0x00, 0, INTEL, 0x29C0, HOST_BRIDGE, pcie=False)
    rp1 = r0.add(0x02, 0, 0x1B36, 0x000C, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x01,
                 acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    rp2 = r0.add(0x02, 1, 0x1B36, 0x000C, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x02,
                 acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    rp1.add(0x00, 0, NVIDIA, 0x2330, GPU_3D, driver="vfio-pci", mps=128, mrrs=512)
    rp2.add(0x00, 0, 0x1AF4, 0x1041, ETH, driver="virtio-pci", mps=128, mrrs=512)
    return h


def rdma_vf():
    """RDMA VF passthrough readiness on two sockets. Node 0: a ConnectX-like
    PF with 4 VFs (two bound to vfio-pci), each VF's BAR 0 a 1 MiB slice of
    the PF's VF BAR region, and a GPU. Node 1: a dual-port Ethernet NIC
    whose function 0 is bound to vfio-pci and has a 2 KiB BAR 3 in the
    second half of a page whose first half holds function 1's BAR 3 (what
    the vf-bars check fails). 1G huge pages reserved on node 0 only; VT-d
    unit dmar1 maps 2M pages but no 1G ones."""
    h = Host("rdma-vf")
    h.iommu_units = [("dmar0", *VTD_SERVER), ("dmar1", vtd_cap(0b01), vtd_ecap(False))]
    h.cmdline += " default_hugepagesz=1G hugepagesz=1G hugepages=0:64"
    h.hugepages = {"1048576kB": 64, "2048kB": 0}
    h.node_hugepages = {0: (64, 40), 1: (0, 0)}
    h.modules += ["kvmai"]
    h.module_params = {"kvm_intel": {"enable_mediated_pmu": "Y"}}
    h.nmi_watchdog = "0"
    h.pmu_name = "sapphire_rapids"
    h.pmus.update(intel_uncore(12, cha=2, imc=4))
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    r16 = h.root(0x16, numa=0)
    rp = r16.add(0x01, 0, INTEL, 0x352A, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x17,
                 acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport", max_speed="32.0")
    vendor, device, cls, kw = cx7(sriov=(16, 4), multifunction=True,
                                  vf_bars=[(0, MIB, "mem64pref")])
    pf = rp.add(0x00, 0, vendor, device, cls, **kw)
    for i, driver in enumerate(("vfio-pci", "vfio-pci", "mlx5_core", None)):
        rp.add(0x00, 1 + i, MELLANOX, 0x101E, IB, physfn=pf, vf_index=i, ats=True, driver=driver,
               max_speed="32.0")
    rp_gpu = r16.add(0x03, 0, INTEL, 0x352B, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x18,
                     acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport", max_speed="32.0")
    vendor, device, cls, kw = gpu()
    rp_gpu.add(0x00, 0, vendor, device, cls, **kw)
    r80 = h.root(0x80, numa=1)
    rp_eth = r80.add(0x01, 0, INTEL, 0x352A, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=0x81,
                     acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport")
    page = 0xDFFFF000  # above what resources() hands out from 0xc0000000
    for fn, driver in ((0, "vfio-pci"), (1, "igb")):
        rp_eth.add(0x00, fn, INTEL, 0x1521, ETH, driver=driver, multifunction=fn == 0, mps=256,
                   mrrs=512, max_speed="5.0", max_width=4, sriov=(8, 0),
                   bars=[(0, MIB, "mem32"), (3, 2 * KIB, "mem32", page + (1 - fn) * 2 * KIB)])
    return h


def vgpu():
    """NVIDIA partitions as the driver shows them without its tools, on one
    socket. An H100 (minor 0) with vGPU on SR-IOV: 4 VFs bound to nvidia,
    VF 0 made a 1414 vGPU, VF 1 none yet (its creatable list has a header
    line, as some drivers print), VFs 2 and 3 without the nvidia
    directory. An A100 (minor 1) in MIG mode: GPU instance 1 with compute
    instance 0, GPU instance 2 with compute instances 0 and 1. A ConnectX
    NIC beside them."""
    h = Host("vgpu")
    r0 = h.root(0x00, numa=0)
    chipset(r0)
    r16 = h.root(0x16, numa=0)
    types = [(1414, "NVIDIA H100-1-10C"), (1415, "NVIDIA H100-2-20C"), (1428, "NVIDIA H100-80C")]
    ports = []
    for i, sec in enumerate((0x17, 0x18, 0x19)):
        ports.append(r16.add(0x01 + i, 0, INTEL, 0x352A, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=sec,
                             acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport",
                             max_speed="32.0"))
    vendor, device, cls, kw = gpu(sriov=(16, 4), multifunction=True)
    pf = ports[0].add(0x00, 0, vendor, device, cls, **kw)
    for i, vgpu in enumerate(((1414, types, False), (0, types, True), None, None)):
        ports[0].add(0x00, 1 + i, NVIDIA, 0x2330, GPU_3D, physfn=pf, vf_index=i, driver="nvidia",
                     max_speed="32.0", vgpu=vgpu)
    vendor, device, cls, kw = gpu()
    a100 = ports[1].add(0x00, 0, vendor, 0x20B5, cls, **kw)
    vendor, device, cls, kw = cx7()
    ports[2].add(0x00, 0, vendor, device, cls, **kw)
    h.nvidia_gpus = {pf: (0, {}), a100: (1, {1: [0], 2: [1, 0]})}
    return h


# --- Tenant VMs: kvmaictl inside a guest ----------------------------------

VIRTIO = 0x1AF4
Q35_HOST = (INTEL, 0x29C0, HOST_BRIDGE)


def tenant(name, cpu, dmi):
    """A tenant's VM as clouds hand them out: no IOMMU, no PMU, no NUMA
    node on any device, no kvm, no huge pages; the NVIDIA driver and
    virtio-net loaded."""
    h = Host(name, iommu=False)
    h.cpu, h.hypervisor, h.dmi = cpu, True, dmi
    h.cmdline = "BOOT_IMAGE=/boot/vmlinuz root=/dev/vda1 ro console=ttyS0"
    h.modules = ["nvidia", "virtio_net", "virtio_pci"]
    h.module_params = {}
    h.nmi_watchdog = "0"
    h.pmus, h.pmu_name = {}, None
    h.mem_kb = 224 * 1024 * 1024
    return h


def root_bus_gpu(root, slot, device=0x2330):
    """A GPU that VMM put on the root bus: QEMU's vfio-pci turns the
    function into a root-complex integrated endpoint there and zeroes its
    link registers (vfio_setup_pcie_cap in hw/vfio/pci.c), so sysfs shows
    link speed "Unknown" and width 0, and NCCL reads link_width 0."""
    vendor, _, cls, kw = gpu(ptype=PT_RCIEP, max_speed="Unknown", max_width=0, ats=None)
    return root.add(slot, 0, vendor, device, cls, **kw)


def tenant_intel():
    """The cloud VM of issue 32: one H100 SXM (10de:2330) and a virtio-net
    NIC on the root bus of a Firecracker guest (no SMBIOS, no host bridge
    function) on an Emerald Rapids host. The NIC is a virtio-pci function
    without a PCIe capability. Seen there: NUMA node -1 and link width 0
    for the GPU (NCCL 2.28 read both); the GPU's capability type is
    modelled as QEMU sets it, not recorded."""
    h = tenant("tenant-intel", ("GenuineIntel", "INTEL(R) XEON(R) PLATINUM 8568Y+"), None)
    r0 = h.root(0x00)
    root_bus_gpu(r0, 0x02)
    r0.add(0x03, 0, VIRTIO, 0x1041, ETH, pcie=False, driver="virtio-pci")
    return h


def tenant_amd():
    """A QEMU q35 guest on a Genoa host with two H100 PCIe (10de:2331) on
    the root bus and a virtio-net NIC, all integrated endpoints of pcie.0."""
    h = tenant("tenant-amd", ("AuthenticAMD", "AMD EPYC 9654 96-Core Processor"),
               ("QEMU", "Standard PC (Q35 + ICH9, 2009)"))
    r0 = h.root(0x00)
    r0.add(0x00, 0, *Q35_HOST, pcie=False)
    root_bus_gpu(r0, 0x02, 0x2331)
    root_bus_gpu(r0, 0x03, 0x2331)
    r0.add(0x04, 0, VIRTIO, 0x1041, ETH, ptype=PT_RCIEP, max_speed="Unknown", max_width=0,
           driver="virtio-pci")
    return h


def tenant_planned(name="tenant-planned", spare=0):
    """The guest of `kvmaictl vm plan gpu0 gpu1 gpu4 gpu5 nic2 nic3 nic6 nic7`
    on hgx-vm, as QEMU builds it (golden/hgx-vm.plan.qemu.txt): per host
    switch a pxb-pcie expander on the switch's NUMA node (bus_nr 32 and
    64), a root port, an x3130 upstream port and xio3130 downstream ports
    (no ACS capability, so each switch's functions share an IOMMU group),
    the GPUs and ConnectX-7 NICs below them with their physical links;
    intel-iommu with device-iotlb (ATS on). The tenant has set MaxReadReq
    4096 and Relaxed Ordering, reserved huge pages, and points NCCL at the
    topology file the host wrote for this plan.

    With @spare, the firmware keeps that many bus numbers free behind each
    downstream port (as one that reserves buses for hotplug would): the
    expanders' root buses and every device.function stay, the buses below
    move, and the file, the host's, names the planned ones."""
    h = tenant(name, ("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+"),
               ("QEMU", "Standard PC (Q35 + ICH9, 2009)"))
    h.iommu, h.iommu_units, h.group_type = True, [("dmar0", *VTD_QEMU)], "DMA"
    h.hugepages = {"1048576kB": 0, "2048kB": 16384}
    h.node_cpus = {0: "0-7", 1: "8-15"}  # -smp 16, sockets=2
    r0 = h.root(0x00, numa=0)
    r0.add(0x00, 0, *Q35_HOST, pcie=False, group=0)
    xml = ['<system version="1">\n']
    for i, (bus, node) in enumerate(((0x20, 0), (0x40, 1))):
        r0.add(0x03 + i, 0, 0x1B36, 0x000B, HOST_BRIDGE, pcie=False, group=1 + i)
        r = h.root(bus, numa=node)
        group = 10 + i
        last = bus + 2 + 4 * (1 + spare)
        rp = r.add(0x00, 0, 0x1B36, 0x000C, PCI_BRIDGE, ptype=PT_ROOT_PORT, sec=bus + 1,
                   sub=last, acs=(ACS_CAP_FULL, ACS_KERNEL_DEFAULT), driver="pcieport",
                   group=20 + i)
        usp = rp.add(0x00, 0, 0x104C, 0x8232, PCI_BRIDGE, ptype=PT_UPSTREAM, sec=bus + 2,
                     sub=last, driver="pcieport", group=group)
        # The host's file: the bus ids of the plan (SeaBIOS's numbering).
        xml.append('  <cpu numaid="%d">\n    <pci busid="0000:%02x:00.0" class="0x060400" '
                   'link_speed="32.0 GT/s PCIe" link_width="16">\n' % (node, bus + 1))
        members = [gpu(ats=True), gpu(ats=True), cx7(sriov=None), cx7(sriov=None)]
        for slot, (vendor, device, cls, kw) in enumerate(members):
            sec = bus + 3 + slot * (1 + spare)
            dsp = usp.add(slot, 0, 0x104C, 0x8233, PCI_BRIDGE, ptype=PT_DOWNSTREAM,
                          sec=sec, sub=sec + spare, driver="pcieport", group=group)
            kw = dict(kw, driver="nvidia" if vendor == NVIDIA else "mlx5_core", group=group,
                      mrrs=4096, relaxed_ordering=True)
            ep = dsp.add(0x00, 0, vendor, device, cls, **kw)
            xml.append('      <pci busid="0000:%02x:00.0" class="0x%06x" vendor="0x%04x" '
                       'device="0x%04x" link_speed="32.0 GT/s PCIe" link_width="16"/>\n'
                       % (bus + 3 + slot, cls, vendor, device))
        xml.append("    </pci>\n  </cpu>\n")
    xml.append("</system>\n")
    h.etc = {"nccl.conf": "NCCL_TOPO_FILE=/etc/nccl/topo.xml\n", "nccl/topo.xml": "".join(xml)}
    return h


HOSTS = [hgx, flat, multifunction, noacs, iommu_off, lambda: emulated(False),
         lambda: emulated(True), unprivileged, pmu_server, no_pmu,
         lambda: emulated(True, "emulated-vm", "vfio-pci"), lambda: hgx("hgx-vm", vfio=True),
         rdma_vf, vgpu, tenant_intel, tenant_amd, tenant_planned,
         lambda: tenant_planned("tenant-renumbered", spare=1)]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for make in HOSTS:
        host = make()
        emit(host, out)
        print("wrote %s/%s (%d functions)" % (out, host.name, len(host.devices)))


if __name__ == "__main__":
    main()
