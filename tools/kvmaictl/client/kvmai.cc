#include "client/kvmai.h"

#include <linux/kvmai.h>

#include <cerrno>
#include <cstring>

#include "partition/layout.h"

namespace kvmai::kvmaictl {
namespace {

// One element of a multi-attr u32 array (AttrSet::u32 finds the first only).
std::optional<std::uint32_t> u32_of(const Attr& a) {
  std::uint32_t v = 0;
  if (a.payload.size() != sizeof v) {
    return std::nullopt;
  }
  std::memcpy(&v, a.payload.data(), sizeof v);
  return v;
}

std::vector<std::optional<std::uint32_t>> u32_list(const AttrSet& set, std::uint16_t type) {
  std::vector<std::optional<std::uint32_t>> v;
  for (const Attr* a : set.all(type)) {
    v.push_back(u32_of(*a));
  }
  return v;
}

// Each `type` nest of `set`, made a record by `of`.
template <typename F>
auto nests(const AttrSet& set, std::uint16_t type, F of) {
  std::vector<decltype(of(AttrSet{}))> v;
  for (const Attr* a : set.all(type)) {
    v.push_back(of(AttrSet::parse(a->payload)));
  }
  return v;
}

MemberBar bar_of(const AttrSet& a) {
  return {.index = a.u32(KVMAI_A_BAR_INDEX),
          .addr = a.u64(KVMAI_A_BAR_ADDR),
          .size = a.u64(KVMAI_A_BAR_SIZE)};
}

Member member_of(const AttrSet& a) {
  const auto ats = a.u8(KVMAI_A_MEMBER_ATS);
  return {.pci_addr = a.str(KVMAI_A_MEMBER_PCI_ADDR),
          .mdev = a.str(KVMAI_A_MEMBER_MDEV),
          .driver = a.str(KVMAI_A_MEMBER_DRIVER),
          .ats = ats ? std::optional<bool>(*ats != 0) : std::nullopt,
          .bars = nests(a, KVMAI_A_MEMBER_BAR, bar_of)};
}

Port port_of(const AttrSet& a) {
  return {.pci_addr = a.str(KVMAI_A_PORT_PCI_ADDR),
          .acs_cap = a.u32(KVMAI_A_PORT_ACS_CAP),
          .acs_saved = a.u32(KVMAI_A_PORT_ACS_SAVED),
          .acs_target = a.u32(KVMAI_A_PORT_ACS_TARGET),
          .acs_current = a.u32(KVMAI_A_PORT_ACS_CURRENT),
          .users = a.u32(KVMAI_A_PORT_USERS)};
}

MemberPair pair_of(const AttrSet& a) {
  return {.a = a.str(KVMAI_A_PAIR_A),
          .b = a.str(KVMAI_A_PAIR_B),
          .type = a.u32(KVMAI_A_PAIR_TYPE),
          .via = a.str(KVMAI_A_PAIR_VIA)};
}

MsrRange msr_range_of(const AttrSet& a) {
  return {.base = a.u32(KVMAI_A_MSR_RANGE_BASE),
          .count = a.u32(KVMAI_A_MSR_RANGE_COUNT),
          .read = a.has(KVMAI_A_MSR_RANGE_READ),
          .write = a.has(KVMAI_A_MSR_RANGE_WRITE),
          .write_mask = a.u64(KVMAI_A_MSR_RANGE_WRITE_MASK)};
}

Unit unit_of(const AttrSet& a) {
  return {.name = a.str(KVMAI_A_UNIT_NAME),
          .type = a.u32(KVMAI_A_UNIT_TYPE),
          .msr_ranges = a.u32(KVMAI_A_UNIT_MSR_RANGES),
          .host_events = a.u32(KVMAI_A_UNIT_HOST_EVENTS),
          .vm = a.str(KVMAI_A_UNIT_VM),
          .msrs = nests(a, KVMAI_A_UNIT_MSR, msr_range_of),
          .offline_packages = u32_list(a, KVMAI_A_UNIT_OFFLINE_PACKAGE),
          .hotplug_scrubs = a.u32(KVMAI_A_UNIT_HOTPLUG_SCRUBS),
          .core_select = a.has(KVMAI_A_UNIT_CORE_SELECT),
          .scope = a.u32(KVMAI_A_UNIT_SCOPE)};
}

Conflict conflict_of(const AttrSet& a) {
  return {.pmu = a.str(KVMAI_A_CONFLICT_PMU),
          .cpu = a.u32(KVMAI_A_CONFLICT_CPU),
          .pid = a.u32(KVMAI_A_CONFLICT_PID),
          .comm = a.str(KVMAI_A_CONFLICT_COMM),
          .config = a.u64(KVMAI_A_CONFLICT_CONFIG)};
}

PmuHost pmu_host_of(const AttrSet& a) {
  return {.core_capable = a.has(KVMAI_A_PMU_HOST_CORE_CAPABLE),
          .core_fences = a.u32(KVMAI_A_PMU_HOST_CORE_FENCES),
          .core_include_guest_events = a.u32(KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS),
          .conflicts = nests(a, KVMAI_A_PMU_HOST_CONFLICT, conflict_of),
          .units = nests(a, KVMAI_A_PMU_HOST_UNIT, unit_of)};
}

ModuleStatus status_of(const AttrSet& a) {
  return {.version = a.str(KVMAI_A_STATUS_VERSION),
          .api_version = a.u32(KVMAI_A_STATUS_API_VERSION),
          .kernel = a.str(KVMAI_A_STATUS_KERNEL),
          .features = a.u32(KVMAI_A_STATUS_FEATURES),
          .restore_pending = a.u32(KVMAI_A_STATUS_RESTORE_PENDING)};
}

// A group-get dump with every group whole again: the module splits a group
// whose lists do not fit one message, and each further part (flagged
// `continued`, same id) adds its members, ports and pairs to the first.
std::vector<AttrSet> join_group_parts(const std::vector<GenlMessage>& parts) {
  std::vector<AttrSet> groups;
  for (const auto& part : parts) {
    if (!part.attrs.has(KVMAI_A_GROUP_CONTINUED) || groups.empty() ||
        groups.back().u32(KVMAI_A_GROUP_ID) != part.attrs.u32(KVMAI_A_GROUP_ID)) {
      groups.push_back(part.attrs);
      continue;
    }
    for (const auto& a : part.attrs.attrs()) {
      if (a.type == KVMAI_A_GROUP_MEMBER || a.type == KVMAI_A_GROUP_PORT ||
          a.type == KVMAI_A_GROUP_PAIR) {
        groups.back().add(a);
      }
    }
  }
  return groups;
}

AttrSet group_name(const std::string& name) {
  AttrSet req;
  req.put_string(KVMAI_A_GROUP_NAME, name);
  return req;
}

AttrSet pmu_vm(const std::string& vm) {
  AttrSet req;
  req.put_string(KVMAI_A_PMU_VM, vm);
  return req;
}

AttrSet resources_request(const PmuResources& r) {
  AttrSet req = pmu_vm(r.vm);
  if (r.core) {
    req.put_flag(KVMAI_A_PMU_CORE);
  }
  for (const auto& name : r.units) {
    AttrSet unit;
    unit.put_string(KVMAI_A_UNIT_NAME, name);
    req.put_nested(KVMAI_A_PMU_UNIT, unit);
  }
  return req;
}

std::optional<Event> event_of(const GenlMessage& m) {
  switch (m.cmd) {
    case KVMAI_CMD_GROUP_CREATE_NTF:
      return Event{.kind = Event::Kind::group_create, .group = group_of(m.attrs), .pmu = {}};
    case KVMAI_CMD_GROUP_CHANGE_NTF:
      return Event{.kind = Event::Kind::group_change, .group = group_of(m.attrs), .pmu = {}};
    case KVMAI_CMD_GROUP_DELETE_NTF:
      return Event{.kind = Event::Kind::group_delete, .group = group_of(m.attrs), .pmu = {}};
    case KVMAI_CMD_PMU_CHANGE_NTF:
      return Event{.kind = Event::Kind::pmu_change, .group = {}, .pmu = pmu_record_of(m.attrs)};
    default:
      return std::nullopt;  // not a notification this tool knows
  }
}

}  // namespace

std::vector<std::string> Group::member_addrs() const {
  std::vector<std::string> v;
  v.reserve(members.size());
  for (const auto& m : members) {
    v.push_back(m.mdev ? *m.mdev : m.pci_addr.value_or("?"));
  }
  return v;
}

std::vector<std::string> PmuRecord::unit_names() const {
  std::vector<std::string> v;
  v.reserve(units.size());
  for (const auto& u : units) {
    v.push_back(u.name.value_or("?"));
  }
  return v;
}

Group group_of(const AttrSet& a) {
  return {.name = a.str(KVMAI_A_GROUP_NAME),
          .id = a.u32(KVMAI_A_GROUP_ID),
          .vm = a.str(KVMAI_A_GROUP_VM),
          .mode = a.u32(KVMAI_A_GROUP_MODE),
          .state = a.u32(KVMAI_A_GROUP_STATE),
          .bind_socket = a.has(KVMAI_A_GROUP_BIND_SOCKET),
          .members = nests(a, KVMAI_A_GROUP_MEMBER, member_of),
          .ports = nests(a, KVMAI_A_GROUP_PORT, port_of),
          .pairs = nests(a, KVMAI_A_GROUP_PAIR, pair_of)};
}

PmuRecord pmu_record_of(const AttrSet& a) {
  return {.vm = a.str(KVMAI_A_PMU_VM),
          .core = a.has(KVMAI_A_PMU_CORE),
          .units = nests(a, KVMAI_A_PMU_UNIT, unit_of),
          .cpus = a.str(KVMAI_A_PMU_CPUS),
          .shared = a.has(KVMAI_A_PMU_SHARED),
          .pid = a.u32(KVMAI_A_PMU_PID),
          .bind_socket = a.has(KVMAI_A_PMU_BIND_SOCKET),
          .packages = u32_list(a, KVMAI_A_PMU_PACKAGE)};
}

Kvmai::Kvmai(TransportFactory connect, Warn warn)
    : connect_(std::move(connect)), warn_(std::move(warn)) {}

GenlTransport& Kvmai::transport() {
  if (!transport_) {
    transport_ = connect_(KVMAI_FAMILY_NAME);
  }
  return *transport_;
}

GenlMessage Kvmai::request(std::uint8_t cmd, const AttrSet& attrs) {
  GenlMessage reply = transport().request(cmd, attrs);
  if (!reply.warning.empty() && warn_) {
    warn_(reply.warning);
  }
  return reply;
}

template <typename F>
auto Kvmai::pmu_call(F call) {
  try {
    return call();
  } catch (const GenlError& e) {
    if (e.kind() == GenlError::Kind::kernel && e.error() == EOPNOTSUPP && e.extack().empty()) {
      throw e.with_hint("a kvmai module without PMU operations?");
    }
    throw;
  }
}

std::vector<Group> Kvmai::groups() {
  std::vector<Group> v;
  for (const auto& g : join_group_parts(transport().dump(KVMAI_CMD_GROUP_GET, {}))) {
    v.push_back(group_of(g));
  }
  return v;
}

Group Kvmai::group(const std::string& name) {
  return group_of(request(KVMAI_CMD_GROUP_GET, group_name(name)).attrs);
}

Group Kvmai::group_new(const NewGroup& g) {
  AttrSet req = group_name(g.name);
  req.put_string(KVMAI_A_GROUP_VM, g.vm);
  if (g.mode) {
    req.put_u32(KVMAI_A_GROUP_MODE, *g.mode);
  }
  if (g.bind_socket) {
    req.put_flag(KVMAI_A_GROUP_BIND_SOCKET);
  }
  return group_of(request(KVMAI_CMD_GROUP_NEW, req).attrs);
}

void Kvmai::group_del(const std::string& name) {
  request(KVMAI_CMD_GROUP_DEL, group_name(name));
}

void Kvmai::group_set(const std::string& name, std::optional<std::uint32_t> mode,
                      std::optional<std::uint32_t> state) {
  AttrSet req = group_name(name);
  if (mode) {
    req.put_u32(KVMAI_A_GROUP_MODE, *mode);
  }
  if (state) {
    req.put_u32(KVMAI_A_GROUP_STATE, *state);
  }
  request(KVMAI_CMD_GROUP_SET, req);
}

GroupDevice GroupDevice::named(const std::string& name) {
  return partition::is_uuid(name) ? GroupDevice{.pci_addr = "", .mdev = name}
                                  : GroupDevice{.pci_addr = name, .mdev = ""};
}

namespace {

AttrSet dev_request(const std::string& group, const GroupDevice& dev) {
  AttrSet req = group_name(group);
  if (dev.mdev.empty()) {
    req.put_string(KVMAI_A_GROUP_PCI_ADDR, dev.pci_addr);
  } else {
    req.put_string(KVMAI_A_GROUP_MDEV, dev.mdev);
  }
  return req;
}

}  // namespace

void Kvmai::dev_add(const std::string& group, const GroupDevice& dev) {
  request(KVMAI_CMD_DEV_ADD, dev_request(group, dev));
}

void Kvmai::dev_del(const std::string& group, const GroupDevice& dev) {
  request(KVMAI_CMD_DEV_DEL, dev_request(group, dev));
}

ModuleStatus Kvmai::status() {
  return status_of(request(KVMAI_CMD_STATUS_GET, {}).attrs);
}

PmuHost Kvmai::pmu_host() {
  return pmu_call([&] { return pmu_host_of(request(KVMAI_CMD_PMU_HOST_GET, {}).attrs); });
}

std::vector<PmuRecord> Kvmai::pmu_records() {
  return pmu_call([&] {
    std::vector<PmuRecord> v;
    for (const auto& m : transport().dump(KVMAI_CMD_PMU_GET, {})) {
      v.push_back(pmu_record_of(m.attrs));
    }
    return v;
  });
}

PmuRecord Kvmai::pmu_record(const std::string& vm) {
  return pmu_call([&] { return pmu_record_of(request(KVMAI_CMD_PMU_GET, pmu_vm(vm)).attrs); });
}

std::optional<PmuRecord> Kvmai::find_pmu_record(const std::string& vm) {
  try {
    return pmu_record(vm);
  } catch (const GenlError& e) {
    if (e.kind() == GenlError::Kind::kernel && e.error() == ENOENT) {
      return std::nullopt;
    }
    throw;
  }
}

PmuRecord Kvmai::pmu_assign(const PmuAssign& a) {
  AttrSet req = resources_request(a.resources);
  if (a.cpus) {
    req.put_string(KVMAI_A_PMU_CPUS, *a.cpus);
  }
  if (a.shared) {
    req.put_flag(KVMAI_A_PMU_SHARED);
  }
  if (a.pid) {
    req.put_u32(KVMAI_A_PMU_PID, *a.pid);
  }
  if (a.bind_socket) {
    req.put_flag(KVMAI_A_PMU_BIND_SOCKET);
  }
  return pmu_call([&] { return pmu_record_of(request(KVMAI_CMD_PMU_ASSIGN, req).attrs); });
}

void Kvmai::pmu_release(const PmuResources& r) {
  pmu_call([&] { return request(KVMAI_CMD_PMU_RELEASE, resources_request(r)); });
}

void Kvmai::subscribe() {
  transport().subscribe(KVMAI_MCGRP_MONITOR);
}

void Kvmai::watch(const std::function<bool(const Event&)>& on_event, int wake_fd) {
  transport().receive(
      [&](const GenlMessage& m) {
        const auto event = event_of(m);
        return !event || on_event(*event);
      },
      wake_fd);
}

}  // namespace kvmai::kvmaictl
