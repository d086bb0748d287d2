// The PCIe path between two devices and whether peer-to-peer traffic on it
// stays below the switch or is sent up through the root complex.
#pragma once

#include <string>
#include <vector>

#include "model/pci_tree.h"

namespace kvmai::kvmaictl {

// The terms of `nvidia-smi topo -m`.
enum class PathClass {
  PIX,   // at most one PCIe switch, no host bridge
  PXB,   // several switches, no host bridge
  PHB,   // through a PCIe host bridge (different root ports of one root complex)
  NODE,  // between host bridges of one NUMA node
  SYS,   // across NUMA nodes
};
std::string path_class_name(PathClass c);

enum class Verdict {
  direct,             // routed below the common switch
  direct_translated,  // redirect on, but DT + ATS let translated requests through
  root_complex,       // an ACS redirect bit sends requests up to the root complex
  host_bridge,        // the path crosses a host bridge whatever ACS says
  unknown,            // some port's ACS could not be read
};
std::string verdict_name(Verdict v);

// Whether the IOMMU sees every request between the two devices, so that
// each can be given to a different owner.
enum class Isolation {
  isolated,    // different IOMMU groups, and every request is checked
  same_group,  // one IOMMU group: the kernel gives them to one owner only
  no_iommu,    // no IOMMU translates their DMA: nothing is isolated
  translated,  // different groups, but translated requests pass a port
               // unchecked (ACS DT): isolation rests on the devices' ATS
  bypass,      // different groups, and a port routes requests between
               // them directly (redirect cleared, or no ACS)
  unknown,     // some port's ACS could not be read
};
std::string isolation_name(Isolation i);

struct Redirect {
  std::string port;  // BDF
  std::string bit;   // "RR", "CR", "EC"
};

struct P2pPath {
  PathClass path_class = PathClass::SYS;
  // Switches crossed: an upstream port's BDF, or the root bus of a host
  // bridge counted as a switch (PciRoot::as_switch).
  std::vector<std::string> switches;
  // Every port below the point where the two paths meet, from the first
  // device up, then from the meeting point down to the second.
  std::vector<const PciDevice*> ports;
  Verdict verdict = Verdict::unknown;
  std::vector<Redirect> redirects;
  std::vector<std::string> ports_without_acs;  // direct but not isolated
  std::vector<std::string> ports_unknown;      // config space unreadable
  bool ats_both = false;                       // both ends have ATS enabled
  Isolation isolation = Isolation::unknown;
  // The ports that let requests between different IOMMU groups through
  // unchecked: "0000:17:00.0 RR,CR cleared", "0000:17:00.0 no ACS".
  std::vector<std::string> unchecked;
  bool isolated() const { return isolation == Isolation::isolated; }
  std::string reason;  // one line for people
};

P2pPath classify(const PciTree& tree, const PciDevice& a, const PciDevice& b);

}  // namespace kvmai::kvmaictl
