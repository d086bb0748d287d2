#include "partition/layout.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kvmai::kvmaictl::partition {
namespace {

std::optional<int> opt_int(const TreeReader& sys, const std::string& rel) {
  const auto v = read_int(sys, rel, 10);
  if (!v) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

void read_sriov(const TreeReader& sys, Parent& p) {
  const std::string rel = "bus/pci/devices/" + p.name;
  p.total_vfs = opt_int(sys, rel + "/sriov_totalvfs");
  if (!p.total_vfs) {
    return;
  }
  p.num_vfs = opt_int(sys, rel + "/sriov_numvfs").value_or(0);
  if (const auto a = read_line(sys, rel + "/sriov_drivers_autoprobe")) {
    p.autoprobe = *a != "0";
  }
  // The VFs are the PF's virtfnN links, whatever numvfs says: a driver
  // that failed part way may leave fewer.
  for (const auto& entry : sys.list(rel)) {
    int index = 0;
    const char* first = entry.data() + 6;
    const char* last = entry.data() + entry.size();
    if (!entry.starts_with("virtfn") || std::from_chars(first, last, index).ptr != last) {
      continue;
    }
    const std::string link = rel + "/" + entry;
    Vf vf{.index = index, .bdf = link_name(sys, link).value_or(""), .driver = "", .vgpu_type = {}};
    vf.driver = link_name(sys, link + "/driver").value_or("");
    vf.vgpu_type = opt_int(sys, link + "/nvidia/current_vgpu_type");
    if (p.vgpu_types.empty()) {
      if (const auto types = sys.read(link + "/nvidia/creatable_vgpu_types")) {
        p.vgpu_types = parse_vgpu_types(*types);
      }
    }
    p.vfs.push_back(std::move(vf));
  }
  std::sort(p.vfs.begin(), p.vfs.end(), [](const Vf& a, const Vf& b) { return a.index < b.index; });
}

void read_mdev(const TreeReader& sys, Parent& p) {
  const std::string rel = "class/mdev_bus/" + p.name + "/mdev_supported_types";
  for (const auto& id : sys.list(rel)) {
    const std::string t = rel + "/" + id;
    p.mdev_types.push_back({.id = id,
                            .name = read_line(sys, t + "/name").value_or(""),
                            .available_instances = opt_int(sys, t + "/available_instances"),
                            .device_api = read_line(sys, t + "/device_api").value_or("")});
    for (const auto& uuid : sys.list(t + "/devices")) {
      p.mdevs.push_back({.uuid = uuid, .type = id});
    }
  }
  std::sort(p.mdevs.begin(), p.mdevs.end(),
            [](const Mdev& a, const Mdev& b) { return a.uuid < b.uuid; });
}

}  // namespace

const Vf* Parent::vf(int index) const {
  const auto it =
      std::find_if(vfs.begin(), vfs.end(), [&](const Vf& v) { return v.index == index; });
  return it == vfs.end() ? nullptr : &*it;
}

const MdevType* Parent::mdev_type(const std::string& id) const {
  const auto it = std::find_if(mdev_types.begin(), mdev_types.end(),
                               [&](const MdevType& t) { return t.id == id; });
  return it == mdev_types.end() ? nullptr : &*it;
}

const VgpuType* Parent::vgpu(const std::string& id_or_name) const {
  for (const auto& t : vgpu_types) {
    if (t.name == id_or_name || std::to_string(t.id) == id_or_name) {
      return &t;
    }
  }
  return nullptr;
}

Layout Layout::read(const TreeReader& sys) {
  Layout l;
  for (const auto& name : sys.list("bus/pci/devices")) {
    if (!looks_like_bdf(name) || !sys.exists("bus/pci/devices/" + name + "/sriov_totalvfs")) {
      continue;
    }
    Parent p;
    p.name = name;
    p.pci = true;
    p.driver = link_name(sys, "bus/pci/devices/" + name + "/driver").value_or("");
    read_sriov(sys, p);
    l.parents.push_back(std::move(p));
  }
  for (const auto& name : sys.list("class/mdev_bus")) {
    auto it = std::find_if(l.parents.begin(), l.parents.end(),
                           [&](const Parent& p) { return p.name == name; });
    if (it == l.parents.end()) {
      Parent p;
      p.name = name;
      p.pci = looks_like_bdf(name);
      p.driver = link_name(sys, "class/mdev_bus/" + name + "/driver").value_or("");
      l.parents.push_back(std::move(p));
      it = std::prev(l.parents.end());
    }
    read_mdev(sys, *it);
  }
  std::sort(l.parents.begin(), l.parents.end(),
            [](const Parent& a, const Parent& b) { return a.name < b.name; });
  return l;
}

const Parent* Layout::find(const std::string& name) const {
  const auto it =
      std::find_if(parents.begin(), parents.end(), [&](const Parent& p) { return p.name == name; });
  return it == parents.end() ? nullptr : &*it;
}

std::optional<std::string> mdev_parent(const TreeReader& sys, const std::string& uuid) {
  const auto path = sys.resolve("bus/mdev/devices/" + uuid);
  if (!path) {
    return std::nullopt;
  }
  const auto slash = path->rfind('/');
  if (slash == std::string::npos) {
    return std::nullopt;
  }
  const std::string dir = path->substr(0, slash);
  return dir.substr(dir.rfind('/') + 1);
}

bool is_uuid(std::string_view s) {
  static constexpr std::string_view kShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
  if (s.size() != kShape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < s.size(); i++) {
    if (kShape[i] == '-' ? s[i] != '-' : std::isxdigit(static_cast<unsigned char>(s[i])) == 0) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> parent_name(const std::string& word) {
  if (auto bdf = parse_bdf(word)) {
    return bdf;
  }
  // class/mdev_bus names: a device's kernel name, no path.
  if (word.empty() || word.size() > 64 || word == "." || word == ".." ||
      !std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' ||
               c == '.' || c == ':';
      })) {
    return std::nullopt;
  }
  return word;
}

}  // namespace kvmai::kvmaictl::partition
