#include "hook/partitions.h"

#include <fmt/format.h>
#include <linux/kvmai.h>

#include <algorithm>
#include <map>

#include "client/genl.h"
#include "client/names.h"
#include "common/format.h"
#include "partition/apply.h"
#include "partition/plan.h"
#include "partition/users.h"

namespace kvmai::kvmaictl::hook {
namespace {

using partition::Layout;
using partition::Wanted;

int count_of(const std::optional<std::string>& v, std::string_view what, int least) {
  if (!v || v->empty() || v->size() > 5 ||
      !std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(*v) < least) {
    throw HookError(cat({"partition: ", what, "=", in_quotes(v.value_or("")),
                         least ? " is not a positive number" : " is not a number"}));
  }
  return std::stoi(*v);
}

// Where VF `vf` of `pf` sits: the PF's routing ID plus its SR-IOV
// capability's First VF Offset and VF Stride, as sysfs shows them.
std::string vf_address(const TreeReader& sys, const std::string& pf, int vf) {
  const std::string rel = "bus/pci/devices/" + pf;
  const auto offset = read_int(sys, rel + "/sriov_offset", 10);
  const auto stride = read_int(sys, rel + "/sriov_stride", 10);
  unsigned domain = 0, bus = 0, slot = 0, fn = 0;
  if (!offset || !stride ||
      std::sscanf(pf.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &fn) != 4) {
    throw HookError("partition: " + pf + " has no SR-IOV offset and stride in sysfs");
  }
  const long long rid = (bus << 8U | slot << 3U | fn) + *offset + vf * *stride;
  return format_bdf(domain, static_cast<unsigned>(rid >> 8U) & 0xffU,
                    static_cast<unsigned>(rid >> 3U) & 0x1fU, static_cast<unsigned>(rid) & 7U);
}

partition::Users users_of(const Layout& l, const std::string& sysfs_root, Kvmai& k) {
  partition::Users users;
  std::vector<std::string> devices;
  for (const auto& p : l.parents) {
    const auto parts = partition::partitions_of(p);
    devices.insert(devices.end(), parts.begin(), parts.end());
  }
  // A test's sysfs tree has no processes of its own.
  if (sysfs_root == kSysfsRoot) {
    const FsReader sys(kSysfsRoot);
    const FsReader proc(kProcfsRoot);
    partition::add_vfio_users(users, devices, sys, proc);
  }
  try {
    for (const Group& g : k.groups()) {
      if (g.state == KVMAI_STATE_ENABLED) {
        for (const auto& addr : g.member_addrs()) {
          users.add(addr, "in enabled P2P group " + printable(g.name.value_or("?")));
        }
      }
    }
  } catch (const GenlError& e) {
    if (e.kind() != GenlError::Kind::family_not_found) {
      throw HookError(std::string("partition: list groups: ") + e.what());
    }
  }
  return users;
}

// Applies `wanted` to the host; HookError when refused or failed.
void change(const std::vector<Wanted>& wanted, const std::string& sysfs_root,
            const partition::Users& users) {
  const FsReader sys(sysfs_root);
  const Layout before = Layout::read(sys);
  partition::Plan plan;
  try {
    plan = partition::plan(before, wanted, users, [] { return std::string("?"); });
  } catch (const partition::Refusal& e) {
    throw HookError(std::string("partition: ") + e.what());
  }
  const auto out = partition::apply_with_rollback(plan, before, sysfs_root, nullptr);
  if (!out.failure.empty()) {
    throw HookError(
        "partition: " + out.failure +
        (out.restored ? "; rolled back" : "; the rollback failed: " + out.rollback_failure));
  }
}

}  // namespace

std::vector<PartitionPlan> plan_partitions(const DomainXml& xml, const HostConfig& host,
                                           const TreeReader& sys) {
  std::vector<PartitionPlan> out;
  const Layout l = Layout::read(sys);
  for (const auto& spec : xml.kvmai.partitions) {
    PartitionPlan p;
    const auto parent = partition::parent_name(spec.parent.value_or(""));
    if (!parent) {
      throw HookError("partition: parent=" + in_quotes(spec.parent.value_or("")) +
                      " is not a PCI address or an mdev parent name");
    }
    p.parent = *parent;
    if (!host.partitions(p.parent)) {
      throw HookError("partition: parent " + p.parent +
                      " is not the domains' to partition: list it under [partition] parent "
                      "in " +
                      printable(host.path));
    }
    const partition::Parent* have = l.find(p.parent);
    if (have == nullptr) {
      throw HookError("partition: no partitionable device " + p.parent);
    }
    p.remove = spec.remove.value_or("no") == "yes";
    if (spec.remove && *spec.remove != "yes" && *spec.remove != "no") {
      throw HookError("partition: remove=" + in_quotes(*spec.remove) + " is neither yes nor no");
    }
    if (spec.type || spec.uuid) {
      if (spec.vfs || spec.vf || spec.vgpu_type) {
        throw HookError("partition: an mdev (type, uuid) or a VF (vfs, vf, vgpu-type), not both");
      }
      p.mdev = true;
      p.type = spec.type.value_or("");
      p.uuid = to_lower(spec.uuid.value_or(""));
      if (!partition::is_uuid(p.uuid)) {
        throw HookError("partition: uuid=" + in_quotes(spec.uuid.value_or("")) +
                        " is not a UUID (the mdev's, as its hostdev names it)");
      }
      if (have->mdev_type(p.type) == nullptr) {
        throw HookError("partition: " + p.parent + " offers no mdev type " + in_quotes(p.type));
      }
      if (std::none_of(xml.mdevs.begin(), xml.mdevs.end(),
                       [&](const std::string& u) { return to_lower(u) == p.uuid; })) {
        throw HookError("partition: mdev " + p.uuid + " is not one of the domain's mdev hostdevs");
      }
    } else {
      if (!have->sriov()) {
        throw HookError("partition: " + p.parent + " has no SR-IOV capability");
      }
      p.vfs = count_of(spec.vfs, "vfs", 1);
      p.vf = count_of(spec.vf, "vf", 0);
      if (p.vf >= p.vfs) {
        throw HookError(fmt::format("partition: vf=\"{}\" is not below vfs=\"{}\"", p.vf, p.vfs));
      }
      p.vgpu_type = spec.vgpu_type.value_or("");
      p.vf_address = vf_address(sys, p.parent, p.vf);
      if (std::find(xml.pci_devices.begin(), xml.pci_devices.end(), p.vf_address) ==
          xml.pci_devices.end()) {
        throw HookError(
            fmt::format("partition: VF {} of {} will be {}, which is not a PCI "
                        "hostdev of the domain",
                        p.vf, p.parent, p.vf_address));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

Layout make_partitions(const std::vector<PartitionPlan>& plans, const std::string& sysfs_root,
                       Kvmai& k) {
  const FsReader sys(sysfs_root);
  const Layout before = Layout::read(sys);
  std::map<std::string, Wanted> wanted;
  std::map<std::string, int> counts;  // PF -> the VF count asked for
  for (const auto& p : plans) {
    const partition::Parent& have = *before.find(p.parent);
    auto [it, fresh] = wanted.try_emplace(p.parent);
    Wanted& w = it->second;
    if (fresh) {
      w = partition::as_wanted(have);
      w.vgpu_types.clear();
    }
    if (p.mdev) {
      auto& m = *w.mdevs;
      const auto e = std::find_if(m.begin(), m.end(),
                                  [&](const partition::WantedMdev& x) { return x.uuid == p.uuid; });
      if (e == m.end()) {
        m.push_back({.type = p.type, .uuid = p.uuid});
      } else if (e->type != p.type) {
        throw HookError("partition: mdev " + p.uuid + " exists, of type " + e->type);
      }
      continue;
    }
    const auto [count, first] = counts.try_emplace(p.parent, p.vfs);
    if (!first && count->second != p.vfs) {
      throw HookError(fmt::format("partition: {} is asked for {} VFs and for {}", p.parent,
                                  count->second, p.vfs));
    }
    if (w.vfs != p.vfs) {
      // A new count makes new VFs: every one of them for VFIO.
      w.vfs = p.vfs;
      w.drivers.assign(static_cast<std::size_t>(p.vfs), "vfio-pci");
    }
    w.drivers[static_cast<std::size_t>(p.vf)] = "vfio-pci";
    if (!p.vgpu_type.empty()) {
      w.vgpu_types.resize(static_cast<std::size_t>(p.vfs), "");
      w.vgpu_types[static_cast<std::size_t>(p.vf)] = p.vgpu_type;
    }
  }
  std::vector<Wanted> all;
  for (auto& [name, w] : wanted) {
    all.push_back(std::move(w));
  }
  change(all, sysfs_root, users_of(before, sysfs_root, k));
  // The kernel put each VF where the plan said it would be.
  const Layout after = Layout::read(sys);
  for (const auto& p : plans) {
    if (p.mdev) {
      continue;
    }
    const partition::Vf* vf = after.find(p.parent)->vf(p.vf);
    if (vf == nullptr || vf->bdf != p.vf_address) {
      undo_partitions(plans, before, sysfs_root);
      throw HookError(fmt::format("partition: VF {} of {} appeared at {}, not at {}", p.vf,
                                  p.parent, vf ? vf->bdf : "no address", p.vf_address));
    }
  }
  return before;
}

void undo_partitions(const std::vector<PartitionPlan>& plans, const Layout& before,
                     const std::string& sysfs_root) {
  std::vector<Wanted> back;
  for (const auto& p : plans) {
    if (std::none_of(back.begin(), back.end(),
                     [&](const Wanted& w) { return w.parent == p.parent; })) {
      if (const partition::Parent* have = before.find(p.parent)) {
        back.push_back(partition::as_wanted(*have));
      }
    }
  }
  // What prepare made is the domain's alone, and its QEMU never ran.
  change(back, sysfs_root, partition::Users{});
}

void remove_partitions(const std::vector<PartitionPlan>& plans, const std::string& sysfs_root,
                       Kvmai& k, std::vector<std::string>& warnings) {
  const FsReader sys(sysfs_root);
  const Layout now = Layout::read(sys);
  const auto users = users_of(now, sysfs_root, k);
  for (const auto& p : plans) {
    if (!p.remove) {
      continue;
    }
    const partition::Parent* have = now.find(p.parent);
    if (have == nullptr) {
      continue;
    }
    Wanted w = partition::as_wanted(*have);
    w.vgpu_types.clear();
    if (p.mdev) {
      std::erase_if(*w.mdevs, [&](const partition::WantedMdev& m) { return m.uuid == p.uuid; });
    } else {
      // The PF's VFs go with the last domain that asked for their removal:
      // while another VF is in use, they stay.
      w.vfs = 0;
      w.drivers.clear();
      // And host drivers probe VFs again, as the kernel has it: prepare
      // turned that off for the VFs it made.
      w.autoprobe = true;
    }
    try {
      change({w}, sysfs_root, users);
    } catch (const HookError& e) {
      warnings.emplace_back(std::string(e.what()) + ": left in place");
    }
  }
}

}  // namespace kvmai::kvmaictl::hook
