#include "check/record.h"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kvmai::kvmaictl {
namespace {

namespace fs = std::filesystem;

// The attributes of a PCI function that kvmaictl reads, and the links.
constexpr std::array<std::string_view, 16> kPciFiles{"class",
                                                     "vendor",
                                                     "device",
                                                     "subsystem_vendor",
                                                     "subsystem_device",
                                                     "numa_node",
                                                     "local_cpulist",
                                                     "config",
                                                     "resource",
                                                     "current_link_speed",
                                                     "current_link_width",
                                                     "max_link_speed",
                                                     "max_link_width",
                                                     "sriov_totalvfs",
                                                     "sriov_numvfs",
                                                     "boot_vga"};
constexpr std::array<std::string_view, 3> kPciLinks{"driver", "iommu_group", "physfn"};
// Modules whose presence and parameters the checks read.
constexpr std::array<std::string_view, 9> kModules{"kvm",   "kvm_intel", "kvm_amd",
                                                   "vfio",  "vfio_pci",  "vfio_iommu_type1",
                                                   "kvmai", "nvidia",    "mlx5_core"};
// DMI: what the platform is, never its serial numbers or UUID.
constexpr std::array<std::string_view, 4> kDmiFiles{"sys_vendor", "product_name", "bios_vendor",
                                                    "board_vendor"};

class Recorder {
 public:
  Recorder(const TreeReader& from, fs::path to, RecordCount& count)
      : from_(from), to_(std::move(to)), count_(count) {}

  void file(const std::string& rel) {
    if (const auto text = read(rel)) {
      put(rel, *text);
    }
  }
  // A file's text; nullopt for a directory or what cannot be read (a
  // write-only attribute, one the driver refuses).
  std::optional<std::string> read(const std::string& rel) const {
    if (!from_.list(rel).empty()) {
      return std::nullopt;
    }
    try {
      return from_.read(rel);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  void put(const std::string& rel, const std::string& text) {
    const fs::path path = to_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) {
      throw std::runtime_error(fmt::format("cannot write \"{}\"", path.string()));
    }
    ++count_.files;
  }
  // A symlink, with its target as it is (sysfs links are relative), and
  // the directory it points to, so that the link resolves.
  void link(const std::string& rel) {
    const auto target = from_.link_target(rel);
    const fs::path path = to_ / rel;
    if (!target || fs::exists(fs::symlink_status(path))) {
      return;
    }
    // Targets stay inside the recording: it must never name a place
    // outside it on the machine that later reads it.
    const fs::path dest = (path.parent_path() / *target).lexically_normal();
    const fs::path inside = dest.lexically_relative(to_.lexically_normal());
    if (fs::path(*target).is_absolute() || inside.empty() || *inside.begin() == "..") {
      return;
    }
    fs::create_directories(path.parent_path());
    fs::create_symlink(*target, path);
    fs::create_directories(dest);
    ++count_.links;
  }
  // A small directory of attributes: files copied, links kept, down to
  // `depth` levels.
  void tree(const std::string& rel, int depth) {
    for (const auto& name : from_.list(rel)) {
      const std::string sub = rel + "/" + name;
      if (from_.link_target(sub)) {
        link(sub);
      } else if (const auto text = read(sub)) {
        put(sub, *text);
      } else if (depth > 0) {
        tree(sub, depth - 1);
      }
    }
  }
  const TreeReader& from() const { return from_; }

 private:
  const TreeReader& from_;
  fs::path to_;
  RecordCount& count_;
};

void record_pci(Recorder& r) {
  const TreeReader& sys = r.from();
  for (const auto& name : sys.list("bus/pci/devices")) {
    const std::string bus_link = "bus/pci/devices/" + name;
    r.link(bus_link);
    const auto dev = sys.resolve(bus_link);
    if (!dev) {
      continue;
    }
    for (const auto file : kPciFiles) {
      r.file(*dev + "/" + std::string(file));
    }
    for (const auto link : kPciLinks) {
      r.link(*dev + "/" + std::string(link));
    }
    for (const auto& entry : sys.list(*dev)) {
      if (entry.starts_with("virtfn")) {
        r.link(*dev + "/" + entry);
      }
    }
    r.tree(*dev + "/mdev_supported_types", 1);
    r.tree(*dev + "/nvidia", 0);
    r.tree(*dev + "/infiniband", 1);
  }
  for (const auto& group : sys.list("kernel/iommu_groups")) {
    r.file("kernel/iommu_groups/" + group + "/type");
    r.tree("kernel/iommu_groups/" + group + "/devices", 0);
  }
}

void record_platform(Recorder& r) {
  const TreeReader& sys = r.from();
  for (const auto& unit : sys.list("class/iommu")) {
    r.link("class/iommu/" + unit);
    for (const char* kind : {"/intel-iommu", "/amd-iommu"}) {
      r.tree("class/iommu/" + unit + kind, 0);
    }
  }
  for (const auto& size : sys.list("kernel/mm/hugepages")) {
    r.tree("kernel/mm/hugepages/" + size, 0);
  }
  for (const auto& node : sys.list("devices/system/node")) {
    if (node.starts_with("node")) {
      r.file("devices/system/node/" + node + "/cpulist");
      r.tree("devices/system/node/" + node + "/hugepages", 1);
    }
  }
  for (const auto module : kModules) {
    const std::string dir = "module/" + std::string(module);
    r.file(dir + "/initstate");
    r.file(dir + "/version");
    r.tree(dir + "/parameters", 0);
  }
  for (const auto& pmu : sys.list("bus/event_source/devices")) {
    const std::string link = "bus/event_source/devices/" + pmu;
    r.link(link);
    if (const auto dir = sys.resolve(link)) {
      r.file(*dir + "/type");
      r.file(*dir + "/cpumask");
      r.tree(*dir + "/caps", 0);
    }
  }
  if (sys.link_target("class/dmi/id")) {
    r.link("class/dmi/id");
  }
  for (const auto file : kDmiFiles) {
    if (const auto dir = sys.resolve("class/dmi/id")) {
      r.file(*dir + "/" + std::string(file));
    }
  }
  r.file("hypervisor/type");
}

// /proc/cpuinfo's first processor: vendor, model and flags, the same for
// every CPU that matters here; the rest is long and says nothing more.
std::string first_processor(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  std::string out;
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    out += line + "\n";
  }
  return out + "\n";
}

void record_proc(Recorder& r) {
  r.file("cmdline");
  r.file("modules");
  r.file("meminfo");
  r.file("sys/kernel/nmi_watchdog");
  if (const auto cpuinfo = r.read("cpuinfo")) {
    r.put("cpuinfo", first_processor(*cpuinfo));
  }
  // The hugetlbfs mounts, whose page sizes vm plan reads; no other mount.
  if (const auto mounts = r.read("mounts")) {
    std::istringstream lines(*mounts);
    std::string huge;
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("hugetlbfs ")) {
        huge += line + "\n";
      }
    }
    r.put("mounts", huge);
  }
  r.tree("driver/nvidia/gpus", 1);
  r.tree("driver/nvidia/capabilities", 5);
}

// /etc/nccl.conf and the topology file it names.
void record_etc(Recorder& r) {
  const auto conf = r.read("etc/nccl.conf");
  if (!conf) {
    return;
  }
  r.put("etc/nccl.conf", *conf);
  std::istringstream lines(*conf);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("NCCL_TOPO_FILE=")) {
      std::string file = line.substr(line.find('=') + 1);
      if (file.starts_with('/')) {
        file.erase(0, 1);
      }
      if (!file.empty() && file.find("..") == std::string::npos) {
        r.file(file);
      }
    }
  }
}

}  // namespace

RecordCount record_machine(const TreeReader& sys, const TreeReader* proc, const TreeReader* root,
                           const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    throw std::runtime_error(fmt::format("\"{}\" exists and is not empty", dir.string()));
  }
  RecordCount count;
  Recorder s(sys, dir / "sys", count);
  record_pci(s);
  record_platform(s);
  if (proc != nullptr) {
    Recorder p(*proc, dir / "proc", count);
    record_proc(p);
  }
  if (root != nullptr) {
    Recorder e(*root, dir, count);
    record_etc(e);
  }
  return count;
}

}  // namespace kvmai::kvmaictl
