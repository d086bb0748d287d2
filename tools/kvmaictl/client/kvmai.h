// The kvmai module, as every part of kvmaictl talks to it: one typed call
// per operation of the netlink spec (Documentation/netlink/specs/kvmai.yaml)
// and its replies as values, over GenlTransport (client/genl.h), so that
// the commands, the monitor and the libvirt hook share one client and the
// tests one fake.
//
// The records mirror the spec's attribute sets.  An attribute the module
// left out is nullopt (a flag: false), so that printing can tell "absent"
// from zero, as the JSON output must.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/genl.h"

namespace kvmai::kvmaictl {

// ---- the records ---------------------------------------------------------------

struct MemberBar {
  std::optional<std::uint32_t> index;
  std::optional<std::uint64_t> addr;
  std::optional<std::uint64_t> size;
};

// What dev-add and dev-del name: a PCI function, or an mdev (the other empty).
struct GroupDevice {
  std::string pci_addr;
  std::string mdev;

  // By the name a group's member has: an mdev's UUID, else a PCI address.
  static GroupDevice named(const std::string& name);
};

struct Member {
  std::optional<std::string> pci_addr;  // an mdev's: its parent's
  std::optional<std::string> mdev;      // the mdev's UUID, if the member is one
  std::optional<std::string> driver;
  std::optional<bool> ats;
  std::vector<MemberBar> bars;
};

struct Port {
  std::optional<std::string> pci_addr;
  std::optional<std::uint32_t> acs_cap;
  std::optional<std::uint32_t> acs_saved;
  std::optional<std::uint32_t> acs_target;
  std::optional<std::uint32_t> acs_current;
  std::optional<std::uint32_t> users;
};

struct MemberPair {
  std::optional<std::string> a;
  std::optional<std::string> b;
  std::optional<std::uint32_t> type;  // KVMAI_PATH_TYPE_*
  std::optional<std::string> via;
};

struct Group {
  std::optional<std::string> name;
  std::optional<std::uint32_t> id;
  std::optional<std::string> vm;
  std::optional<std::uint32_t> mode;   // KVMAI_MODE_*
  std::optional<std::uint32_t> state;  // KVMAI_STATE_*
  bool bind_socket = false;
  std::vector<Member> members;
  std::vector<Port> ports;
  std::vector<MemberPair> pairs;

  // The members as devices are named: PCI addresses, mdevs' UUIDs, in the
  // module's order ("?" for none).
  std::vector<std::string> member_addrs() const;
};

struct MsrRange {
  std::optional<std::uint32_t> base;
  std::optional<std::uint32_t> count;
  bool read = false;
  bool write = false;
  std::optional<std::uint64_t> write_mask;
};

struct Unit {
  std::optional<std::string> name;
  std::optional<std::uint32_t> type;
  std::optional<std::uint32_t> msr_ranges;
  std::optional<std::uint32_t> host_events;
  std::optional<std::string> vm;
  std::vector<MsrRange> msrs;
  std::vector<std::optional<std::uint32_t>> offline_packages;
  std::optional<std::uint32_t> hotplug_scrubs;
  bool core_select = false;
  std::optional<std::uint32_t> scope;  // KVMAI_SCOPE_*
};

// One VM's record (pmu-get).
struct PmuRecord {
  std::optional<std::string> vm;
  bool core = false;
  std::vector<Unit> units;
  std::optional<std::string> cpus;
  bool shared = false;
  std::optional<std::uint32_t> pid;
  bool bind_socket = false;
  std::vector<std::optional<std::uint32_t>> packages;

  // The units' names, in the module's order ("?" for a unit without one).
  std::vector<std::string> unit_names() const;
  // Owning neither the core PMU nor a unit: what pmu-change-ntf sends once
  // a VM's resources are all released.
  bool released() const { return !core && units.empty(); }
};

struct Conflict {
  std::optional<std::string> pmu;
  std::optional<std::uint32_t> cpu;
  std::optional<std::uint32_t> pid;
  std::optional<std::string> comm;
  std::optional<std::uint64_t> config;
};

// What the host's PMUs allow (pmu-host-get).
struct PmuHost {
  bool core_capable = false;
  std::optional<std::uint32_t> core_fences;
  std::optional<std::uint32_t> core_include_guest_events;
  std::vector<Conflict> conflicts;
  std::vector<Unit> units;
};

struct ModuleStatus {
  std::optional<std::string> version;
  std::optional<std::uint32_t> api_version;
  std::optional<std::string> kernel;
  std::optional<std::uint32_t> features;  // KVMAI_FEATURE_* bits
  std::optional<std::uint32_t> restore_pending;
};

// A notification of the monitor group.
struct Event {
  enum class Kind { group_create, group_change, group_delete, pmu_change };
  Kind kind = Kind::group_change;
  Group group;    // the group events
  PmuRecord pmu;  // pmu_change
};

// ---- the requests --------------------------------------------------------------

struct NewGroup {
  std::string name;
  std::string vm;
  std::optional<std::uint32_t> mode;  // the module's default when absent
  bool bind_socket = false;
};

// The resources of pmu-assign and pmu-release: neither core nor units, in a
// release, means everything the VM owns.
struct PmuResources {
  std::string vm;
  bool core = false;
  std::vector<std::string> units;
};

struct PmuAssign {
  PmuResources resources;
  std::optional<std::string> cpus;
  bool shared = false;
  std::optional<std::uint32_t> pid;
  bool bind_socket = false;
};

// ---- the client ----------------------------------------------------------------

class Kvmai {
 public:
  using Warn = std::function<void(std::string_view text)>;

  // Connects on the first request, so that a run with nothing to ask opens
  // no socket.  `warn` gets the text the module put in the extended ACK of
  // a request that succeeded.
  Kvmai(TransportFactory connect, Warn warn);

  // group-get: every group (a dump, each split group whole again), or one.
  std::vector<Group> groups();
  Group group(const std::string& name);
  // group-new; returns the group as created.
  Group group_new(const NewGroup& g);
  void group_del(const std::string& name);
  // group-set with whatever of mode and state is given.
  void group_set(const std::string& name, std::optional<std::uint32_t> mode,
                 std::optional<std::uint32_t> state);
  void dev_add(const std::string& group, const GroupDevice& dev);
  void dev_del(const std::string& group, const GroupDevice& dev);

  ModuleStatus status();

  PmuHost pmu_host();
  // pmu-get: every VM's record (a dump), or one VM's.
  std::vector<PmuRecord> pmu_records();
  PmuRecord pmu_record(const std::string& vm);
  // One VM's record; nullopt when the VM owns nothing (ENOENT).
  std::optional<PmuRecord> find_pmu_record(const std::string& vm);
  PmuRecord pmu_assign(const PmuAssign& a);
  void pmu_release(const PmuResources& r);

  // Joins the monitor group, then hands each notification to `on_event`
  // until it returns false or `wake_fd` (ignored when negative) becomes
  // readable.  Notifications of kinds this tool does not know are skipped.
  void subscribe();
  void watch(const std::function<bool(const Event&)>& on_event, int wake_fd);

 private:
  GenlTransport& transport();
  GenlMessage request(std::uint8_t cmd, const AttrSet& attrs);
  // A PMU operation: a module older than PMU ownership answers it with
  // EOPNOTSUPP and no extack, which alone reads like a refusal.
  template <typename F>
  auto pmu_call(F call);

  TransportFactory connect_;
  Warn warn_;
  std::unique_ptr<GenlTransport> transport_;
};

// The record in a reply's attributes (for tests and callers holding one).
Group group_of(const AttrSet& attrs);
PmuRecord pmu_record_of(const AttrSet& attrs);

}  // namespace kvmai::kvmaictl
