#include "model/pci_config.h"

#include <array>

#include "common/names.h"

namespace kvmai::kvmaictl {
namespace {

constexpr std::size_t kStatus = 0x06;
constexpr std::uint16_t kStatusCapList = 1U << 4;
constexpr std::size_t kHeaderType = 0x0e;
constexpr std::size_t kCapPtr = 0x34;
constexpr std::uint8_t kCapIdPcie = 0x10;
constexpr std::size_t kExtStart = 0x100;
constexpr std::uint16_t kExtIdAcs = 0x000d;
constexpr std::uint16_t kExtIdAts = 0x000f;
constexpr std::uint16_t kExtIdSriov = 0x0010;
constexpr std::uint16_t kAtsEnable = 1U << 15;

class Bytes {
 public:
  explicit Bytes(std::span<const std::uint8_t> b) : b_(b) {}
  bool has(std::size_t off, std::size_t n) const { return off + n <= b_.size(); }
  std::uint8_t u8(std::size_t off) const { return has(off, 1) ? b_[off] : 0; }
  std::uint16_t u16(std::size_t off) const {
    return static_cast<std::uint16_t>(u8(off) | (u8(off + 1) << 8U));
  }
  std::uint32_t u32(std::size_t off) const {
    return static_cast<std::uint32_t>(u16(off)) | (static_cast<std::uint32_t>(u16(off + 2)) << 16U);
  }

 private:
  std::span<const std::uint8_t> b_;
};

int bytes_from_code(unsigned code) {
  return 128 << (code & 7U);
}

void parse_pcie(const Bytes& b, std::size_t off, PciConfig& c) {
  PcieCap p;
  p.type = static_cast<PortType>((b.u16(off + 2) >> 4U) & 0xfU);
  p.max_payload_supported = bytes_from_code(b.u32(off + 4) & 7U);
  const std::uint16_t devctl = b.u16(off + 8);
  p.offset = static_cast<std::uint8_t>(off);
  p.devctl = devctl;
  p.max_payload = bytes_from_code(devctl >> 5U);
  p.max_read_request = bytes_from_code(devctl >> 12U);
  c.pcie = p;
}

void walk_caps(const Bytes& b, PciConfig& c) {
  if ((b.u16(kStatus) & kStatusCapList) == 0) {
    return;
  }
  std::size_t off = b.u8(kCapPtr) & ~3U;
  // Bounded: a corrupt list must not loop forever.
  for (int i = 0; i < 48 && off >= 0x40 && b.has(off, 2); ++i) {
    if (b.u8(off) == kCapIdPcie && b.has(off, 12)) {
      parse_pcie(b, off, c);
    }
    off = b.u8(off + 1) & ~3U;
  }
}

void walk_ext_caps(const Bytes& b, PciConfig& c) {
  c.acs_presence = c.ats_presence = c.sriov_presence = Presence::absent;
  std::size_t off = kExtStart;
  for (int i = 0; i < 480 && off >= kExtStart && b.has(off, 4); ++i) {
    const std::uint32_t header = b.u32(off);
    if (header == 0 || header == 0xffffffffU) {
      break;
    }
    switch (header & 0xffffU) {
      case kExtIdAcs:
        c.acs = AcsCap{b.u16(off + 4), b.u16(off + 6)};
        c.acs_presence = Presence::present;
        break;
      case kExtIdAts:
        c.ats_presence = Presence::present;
        c.ats_enabled = (b.u16(off + 6) & kAtsEnable) != 0;
        break;
      case kExtIdSriov:
        c.sriov_presence = Presence::present;
        break;
      default:
        break;
    }
    off = (header >> 20U) & ~3U;
  }
}

}  // namespace

constexpr std::array<kvmai::Named<PortType>, 9> kPortTypeNames{{
    {PortType::endpoint, "endpoint"},
    {PortType::legacy_endpoint, "legacy-endpoint"},
    {PortType::root_port, "root-port"},
    {PortType::upstream_port, "upstream-port"},
    {PortType::downstream_port, "downstream-port"},
    {PortType::pcie_to_pci_bridge, "pcie-to-pci-bridge"},
    {PortType::pci_to_pcie_bridge, "pci-to-pcie-bridge"},
    {PortType::rc_integrated_endpoint, "rc-integrated-endpoint"},
    {PortType::rc_event_collector, "rc-event-collector"},
}};

std::string port_type_name(PortType t) {
  return std::string(kvmai::name_of(kPortTypeNames, t, "unknown"));
}

std::vector<std::string> acs_bit_names(std::uint16_t reg) {
  static constexpr std::array<const char*, 7> kNames{"SV", "TB", "RR", "CR", "UF", "EC", "DT"};
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if ((reg & (1U << i)) != 0) {
      names.emplace_back(kNames.at(i));
    }
  }
  return names;
}

PciConfig parse_config(std::span<const std::uint8_t> bytes) {
  const Bytes b(bytes);
  PciConfig c;
  c.size = bytes.size();
  c.vendor = b.u16(0);
  c.device = b.u16(2);
  c.header_type = b.u8(kHeaderType) & 0x7fU;
  c.multifunction = (b.u8(kHeaderType) & 0x80U) != 0;
  // The standard capabilities live anywhere in 0x40..0xff.
  c.caps_known = bytes.size() >= kExtStart;
  if (c.caps_known) {
    walk_caps(b, c);
  }
  // Conventional PCI has no extended space at all, so 256 bytes of it
  // are the whole truth; a PCIe device needs the full 4096.
  c.ext_caps_known = c.caps_known && (bytes.size() > kExtStart || !c.pcie);
  if (c.ext_caps_known && bytes.size() > kExtStart) {
    walk_ext_caps(b, c);
  } else if (c.ext_caps_known) {
    c.acs_presence = c.ats_presence = c.sriov_presence = Presence::absent;
  }
  return c;
}

}  // namespace kvmai::kvmaictl
