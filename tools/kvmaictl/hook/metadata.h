// What `kvmaictl hook qemu` reads from the libvirt domain XML on its
// standard input: the PCI functions the domain is given, and kvm-ai's own
// <metadata> element (Documentation/admin-guide/kvmai/libvirt.rst, schema
// kvmai-libvirt.rng beside it):
//
//   <metadata>
//     <kvmai:vm xmlns:kvmai="https://kvm-ai.dev/xmlns/libvirt/1">
//       <kvmai:group name="vm1-p2p" mode="translated">
//         <kvmai:device address="0000:11:00.0"/>
//         <kvmai:device address="0000:13:00.0"/>
//       </kvmai:group>
//       <kvmai:group name="vm1-all" from="hostdevs"/>
//       <kvmai:pmu core="yes">
//         <kvmai:unit name="amd_l3"/>
//       </kvmai:pmu>
//     </kvmai:vm>
//   </metadata>
//
// Parsing keeps what the XML says as written; plan_domain() checks it
// against the domain, the host and the module's rules.
//
// The metadata may come from the domain's tenant (a cloud stack copies
// flavor or image properties into it), the rest of the XML only from the
// host operator: what voids isolation is never taken from the metadata.
// A VM's host CPUs are where its <vcpu>/<cputune> let its vCPUs run,
// shared packages are the host's to allow (host_config.h), and a counters
// device must be the domain's own (check_counters_devices()).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/sysfs.h"
#include "hook/host_config.h"

namespace kvmai::kvmaictl::hook {

// `parts` as one string, built once (messages made inside loops).
std::string cat(std::initializer_list<std::string_view> parts);
// `s` in double quotes, as messages show what a domain wrote.
std::string in_quotes(std::string_view s);

// A refusal or failure, said in one line (without the "kvmai: " prefix).
class HookError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A <kvmai:group> as written; attributes absent are nullopt.
struct GroupSpec {
  std::optional<std::string> name;
  std::optional<std::string> mode;
  std::optional<std::string> from;
  std::vector<std::string> devices;  // each <kvmai:device address>
  std::vector<std::string> mdevs;    // each <kvmai:device mdev>
};

// A <kvmai:pmu> as written: the words of `kvmaictl pmu assign` but the
// VMM's pid (libvirt's pid file), the CPUs (the domain's pinning) and
// whether packages are shared (the host's configuration).  `cpus` and
// `shared` are still read, to refuse what contradicts the host's word.
struct PmuSpec {
  std::optional<std::string> core;    // "yes" or "no"
  std::optional<std::string> cpus;    // a CPU list
  std::optional<std::string> shared;  // "yes" or "no"
  std::vector<std::string> units;     // each <kvmai:unit name>
};

// Where the domain lets its vCPU threads run, as libvirt applies it: a
// vCPU's <cputune><vcpupin cpuset>, else <vcpu cpuset> (ignored with
// placement="auto", where numad chooses at start), else any host CPU.
struct VcpuPinning {
  std::optional<unsigned> count = 1;     // <vcpu>, 1 when absent; nullopt: not a number
  std::optional<std::string> cpuset;     // <vcpu cpuset>, as written
  std::map<unsigned, std::string> pins;  // vCPU -> <vcpupin cpuset>, as written
};

// Where libvirt binds guest memory (<numatune>), as written: a <memory>
// or <memnode> element's mode is "strict" when absent, libvirt's default.
struct MemoryBinding {
  std::string mode = "strict";
  std::string placement;               // "static", "auto"; "" when absent
  std::optional<std::string> nodeset;  // as written
};
struct NumaTune {
  std::optional<MemoryBinding> memory;         // <memory>
  std::map<unsigned, MemoryBinding> memnodes;  // cellid -> <memnode>
};

// A <kvmai:partition> as written: a partition the domain needs, which the
// hook makes at prepare if it is not there (hook/partitions.h).
struct PartitionSpec {
  std::optional<std::string> parent;     // a PF's address or an mdev parent
  std::optional<std::string> type;       // an mdev type
  std::optional<std::string> uuid;       // the mdev's UUID
  std::optional<std::string> vfs;        // the PF's VF count
  std::optional<std::string> vf;         // the VF's number
  std::optional<std::string> vgpu_type;  // the VF's vGPU type
  std::optional<std::string> remove;     // "yes": removed at release
};

struct Metadata {
  bool present = false;  // the domain's <metadata> holds kvm-ai's namespace
  std::vector<GroupSpec> groups;
  std::optional<PmuSpec> pmu;
  std::vector<PartitionSpec> partitions;
  // What the schema would refuse (unknown elements and attributes, a
  // second <kvmai:vm>, ...), in document order.
  std::vector<std::string> problems;
};

struct DomainXml {
  std::string name;  // <name>, "" when absent
  // Every PCI function the domain is given, as DDDD:BB:DD.F in document
  // order: <hostdev mode="subsystem" type="pci"> and <interface
  // type="hostdev"> sources (VFs given as NICs are VFIO devices too).
  std::vector<std::string> pci_devices;
  // The UUIDs of its mediated devices (<hostdev type="mdev">), as written.
  std::vector<std::string> mdevs;
  VcpuPinning vcpus;
  NumaTune numatune;
  Metadata kvmai;
};

// Throws HookError when `xml` is not well-formed or not a <domain>.
DomainXml parse_domain_xml(std::string_view xml);

// The checked settings: what the hook asks the module for.
struct GroupPlan {
  std::string name;
  std::uint32_t mode = 0;            // KVMAI_MODE_*
  std::vector<std::string> devices;  // DDDD:BB:DD.F, or an mdev's UUID
};

struct PmuPlan {
  bool core = false;
  std::vector<std::string> units;
  std::string cpus;     // the vCPUs' host CPUs as a CPU list; "" for core alone
  bool shared = false;  // the host's configuration lists the domain
};

struct DomainPlan {
  std::string vm;  // the domain's name: every group's and the PMU record's VM
  std::vector<GroupPlan> groups;
  std::optional<PmuPlan> pmu;
};

// Checks the metadata of domain `vm` (libvirt's argument) against its
// XML, the host's PCI devices in `sys`, the host's configuration and the
// module's rules (names, modes, 2 to 16 members, each device a PCI
// function of this domain and in one group only, uncore units only for
// pinned vCPUs, and only for a domain that is the sole user of what they
// count unless the host shares its packages: entitlement.h). Throws
// HookError naming the first problem, and the group or device concerned.
DomainPlan plan_domain(const std::string& vm, const DomainXml& xml, const TreeReader& sys,
                       const HostConfig& host = {});

// The host CPUs of a libvirt cpuset ("0-3,^2,8"), nullopt when it is not
// one (or names a CPU past libvirt's 16384).
std::optional<std::set<unsigned>> parse_cpuset(std::string_view s);
// `cpus` as a CPU list with ranges ("0-3,8"), as the kernel writes one.
std::string cpu_list(const std::set<unsigned>& cpus);

// Every kvmai counters device the domain is given (kmod/counters.c) must
// be live and recorded for domain `vm` (sysfs's
// bus/mdev/devices/UUID/kvmai/vm): the device shows the counters of its
// VM's unit.  Other mediated devices are not kvm-ai's business.  Throws
// HookError naming the first device that is not the domain's.
void check_counters_devices(const std::string& vm, const DomainXml& xml, const TreeReader& sys);

}  // namespace kvmai::kvmaictl::hook
