// Test support: a sysfs tree with kvmai counters devices in it, whose
// resource files are regular files (they map like BARs, and can be
// rewritten while mapped).
#pragma once

#include <linux/kvmai_counters.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kvmai::kvmaistat::testing {

struct FakeCounter {
  std::uint32_t offset = 0;
  std::uint8_t width = 48;
  std::uint8_t kind = KVMAI_CTR_PCIE_IN;
  std::uint16_t index = 0;
  std::uint64_t scale = 64;
  std::string name;
};

// Where mock_counters() puts each counter in BAR0.
constexpr std::uint32_t kClockOffset = 0;
constexpr std::uint32_t kPcieInOffset = 8;
constexpr std::uint32_t kPcieOutOffset = 16;
constexpr std::uint32_t kMemReadOffset = 24;
constexpr std::uint32_t kMemWriteOffset = 32;
constexpr std::uint64_t kClockHz = 1'000'000'000;
constexpr std::uint64_t kBytesPerCount = 64;

// A 64-bit 1 GHz clock, then PCIe stack 0 in and out and memory channel 0
// read and write, 48 bits of 64-byte counts each.
std::vector<FakeCounter> mock_counters();

struct FakeDevice {
  std::string bdf = "0000:01:00.0";
  std::string class_code = "0x110100";
  bool kvmai_capability = true;  // the vendor capability with the magic
  std::uint32_t magic = KVMAI_CTRDEV_MAGIC;
  std::uint16_t version = KVMAI_CTRDEV_VERSION;
  std::uint32_t state = KVMAI_CTRDEV_LIVE;
  std::uint32_t bar0_size = 4096;
  std::string unit = "mock_bw";
  std::vector<FakeCounter> counters = mock_counters();
};

// <root>/devices/pci0000:00/BDF, linked from <root>/bus/pci/devices (`root`
// is the sysfs tree, as --sysfs-root takes it).
void write_device(const std::filesystem::path& root, const FakeDevice& device);
// An empty <root>/bus/pci/devices.
void write_empty_bus(const std::filesystem::path& root);

// Rewrites what BAR0 (resource0) or BAR2 (resource2) reads.
void write_counter(const std::filesystem::path& root, const std::string& bdf, std::uint32_t offset,
                   std::uint64_t value);
void write_state(const std::filesystem::path& root, const std::string& bdf, std::uint32_t state);

// A fresh directory, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) = delete;
  TempDir& operator=(TempDir&&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kvmai::kvmaistat::testing
