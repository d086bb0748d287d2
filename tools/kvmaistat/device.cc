#include "device.h"

#include <endian.h>
#include <linux/kvmai_counters.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "common/format.h"

namespace kvmai::kvmaistat {
namespace {

constexpr std::size_t kConfigSize = 256;  // standard config space
constexpr std::size_t kStatus = 0x06;
constexpr std::uint16_t kStatusCapList = 1U << 4;
constexpr std::size_t kCapPointer = 0x34;
constexpr std::size_t kCapHeader = 3;  // ID, next, length
constexpr std::uint8_t kCapVendor = 0x09;
// 192 bytes of capability space hold at most 48 four-byte capabilities;
// more steps than that means the list loops.
constexpr int kMaxCaps = 48;
// What a sysfs resourceN file is assumed to hold when it reports no size.
constexpr std::size_t kDefaultBarSize = 4096;

// A fixed-size NUL-terminated field from the device, made safe to print
// and to put in JSON: the host wrote it, the guest must not trust it.
std::string c_string(const char* field, std::size_t size) {
  const std::size_t len = strnlen(field, size);
  std::string s(field, len);
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c < 0x20 || c > 0x7e; }, '?');
  return s;
}

std::optional<std::uint32_t> read_class(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text)) {
    return std::nullopt;
  }
  std::string_view digits(text);
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
  }
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    return std::nullopt;
  }
  return value;
}

// `config` is an ordinary sysfs attribute: read() works on it, unlike the
// resource files.
std::vector<std::uint8_t> read_config(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::array<char, kConfigSize> buf{};
  in.read(buf.data(), buf.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  std::vector<std::uint8_t> bytes(got);
  std::memcpy(bytes.data(), buf.data(), got);
  return bytes;
}

struct Verdict {
  std::optional<std::string> reason;  // nullopt: a kvmai counters device
  bool truncated_config = false;      // right class, config cut short
};

Verdict examine(const std::filesystem::path& dir) {
  const auto class_code = read_class(dir / "class");
  if (!class_code) {
    return {"class: unreadable"};
  }
  if (*class_code != KVMAI_CTRDEV_CLASS) {
    return {"class " + to_hex(*class_code, 6) + ", not " + to_hex(KVMAI_CTRDEV_CLASS, 6)};
  }
  const auto config = read_config(dir / "config");
  if (has_kvmai_capability(config)) {
    return {};
  }
  if (config.empty()) {
    return {"config: unreadable"};
  }
  if (config.size() < kConfigSize) {
    // Unprivileged readers get the first 64 bytes only.
    return {"config: only " + std::to_string(config.size()) +
                " bytes readable, no kvmai capability in them (reading more needs root)",
            true};
  }
  return {"config: no vendor-specific capability carrying the kvmai magic"};
}

// "01:00.0" as lspci prints it means domain 0.
std::string full_bdf(const std::string& bdf) {
  return std::count(bdf.begin(), bdf.end(), ':') == 1 ? "0000:" + bdf : bdf;
}

std::runtime_error layout_error(std::string_view bdf, const std::string& what) {
  return std::runtime_error(std::string(bdf) + ": resource2: " + what);
}

std::optional<Kind> kind_of(std::uint8_t raw) {
  switch (raw) {
    case KVMAI_CTR_CLOCK:
      return Kind::clock;
    case KVMAI_CTR_PCIE_IN:
      return Kind::pcie_in;
    case KVMAI_CTR_PCIE_OUT:
      return Kind::pcie_out;
    case KVMAI_CTR_MEM_READ:
      return Kind::mem_read;
    case KVMAI_CTR_MEM_WRITE:
      return Kind::mem_write;
    default:
      return std::nullopt;
  }
}

std::size_t layout_bytes(std::size_t nr_counters) {
  return sizeof(kvmai_ctrdev_layout) + nr_counters * sizeof(kvmai_ctrdev_counter);
}

// Size of a resourceN mapping: the BAR's, as sysfs reports it.
std::size_t bar_size(const UniqueFd& fd, const std::filesystem::path& path) {
  const std::uint64_t size = file_size(fd, path);
  return size == 0 ? kDefaultBarSize : static_cast<std::size_t>(size);
}

}  // namespace

std::filesystem::path pci_devices_dir(const std::filesystem::path& sysfs_root) {
  return sysfs_root / "bus/pci/devices";
}

bool has_kvmai_capability(std::span<const std::uint8_t> config) {
  if (config.size() <= kCapPointer) {
    return false;
  }
  const auto status = static_cast<std::uint16_t>(config[kStatus] | config[kStatus + 1] << 8);
  if ((status & kStatusCapList) == 0) {
    return false;
  }
  // The low two bits of every pointer are reserved.
  std::size_t pos = config[kCapPointer] & 0xfcU;
  for (int i = 0; i < kMaxCaps && pos >= 0x40 && pos + 2 <= config.size(); ++i) {
    const std::uint8_t id = config[pos];
    const std::uint8_t next = config[pos + 1];
    if (id == kCapVendor && pos + kCapHeader + sizeof(std::uint32_t) <= config.size() &&
        config[pos + 2] >= kCapHeader + sizeof(std::uint32_t)) {
      std::uint32_t magic = 0;
      std::memcpy(&magic, &config[pos + kCapHeader], sizeof magic);
      if (le32toh(magic) == KVMAI_CTRDEV_MAGIC) {
        return true;
      }
    }
    pos = next & 0xfcU;
  }
  return false;
}

std::optional<std::string> why_not_kvmai(const std::filesystem::path& dir) {
  return examine(dir).reason;
}

std::vector<std::string> select_devices(const std::filesystem::path& sysfs_root,
                                        const std::optional<std::string>& wanted) {
  const auto devices = pci_devices_dir(sysfs_root);
  if (wanted) {
    const std::string bdf = full_bdf(*wanted);
    std::error_code ec;
    if (!std::filesystem::is_directory(devices / bdf, ec)) {
      throw std::runtime_error(bdf + ": no such PCI device in " + devices.string());
    }
    if (const auto reason = examine(devices / bdf).reason) {
      throw std::runtime_error(bdf + ": not a kvmai counters device: " + *reason);
    }
    return {bdf};
  }

  std::error_code ec;
  std::filesystem::directory_iterator it(devices, ec);
  if (ec) {
    throw std::runtime_error(devices.string() + ": " + ec.message());
  }
  std::vector<std::string> found;
  bool truncated = false;
  for (const auto& entry : it) {
    const Verdict v = examine(entry.path());
    if (!v.reason) {
      found.push_back(entry.path().filename().string());
    }
    truncated = truncated || v.truncated_config;
  }
  if (found.empty()) {
    throw std::runtime_error(
        "no kvmai counters device (PCI class " + to_hex(KVMAI_CTRDEV_CLASS, 6) +
        " with the kvmai capability) in " + devices.string() +
        (truncated ? " (a device of that class has config space only root can read)" : ""));
  }
  // Fixed-width hex "DDDD:BB:DD.F": string order is bus order.
  std::sort(found.begin(), found.end());
  return found;
}

Layout parse_layout(std::span<const std::byte> bar2, std::uint64_t resource0_size,
                    std::string_view bdf) {
  kvmai_ctrdev_layout head{};
  if (bar2.size() < sizeof head) {
    throw layout_error(bdf, std::to_string(bar2.size()) + " bytes, too small for the layout (" +
                                std::to_string(sizeof head) + ")");
  }
  std::memcpy(&head, bar2.data(), sizeof head);
  const std::uint32_t magic = le32toh(head.magic);
  if (magic != KVMAI_CTRDEV_MAGIC) {
    throw layout_error(
        bdf, "bad magic " + to_hex(magic, 8) + ", expected " + to_hex(KVMAI_CTRDEV_MAGIC, 8));
  }
  const std::uint16_t version = le16toh(head.version);
  if (version != KVMAI_CTRDEV_VERSION) {
    throw layout_error(bdf, "layout version " + std::to_string(version) +
                                ", this kvmaistat reads version " +
                                std::to_string(KVMAI_CTRDEV_VERSION));
  }
  const std::size_t nr = le16toh(head.nr_counters);
  if (nr == 0) {
    throw layout_error(bdf, "the layout lists no counters");
  }
  if (layout_bytes(nr) > bar2.size()) {
    throw layout_error(bdf, std::to_string(nr) + " counters need " +
                                std::to_string(layout_bytes(nr)) + " bytes, BAR2 has " +
                                std::to_string(bar2.size()));
  }

  Layout layout;
  layout.state = le32toh(head.state);
  layout.bar0_size = le32toh(head.bar0_size);
  layout.unit = c_string(head.unit, sizeof head.unit);

  std::set<std::pair<Kind, std::uint16_t>> seen;
  for (std::size_t i = 0; i < nr; ++i) {
    kvmai_ctrdev_counter raw{};
    std::memcpy(&raw, bar2.data() + layout_bytes(i), sizeof raw);
    // A newer host may count more kinds; the rest still make sense alone.
    const auto kind = kind_of(raw.kind);
    if (!kind) {
      continue;
    }
    Counter c;
    c.offset = le32toh(raw.offset);
    c.width = raw.width;
    c.kind = *kind;
    c.index = le16toh(raw.index);
    c.scale = le64toh(raw.scale);
    c.name = c_string(raw.name, sizeof raw.name);

    const std::string which = "counter " + std::to_string(i) + " (" + c.name + ")";
    if (c.width < 1 || c.width > 64) {
      throw layout_error(bdf, which + ": width " + std::to_string(c.width) + ", not 1 to 64");
    }
    if (c.offset % 8 != 0) {
      throw layout_error(bdf, which + ": offset " + to_hex(c.offset) + " is not 8-byte aligned");
    }
    const std::uint64_t end = std::uint64_t{c.offset} + 8;
    if (end > layout.bar0_size) {
      throw layout_error(bdf, which + ": offset " + to_hex(c.offset) + " is past BAR0's " +
                                  std::to_string(layout.bar0_size) + " bytes");
    }
    if (end > resource0_size) {
      throw layout_error(bdf, which + ": offset " + to_hex(c.offset) + " is past the " +
                                  std::to_string(resource0_size) + " bytes of resource0");
    }
    if (c.kind == Kind::clock && c.scale == 0) {
      throw layout_error(bdf, which + ": a clock of 0 Hz");
    }
    // Two counters for one thing: no telling which one to print.
    if (!seen.emplace(c.kind, c.kind == Kind::clock ? 0 : c.index).second) {
      throw layout_error(bdf, which + ": a second counter of the same kind and index");
    }
    layout.counters.push_back(std::move(c));
  }
  return layout;
}

Device Device::open(const std::filesystem::path& sysfs_root, const std::string& bdf) {
  auto dir = pci_devices_dir(sysfs_root) / bdf;
  const auto bar0_path = dir / "resource0";
  const UniqueFd bar0_fd = open_read_only(bar0_path);
  const std::uint64_t bar0_file = file_size(bar0_fd, bar0_path);

  Layout layout;
  {
    const auto bar2_path = dir / "resource2";
    const UniqueFd fd = open_read_only(bar2_path);
    const Mapping bar2 = Mapping::map_read_only(fd, bar_size(fd, bar2_path), bar2_path);
    if (bar2.size() < sizeof(kvmai_ctrdev_layout)) {
      throw layout_error(bdf, std::to_string(bar2.size()) + " bytes, too small for the layout");
    }
    kvmai_ctrdev_layout head{};
    std::memcpy(&head, bar2.copy_out(sizeof head).data(), sizeof head);
    const std::size_t want = layout_bytes(le16toh(head.nr_counters));
    // Whole 32-bit words only, as copy_out() reads; and without a size
    // from sysfs only the layout's own bound applies to BAR0.
    layout =
        parse_layout(bar2.copy_out(std::min(bar2.size() / 4 * 4, want)),
                     bar0_file == 0 ? std::numeric_limits<std::uint64_t>::max() : bar0_file, bdf);
  }
  const std::size_t bar0_bytes =
      bar0_file == 0 ? layout.bar0_size : static_cast<std::size_t>(bar0_file);
  auto bar0 = Mapping::map_read_only(bar0_fd, bar0_bytes, bar0_path);
  return {bdf, std::move(dir), std::move(layout), std::move(bar0)};
}

std::uint32_t Device::read_state() const {
  const auto path = dir_ / "resource2";
  const UniqueFd fd = open_read_only(path);
  const Mapping bar2 = Mapping::map_read_only(fd, bar_size(fd, path), path);
  if (bar2.size() < sizeof(kvmai_ctrdev_layout)) {
    throw layout_error(bdf_, std::to_string(bar2.size()) + " bytes, too small for the layout");
  }
  return bar2.load32(offsetof(kvmai_ctrdev_layout, state));
}

}  // namespace kvmai::kvmaistat
