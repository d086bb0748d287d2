#include "testing/fake_sysfs.h"

#include <endian.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace kvmai::kvmaistat::testing {
namespace {

constexpr std::size_t kConfigSize = 256;
constexpr std::size_t kBarFileSize = 4096;

std::filesystem::path device_dir(const std::filesystem::path& root, const std::string& bdf) {
  return root / "devices/pci0000:00" / bdf;
}

template <typename T>
void put(std::vector<char>& buf, std::size_t pos, T value) {
  std::memcpy(buf.data() + pos, &value, sizeof value);
}

void write_file(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) {
    throw std::runtime_error(path.string() + ": cannot write");
  }
}

// In place, as the device would change under a live mapping.
void overwrite(const std::filesystem::path& path, std::size_t pos, const void* data,
               std::size_t size) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(pos));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) {
    throw std::runtime_error(path.string() + ": cannot rewrite");
  }
}

// Header, then a power-management capability and a vendor-specific one of
// somebody else's before ours: the walk has to get past both.
std::vector<char> config_space(const FakeDevice& d) {
  std::vector<char> c(kConfigSize);
  const auto class_code = static_cast<std::uint32_t>(std::stoul(d.class_code, nullptr, 16));
  put(c, 0x00, htole16(0x1b36));                  // vendor
  put(c, 0x02, htole16(0x00ff));                  // device
  put(c, 0x06, htole16(0x0010));                  // status: capability list
  put(c, 0x08, htole32(class_code << 8 | 0x00));  // class, revision 0
  put(c, 0x34, std::uint8_t{0x40});
  put(c, 0x40, std::uint8_t{0x01});  // power management
  put(c, 0x41, std::uint8_t{0x48});
  put(c, 0x48, std::uint8_t{0x09});  // vendor-specific, not ours
  put(c, 0x49, static_cast<std::uint8_t>(d.kvmai_capability ? 0x58 : 0x00));
  put(c, 0x4a, std::uint8_t{0x08});
  put(c, 0x4b, htole32(0x554d4551));  // "QEMU"
  if (d.kvmai_capability) {
    put(c, 0x58, std::uint8_t{0x09});
    put(c, 0x59, std::uint8_t{0x00});
    put(c, 0x5a, std::uint8_t{0x08});
    put(c, 0x5b, htole32(KVMAI_CTRDEV_MAGIC));
  }
  return c;
}

std::vector<char> layout_bar(const FakeDevice& d) {
  std::vector<char> bar(kBarFileSize);
  kvmai_ctrdev_layout head{};
  head.magic = htole32(d.magic);
  head.version = htole16(d.version);
  head.nr_counters = htole16(static_cast<std::uint16_t>(d.counters.size()));
  head.state = htole32(d.state);
  head.bar0_size = htole32(d.bar0_size);
  std::strncpy(head.unit, d.unit.c_str(), sizeof head.unit - 1);
  put(bar, 0, head);
  // As many as fit: a test may claim more than BAR2 holds.
  const std::size_t fit = (bar.size() - sizeof head) / sizeof(kvmai_ctrdev_counter);
  for (std::size_t i = 0; i < std::min(fit, d.counters.size()); ++i) {
    const FakeCounter& f = d.counters[i];
    kvmai_ctrdev_counter c{};
    c.offset = htole32(f.offset);
    c.width = f.width;
    c.kind = f.kind;
    c.index = htole16(f.index);
    c.scale = htole64(f.scale);
    std::strncpy(c.name, f.name.c_str(), sizeof c.name - 1);
    put(bar, sizeof head + i * sizeof c, c);
  }
  return bar;
}

}  // namespace

std::vector<FakeCounter> mock_counters() {
  return {
      {.offset = kClockOffset,
       .width = 64,
       .kind = KVMAI_CTR_CLOCK,
       .index = 0,
       .scale = kClockHz,
       .name = "clock"},
      {.offset = kPcieInOffset,
       .kind = KVMAI_CTR_PCIE_IN,
       .scale = kBytesPerCount,
       .name = "pcie0_in"},
      {.offset = kPcieOutOffset,
       .kind = KVMAI_CTR_PCIE_OUT,
       .scale = kBytesPerCount,
       .name = "pcie0_out"},
      {.offset = kMemReadOffset,
       .kind = KVMAI_CTR_MEM_READ,
       .scale = kBytesPerCount,
       .name = "mc0_read"},
      {.offset = kMemWriteOffset,
       .kind = KVMAI_CTR_MEM_WRITE,
       .scale = kBytesPerCount,
       .name = "mc0_write"},
  };
}

void write_device(const std::filesystem::path& root, const FakeDevice& device) {
  const auto dir = device_dir(root, device.bdf);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "class") << device.class_code << '\n';
  write_file(dir / "config", config_space(device));
  write_file(dir / "resource0", std::vector<char>(kBarFileSize));
  write_file(dir / "resource2", layout_bar(device));
  write_empty_bus(root);
  const auto link = root / "bus/pci/devices" / device.bdf;
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink("../../../devices/pci0000:00/" + device.bdf, link);
}

void write_empty_bus(const std::filesystem::path& root) {
  std::filesystem::create_directories(root / "bus/pci/devices");
}

void write_counter(const std::filesystem::path& root, const std::string& bdf, std::uint32_t offset,
                   std::uint64_t value) {
  const std::uint64_t le = htole64(value);
  overwrite(device_dir(root, bdf) / "resource0", offset, &le, sizeof le);
}

void write_state(const std::filesystem::path& root, const std::string& bdf, std::uint32_t state) {
  const std::uint32_t le = htole32(state);
  overwrite(device_dir(root, bdf) / "resource2", offsetof(kvmai_ctrdev_layout, state), &le,
            sizeof le);
}

TempDir::TempDir() {
  std::string name = (std::filesystem::temp_directory_path() / "kvmaistat.XXXXXX").string();
  if (mkdtemp(name.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp " + name);
  }
  path_ = name;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace kvmai::kvmaistat::testing
