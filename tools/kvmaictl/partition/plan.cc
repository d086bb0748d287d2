#include "partition/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "client/names.h"

namespace kvmai::kvmaictl::partition {
namespace {

bool clears(const std::string& type) {
  return type == "none" || type == "0";
}

// The id a wanted vGPU type names, as the VF's driver takes it.
std::string vgpu_id(const Parent& p, const std::string& word) {
  if (clears(word)) {
    return "0";
  }
  // An id goes to the driver as it is: a full GPU's VFs list no types,
  // and the driver is the judge of its own ids.
  if (p.vgpu_types.empty() ||
      std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    // No VF to read the types from yet: the step resolves a name.
    return word;
  }
  const VgpuType* t = p.vgpu(word);
  if (t == nullptr) {
    std::string offered;
    for (const auto& o : p.vgpu_types) {
      offered += fmt::format("{}{} ({})", offered.empty() ? "" : ", ", o.id, o.name);
    }
    throw Refusal(fmt::format("{}: its VFs offer no vGPU type \"{}\" (they offer: {})", p.name,
                              printable(word), offered.empty() ? "none" : offered));
  }
  return std::to_string(t->id);
}

// The name of vGPU type `id`, "" when the layout does not know it.
std::string vgpu_name(const Parent& p, const std::string& id) {
  const VgpuType* t = id == "0" ? nullptr : p.vgpu(id);
  return t == nullptr ? "" : t->name;
}

struct Steps {
  std::vector<Step> removes, sriov, creates;
};

void refuse_if_used(const Users& users, const std::string& device, const std::string& what,
                    const std::string& why) {
  if (const auto who = users.of(device); !who.empty()) {
    throw Refusal(fmt::format("{}: {} is {}", why, what, who));
  }
}

Step mdev_step(Step::Kind kind, const std::string& parent, const std::string& type,
               const std::string& uuid) {
  return {
      .kind = kind, .device = parent, .vf = -1, .value = type, .uuid = uuid, .was = "", .name = ""};
}

void plan_mdevs(const Parent& p, const std::vector<WantedMdev>& want, const Users& users,
                const UuidSource& new_uuid, Steps& s) {
  if (!p.mdev_parent()) {
    throw Refusal(fmt::format("{}: not an mdev parent (no mdev_supported_types)", p.name));
  }
  for (const auto& m : want) {
    if (p.mdev_type(m.type) == nullptr) {
      std::string offered;
      for (const auto& t : p.mdev_types) {
        offered += (offered.empty() ? "" : ", ") + t.id;
      }
      throw Refusal(fmt::format("{}: offers no mdev type \"{}\" (it offers: {})", p.name,
                                printable(m.type), offered));
    }
  }
  std::set<std::string> kept;
  std::vector<WantedMdev> create;
  // Named instances first: kept when they exist with that type.
  for (const auto& m : want) {
    if (m.uuid.empty()) {
      continue;
    }
    const auto it = std::find_if(p.mdevs.begin(), p.mdevs.end(),
                                 [&](const Mdev& e) { return e.uuid == m.uuid; });
    if (it != p.mdevs.end() && it->type == m.type && !kept.contains(m.uuid)) {
      kept.insert(m.uuid);
    } else {
      create.push_back(m);
    }
  }
  // Then counts: of the instances of a type not named, those in use are
  // kept first, so that a smaller count removes idle ones.
  std::vector<const Mdev*> spare;
  for (const auto& e : p.mdevs) {
    if (!kept.contains(e.uuid)) {
      spare.push_back(&e);
    }
  }
  std::stable_sort(spare.begin(), spare.end(), [&](const Mdev* a, const Mdev* b) {
    return !users.of(a->uuid).empty() && users.of(b->uuid).empty();
  });
  for (const auto& m : want) {
    if (!m.uuid.empty()) {
      continue;
    }
    const auto it = std::find_if(spare.begin(), spare.end(), [&](const Mdev* e) {
      return e->type == m.type && !kept.contains(e->uuid);
    });
    if (it != spare.end()) {
      kept.insert((*it)->uuid);
    } else {
      create.push_back({.type = m.type, .uuid = new_uuid()});
    }
  }
  for (const auto& e : p.mdevs) {
    if (kept.contains(e.uuid)) {
      continue;
    }
    refuse_if_used(users, e.uuid, fmt::format("mdev {} ({})", e.uuid, e.type),
                   fmt::format("{}: cannot remove an mdev", p.name));
    s.removes.push_back(mdev_step(Step::Kind::remove_mdev, p.name, e.type, e.uuid));
  }
  for (const auto& m : create) {
    s.creates.push_back(mdev_step(Step::Kind::create_mdev, p.name, m.type, m.uuid));
  }
}

void plan_sriov(const Parent& p, const Wanted& w, const Users& users, Steps& s) {
  if (!p.sriov()) {
    throw Refusal(fmt::format("{}: has no SR-IOV capability (no sriov_totalvfs)", p.name));
  }
  const int target = w.vfs.value_or(p.num_vfs);
  if (target > *p.total_vfs) {
    throw Refusal(
        fmt::format("{}: {} VFs wanted, the device has at most {}", p.name, target, *p.total_vfs));
  }
  const auto index = [](int i) { return static_cast<std::size_t>(i); };
  for (std::size_t i = index(target); i < w.vgpu_types.size(); i++) {
    if (!w.vgpu_types[i].empty()) {
      throw Refusal(fmt::format("{}: has no VF {} (it {} {} VFs)", p.name, i,
                                w.vfs ? "would have" : "has", target));
    }
  }
  const bool recreate = target != p.num_vfs || static_cast<int>(p.vfs.size()) != p.num_vfs;
  const auto step = [&](Step::Kind k, int vf, std::string value, std::string was) {
    std::string name = k == Step::Kind::set_vgpu_type ? vgpu_name(p, value) : "";
    s.sriov.push_back({.kind = k,
                       .device = p.name,
                       .vf = vf,
                       .value = std::move(value),
                       .uuid = "",
                       .was = std::move(was),
                       .name = std::move(name)});
  };
  const bool autoprobe_was = p.autoprobe.value_or(true);
  if (recreate) {
    for (const auto& vf : p.vfs) {
      refuse_if_used(
          users, vf.bdf, fmt::format("VF {} {}", vf.index, vf.bdf),
          fmt::format("{}: cannot change the VF count from {} to {}", p.name, p.num_vfs, target));
    }
    // New VFs must reach no host driver before they are bound: autoprobe
    // off first, and left off unless asked. Without new VFs it is left as
    // it is, unless asked.
    const bool off_first = target > 0 && autoprobe_was;
    if (off_first) {
      step(Step::Kind::set_autoprobe, -1, "0", "1");
    }
    if (p.num_vfs > 0) {
      step(Step::Kind::set_num_vfs, -1, "0", std::to_string(p.num_vfs));
    }
    if (target > 0) {
      step(Step::Kind::set_num_vfs, -1, std::to_string(target), "0");
    }
    for (int i = 0; i < target; i++) {
      const std::string driver = index(i) < w.drivers.size() ? w.drivers[index(i)] : "vfio-pci";
      if (!driver.empty()) {
        step(Step::Kind::bind_vf, i, driver, "");
      }
      if (index(i) < w.vgpu_types.size() && !w.vgpu_types[index(i)].empty() &&
          !clears(w.vgpu_types[index(i)])) {
        step(Step::Kind::set_vgpu_type, i, vgpu_id(p, w.vgpu_types[index(i)]), "0");
      }
    }
    const bool now = off_first ? false : autoprobe_was;
    if (const bool last = w.autoprobe.value_or(target > 0 ? false : autoprobe_was); last != now) {
      step(Step::Kind::set_autoprobe, -1, last ? "1" : "0", now ? "1" : "0");
    }
    return;
  }
  // Every type that changes is cleared before any is set: with NVIDIA's
  // time-sliced vGPUs all of a GPU's are of one type, so a new type fits
  // only once no VF has the old one.
  std::vector<std::pair<int, std::string>> sets;
  for (const auto& vf : p.vfs) {
    const auto i = index(vf.index);
    const std::string what = fmt::format("VF {} {}", vf.index, vf.bdf);
    if (i < w.drivers.size() && w.drivers[i] != vf.driver) {
      refuse_if_used(users, vf.bdf, what, fmt::format("{}: cannot rebind a VF", p.name));
      step(Step::Kind::bind_vf, vf.index, w.drivers[i], vf.driver);
    }
    if (i >= w.vgpu_types.size() || w.vgpu_types[i].empty()) {
      continue;
    }
    if (!vf.vgpu_type) {
      throw Refusal(
          fmt::format("{}: {} offers no vGPU types (no nvidia/current_vgpu_type)", p.name, what));
    }
    const std::string id = vgpu_id(p, w.vgpu_types[i]);
    const std::string was = std::to_string(*vf.vgpu_type);
    if (id == was) {
      continue;
    }
    refuse_if_used(users, vf.bdf, what, fmt::format("{}: cannot change a VF's vGPU type", p.name));
    if (was != "0") {
      step(Step::Kind::set_vgpu_type, vf.index, "0", was);
    }
    if (id != "0") {
      sets.emplace_back(vf.index, id);
    }
  }
  for (const auto& [vf, id] : sets) {
    step(Step::Kind::set_vgpu_type, vf, id, "0");
  }
  if (w.autoprobe && *w.autoprobe != autoprobe_was) {
    step(Step::Kind::set_autoprobe, -1, *w.autoprobe ? "1" : "0", autoprobe_was ? "1" : "0");
  }
}

}  // namespace

std::string Step::text() const {
  switch (kind) {
    case Kind::remove_mdev:
      return fmt::format("{}: remove mdev {} ({})", device, uuid, value);
    case Kind::set_autoprobe:
      return fmt::format("{}: sriov_drivers_autoprobe {} -> {}", device, was, value);
    case Kind::set_num_vfs:
      return fmt::format("{}: sriov_numvfs {} -> {}", device, was, value);
    case Kind::bind_vf:
      return fmt::format("{} VF {}: driver {} -> {}", device, vf, was.empty() ? "none" : was,
                         value.empty() ? "none" : value);
    case Kind::set_vgpu_type:
      return fmt::format("{} VF {}: vgpu-type {} -> {}{}", device, vf, was == "0" ? "none" : was,
                         value == "0" ? "none" : value, name.empty() ? "" : " (" + name + ")");
    case Kind::create_mdev:
      return fmt::format("{}: create mdev {} ({})", device, uuid, value);
  }
  return "?";
}

Plan plan(const Layout& now, const std::vector<Wanted>& wanted, const Users& users,
          const UuidSource& new_uuid) {
  Steps s;
  for (const auto& w : wanted) {
    const Parent* p = now.find(w.parent);
    if (p == nullptr) {
      throw Refusal(fmt::format("{}: no such partitionable device (an SR-IOV PF or mdev parent)",
                                printable(w.parent)));
    }
    if (w.mdevs) {
      plan_mdevs(*p, *w.mdevs, users, new_uuid, s);
    }
    if (w.vfs || !w.drivers.empty() || !w.vgpu_types.empty() || w.autoprobe) {
      plan_sriov(*p, w, users, s);
    }
  }
  Plan out;
  for (auto* part : {&s.removes, &s.sriov, &s.creates}) {
    out.steps.insert(out.steps.end(), part->begin(), part->end());
  }
  return out;
}

Wanted as_wanted(const Parent& p) {
  Wanted w;
  w.parent = p.name;
  if (p.sriov()) {
    w.vfs = static_cast<int>(p.vfs.size());
    w.autoprobe = p.autoprobe;
    for (const auto& vf : p.vfs) {
      w.drivers.push_back(vf.driver);
      if (vf.vgpu_type) {
        w.vgpu_types.resize(w.drivers.size(), "");
        w.vgpu_types.back() = std::to_string(*vf.vgpu_type);
      }
    }
  }
  if (p.mdev_parent()) {
    std::vector<WantedMdev> m;
    for (const auto& e : p.mdevs) {
      m.push_back({.type = e.type, .uuid = e.uuid});
    }
    w.mdevs = std::move(m);
  }
  return w;
}

std::vector<std::string> partitions_of(const Parent& parent) {
  std::vector<std::string> out;
  for (const auto& vf : parent.vfs) {
    out.push_back(vf.bdf);
  }
  for (const auto& m : parent.mdevs) {
    out.push_back(m.uuid);
  }
  return out;
}

}  // namespace kvmai::kvmaictl::partition
