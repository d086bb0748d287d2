// `kvmaictl vm plan ... format libvirt`: the domain XML must be one libvirt
// accepts (virt-xml-validate, libvirt's own RELAX NG schemas) and must say
// what the plan says: each planned bridge one controller whose parent is
// the controller of the plan bridge above it, each device one hostdev on
// the controller of its plan bridge, at the plan's slot and function.
#include "vm/libvirt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libxml/tree.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/print.h"
#include "testing/libxml2.h"
#include "testing/run.h"
#include "vm/platform.h"

namespace kvmai::kvmaictl {
namespace {

namespace lx = kvmai::kvmaictl::testing::lx;

using ::testing::HasSubstr;
using testing::matches_golden;
using testing::run_cli;
using testing::testdata;

// ---- the XML, read back ----------------------------------------------------

std::vector<const xmlNode*> kids(const xmlNode* n, std::string_view name) {
  std::vector<const xmlNode*> v;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE && name == reinterpret_cast<const char*>(c->name)) {
      v.push_back(c);
    }
  }
  return v;
}

const xmlNode* kid(const xmlNode* n, std::string_view name) {
  const auto v = kids(n, name);
  return v.empty() ? nullptr : v.front();
}

struct XmlFree {
  void operator()(xmlChar* p) const { xmlFree(p); }
};

std::string content(const xmlNode* n) {
  const std::unique_ptr<xmlChar, XmlFree> s(xmlNodeGetContent(n));
  return s ? reinterpret_cast<const char*>(s.get()) : "";
}

std::vector<std::string> comments(const xmlNode* n) {
  std::vector<std::string> v;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type == XML_COMMENT_NODE) {
      v.push_back(content(c));
    }
  }
  return v;
}

// "0x1f", "12": libvirt takes both.
int num(const std::string& s) {
  return static_cast<int>(std::stol(s, nullptr, 0));
}

using lx::attr;

// ---- the plans -------------------------------------------------------------

struct Case {
  std::string name;  // golden file prefix
  std::string fixture;
  Args words;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<Case> kCases{
    {"emulated-vm", "emulated-vm", {"gpu0", "nic0", "gpu1", "nic1", "vcpus", "4", "memory", "512"}},
    {"hgx-vm", "hgx-vm", {"gpu0",      "gpu1",      "gpu2",  "gpu3", "gpu4",      "gpu5",
                          "gpu6",      "gpu7",      "nic2",  "nic3", "nic4",      "nic5",
                          "nic6",      "nic7",      "nic8",  "nic9", "nvswitch0", "nvswitch1",
                          "nvswitch2", "nvswitch3", "vcpus", "16",   "memory",    "65536"}},
    {"multifunction", "multifunction", {"gpu0", "3d:00.1"}},
    // With the vGPU mdev of the switch's second GPU.
    {"multifunction-mdev",
     "multifunction",
     {"gpu0", "3d:00.1", "6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d10"}},
};

std::string run_plan(const Case& c, const Args& extra, bool json = false) {
  Args args;
  if (json) {
    args.emplace_back("-j");
  }
  args.insert(args.end(), {"vm", "plan"});
  args.insert(args.end(), c.words.begin(), c.words.end());
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--sysfs-root", testdata(c.fixture + "/sys")});
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.name;
  for (auto& ch : n) {
    ch = ch == '-' ? '_' : ch;
  }
  return n;
}

// ---- virt-xml-validate -----------------------------------------------------

using testing::Ran;
using testing::sh;

// Runs libvirt's validator on @doc as a domain.  tools/devenv/deps.sh
// installs it (libvirt-clients); a machine without it fails here rather
// than skipping, so that a missing package cannot pass for valid XML.
::testing::AssertionResult valid_domain(const lx::Doc& doc, const std::string& tag) {
  if (sh("command -v virt-xml-validate >/dev/null 2>&1").rc != 0) {
    return ::testing::AssertionFailure()
           << "virt-xml-validate not found: install libvirt-clients (tools/devenv/deps.sh)";
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvmaictl-libvirt-" + std::to_string(getpid()) + "-" + tag + ".xml");
  std::ofstream(path) << doc.str();
  const Ran r = sh("virt-xml-validate '" + path.string() + "' domain 2>&1");
  std::filesystem::remove(path);
  if (r.rc == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "virt-xml-validate exit " << r.rc << ":\n"
                                       << r.out << doc.str();
}

// The fragment leaves the domain's name to the user; the schema wants one.
lx::Doc completed(const std::string& fragment) {
  lx::Doc doc = lx::Doc::parse(fragment);
  doc.root().text_child("name", "kvmaictl-test");
  return doc;
}

// ---- the tests -------------------------------------------------------------

class LibvirtPlan : public ::testing::TestWithParam<Case> {};

TEST_P(LibvirtPlan, MatchesGolden) {
  const Case& c = GetParam();
  std::string note;
  EXPECT_TRUE(
      matches_golden(c.name + ".plan.libvirt.xml", run_plan(c, {"format", "libvirt"}), &note));
  if (!note.empty()) {
    GTEST_SKIP() << note;
  }
}

TEST_P(LibvirtPlan, PassesVirtXmlValidate) {
  const Case& c = GetParam();
  EXPECT_TRUE(valid_domain(completed(run_plan(c, {"format", "libvirt"})), c.name));
}

// Each plan bridge and device, found in the XML by structure alone (model,
// parent, slot), not by the writer's own index map.
TEST_P(LibvirtPlan, MirrorsThePlan) {
  const Case& c = GetParam();
  const auto plan = nlohmann::json::parse(run_plan(c, {}, true));
  const lx::Doc doc = lx::Doc::parse(run_plan(c, {"format", "libvirt"}));
  const xmlNode* domain = doc.root().get();
  ASSERT_EQ(attr(domain, "type"), "kvm");
  const xmlNode* devices = kid(domain, "devices");
  ASSERT_NE(devices, nullptr);

  // Controllers: indexes 1..N without gaps (libvirt fills gaps with root
  // ports of its own), each one's parent present and of a lower index.
  std::map<int, const xmlNode*> by_index;
  for (const xmlNode* ctl : kids(devices, "controller")) {
    ASSERT_EQ(attr(ctl, "type"), "pci");
    const int idx = num(attr(ctl, "index"));
    EXPECT_TRUE(by_index.emplace(idx, ctl).second) << "index " << idx << " twice";
    const xmlNode* a = kid(ctl, "address");
    if (attr(ctl, "model") == "pcie-expander-bus") {
      EXPECT_EQ(a, nullptr) << "expander " << idx << ": its slot on pcie-root is libvirt's";
      continue;
    }
    ASSERT_NE(a, nullptr) << "controller " << idx;
    const int parent = num(attr(a, "bus"));
    EXPECT_LT(parent, idx) << "controller " << idx;
    EXPECT_TRUE(parent == 0 || by_index.contains(parent)) << "controller " << idx;
  }
  ASSERT_EQ(by_index.size(), plan["bridges"].size());
  EXPECT_EQ(by_index.begin()->first, 1);
  EXPECT_EQ(by_index.rbegin()->first, static_cast<int>(by_index.size()));

  const std::map<std::string, std::string> model{
      {"pxb-pcie", "pcie-expander-bus"},
      {"pcie-root-port", "pcie-root-port"},
      {"x3130-upstream", "pcie-switch-upstream-port"},
      {"xio3130-downstream", "pcie-switch-downstream-port"}};
  std::map<std::string, int> ctl_of;  // plan bridge id -> controller index
  // Parents come before children in the plan, so one pass finds them all.
  for (const auto& b : plan["bridges"]) {
    const std::string id = b["id"];
    std::vector<int> found;
    for (const auto& [idx, ctl] : by_index) {
      if (attr(ctl, "model") != model.at(b["model"])) {
        continue;
      }
      if (b["model"] == "pxb-pcie") {
        const xmlNode* target = kid(ctl, "target");
        if (target != nullptr && num(attr(target, "busNr")) == b["bus_nr"]) {
          EXPECT_EQ(num(content(kid(target, "node"))), b["numa_node"]) << id;
          found.push_back(idx);
        }
        continue;
      }
      const xmlNode* a = kid(ctl, "address");
      if (ctl_of.contains(b["bus"]) && num(attr(a, "bus")) == ctl_of.at(b["bus"]) &&
          num(attr(a, "slot")) == b["slot"] && num(attr(a, "function")) == 0) {
        found.push_back(idx);
      }
    }
    ASSERT_EQ(found.size(), 1U) << id << ": " << found.size() << " controllers match";
    ctl_of[id] = found.front();
  }

  const auto hostdevs = kids(devices, "hostdev");
  ASSERT_EQ(hostdevs.size(), plan["devices"].size());
  std::map<std::string, std::string> alias_of;  // host BDF (mdev UUID) -> alias
  for (const auto& d : plan["devices"]) {
    // A PCI function by its host address, an mdev by its UUID.
    const bool mdev = !d["mdev"].is_null();
    const std::string bdf = mdev ? d["mdev"] : d["host_bdf"];
    const xmlNode* h = nullptr;
    for (const xmlNode* cand : hostdevs) {
      const xmlNode* src = kid(kid(cand, "source"), "address");
      const auto field = [&](const char* name, int digits) {
        return to_hex(static_cast<std::uint64_t>(num(attr(src, name))), digits).substr(2);
      };
      if (mdev ? attr(src, "uuid") == bdf
               : attr(src, "uuid").empty() && bdf == field("domain", 4) + ":" + field("bus", 2) +
                                                         ":" + field("slot", 2) + "." +
                                                         field("function", 1)) {
        h = cand;
      }
    }
    ASSERT_NE(h, nullptr) << bdf;
    EXPECT_EQ(attr(h, "mode"), "subsystem");
    EXPECT_EQ(attr(h, "type"), mdev ? "mdev" : "pci");
    EXPECT_EQ(attr(h, "managed"), mdev ? "" : "no");
    EXPECT_EQ(attr(h, "model"), mdev ? "vfio-pci" : "");
    const xmlNode* a = kid(h, "address");
    ASSERT_NE(a, nullptr) << bdf;
    EXPECT_EQ(attr(a, "type"), "pci");
    EXPECT_EQ(num(attr(a, "bus")), ctl_of.at(d["bus"])) << bdf << " on " << d["bus"];
    EXPECT_EQ(num(attr(a, "slot")), d["slot"]) << bdf;
    EXPECT_EQ(num(attr(a, "function")), d["function"]) << bdf;
    const bool multi = d["function"] == 0 &&
                       std::count_if(plan["devices"].begin(), plan["devices"].end(),
                                     [&](const auto& o) { return o["bus"] == d["bus"]; }) > 1;
    EXPECT_EQ(attr(a, "multifunction"), multi ? "on" : "") << bdf;
    alias_of[bdf] = attr(kid(h, "alias"), "name");
    EXPECT_THAT(alias_of[bdf], ::testing::StartsWith("ua-"));
  }

  // NUMA: one cell per plan node, vCPUs numbered node by node, memory bound.
  const xmlNode* numa = kid(kid(domain, "cpu"), "numa");
  ASSERT_NE(numa, nullptr);
  const auto cells = kids(numa, "cell");
  const auto memnodes = kids(kid(domain, "numatune"), "memnode");
  ASSERT_EQ(cells.size(), plan["nodes"].size());
  ASSERT_EQ(memnodes.size(), plan["nodes"].size());
  int cpu = 0;
  int memory = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto& n = plan["nodes"][i];
    const int v = n["vcpus"];
    EXPECT_EQ(num(attr(cells[i], "id")), n["id"]);
    EXPECT_EQ(attr(cells[i], "cpus"), std::to_string(cpu) + "-" + std::to_string(cpu + v - 1));
    EXPECT_EQ(num(attr(cells[i], "memory")), n["memory_mib"]);
    EXPECT_EQ(attr(cells[i], "unit"), "MiB");
    EXPECT_EQ(num(attr(memnodes[i], "cellid")), n["id"]);
    EXPECT_EQ(attr(memnodes[i], "mode"), "strict");
    EXPECT_EQ(attr(memnodes[i], "nodeset"), std::to_string(n["host_node"].get<int>()));
    cpu += v;
    memory += n["memory_mib"].get<int>();
  }
  EXPECT_EQ(num(content(kid(domain, "vcpu"))), cpu);
  EXPECT_EQ(num(content(kid(domain, "memory"))), memory);
  // The plan's pins (by node where sysfs has the nodes' cpulists), and
  // QEMU's own threads on those nodes.
  const xmlNode* cputune = kid(domain, "cputune");
  if (plan["vcpu_pins"].empty()) {
    EXPECT_EQ(cputune, nullptr);
  } else {
    ASSERT_NE(cputune, nullptr);
    const auto pins = kids(cputune, "vcpupin");
    ASSERT_EQ(pins.size(), plan["vcpu_pins"].size());
    for (std::size_t i = 0; i < pins.size(); ++i) {
      EXPECT_EQ(num(attr(pins[i], "vcpu")), plan["vcpu_pins"][i]["vcpu"]);
      EXPECT_EQ(attr(pins[i], "cpuset"), plan["vcpu_pins"][i]["cpus"]);
    }
    EXPECT_EQ(attr(kid(cputune, "emulatorpin"), "cpuset"), plan["emulator_cpus"]);
  }

  // A q35 that boots as planned: ACPI on (libvirt turns it off when
  // <acpi/> is missing), OVMF with the plan's window, no huge pages unless
  // asked, each hostdev through the VFIO container.
  ASSERT_NE(kid(domain, "features"), nullptr);
  EXPECT_NE(kid(kid(domain, "features"), "acpi"), nullptr);
  EXPECT_EQ(attr(kid(domain, "os"), "firmware"), "efi");
  const xmlNode* entry = kid(kid(domain, "sysinfo"), "entry");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(attr(kid(domain, "sysinfo"), "type"), "fwcfg");
  EXPECT_EQ(attr(entry, "name"), "opt/ovmf/X-PciMmio64Mb");
  EXPECT_EQ(std::stoull(content(entry)), plan["mmio64"]["size"].get<std::uint64_t>() >> 20U);
  EXPECT_EQ(kid(domain, "memoryBacking"), nullptr);
  // VFIO for PCI hostdevs; an mdev's is its model, vfio-pci (above).
  for (const xmlNode* h : hostdevs) {
    if (attr(h, "type") == "pci") {
      EXPECT_EQ(attr(kid(h, "driver"), "name"), "vfio");
    }
  }

  // The plan's notes, as comments.
  const auto said = comments(domain);
  for (const auto& n : plan["notes"]) {
    const std::string note = n;
    EXPECT_TRUE(std::any_of(said.begin(), said.end(), [&](const std::string& s) {
      return s.find(note) != std::string::npos;
    })) << note;
  }

  // qemu:override: the clique on each GPU in it, by its hostdev's alias;
  // each root port's host link on that port's controller alias.
  std::map<std::string, std::map<std::string, std::string>> set;  // alias -> name -> type:value
  for (const xmlNode* o : kids(domain, "override")) {
    ASSERT_NE(o->ns, nullptr);
    EXPECT_EQ(reinterpret_cast<const char*>(o->ns->href), kLibvirtQemuNs);
    for (const xmlNode* dev : kids(o, "device")) {
      for (const xmlNode* p : kids(kid(dev, "frontend"), "property")) {
        set[attr(dev, "alias")][attr(p, "name")] = attr(p, "type") + ":" + attr(p, "value");
      }
    }
  }
  decltype(set) want;
  for (const auto& d : plan["devices"]) {
    if (!d["clique"].is_null()) {
      want[alias_of.at(d["host_bdf"])]["x-nv-gpudirect-clique"] =
          "unsigned:" + std::to_string(d["clique"].get<int>());
    }
  }
  for (const auto& b : plan["bridges"]) {
    if (b["model"] != "pcie-root-port" || (b["x_speed"].is_null() && b["x_width"].is_null())) {
      continue;
    }
    const xmlNode* port = by_index.at(ctl_of.at(b["id"]));
    const std::string alias = attr(kid(port, "alias"), "name");
    EXPECT_THAT(alias, ::testing::StartsWith("ua-")) << b["id"];
    if (!b["x_speed"].is_null()) {
      want[alias]["x-speed"] = "string:" + b["x_speed"].get<std::string>();
    }
    if (!b["x_width"].is_null()) {
      want[alias]["x-width"] = "string:" + std::to_string(b["x_width"].get<int>());
    }
  }
  EXPECT_EQ(set, want);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LibvirtPlan, ::testing::ValuesIn(kCases), case_name);

// A multifunction device keeps its functions in one guest slot, function 0
// saying multifunction="on" as libvirt requires.
TEST(Libvirt, MultifunctionSlot) {
  const lx::Doc doc = lx::Doc::parse(run_plan(kCases[2], {"format", "libvirt"}));
  const auto hostdevs = kids(kid(doc.root().get(), "devices"), "hostdev");
  ASSERT_EQ(hostdevs.size(), 2U);
  const xmlNode* f0 = kid(hostdevs[0], "address");
  const xmlNode* f1 = kid(hostdevs[1], "address");
  EXPECT_EQ(attr(f0, "bus"), attr(f1, "bus"));
  EXPECT_EQ(attr(f0, "slot"), attr(f1, "slot"));
  EXPECT_EQ(attr(f0, "function"), "0x0");
  EXPECT_EQ(attr(f1, "function"), "0x1");
  EXPECT_EQ(attr(f0, "multifunction"), "on");
  EXPECT_EQ(attr(f1, "multifunction"), "");
}

// Two nodes with known host CPUs, an expander and a root port each, the
// bridges listed out of order.
VmPlan two_node_plan() {
  VmPlan p;
  p.nodes = {{.id = 0, .host_node = 0, .vcpus = 2, .memory_mib = 512, .host_cpus = "0-3"},
             {.id = 1, .host_node = 2, .vcpus = 2, .memory_mib = 512, .host_cpus = "8-11,24"}};
  p.bridges = {
      {.id = "rp1", .model = "pcie-root-port", .bus = "pxb1", .host = "0000:80:01.0", .slot = 0},
      {.id = "pxb1",
       .model = "pxb-pcie",
       .bus = "pcie.0",
       .host = "pci0000:80",
       .bus_nr = 0x40,
       .numa_node = 1},
      {.id = "pxb0",
       .model = "pxb-pcie",
       .bus = "pcie.0",
       .host = "pci0000:00",
       .bus_nr = 0x20,
       .numa_node = 0},
      {.id = "rp0", .model = "pcie-root-port", .bus = "pxb0", .host = "0000:00:01.0", .slot = 0},
  };
  p.devices = {{.name = "gpu0",
                .host_bdf = "0000:01:00.0",
                .mdev = "",
                .bus = "rp0",
                .slot = 0,
                .function = 0,
                .multifunction = false,
                .guest_bdf = "0000:21:00.0",
                .guest_node = 0,
                .clique = std::nullopt},
               {.name = "gpu1",
                .host_bdf = "0000:81:00.0",
                .mdev = "",
                .bus = "rp1",
                .slot = 0,
                .function = 0,
                .multifunction = false,
                .guest_bdf = "0000:41:00.0",
                .guest_node = 1,
                .clique = std::nullopt}};
  return p;
}

// Host CPUs known: every guest vCPU pinned to its node's host CPUs; one
// node's unknown: none pinned.  Bridges listed out of order still number
// parents first and expanders by busNr.
TEST(Libvirt, PinsEachVcpuToItsNodesCpus) {
  VmPlan p = two_node_plan();
  pin_threads(p);
  EXPECT_EQ(libvirt_controller_indexes(p),
            (std::map<std::string, int>{{"pxb0", 1}, {"rp0", 2}, {"pxb1", 3}, {"rp1", 4}}));

  const lx::Doc doc = lx::Doc::parse(libvirt_xml(p));
  const xmlNode* cputune = kid(doc.root().get(), "cputune");
  ASSERT_NE(cputune, nullptr);
  std::vector<std::pair<std::string, std::string>> pins;
  for (const xmlNode* pin : kids(cputune, "vcpupin")) {
    pins.emplace_back(attr(pin, "vcpu"), attr(pin, "cpuset"));
  }
  EXPECT_EQ(pins, (std::vector<std::pair<std::string, std::string>>{
                      {"0", "0-3"}, {"1", "0-3"}, {"2", "8-11,24"}, {"3", "8-11,24"}}));
  // QEMU's own threads on the same nodes.
  EXPECT_EQ(attr(kid(cputune, "emulatorpin"), "cpuset"), "0-3,8-11,24");
  EXPECT_EQ(attr(kid(kid(doc.root().get(), "numatune"), "memory"), "nodeset"), "0,2");
  EXPECT_TRUE(valid_domain(completed(libvirt_xml(p)), "pinned"));

  p.nodes[1].host_cpus.clear();
  pin_threads(p);
  EXPECT_EQ(kid(lx::Doc::parse(libvirt_xml(p)).root().get(), "cputune"), nullptr);
}

// 1:1: each vCPU on a host CPU of its own, in the node's cpulist order;
// QEMU's threads on the nodes' CPUs the vCPUs leave.
TEST(Libvirt, PinsVcpusOneToOne) {
  VmPlan p = two_node_plan();
  p.pin = Pinning::vcpu;
  pin_threads(p);
  const lx::Doc doc = lx::Doc::parse(libvirt_xml(p));
  const xmlNode* cputune = kid(doc.root().get(), "cputune");
  ASSERT_NE(cputune, nullptr);
  std::vector<std::string> cpus;
  for (const xmlNode* pin : kids(cputune, "vcpupin")) {
    cpus.push_back(attr(pin, "cpuset"));
  }
  EXPECT_EQ(cpus, (std::vector<std::string>{"0", "1", "8", "9"}));
  EXPECT_EQ(attr(kid(cputune, "emulatorpin"), "cpuset"), "2-3,10-11,24");
  EXPECT_TRUE(valid_domain(completed(libvirt_xml(p)), "one-to-one"));

  // Two vCPUs and QEMU do not fit on two host CPUs.
  p.nodes[0].host_cpus = "4-5";
  EXPECT_THAT([&] { pin_threads(p); },
              ::testing::ThrowsMessage<OpError>(HasSubstr("host node 0 has 2 CPUs for 2 vCPUs")));

  // No pinning asked for: none, and no comment that the CPUs are unknown.
  p.pin = Pinning::none;
  pin_threads(p);
  const lx::Doc free = lx::Doc::parse(libvirt_xml(p));
  EXPECT_EQ(kid(free.root().get(), "cputune"), nullptr);
  EXPECT_THAT(comments(free.root().get()), ::testing::Each(::testing::Not(HasSubstr("cputune"))));
}

// A note holding what an XML comment cannot ("--", a final "-") still
// leaves the document well-formed.
TEST(Libvirt, NotesStayWellFormedComments) {
  VmPlan p = two_node_plan();
  p.notes = {"use --force -"};
  EXPECT_THAT(comments(lx::Doc::parse(libvirt_xml(p)).root().get()),
              ::testing::Contains(HasSubstr("use - -force -")));
}

// -j keeps one JSON document and carries the XML as a string.
TEST(Libvirt, JsonCarriesTheXml) {
  const auto j = nlohmann::json::parse(run_plan(kCases[0], {"format", "libvirt"}, true));
  EXPECT_EQ(j["libvirt"], run_plan(kCases[0], {"format", "libvirt"}));
  EXPECT_TRUE(j.contains("bridges"));
  EXPECT_FALSE(nlohmann::json::parse(run_plan(kCases[0], {}, true)).contains("libvirt"));
}

TEST(Libvirt, UnknownFormatNamesLibvirt) {
  const auto r =
      run_cli({"vm", "plan", "gpu0", "format", "xml", "--sysfs-root", testdata("emulated-vm/sys")});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("qemu, json or libvirt"));
}

// The validator itself rejects what libvirt would: otherwise the tests
// above prove nothing.
TEST(Libvirt, VirtXmlValidateRejectsABadController) {
  lx::Doc doc = completed(run_plan(kCases[2], {"format", "libvirt"}));
  xmlNode* devices = const_cast<xmlNode*>(kid(doc.root().get(), "devices"));
  lx::Element(devices)
      .child("controller")
      .attr("type", "pci")
      .attr("index", 9)
      .attr("model", "pcie-bogus-port");
  EXPECT_FALSE(valid_domain(doc, "bogus"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
