// Helpers for the libvirt hook's tests: domain XML, a scratch directory
// (sysfs devices, libvirt's pid file) and running programs as libvirt or
// an operator would.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/run.h"

namespace kvmai::kvmaictl::testing {

// A directory of its own under the temporary directory, removed with it.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("kvmaictl-" + tag + "-" + std::to_string(getpid()) + "-" +
               std::to_string(counter()++))) {
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  TempDir(TempDir&&) = delete;
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  const std::filesystem::path& path() const { return path_; }

  // Writes `text` to `rel`, making its directories.
  std::filesystem::path write(const std::string& rel, const std::string& text) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::filesystem::path path_;
};

// `s` quoted for sh.
inline std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (const char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

// A <hostdev> of PCI function "DDDD:BB:DD.F", spelled as libvirt does.
inline std::string hostdev_xml(const std::string& bdf) {
  return "    <hostdev mode='subsystem' type='pci' managed='yes'>\n"
         "      <source>\n"
         "        <address domain='0x" +
         bdf.substr(0, 4) + "' bus='0x" + bdf.substr(5, 2) + "' slot='0x" + bdf.substr(8, 2) +
         "' function='0x" + bdf.substr(11, 1) +
         "'/>\n"
         "      </source>\n"
         "    </hostdev>\n";
}

// What libvirt's XML says of the vCPUs by default here: two, each free to
// run on host CPUs 0-3 (of package 0 of the tests' hosts), with the guest's
// memory bound to that package's node as uncore units need.
inline const std::string kNumaTune = "  <numatune><memory mode='strict' nodeset='0'/></numatune>\n";
inline const std::string kPinnedVcpus =
    "  <vcpu placement='static' cpuset='0-3'>2</vcpu>\n" + kNumaTune;

// The tests' hosts below `dir`'s `sys`: two packages of 32 cores with two
// threads each, as Linux numbers them (package 0 is CPUs 0-31 and their
// siblings 64-95), each package one NUMA node.
inline void write_host_topology(const TempDir& dir, const std::string& sys = "sys/") {
  for (unsigned cpu = 0; cpu < 128; ++cpu) {
    const std::string topo = sys + "devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    dir.write(topo + "physical_package_id", cpu % 64 < 32 ? "0\n" : "1\n");
    dir.write(topo + "die_id", "0\n");
  }
  dir.write(sys + "devices/system/node/node0/cpulist", "0-31,64-95\n");
  dir.write(sys + "devices/system/node/node1/cpulist", "32-63,96-127\n");
}

// A domain named `name` given `hostdevs`, with `metadata` (the inside of
// <metadata>; none when empty), more `devices` XML and `vcpus` (<vcpu>,
// <cputune>).
inline std::string domain_xml(const std::string& name, const std::vector<std::string>& hostdevs,
                              const std::string& metadata, const std::string& devices = "",
                              const std::string& vcpus = kPinnedVcpus) {
  std::string x = "<domain type='kvm' id='3'>\n  <name>" + name +
                  "</name>\n  <uuid>6f0b4c1e-0d8a-4c55-9d0e-3f1a2b3c4d5e</uuid>\n";
  if (!metadata.empty()) {
    x += "  <metadata>\n" + metadata + "  </metadata>\n";
  }
  x += "  <memory unit='KiB'>1048576</memory>\n" + vcpus + "  <devices>\n";
  for (const auto& h : hostdevs) {
    x += hostdev_xml(h);
  }
  return x + devices + "  </devices>\n</domain>\n";
}

// kvm-ai's metadata element around `inside`.
inline std::string kvmai_vm(const std::string& inside) {
  return "    <kvmai:vm xmlns:kvmai=\"https://kvm-ai.dev/xmlns/libvirt/1\">\n" + inside +
         "    </kvmai:vm>\n";
}

}  // namespace kvmai::kvmaictl::testing
