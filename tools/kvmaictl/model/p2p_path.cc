#include "model/p2p_path.h"

#include <algorithm>
#include <array>

#include "common/names.h"

namespace kvmai::kvmaictl {
namespace {

constexpr std::uint16_t kRedirectBits = kAcsRR | kAcsCR | kAcsEC;

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) {
    s += (s.empty() ? "" : sep) + x;
  }
  return s;
}

// The ACS verdict for a path that stays below a switch (or a bus).
void judge_acs(const PciDevice& a, const PciDevice& b, P2pPath& p) {
  bool all_redirecting_have_dt = true;
  for (const PciDevice* port : p.ports) {
    const PciConfig& c = port->config;
    if (c.acs_presence == Presence::unknown) {
      p.ports_unknown.push_back(port->bdf);
      continue;
    }
    if (c.acs_presence == Presence::absent) {
      p.ports_without_acs.push_back(port->bdf);
      continue;
    }
    const std::uint16_t on = c.acs->ctl & kRedirectBits;
    for (const auto& bit : acs_bit_names(on)) {
      p.redirects.push_back({port->bdf, bit});
    }
    if (on != 0 && (c.acs->ctl & kAcsDT) == 0) {
      all_redirecting_have_dt = false;
    }
  }
  p.ats_both = a.config.ats_enabled && b.config.ats_enabled;

  if (!p.redirects.empty()) {
    // Translated P2P: requests that carry host addresses from the device
    // IOTLB pass ports with DT set; untranslated ones are still redirected.
    if (all_redirecting_have_dt && p.ats_both) {
      p.verdict = Verdict::direct_translated;
      p.reason = "direct (translated): DT set on every redirecting port and ATS on both ends";
      return;
    }
    p.verdict = Verdict::root_complex;
    // One entry per port: "0000:17:00.0 RR,CR".
    std::vector<std::string> why;
    std::string last_port;
    for (const auto& r : p.redirects) {
      if (r.port == last_port) {
        why.back() += "," + r.bit;
      } else {
        why.push_back(r.port + " " + r.bit);
        last_port = r.port;
      }
    }
    p.reason = "through root complex: " + join(why, "; ");
    return;
  }
  if (!p.ports_unknown.empty()) {
    p.verdict = Verdict::unknown;
    p.reason = "unknown: ACS unreadable on " + join(p.ports_unknown, ", ") + " (run as root)";
    return;
  }
  p.verdict = Verdict::direct;
  p.reason = p.ports_without_acs.empty()
                 ? "direct"
                 : "direct, not isolated: no ACS on " + join(p.ports_without_acs, ", ");
}

// Whether the IOMMU checks the requests between `a` and `b`. The kernel
// put them in different IOMMU groups because every downstream and root port
// between them redirected peer requests (RR) and completions (CR) upstream
// when it looked (REQ_ACS_FLAGS in drivers/iommu/iommu.c); a port changed
// since then, by setpci or a runtime override, breaks that promise for
// every pair below it.
void judge_isolation(const PciTree& tree, const PciDevice& a, const PciDevice& b, P2pPath& p) {
  if (!a.iommu_group || !b.iommu_group) {
    p.isolation = Isolation::no_iommu;
    return;
  }
  if (*a.iommu_group == *b.iommu_group) {
    p.isolation = Isolation::same_group;
    return;
  }
  // Only the ports where requests turn toward the peer decide: the two
  // ports just below the point where the paths meet (a switch's internal
  // bus, or the root bus). A port further down sends requests upstream
  // anyway, and devices under different host bridges meet in the root
  // complex, behind the IOMMU.
  std::vector<const PciDevice*> turning;
  if (a.root == b.root) {
    const auto [ia, ib] =
        std::mismatch(a.parents.begin(), a.parents.end(), b.parents.begin(), b.parents.end());
    for (const auto& it : {std::pair(ia, a.parents.end()), std::pair(ib, b.parents.end())}) {
      if (it.first != it.second) {
        if (const PciDevice* port = tree.find(*it.first)) {
          turning.push_back(port);
        }
      }
    }
  }
  bool unknown = false;
  std::vector<std::string> bypass;  // ports that let requests pass unchecked
  std::vector<std::string> dt;      // ports that pass translated requests only
  for (const PciDevice* port : turning) {
    if (port->role != Role::downstream_port && port->role != Role::root_port) {
      continue;  // a conventional bridge: its ACS, if any, is not asked
    }
    const PciConfig& c = port->config;
    if (c.acs_presence == Presence::unknown) {
      unknown = true;
    } else if (c.acs_presence == Presence::absent) {
      bypass.push_back(port->bdf + " no ACS");
    } else if (const std::uint16_t off = (kAcsRR | kAcsCR) & ~c.acs->ctl; off != 0) {
      bypass.push_back(port->bdf + " " + join(acs_bit_names(off), ",") + " cleared");
    } else if ((c.acs->ctl & kAcsDT) != 0) {
      dt.push_back(port->bdf + " DT set");
    }
  }
  // The worst finding names the path: a bypass, else not knowing, else DT.
  if (!bypass.empty()) {
    p.unchecked.insert(p.unchecked.end(), bypass.begin(), bypass.end());
    p.isolation = Isolation::bypass;
  } else if (unknown) {
    p.isolation = Isolation::unknown;
  } else {
    p.unchecked.insert(p.unchecked.end(), dt.begin(), dt.end());
    p.isolation = dt.empty() ? Isolation::isolated : Isolation::translated;
  }
}

// The path and the ACS verdict on it.
P2pPath route(const PciTree& tree, const PciDevice& a, const PciDevice& b);

}  // namespace

constexpr std::array<kvmai::Named<Isolation>, 6> kIsolationNames{{
    {Isolation::isolated, "isolated"},
    {Isolation::same_group, "same-group"},
    {Isolation::no_iommu, "no-iommu"},
    {Isolation::translated, "translated"},
    {Isolation::bypass, "bypass"},
    {Isolation::unknown, "unknown"},
}};

std::string isolation_name(Isolation i) {
  return std::string(kvmai::name_of(kIsolationNames, i));
}

constexpr std::array<kvmai::Named<PathClass>, 5> kPathClassNames{{
    {PathClass::PIX, "PIX"},
    {PathClass::PXB, "PXB"},
    {PathClass::PHB, "PHB"},
    {PathClass::NODE, "NODE"},
    {PathClass::SYS, "SYS"},
}};

std::string path_class_name(PathClass c) {
  return std::string(kvmai::name_of(kPathClassNames, c));
}

constexpr std::array<kvmai::Named<Verdict>, 5> kVerdictNames{{
    {Verdict::direct, "direct"},
    {Verdict::direct_translated, "direct-translated"},
    {Verdict::root_complex, "root-complex"},
    {Verdict::host_bridge, "host-bridge"},
    {Verdict::unknown, "unknown"},
}};

std::string verdict_name(Verdict v) {
  return std::string(kvmai::name_of(kVerdictNames, v));
}

P2pPath classify(const PciTree& tree, const PciDevice& a, const PciDevice& b) {
  P2pPath p = route(tree, a, b);
  judge_isolation(tree, a, b, p);
  return p;
}

namespace {

P2pPath route(const PciTree& tree, const PciDevice& a, const PciDevice& b) {
  P2pPath p;
  if (a.root != b.root) {
    // Separate host bridges: the root complex (and maybe the socket
    // interconnect) carries the traffic.
    const bool same_node = a.numa_node == b.numa_node;
    p.path_class = same_node ? PathClass::NODE : PathClass::SYS;
    p.verdict = Verdict::host_bridge;
    p.reason = same_node ? "through host bridge (different host bridges)"
                         : "through host bridge (different NUMA nodes)";
    return p;
  }

  // Where the two chains of upstream bridges part.
  const auto [ia, ib] =
      std::mismatch(a.parents.begin(), a.parents.end(), b.parents.begin(), b.parents.end());
  const auto common = static_cast<std::size_t>(ia - a.parents.begin());
  for (auto it = ia; it != a.parents.end(); ++it) {
    p.ports.push_back(tree.find(*it));
  }
  std::reverse(p.ports.begin(), p.ports.end());
  for (auto it = ib; it != b.parents.end(); ++it) {
    p.ports.push_back(tree.find(*it));
  }
  std::erase(p.ports, nullptr);

  // The bus where they meet: the root bus, or a bridge's secondary bus.
  // Below an upstream port that bus is the switch's internal bus, so the
  // switch is crossed; below a root/downstream port both ends are functions
  // on one link and no switch is.
  const PciRoot* root = tree.root(a.root);
  if (common == 0) {
    if (root == nullptr || !root->as_switch) {
      p.path_class = PathClass::PHB;
      p.verdict = Verdict::host_bridge;
      // Functions on the root bus itself (a VM's flat bus, integrated
      // endpoints) have no root port above them.
      p.reason = a.parents.empty() && b.parents.empty()
                     ? "through host bridge (both on the root bus)"
                 : a.parents.empty() || b.parents.empty()
                     ? "through host bridge (root bus and a root port)"
                     : "through host bridge (different root ports)";
      return p;
    }
    p.switches.push_back(a.root);  // the host bridge counted as a switch
  } else if (const PciDevice* meet = tree.find(a.parents[common - 1]);
             meet != nullptr && meet->role == Role::upstream_port) {
    p.switches.push_back(meet->bdf);
  }
  for (const PciDevice* port : p.ports) {
    if (port->role == Role::upstream_port) {
      p.switches.push_back(port->bdf);
    }
  }
  p.path_class = p.switches.size() <= 1 ? PathClass::PIX : PathClass::PXB;
  judge_acs(a, b, p);
  return p;
}

}  // namespace

}  // namespace kvmai::kvmaictl
