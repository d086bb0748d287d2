// The kvmai counters devices of this guest: finding them in sysfs by class
// and capability, and decoding the layout their BAR2 describes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mapping.h"

namespace kvmai::kvmaistat {

enum class Kind : std::uint8_t { clock, pcie_in, pcie_out, mem_read, mem_write };

struct Counter {
  std::uint32_t offset = 0;  // in BAR0
  unsigned width = 0;        // 1..64
  Kind kind = Kind::clock;
  std::uint16_t index = 0;  // PCIe stack or memory channel
  std::uint64_t scale = 0;  // bytes per count; Hz for the clock
  std::string name;
};

struct Layout {
  std::uint32_t state = 0;
  std::uint32_t bar0_size = 0;
  std::string unit;
  // Only the kinds this tool knows, in layout order.
  std::vector<Counter> counters;
};

// <root>/bus/pci/devices, `sysfs_root` being where sysfs is mounted
std::filesystem::path pci_devices_dir(const std::filesystem::path& sysfs_root);

// Whether standard config space holds a vendor-specific capability that
// carries KVMAI_CTRDEV_MAGIC.
bool has_kvmai_capability(std::span<const std::uint8_t> config);

// Why the PCI function in `dir` is not a kvmai counters device, or nullopt
// if it is one.
std::optional<std::string> why_not_kvmai(const std::filesystem::path& dir);

// The BDFs to sample, in bus order: `wanted` alone (it must qualify), or
// every qualifying device (there must be one).  Throws std::runtime_error.
std::vector<std::string> select_devices(const std::filesystem::path& sysfs_root,
                                        const std::optional<std::string>& wanted);

// Decodes and checks BAR2's bytes.  `resource0_size` is what the guest can
// map of BAR0; `bdf` names the device in the exceptions.
Layout parse_layout(std::span<const std::byte> bar2, std::uint64_t resource0_size,
                    std::string_view bdf);

// One device: its layout, read once, and its counter page, mapped for the
// whole run.
class Device {
 public:
  static Device open(const std::filesystem::path& sysfs_root, const std::string& bdf);

  const std::string& bdf() const { return bdf_; }
  const Layout& layout() const { return layout_; }
  const Mapping& bar0() const { return bar0_; }

  // The layout's state, read from BAR2 again: every read of it is a VM
  // exit, so only when the counters look revoked.
  std::uint32_t read_state() const;

 private:
  Device(std::string bdf, std::filesystem::path dir, Layout layout, Mapping bar0)
      : bdf_(std::move(bdf)),
        dir_(std::move(dir)),
        layout_(std::move(layout)),
        bar0_(std::move(bar0)) {}

  std::string bdf_;
  std::filesystem::path dir_;
  Layout layout_;
  Mapping bar0_;
};

}  // namespace kvmai::kvmaistat
