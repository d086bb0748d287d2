#include "hook/metadata.h"

#include <linux/kvmai.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <initializer_list>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <utility>

#include "client/names.h"
#include "common/format.h"
#include "hook/entitlement.h"
#include "model/pci_tree.h"
#include "partition/layout.h"
#include "vm/libvirt.h"

namespace kvmai::kvmaictl::hook {
namespace {

// ---- namespaces ------------------------------------------------------------

// pugixml does not resolve namespaces: an element's URI is the nearest
// xmlns:PREFIX (or xmlns) declaration on it or an ancestor.  libvirt keeps
// a metadata element with the prefix it was given, any prefix, so matching
// on "kvmai:" would miss a domain written with another one.
struct QName {
  std::string ns;
  std::string local;
  std::string written;
};

QName qname(const pugi::xml_node& n) {
  const std::string written = n.name();
  const auto colon = written.find(':');
  const std::string prefix = colon == std::string::npos ? "" : written.substr(0, colon);
  const std::string decl = prefix.empty() ? "xmlns" : "xmlns:" + prefix;
  QName q{.ns = "",
          .local = colon == std::string::npos ? written : written.substr(colon + 1),
          .written = written};
  for (pugi::xml_node a = n; !a.empty(); a = a.parent()) {
    if (const pugi::xml_attribute d = a.attribute(decl.c_str()); !d.empty()) {
      q.ns = d.value();
      break;
    }
  }
  return q;
}

bool ours(const QName& q) {
  return q.ns == kKvmaiLibvirtNs;
}

// How messages name an element: ours by the schema's prefix whatever the
// document used, others as written.
std::string shown(const QName& q) {
  return "<" + (ours(q) ? "kvmai:" + q.local : printable(q.written)) + ">";
}

bool is_ns_decl(std::string_view attr) {
  return attr == "xmlns" || attr.starts_with("xmlns:");
}

// The attributes of `e` among `known`, the others reported to `problems`.
std::map<std::string, std::string> attributes(const pugi::xml_node& e,
                                              std::initializer_list<std::string_view> known,
                                              std::vector<std::string>& problems) {
  std::map<std::string, std::string> out;
  for (const pugi::xml_attribute& a : e.attributes()) {
    const std::string_view name = a.name();
    if (is_ns_decl(name)) {
      continue;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      problems.push_back(shown(qname(e)) + " has no attribute " + printable(name));
      continue;
    }
    out.emplace(name, a.value());
  }
  return out;
}

std::optional<std::string> take(std::map<std::string, std::string>& attrs, const std::string& k) {
  const auto it = attrs.find(k);
  return it == attrs.end() ? std::nullopt : std::optional(it->second);
}

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The element children of `e` (text that is not blank is reported: our
// elements hold elements only).
std::vector<pugi::xml_node> element_children(const pugi::xml_node& e,
                                             std::vector<std::string>& problems) {
  std::vector<pugi::xml_node> kids;
  for (const pugi::xml_node& c : e.children()) {
    if (c.type() == pugi::node_element) {
      kids.push_back(c);
    } else if ((c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) &&
               !blank(c.value())) {
      problems.push_back(shown(qname(e)) + " holds text");
    }
  }
  return kids;
}

// An element that holds nothing but attributes.
void empty_element(const pugi::xml_node& e, std::vector<std::string>& problems) {
  for (const pugi::xml_node& c : element_children(e, problems)) {
    problems.push_back("unknown element " + shown(qname(c)) + " in " + shown(qname(e)));
  }
}

GroupSpec parse_group(const pugi::xml_node& e, std::vector<std::string>& problems) {
  auto a = attributes(e, {"name", "mode", "from"}, problems);
  GroupSpec g{.name = take(a, "name"),
              .mode = take(a, "mode"),
              .from = take(a, "from"),
              .devices = {},
              .mdevs = {}};
  for (const pugi::xml_node& c : element_children(e, problems)) {
    const QName q = qname(c);
    if (!ours(q) || q.local != "device") {
      problems.push_back("unknown element " + shown(q) + " in <kvmai:group>");
      continue;
    }
    auto d = attributes(c, {"address", "mdev"}, problems);
    empty_element(c, problems);
    const auto addr = take(d, "address");
    const auto mdev = take(d, "mdev");
    if (addr && mdev) {
      problems.emplace_back("<kvmai:device> with both address and mdev");
    } else if (addr) {
      g.devices.push_back(*addr);
    } else if (mdev) {
      g.mdevs.push_back(*mdev);
    } else {
      problems.emplace_back("<kvmai:device> without address or mdev");
    }
  }
  return g;
}

PmuSpec parse_pmu(const pugi::xml_node& e, std::vector<std::string>& problems) {
  auto a = attributes(e, {"core", "cpus", "shared"}, problems);
  PmuSpec p{
      .core = take(a, "core"), .cpus = take(a, "cpus"), .shared = take(a, "shared"), .units = {}};
  for (const pugi::xml_node& c : element_children(e, problems)) {
    const QName q = qname(c);
    if (!ours(q) || q.local != "unit") {
      problems.push_back("unknown element " + shown(q) + " in <kvmai:pmu>");
      continue;
    }
    auto u = attributes(c, {"name"}, problems);
    empty_element(c, problems);
    if (const auto name = take(u, "name")) {
      p.units.push_back(*name);
    } else {
      problems.emplace_back("<kvmai:unit> without name");
    }
  }
  return p;
}

PartitionSpec parse_partition(const pugi::xml_node& e, std::vector<std::string>& problems) {
  auto a = attributes(e, {"parent", "type", "uuid", "vfs", "vf", "vgpu-type", "remove"}, problems);
  empty_element(e, problems);
  return {.parent = take(a, "parent"),
          .type = take(a, "type"),
          .uuid = take(a, "uuid"),
          .vfs = take(a, "vfs"),
          .vf = take(a, "vf"),
          .vgpu_type = take(a, "vgpu-type"),
          .remove = take(a, "remove")};
}

void parse_vm(const pugi::xml_node& e, Metadata& m) {
  attributes(e, {}, m.problems);
  for (const pugi::xml_node& c : element_children(e, m.problems)) {
    const QName q = qname(c);
    if (ours(q) && q.local == "group") {
      m.groups.push_back(parse_group(c, m.problems));
    } else if (ours(q) && q.local == "partition") {
      m.partitions.push_back(parse_partition(c, m.problems));
    } else if (ours(q) && q.local == "pmu") {
      if (m.pmu) {
        m.problems.emplace_back("more than one <kvmai:pmu>");
      } else {
        m.pmu = parse_pmu(c, m.problems);
      }
    } else {
      m.problems.push_back("unknown element " + shown(q) + " in <kvmai:vm>");
    }
  }
}

Metadata parse_metadata(const pugi::xml_node& metadata) {
  Metadata m;
  bool seen_vm = false;
  for (const pugi::xml_node& c : metadata.children()) {
    if (c.type() != pugi::node_element) {
      continue;
    }
    const QName q = qname(c);
    if (!ours(q)) {
      continue;  // another program's metadata
    }
    m.present = true;
    if (q.local != "vm") {
      m.problems.push_back("unknown element " + shown(q) + " in <metadata> (want <kvmai:vm>)");
    } else if (seen_vm) {
      m.problems.emplace_back("more than one <kvmai:vm> in <metadata>");
    } else {
      seen_vm = true;
      parse_vm(c, m);
    }
  }
  return m;
}

// ---- the domain's PCI functions --------------------------------------------

// A number as libvirt reads one (strtol base 0): "0x1f", "017", "12".
std::optional<unsigned> libvirt_number(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  unsigned v = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || error != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return v;
}

// <address domain bus slot function/>; an absent field is 0, as in libvirt.
// nullopt for an address libvirt itself would refuse.
std::optional<std::string> source_address(const pugi::xml_node& address) {
  std::array<unsigned, 4> field{};
  constexpr std::array<unsigned, 4> kMax{0xffff, 0xff, 0x1f, 7};
  constexpr std::array<const char*, 4> kNames{"domain", "bus", "slot", "function"};
  for (std::size_t i = 0; i < field.size(); ++i) {
    const pugi::xml_attribute a = address.attribute(kNames[i]);
    if (a.empty()) {
      continue;
    }
    const auto v = libvirt_number(a.value());
    if (!v || *v > kMax[i]) {
      return std::nullopt;
    }
    field[i] = *v;
  }
  return format_bdf(field[0], field[1], field[2], field[3]);
}

std::vector<std::string> pci_devices(const pugi::xml_node& devices) {
  std::vector<std::string> out;
  for (const pugi::xml_node& d : devices.children()) {
    const std::string_view kind = d.name();
    const std::string_view type = d.attribute("type").value();
    const bool hostdev = kind == "hostdev" &&
                         std::string_view(d.attribute("mode").value()) == "subsystem" &&
                         type == "pci";
    const bool vf_nic = kind == "interface" && type == "hostdev";
    if (!hostdev && !vf_nic) {
      continue;
    }
    const pugi::xml_node address = d.child("source").child("address");
    const std::string_view address_type = address.attribute("type").value();
    if (address.empty() || (!address_type.empty() && address_type != "pci")) {
      continue;
    }
    if (const auto bdf = source_address(address)) {
      out.push_back(*bdf);
    }
  }
  return out;
}

std::vector<std::string> mdevs(const pugi::xml_node& devices) {
  std::vector<std::string> out;
  for (const pugi::xml_node& d : devices.children("hostdev")) {
    if (std::string_view(d.attribute("mode").value()) != "subsystem" ||
        std::string_view(d.attribute("type").value()) != "mdev") {
      continue;
    }
    if (const pugi::xml_attribute uuid = d.child("source").child("address").attribute("uuid");
        !uuid.empty()) {
      out.emplace_back(uuid.value());
    }
  }
  return out;
}

VcpuPinning vcpu_pinning(const pugi::xml_node& domain) {
  VcpuPinning v;
  if (const pugi::xml_node vcpu = domain.child("vcpu"); !vcpu.empty()) {
    std::string_view count = vcpu.text().get();
    const auto first = count.find_first_not_of(" \t\r\n");
    count = first == std::string_view::npos
                ? std::string_view()
                : count.substr(first, count.find_last_not_of(" \t\r\n") - first + 1);
    v.count = libvirt_number(count);
    const pugi::xml_attribute cpuset = vcpu.attribute("cpuset");
    if (!cpuset.empty() && std::string_view(vcpu.attribute("placement").value()) != "auto") {
      v.cpuset = cpuset.value();
    }
  }
  for (const pugi::xml_node& pin : domain.child("cputune").children("vcpupin")) {
    if (const auto id = libvirt_number(pin.attribute("vcpu").value())) {
      v.pins.emplace(*id, pin.attribute("cpuset").value());
    }
  }
  return v;
}

NumaTune numatune(const pugi::xml_node& domain) {
  const auto binding = [](const pugi::xml_node& e) {
    MemoryBinding b;
    if (const pugi::xml_attribute mode = e.attribute("mode"); !mode.empty()) {
      b.mode = mode.value();
    }
    b.placement = e.attribute("placement").value();
    if (const pugi::xml_attribute nodes = e.attribute("nodeset"); !nodes.empty()) {
      b.nodeset = nodes.value();
    }
    return b;
  };
  NumaTune t;
  const pugi::xml_node tune = domain.child("numatune");
  if (const pugi::xml_node memory = tune.child("memory"); !memory.empty()) {
    t.memory = binding(memory);
  }
  for (const pugi::xml_node& node : tune.children("memnode")) {
    if (const auto cell = libvirt_number(node.attribute("cellid").value())) {
      t.memnodes.emplace(*cell, binding(node));
    }
  }
  return t;
}

// ---- checks ----------------------------------------------------------------

std::uint32_t group_mode(const std::string& group, const std::optional<std::string>& mode) {
  if (!mode || *mode == "translated") {
    return KVMAI_MODE_TRANSLATED;
  }
  if (*mode == "direct") {
    return KVMAI_MODE_DIRECT;
  }
  throw HookError("group " + group + ": unknown mode " + in_quotes(*mode) +
                  " (translated or direct)");
}

bool yes_no(const std::optional<std::string>& v, std::string_view what) {
  if (!v || *v == "no") {
    return false;
  }
  if (*v == "yes") {
    return true;
  }
  throw HookError("pmu: " + std::string(what) + "=" + in_quotes(*v) + " is neither yes nor no");
}

// The host CPUs the domain's vCPU threads may run on, as libvirt pins
// them.  Only the vCPUs count: a guest reads the uncore counters of the
// packages its vCPUs run on, while the emulator and I/O threads run host
// code, often on housekeeping CPUs that every VM shares.  `why` says what
// needs them, for the refusal of a vCPU that may run anywhere.
std::set<unsigned> vcpu_cpus(const VcpuPinning& v, std::string_view why) {
  if (!v.count || *v.count == 0) {
    throw HookError("pmu: <vcpu> gives no vCPU count");
  }
  const auto parse = [](std::string_view element, const std::string& cpuset) {
    const auto cpus = parse_cpuset(cpuset);
    if (!cpus) {
      throw HookError(
          cat({"pmu: ", element, " has cpuset ", in_quotes(cpuset), ", not a CPU list"}));
    }
    if (cpus->empty()) {
      throw HookError(
          cat({"pmu: ", element, " has cpuset ", in_quotes(cpuset), ", which holds no CPU"}));
    }
    return *cpus;
  };
  std::optional<std::set<unsigned>> fallback;
  if (v.cpuset) {
    fallback = parse("<vcpu>", *v.cpuset);
  }
  std::set<unsigned> all;
  for (unsigned id = 0; id < *v.count; ++id) {
    std::set<unsigned> cpus;
    if (const auto pin = v.pins.find(id); pin != v.pins.end()) {
      cpus = parse("<vcpupin vcpu='" + std::to_string(id) + "'>", pin->second);
    } else if (fallback) {
      cpus = *fallback;
    } else {
      throw HookError(cat({"pmu: ", why,
                           " the domain's vCPUs pinned to host CPUs (<cputune><vcpupin> or <vcpu "
                           "cpuset>): vCPU ",
                           std::to_string(id), " may run on any"}));
    }
    all.insert(cpus.begin(), cpus.end());
  }
  return all;
}

PmuPlan plan_pmu(const std::string& vm, const PmuSpec& spec, const VcpuPinning& vcpus,
                 const HostConfig& host) {
  PmuPlan p{.core = yes_no(spec.core, "core"),
            .units = {},
            .cpus = "",
            .shared = host.shares_packages(vm)};
  for (const auto& u : spec.units) {
    if (const auto problem = name_problem(u, KVMAI_UNIT_LEN); !problem.empty()) {
      throw HookError("pmu: unit name " + in_quotes(u) + " " + problem);
    }
    if (std::find(p.units.begin(), p.units.end(), u) != p.units.end()) {
      throw HookError("pmu: unit " + u + " is named twice");
    }
    p.units.push_back(u);
  }
  std::optional<std::set<unsigned>> written;
  if (spec.cpus) {
    written = parse_cpuset(*spec.cpus);
    if (!written || written->empty() || spec.cpus->find('^') != std::string::npos) {
      throw HookError("pmu: bad cpus " + in_quotes(*spec.cpus) +
                      " (a CPU list such as 0-31,64-95)");
    }
  }
  // Shared packages let the VM's counters see other tenants: the host's
  // configuration says which domains may, never the domain itself.
  if (yes_no(spec.shared, "shared") && !p.shared) {
    throw HookError("pmu: shared=\"yes\" is the host's to say, not the domain's: list " +
                    printable(vm) + " under [pmu] shared in " + printable(host.path));
  }
  if (!p.core && p.units.empty()) {
    throw HookError("pmu: nothing to assign (core=\"yes\" or a <kvmai:unit>)");
  }
  if (p.units.empty() && !written) {
    return p;  // the core PMU is the VM's wherever it runs
  }
  const auto cpus = vcpu_cpus(vcpus, p.units.empty() ? "cpus needs" : "uncore units need");
  p.cpus = cpu_list(cpus);
  // A cpus attribute may only repeat what the pinning says: any other set
  // would reserve units on packages the guest does not run on, or leave
  // out packages it does.
  if (written && *written != cpus) {
    throw HookError("pmu: cpus=" + in_quotes(*spec.cpus) +
                    " is not where the domain's vCPUs run (" + p.cpus +
                    ", by <vcpu> and <cputune>): leave cpus out");
  }
  if (p.cpus.size() >= KVMAI_CPUS_LEN) {
    throw HookError("pmu: the vCPUs' host CPUs (" + p.cpus + ") make a list longer than " +
                    std::to_string(KVMAI_CPUS_LEN - 1) + " characters");
  }
  return p;
}

}  // namespace

std::string in_quotes(std::string_view s) {
  return "\"" + printable(s) + "\"";
}

std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (const auto p : parts) {
    size += p.size();
  }
  std::string s;
  s.reserve(size);
  for (const auto p : parts) {
    s += p;
  }
  return s;
}

DomainXml parse_domain_xml(std::string_view xml) {
  pugi::xml_document doc;
  const pugi::xml_parse_result r =
      doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r) {
    throw HookError("domain XML on standard input: " + std::string(r.description()) +
                    " at offset " + std::to_string(r.offset));
  }
  const pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != "domain") {
    throw HookError("standard input holds <" + printable(root.name()) + ">, not a <domain>");
  }
  DomainXml d;
  d.name = root.child("name").text().get();
  d.pci_devices = pci_devices(root.child("devices"));
  d.mdevs = mdevs(root.child("devices"));
  d.vcpus = vcpu_pinning(root);
  d.numatune = numatune(root);
  d.kvmai = parse_metadata(root.child("metadata"));
  return d;
}

namespace {

// from="hostdevs": the domain's PCI functions, then its mdevs whose parent
// is a PCI device (others, mtty's or kvm-ai's counters devices, have no
// path to relax), in lower case as the module names them.
std::vector<std::string> hostdev_members(const DomainXml& xml, const TreeReader& sys) {
  std::vector<std::string> out = xml.pci_devices;
  for (const std::string& written : xml.mdevs) {
    const std::string uuid = to_lower(written);
    const auto parent = partition::is_uuid(uuid) ? partition::mdev_parent(sys, uuid) : std::nullopt;
    if (parent && sys.exists("bus/pci/devices/" + *parent)) {
      out.push_back(uuid);
    }
  }
  return out;
}

// What the module would refuse of mdev `uuid` in group `name`, said first.
void check_mdev_member(const std::string& name, const std::string& uuid, const TreeReader& sys) {
  const auto parent = partition::mdev_parent(sys, uuid);
  if (!parent) {
    throw HookError(cat({"group ", name, ": no mdev ", uuid, " on this host"}));
  }
  if (!sys.exists("bus/pci/devices/" + *parent)) {
    throw HookError(cat({"group ", name, ": mdev ", uuid, ": its parent ", printable(*parent),
                         " is not a PCI device"}));
  }
}

}  // namespace

DomainPlan plan_domain(const std::string& vm, const DomainXml& xml, const TreeReader& sys,
                       const HostConfig& host) {
  const Metadata& m = xml.kvmai;
  if (!m.problems.empty()) {
    throw HookError("metadata: " + m.problems.front());
  }
  if (!xml.name.empty() && xml.name != vm) {
    throw HookError("the domain XML is for " + in_quotes(xml.name) + ", not " + in_quotes(vm));
  }
  if (const auto problem = name_problem(vm, KVMAI_VM_LEN); !problem.empty()) {
    throw HookError("domain name " + in_quotes(vm) + " " + problem +
                    " (kvm-ai's VM name is the domain's)");
  }
  DomainPlan plan{.vm = vm, .groups = {}, .pmu = std::nullopt};
  std::map<std::string, std::string> group_of;  // device -> group
  for (const GroupSpec& spec : m.groups) {
    const std::string name = spec.name.value_or(vm);
    if (const auto problem = name_problem(name, KVMAI_NAME_LEN); !problem.empty()) {
      throw HookError("group name " + in_quotes(name) + " " + problem +
                      (spec.name ? "" : " (the domain's name: give the group a name)"));
    }
    if (std::any_of(plan.groups.begin(), plan.groups.end(),
                    [&](const GroupPlan& g) { return g.name == name; })) {
      throw HookError("group " + name + " is named twice");
    }
    GroupPlan g{.name = name, .mode = group_mode(name, spec.mode), .devices = {}};
    const bool from_hostdevs = spec.from.has_value();
    if (from_hostdevs && *spec.from != "hostdevs") {
      throw HookError("group " + name + ": unknown from=" + in_quotes(*spec.from) + " (hostdevs)");
    }
    if (from_hostdevs && (!spec.devices.empty() || !spec.mdevs.empty())) {
      throw HookError("group " + name +
                      ": from=\"hostdevs\" and <kvmai:device> elements exclude each other");
    }
    std::vector<std::string> wanted =
        from_hostdevs ? hostdev_members(xml, sys) : std::vector<std::string>{};
    for (const auto& written : spec.devices) {
      const auto bdf = parse_bdf(written);
      if (!bdf) {
        throw HookError("group " + name + ": bad PCI address " + in_quotes(written) +
                        " (want DDDD:BB:DD.F)");
      }
      if (std::find(wanted.begin(), wanted.end(), *bdf) != wanted.end()) {
        throw HookError("group " + name + ": " + *bdf + " is named twice");
      }
      // The threat model: a group relaxes isolation between its members,
      // so each must be a device this domain, and no other, is given.
      if (std::find(xml.pci_devices.begin(), xml.pci_devices.end(), *bdf) ==
          xml.pci_devices.end()) {
        throw HookError(cat({"group ", name, ": ", *bdf, " is not a PCI hostdev of domain ", vm}));
      }
      wanted.push_back(*bdf);
    }
    for (const auto& written : spec.mdevs) {
      if (!partition::is_uuid(written)) {
        throw HookError("group " + name + ": bad mdev " + in_quotes(written) + " (want a UUID)");
      }
      const std::string uuid = to_lower(written);
      if (std::find(wanted.begin(), wanted.end(), uuid) != wanted.end()) {
        throw HookError("group " + name + ": " + uuid + " is named twice");
      }
      if (std::none_of(xml.mdevs.begin(), xml.mdevs.end(), [&](const std::string& written_mdev) {
            return to_lower(written_mdev) == uuid;
          })) {
        throw HookError(
            cat({"group ", name, ": ", uuid, " is not an mdev hostdev of domain ", vm}));
      }
      wanted.push_back(uuid);
    }
    for (const auto& dev : wanted) {
      if (const auto [it, fresh] = group_of.emplace(dev, name); !fresh) {
        throw HookError(cat({dev, " is in groups ", it->second, " and ", name,
                             " (a device is in one group only)"}));
      }
      if (partition::is_uuid(dev)) {
        check_mdev_member(name, dev, sys);
      } else if (!sys.exists("bus/pci/devices/" + dev)) {
        throw HookError(cat({"group ", name, ": no PCI device ", dev, " on this host"}));
      }
    }
    if (wanted.size() < kMinGroupMembers || wanted.size() > kMaxGroupMembers) {
      const bool one = wanted.size() == 1;
      throw HookError("group " + name + ": " + std::to_string(wanted.size()) +
                      (from_hostdevs ? (one ? " PCI hostdev or mdev" : " PCI hostdevs and mdevs") +
                                           std::string(" in the domain")
                                     : (one ? " device" : " devices")) +
                      " (a group holds " + std::to_string(kMinGroupMembers) + " to " +
                      std::to_string(kMaxGroupMembers) + ")");
    }
    g.devices = std::move(wanted);
    plan.groups.push_back(std::move(g));
  }
  if (m.pmu) {
    plan.pmu = plan_pmu(vm, *m.pmu, xml.vcpus, host);
    if (!plan.pmu->shared) {
      check_entitlement(vm, *plan.pmu, xml, sys, host);
    }
  }
  return plan;
}

std::optional<std::set<unsigned>> parse_cpuset(std::string_view s) {
  // libvirt's own limit (VIR_DOMAIN_CPUMASK_LEN), which also bounds the
  // work a range asks for.
  constexpr unsigned kCpus = 16384;
  const auto trim = [](std::string_view w) {
    const auto b = w.find_first_not_of(" \t");
    return b == std::string_view::npos ? std::string_view()
                                       : w.substr(b, w.find_last_not_of(" \t") - b + 1);
  };
  const auto number = [&](std::string_view w) -> std::optional<unsigned> {
    w = trim(w);
    unsigned v = 0;
    const auto [end, error] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || error != std::errc() || end != w.data() + w.size() || v >= kCpus) {
      return std::nullopt;
    }
    return v;
  };
  std::set<unsigned> cpus;
  // Items apply in order: "0-7,^3" is 0-2,4-7.
  for (std::size_t start = 0; start <= s.size();) {
    const std::size_t comma = std::min(s.find(',', start), s.size());
    std::string_view item = trim(s.substr(start, comma - start));
    start = comma + 1;
    if (item.starts_with('^')) {
      const auto cpu = number(item.substr(1));
      if (!cpu) {
        return std::nullopt;
      }
      cpus.erase(*cpu);
      continue;
    }
    const std::size_t dash = item.find('-');
    const auto first = number(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : number(item.substr(dash + 1));
    if (!first || !last || *last < *first) {
      return std::nullopt;
    }
    for (unsigned c = *first; c <= *last; ++c) {
      cpus.insert(c);
    }
  }
  return cpus;
}

std::string cpu_list(const std::set<unsigned>& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    const unsigned first = *it;
    unsigned last = first;
    while (++it != cpus.end() && *it == last + 1) {
      last = *it;
    }
    out += (out.empty() ? "" : ",") + std::to_string(first);
    if (last != first) {
      out += "-" + std::to_string(last);
    }
  }
  return out;
}

void check_counters_devices(const std::string& vm, const DomainXml& xml, const TreeReader& sys) {
  for (const std::string& written : xml.mdevs) {
    // libvirt writes UUIDs in lower case, with dashes; anything else would
    // not be a name in sysfs (and could not be let near a path).
    const bool uuid =
        written.size() == 36 && std::all_of(written.begin(), written.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
        });
    if (!uuid) {
      throw HookError("mediated device " + in_quotes(written) +
                      ": not a UUID as libvirt writes one");
    }
    const std::string dir = "bus/mdev/devices/" + written + "/kvmai/";
    const auto owner = read_line(sys, dir + "vm");
    if (!owner) {
      continue;  // not a counters device, or none: libvirt says so itself
    }
    if (*owner != vm) {
      throw HookError(cat({"counters device ", written, " belongs to vm ", printable(*owner),
                           ", not to domain ", printable(vm)}));
    }
    // Revoked when its VM gave the unit back, for good: the guest would
    // read all ones.
    if (read_line(sys, dir + "state").value_or("") == "revoked") {
      throw HookError(cat({"counters device ", written, " was revoked (", printable(vm),
                           " gave its unit back): remove it and create another"}));
    }
  }
}

}  // namespace kvmai::kvmaictl::hook
