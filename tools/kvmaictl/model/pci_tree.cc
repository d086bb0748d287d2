#include "model/pci_tree.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <sstream>
#include <stdexcept>

#include "common/names.h"

namespace kvmai::kvmaictl {

std::vector<VgpuType> parse_vgpu_types(const std::string& text) {
  std::vector<VgpuType> types;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    std::string id = line.substr(0, colon);
    std::string name = line.substr(colon + 1);
    const auto trim = [](std::string& s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t\r") + 1);
    };
    trim(id);
    trim(name);
    int value = 0;
    const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), value);
    // Not a number: the header some drivers print ("ID : vGPU Name").
    if (id.empty() || error != std::errc() || end != id.data() + id.size()) {
      continue;
    }
    types.push_back({.id = value, .name = name});
  }
  return types;
}

namespace {

constexpr std::uint16_t kNvidiaVendor = 0x10de;

// Whether `s` is 1 to `most` hex digits; stores their value.
bool hex_field(std::string_view s, std::size_t most, unsigned& value) {
  if (s.empty() || s.size() > most) {
    return false;
  }
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value, 16);
  return error == std::errc() && end == s.data() + s.size();
}

std::vector<std::string> split_path(const std::string& p) {
  std::vector<std::string> parts;
  std::istringstream s(p);
  for (std::string part; std::getline(s, part, '/');) {
    if (!part.empty()) {
      parts.push_back(part);
    }
  }
  return parts;
}

std::optional<int> opt_int(const TreeReader& sys, const std::string& rel) {
  const auto v = read_int(sys, rel, 10);
  if (!v) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

PciDevice read_device(const TreeReader& sys, const std::string& bdf) {
  const std::string rel = "bus/pci/devices/" + bdf;
  PciDevice d;
  d.bdf = bdf;
  d.sysfs_path = sys.resolve(rel).value_or("");
  const auto parts = split_path(d.sysfs_path);
  // devices / pciDDDD:BB / bridge... / self
  if (parts.size() >= 3 && parts[0] == "devices") {
    d.root = parts[1];
    for (std::size_t i = 2; i + 1 < parts.size(); ++i) {
      if (looks_like_bdf(parts[i])) {
        d.parents.push_back(parts[i]);
      }
    }
  }
  d.class_code = static_cast<std::uint32_t>(read_int(sys, rel + "/class", 16).value_or(0));
  d.vendor = static_cast<std::uint16_t>(read_int(sys, rel + "/vendor", 16).value_or(0));
  d.device = static_cast<std::uint16_t>(read_int(sys, rel + "/device", 16).value_or(0));
  d.subsystem_vendor =
      static_cast<std::uint16_t>(read_int(sys, rel + "/subsystem_vendor", 16).value_or(0));
  d.subsystem_device =
      static_cast<std::uint16_t>(read_int(sys, rel + "/subsystem_device", 16).value_or(0));
  if (const auto n = opt_int(sys, rel + "/numa_node"); n && *n >= 0) {
    d.numa_node = n;
  }
  if (const auto g = link_name(sys, rel + "/iommu_group")) {
    d.iommu_group = std::stoi(*g);
    d.iommu_group_type = read_line(sys, "kernel/iommu_groups/" + *g + "/type").value_or("");
  }
  d.driver = link_name(sys, rel + "/driver").value_or("");
  if (const auto cfg = sys.read(rel + "/config")) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(cfg->data());
    d.config = parse_config({data, cfg->size()});
  }
  d.current_link_speed = read_line(sys, rel + "/current_link_speed").value_or("");
  d.max_link_speed = read_line(sys, rel + "/max_link_speed").value_or("");
  d.current_link_width = opt_int(sys, rel + "/current_link_width");
  d.max_link_width = opt_int(sys, rel + "/max_link_width");
  d.sriov_totalvfs = opt_int(sys, rel + "/sriov_totalvfs");
  d.sriov_numvfs = opt_int(sys, rel + "/sriov_numvfs");
  d.is_virtfn = sys.exists(rel + "/physfn");
  d.physfn = link_name(sys, rel + "/physfn").value_or("");
  for (const auto& id : sys.list(rel + "/mdev_supported_types")) {
    std::string t = rel + "/mdev_supported_types/";
    t += id;
    d.mdev_types.push_back({.id = id,
                            .name = read_line(sys, t + "/name").value_or(""),
                            .available_instances = opt_int(sys, t + "/available_instances"),
                            .device_api = read_line(sys, t + "/device_api").value_or("")});
  }
  if (d.is_virtfn) {
    if (const auto types = sys.read(rel + "/nvidia/creatable_vgpu_types")) {
      d.vgpu_types = parse_vgpu_types(*types);
    }
    d.vgpu_type = opt_int(sys, rel + "/nvidia/current_vgpu_type");
  }
  d.boot_vga = read_line(sys, rel + "/boot_vga").value_or("0") == "1";
  d.rdma_devices = sys.list(rel + "/infiniband");
  d.local_cpulist = read_line(sys, rel + "/local_cpulist").value_or("");
  if (const auto res = sys.read(rel + "/resource")) {
    d.bars = parse_resource(*res);
  }
  return d;
}

// The number after `prefix` in a directory entry ("gi3" -> 3), or nullopt.
std::optional<int> numbered(const std::string& entry, std::string_view prefix) {
  if (!entry.starts_with(prefix) || entry.size() == prefix.size()) {
    return std::nullopt;
  }
  int n = 0;
  const char* first = entry.data() + prefix.size();
  const char* last = entry.data() + entry.size();
  const auto [end, error] = std::from_chars(first, last, n);
  if (error != std::errc() || end != last) {
    return std::nullopt;
  }
  return n;
}

// "Device Minor: 3" from /proc/driver/nvidia/gpus/BDF/information.
std::optional<int> nvidia_minor(const std::string& information) {
  std::istringstream in(information);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("Device Minor:")) {
      try {
        return std::stoi(line.substr(line.find(':') + 1));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

Role role_from_config(const PciDevice& d) {
  switch (d.config.pcie->type) {
    case PortType::root_port:
      return Role::root_port;
    case PortType::upstream_port:
      return Role::upstream_port;
    case PortType::downstream_port:
      return Role::downstream_port;
    default:
      return Role::bridge;
  }
}

}  // namespace

constexpr std::array<kvmai::Named<Role>, 5> kRoleNames{{
    {Role::endpoint, "endpoint"},
    {Role::root_port, "root-port"},
    {Role::upstream_port, "upstream-port"},
    {Role::downstream_port, "downstream-port"},
    {Role::bridge, "bridge"},
}};

std::string role_name(Role r) {
  return std::string(kvmai::name_of(kRoleNames, r, "unknown"));
}

std::string format_bdf(unsigned domain, unsigned bus, unsigned slot, unsigned function) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, slot, function);
}

bool looks_like_bdf(std::string_view s) {
  // DDDD:BB:DD.F
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') {
    return false;
  }
  for (const std::size_t i : {0U, 1U, 2U, 3U, 5U, 6U, 8U, 9U, 11U}) {
    if (std::isxdigit(static_cast<unsigned char>(s[i])) == 0) {
      return false;
    }
  }
  return true;
}

std::optional<std::string> parse_bdf(std::string_view s) {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned slot = 0;
  unsigned fn = 0;
  std::string_view rest = s;
  if (const auto colon = rest.find(':');
      colon != std::string_view::npos && rest.find(':', colon + 1) != std::string_view::npos) {
    if (!hex_field(rest.substr(0, colon), 4, domain)) {
      return std::nullopt;
    }
    rest.remove_prefix(colon + 1);
  }
  const auto colon = rest.find(':');
  const auto dot = rest.find('.');
  if (colon == std::string_view::npos || dot == std::string_view::npos || dot < colon ||
      !hex_field(rest.substr(0, colon), 2, bus) ||
      !hex_field(rest.substr(colon + 1, dot - colon - 1), 2, slot) ||
      !hex_field(rest.substr(dot + 1), 1, fn) || slot > 0x1f || fn > 7) {
    return std::nullopt;
  }
  return format_bdf(domain, bus, slot, fn);
}

bool PciDevice::is_gpu() const {
  constexpr unsigned kDisplayClass = 0x03;
  return (class_and_subclass() >> 8U) == kDisplayClass && !boot_vga && !is_virtfn;
}

bool PciDevice::is_nic() const {
  const auto c = class_and_subclass();
  return (c == 0x0200 || c == 0x0207) && !is_virtfn;
}

bool PciDevice::is_rdma_nic() const {
  return is_nic() && (!rdma_devices.empty() || class_and_subclass() == 0x0207);
}

bool PciDevice::is_nvswitch() const {
  return vendor == kNvidiaVendor && class_and_subclass() == 0x0680;
}

const PciDevice* PciTree::find(std::string_view bdf) const {
  const auto it =
      std::lower_bound(devices_.begin(), devices_.end(), bdf,
                       [](const PciDevice& d, std::string_view b) { return d.bdf < b; });
  return it != devices_.end() && it->bdf == bdf ? &*it : nullptr;
}

const PciRoot* PciTree::root(const std::string& name) const {
  const auto it = roots_.find(name);
  return it == roots_.end() ? nullptr : &it->second;
}

void PciTree::read_procfs(const TreeReader& proc) {
  for (auto& d : devices_) {
    if (d.vendor != kNvidiaVendor || d.driver != "nvidia" || d.is_virtfn) {
      continue;
    }
    const auto info = proc.read("driver/nvidia/gpus/" + d.bdf + "/information");
    const auto minor = info ? nvidia_minor(*info) : std::nullopt;
    if (!minor) {
      continue;
    }
    const std::string mig = "driver/nvidia/capabilities/gpu" + std::to_string(*minor) + "/mig";
    for (const auto& gi : proc.list(mig)) {
      const auto g = numbered(gi, "gi");
      if (!g) {
        continue;
      }
      MigInstance inst{.gpu_instance = *g, .compute_instances = {}};
      std::string dir = mig + "/";
      dir += gi;
      for (const auto& ci : proc.list(dir)) {
        if (const auto c = numbered(ci, "ci")) {
          inst.compute_instances.push_back(*c);
        }
      }
      std::sort(inst.compute_instances.begin(), inst.compute_instances.end());
      d.mig.push_back(std::move(inst));
    }
    std::sort(d.mig.begin(), d.mig.end(), [](const MigInstance& a, const MigInstance& b) {
      return a.gpu_instance < b.gpu_instance;
    });
  }
}

PciTree PciTree::read(const TreeReader& sys, const Options& options) {
  PciTree t;
  for (const auto& name : sys.list("bus/pci/devices")) {
    if (looks_like_bdf(name)) {
      t.devices_.push_back(read_device(sys, name));
    }
  }
  std::sort(t.devices_.begin(), t.devices_.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.bdf < b.bdf; });

  // VF numbers: a PF links each of its VFs as virtfnN.
  const auto find_mut = [&t](const std::string& bdf) -> PciDevice* {
    const auto it =
        std::lower_bound(t.devices_.begin(), t.devices_.end(), bdf,
                         [](const PciDevice& d, const std::string& b) { return d.bdf < b; });
    return it != t.devices_.end() && it->bdf == bdf ? &*it : nullptr;
  };
  for (const auto& pf : t.devices_) {
    if (!pf.sriov_totalvfs) {
      continue;
    }
    const std::string rel = "bus/pci/devices/" + pf.bdf;
    for (const auto& entry : sys.list(rel)) {
      if (!entry.starts_with("virtfn")) {
        continue;
      }
      std::string link = rel + "/";
      link += entry;
      PciDevice* vf = find_mut(link_name(sys, link).value_or(""));
      try {
        if (vf != nullptr) {
          vf->vf_index = std::stoi(entry.substr(6));
        }
      } catch (const std::exception&) {
        // "virtfn" without a number is no link of the kernel's: no index.
      }
    }
  }

  for (const auto& d : t.devices_) {
    if (!d.root.empty()) {
      t.roots_.try_emplace(d.root, PciRoot{d.root, false});
    }
  }

  // Port roles: from the PCIe capability when readable, else from the
  // position in the hierarchy (below a root or downstream port sits an
  // upstream port; below an upstream port, downstream ports).
  for (auto& d : t.devices_) {
    if (!d.is_bridge()) {
      d.role = Role::endpoint;
    } else if (d.config.pcie) {
      d.role = role_from_config(d);
    } else if (!d.config.caps_known) {
      const PciDevice* parent = d.parents.empty() ? nullptr : t.find(d.parents.back());
      if (parent == nullptr) {
        d.role = Role::root_port;
      } else if (parent->role == Role::upstream_port) {
        d.role = Role::downstream_port;
      } else {
        d.role = Role::upstream_port;
      }
    } else {
      d.role = Role::bridge;  // conventional PCI-to-PCI bridge
    }
  }

  // A host bridge that holds root ports, when host bridges are counted as
  // switches.
  for (const auto& d : t.devices_) {
    if (options.host_bridge_switches && d.role == Role::root_port && d.parents.empty()) {
      t.roots_.at(d.root).as_switch = true;
    }
  }
  return t;
}

}  // namespace kvmai::kvmaictl
