// PCI configuration space, as read from sysfs `config`: the capabilities
// topo and check need, parsed from the raw bytes.
//
// How much is readable depends on privilege: root reads 4096 bytes from a
// PCIe device (256 from conventional PCI), anyone else only the first 64.
// Whatever lies past the end is "unknown", never "absent".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kvmai::kvmaictl {

// PCIe capability: Device/Port Type field values.
enum class PortType : std::uint8_t {
  endpoint = 0x0,
  legacy_endpoint = 0x1,
  root_port = 0x4,
  upstream_port = 0x5,
  downstream_port = 0x6,
  pcie_to_pci_bridge = 0x7,
  pci_to_pcie_bridge = 0x8,
  rc_integrated_endpoint = 0x9,
  rc_event_collector = 0xa,
};

std::string port_type_name(PortType t);

struct PcieCap {
  PortType type = PortType::endpoint;
  int max_payload_supported = 0;  // bytes, DevCap
  int max_payload = 0;            // bytes, DevCtl
  int max_read_request = 0;       // bytes, DevCtl
  std::uint8_t offset = 0;        // of the capability in config space
  std::uint16_t devctl = 0;       // raw Device Control
};

// ACS Capability and Control registers (extended capability 0x000D).
struct AcsCap {
  std::uint16_t cap = 0;
  std::uint16_t ctl = 0;
};

// ACS bits, the same positions in the capability and control registers.
enum AcsBit : std::uint16_t {
  kAcsSV = 1U << 0,  // source validation
  kAcsTB = 1U << 1,  // translation blocking
  kAcsRR = 1U << 2,  // P2P request redirect
  kAcsCR = 1U << 3,  // P2P completion redirect
  kAcsUF = 1U << 4,  // upstream forwarding
  kAcsEC = 1U << 5,  // P2P egress control
  kAcsDT = 1U << 6,  // direct translated P2P
};

// "SV", "RR", ... for the bits set in `reg`, lowest first.
std::vector<std::string> acs_bit_names(std::uint16_t reg);

enum class Presence { absent, present, unknown };

struct PciConfig {
  std::size_t size = 0;
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint8_t header_type = 0;  // without the multi-function bit
  bool multifunction = false;
  bool caps_known = false;      // standard capability list readable
  bool ext_caps_known = false;  // extended capabilities readable
  std::optional<PcieCap> pcie;
  std::optional<AcsCap> acs;
  Presence acs_presence = Presence::unknown;
  Presence ats_presence = Presence::unknown;
  bool ats_enabled = false;
  Presence sriov_presence = Presence::unknown;
};

PciConfig parse_config(std::span<const std::uint8_t> bytes);

}  // namespace kvmai::kvmaictl
