// What a planned guest boots on, which both formats write the same way:
// its firmware and 64-bit MMIO window, the page size behind its memory,
// where its threads run and how QEMU assigns its devices.
//
// The window: an H100's BAR1 is 128 GiB, so eight need more than 1 TiB of
// guest physical addresses above 4 GiB.  SeaBIOS and OVMF each lay 64-bit
// BARs out themselves; OVMF (Debian's 2022.11 build) makes its window
// 32 GiB unless fw_cfg's opt/ovmf/X-PciMmio64Mb asks for more, and leaves
// BARs that do not fit unassigned, so the guest driver finds no BAR1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/sysfs.h"
#include "model/pci_tree.h"
#include "vm/plan.h"

namespace kvmai::kvmaictl {

// Debian's OVMF image (package ovmf) with code and variable store in one,
// as QEMU's -bios takes it; libvirt finds its own through the firmware
// descriptors (<os firmware="efi">).
inline constexpr std::string_view kOvmfImage = "/usr/share/ovmf/OVMF.fd";
// The fw_cfg file OVMF reads the 64-bit window's size from, in MiB.
inline constexpr std::string_view kOvmfMmio64Key = "opt/ovmf/X-PciMmio64Mb";
// OVMF's window when nothing asks for another.
inline constexpr std::uint64_t kOvmfDefaultMmio64 = std::uint64_t{32} << 30U;

// The bytes the planned devices' 64-bit prefetchable BARs take, laid out as
// firmware lays out resources: below each bridge the largest alignment
// first, each BAR at its natural alignment, each bridge window a multiple
// of 1 MiB aligned as its largest BAR; the same for the expanders' root
// buses.  64-bit BARs that are not prefetchable go below 4 GiB (a bridge's
// non-prefetchable window is 32-bit) and do not count.
std::uint64_t mmio64_need(const VmPlan& plan, const PciTree& host);

// The window to ask for: a power of two holding @need, at least OVMF's
// default.
std::uint64_t mmio64_window(std::uint64_t need);

// The physical address bits of the host CPU ("address sizes" in
// /proc/cpuinfo), which host-phys-bits gives the guest.
std::optional<int> host_phys_bits(const TreeReader& proc);

// The page size, in KiB, of the hugetlbfs mounted at @dir (/proc/mounts).
// Throws OpError when nothing, or something else, is mounted there.
std::uint64_t hugetlbfs_page_kib(const TreeReader& proc, const std::string& dir);

// Fills plan.vcpu_pins and plan.emulator_cpus by plan.pin from the nodes'
// host CPUs.  Throws OpError for 1:1 pinning with fewer host CPUs than
// vCPUs, or none left for QEMU's own threads.
void pin_threads(VmPlan& plan);

// "2 TiB", "512 GiB", "32 MiB": a size for people.
std::string size_text(std::uint64_t bytes);

// A size as a user writes it: "2T", "512G", "1024M" (binary units).
// Throws UsageError naming @name.
std::uint64_t size_of(std::string_view name, const std::string& value);

}  // namespace kvmai::kvmaictl
