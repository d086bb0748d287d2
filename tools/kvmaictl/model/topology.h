// The GPU/NIC view of a PCI tree that topo prints and check judges:
// named devices (gpu0.., nic0.., nvswitch0..), the switches, and every
// GPU/NIC pair's path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/p2p_path.h"
#include "model/pci_tree.h"

namespace kvmai::kvmaictl {

struct Switch {
  std::string name;           // "sw0"
  std::string kind;           // "switch", or "expander": a host bridge (PciRoot::as_switch)
  std::string upstream_port;  // BDF; empty for an expander
  std::string root;           // "pci0000:15"
  std::vector<std::string> downstream_ports;
};

struct Named {
  std::string name;  // "gpu0", "nic3"
  const PciDevice* dev = nullptr;
};

struct Pair {
  const Named* gpu = nullptr;
  const Named* nic = nullptr;
  P2pPath path;
};

class Topology {
 public:
  explicit Topology(PciTree tree);
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  Topology(Topology&&) = delete;
  Topology& operator=(Topology&&) = delete;
  ~Topology() = default;

  const PciTree& tree() const { return tree_; }
  const std::vector<Named>& gpus() const { return gpus_; }
  const std::vector<Named>& nics() const { return nics_; }
  const std::vector<Named>& nvswitches() const { return nvswitches_; }
  const std::vector<Switch>& switches() const { return switches_; }
  const std::vector<Pair>& pairs() const { return pairs_; }
  // A switch's name from its key (upstream port BDF or expander root bus).
  std::string switch_name(const std::string& key) const;
  // The nearest switch above a device, or "".
  std::string switch_of(const PciDevice& d) const;
  // The GPU, NIC or NVSwitch called `name` ("gpu0"), or nullptr.
  const Named* named(std::string_view name) const;
  // A device's GPU, NIC or NVSwitch name, or "" if it is none of them.
  std::string name_of(const PciDevice& d) const;

 private:
  PciTree tree_;
  std::vector<Named> gpus_;
  std::vector<Named> nics_;
  std::vector<Named> nvswitches_;
  std::vector<Switch> switches_;
  std::vector<Pair> pairs_;
};

// A NIC's kind: "rdma" (PciDevice::is_rdma_nic) or "management".
std::string nic_kind(const PciDevice& d);

// "enabled", "disabled", "absent" or "unknown".
std::string ats_state(const PciDevice& d);

}  // namespace kvmai::kvmaictl
