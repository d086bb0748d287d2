#include "model/topology.h"

#include <algorithm>

namespace kvmai::kvmaictl {

Topology::Topology(PciTree tree) : tree_(std::move(tree)) {
  for (const auto& d : tree_.devices()) {
    if (d.is_gpu()) {
      gpus_.push_back({"gpu" + std::to_string(gpus_.size()), &d});
    } else if (d.is_nic()) {
      nics_.push_back({"nic" + std::to_string(nics_.size()), &d});
    } else if (d.is_nvswitch()) {
      nvswitches_.push_back({"nvswitch" + std::to_string(nvswitches_.size()), &d});
    }
  }
  // Switches in tree order: host bridges counted as switches by root bus,
  // real ones by their upstream port.
  for (const auto& [name, root] : tree_.roots()) {
    if (!root.as_switch) {
      continue;
    }
    Switch s{"", "expander", "", name, {}};
    for (const auto& d : tree_.devices()) {
      if (d.root == name && d.parents.empty() && d.role == Role::root_port) {
        s.downstream_ports.push_back(d.bdf);
      }
    }
    switches_.push_back(std::move(s));
  }
  for (const auto& d : tree_.devices()) {
    if (d.role != Role::upstream_port) {
      continue;
    }
    Switch s{"", "switch", d.bdf, d.root, {}};
    for (const auto& c : tree_.devices()) {
      if (!c.parents.empty() && c.parents.back() == d.bdf && c.is_bridge()) {
        s.downstream_ports.push_back(c.bdf);
      }
    }
    switches_.push_back(std::move(s));
  }
  std::stable_sort(switches_.begin(), switches_.end(), [](const Switch& a, const Switch& b) {
    return a.root + a.upstream_port < b.root + b.upstream_port;
  });
  for (std::size_t i = 0; i < switches_.size(); ++i) {
    switches_[i].name = "sw" + std::to_string(i);
  }
  for (const auto& g : gpus_) {
    for (const auto& n : nics_) {
      pairs_.push_back({&g, &n, classify(tree_, *g.dev, *n.dev)});
    }
  }
}

std::string Topology::switch_name(const std::string& key) const {
  for (const auto& s : switches_) {
    if (s.upstream_port == key || (s.upstream_port.empty() && s.root == key)) {
      return s.name;
    }
  }
  return key;
}

std::string Topology::switch_of(const PciDevice& d) const {
  // The nearest upstream port above the device.
  const auto usp = std::find_if(d.parents.rbegin(), d.parents.rend(), [&](const std::string& bdf) {
    const PciDevice* p = tree_.find(bdf);
    return p != nullptr && p->role == Role::upstream_port;
  });
  if (usp != d.parents.rend()) {
    return switch_name(*usp);
  }
  const PciRoot* r = tree_.root(d.root);
  return r != nullptr && r->as_switch ? switch_name(d.root) : "";
}

const Named* Topology::named(std::string_view name) const {
  for (const auto* list : {&gpus_, &nics_, &nvswitches_}) {
    for (const auto& n : *list) {
      if (n.name == name) {
        return &n;
      }
    }
  }
  return nullptr;
}

std::string Topology::name_of(const PciDevice& d) const {
  for (const auto* list : {&gpus_, &nics_, &nvswitches_}) {
    for (const auto& n : *list) {
      if (n.dev->bdf == d.bdf) {
        return n.name;
      }
    }
  }
  return "";
}

std::string nic_kind(const PciDevice& d) {
  return d.is_rdma_nic() ? "rdma" : "management";
}

std::string ats_state(const PciDevice& d) {
  switch (d.config.ats_presence) {
    case Presence::present:
      return d.config.ats_enabled ? "enabled" : "disabled";
    case Presence::absent:
      return "absent";
    case Presence::unknown:
      break;
  }
  return "unknown";
}

}  // namespace kvmai::kvmaictl
