#include "check/machine.h"

#include <array>
#include <sstream>
#include <string_view>

#include "common/format.h"

namespace kvmai::kvmaictl {
namespace {

// DMI system vendors and product names that only virtual machines carry
// (QEMU's and the big clouds' SMBIOS defaults). The CPUID flag is the
// better witness; DMI covers a snapshot recorded without procfs.
constexpr std::array<std::string_view, 9> kVirtualDmi{"QEMU",
                                                      "KVM",
                                                      "Amazon EC2",
                                                      "Google Compute Engine",
                                                      "Virtual Machine",
                                                      "VMware, Inc.",
                                                      "VMware Virtual Platform",
                                                      "Xen",
                                                      "OpenStack Nova"};

// The first `key : value` line of /proc/cpuinfo with that key.
std::string cpuinfo_field(const std::string& text, std::string_view key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    std::string_view k(line.data(), colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) {
      k.remove_suffix(1);
    }
    if (k == key) {
      const auto v = line.find_first_not_of(" \t", colon + 1);
      return v == std::string::npos ? "" : line.substr(v);
    }
  }
  return "";
}

}  // namespace

std::string place_name(Place p) {
  return p == Place::guest ? "guest" : "host";
}

Machine detect_machine(const TreeReader& sys, const TreeReader* proc) {
  Machine m;
  std::vector<std::string> seen;
  if (proc != nullptr) {
    if (const auto text = proc->read("cpuinfo")) {
      const std::string vendor = cpuinfo_field(*text, "vendor_id");
      m.vendor = vendor == "GenuineIntel"   ? CpuVendor::intel
                 : vendor == "AuthenticAMD" ? CpuVendor::amd
                 : vendor.empty()           ? CpuVendor::unknown
                                            : CpuVendor::other;
      std::istringstream flags(cpuinfo_field(*text, "flags"));
      for (std::string f; flags >> f;) {
        m.hypervisor = m.hypervisor || f == "hypervisor";
      }
      if (m.hypervisor) {
        seen.emplace_back("CPUID hypervisor flag");
      }
    }
  }
  for (const char* file : {"sys_vendor", "product_name"}) {
    const auto v = read_line(sys, std::string("class/dmi/id/") + file);
    if (!v || !m.virtual_platform.empty()) {
      continue;
    }
    for (const auto dmi : kVirtualDmi) {
      if (v->starts_with(dmi)) {
        m.virtual_platform = *v;
        seen.push_back("DMI " + *v);
        break;
      }
    }
  }
  const bool kvm = sys.exists("module/kvm");
  const bool virtual_machine = m.hypervisor || !m.virtual_platform.empty();
  m.place = virtual_machine && !kvm ? Place::guest : Place::host;
  if (m.place == Place::guest) {
    m.why = join(seen, ", ") + ", no kvm module";
  } else if (virtual_machine) {
    m.why = join(seen, ", ") + ", but kvm loaded (a nested host)";
  } else {
    m.why = "no hypervisor seen";
  }
  return m;
}

}  // namespace kvmai::kvmaictl
