// `kvmaictl vm nccl-topo`: the file must be one NCCL accepts (the rules
// NCCL's src/graph/xml.cc and topo.cc apply when they load NCCL_TOPO_FILE)
// and must say what the plan says: each GPU and NIC once, by its guest bus
// id, below the guest bridges of its plan chain, under its guest node.
#include "vm/nccl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libxml/tree.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "common/sysfs.h"
#include "model/pci_tree.h"
#include "model/topology.h"
#include "testing/libxml2.h"
#include "testing/run.h"
#include "vm/plan.h"

namespace kvmai::kvmaictl {
namespace {

namespace lx = kvmai::kvmaictl::testing::lx;

using ::testing::HasSubstr;
using testing::matches_golden;
using testing::run_cli;
using testing::testdata;

const Args kEightGpus{"gpu0",      "gpu1",      "gpu2",  "gpu3", "gpu4",      "gpu5",
                      "gpu6",      "gpu7",      "nic2",  "nic3", "nic4",      "nic5",
                      "nic6",      "nic7",      "nic8",  "nic9", "nvswitch0", "nvswitch1",
                      "nvswitch2", "nvswitch3", "vcpus", "16",   "memory",    "65536"};

std::string run(const std::string& cmd, const std::string& fixture, Args devs, bool json = false) {
  Args args;
  if (json) {
    args.emplace_back("-j");
  }
  args.insert(args.end(), {"vm", cmd});
  args.insert(args.end(), devs.begin(), devs.end());
  args.insert(args.end(), {"--sysfs-root", testdata(fixture + "/sys")});
  // The emulated host's ACS switches are host bridges, and it says so.
  if (fixture.starts_with("emulated")) {
    args.emplace_back("--host-bridge-switches");
  }
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.out;
}

std::vector<const xmlNode*> elements(const xmlNode* parent) {
  std::vector<const xmlNode*> v;
  for (const xmlNode* c = parent->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE) {
      v.push_back(c);
    }
  }
  return v;
}

std::string name(const xmlNode* n) {
  return reinterpret_cast<const char*>(n->name);
}

// Every <pci> leaf: busid -> the busids of the <pci> elements above it
// (top first) and the numaid of its <cpu>.
struct Leaf {
  std::vector<std::string> bridges;
  std::string numaid;
  std::string cls;
};

void collect(const xmlNode* n, std::vector<std::string>& path, const std::string& numaid,
             std::multimap<std::string, Leaf>& leaves) {
  for (const xmlNode* c : elements(n)) {
    const auto kids = elements(c);
    if (kids.empty()) {
      leaves.emplace(lx::attr(c, "busid"), Leaf{path, numaid, lx::attr(c, "class")});
      continue;
    }
    path.push_back(lx::attr(c, "busid"));
    collect(c, path, numaid, leaves);
    path.pop_back();
  }
}

// NCCL's rules for a file it loads.  Its parser (xmlGetNode/xmlGetToken
// in src/graph/xml.cc) is not a general XML parser: it skips only spaces
// and newlines between elements (no tabs), stops at the "?" of an
// <?xml ...?> declaration, and reads attributes as key="value" separated
// by single spaces: a space before "/>" starts one more attribute, with an
// empty name, and NCCL's own dump of the topology is then no XML at all.
// So first the text, line by line, then the document.
void expect_nccl_accepts(const std::string& text) {
  EXPECT_EQ(text.find("<?"), std::string::npos) << "a declaration NCCL cannot parse";
  EXPECT_EQ(text.find('\t'), std::string::npos);
  const std::regex line_re(R"( *<(/[a-z]+|[a-z]+( [a-z_]+="[^"]*")*/?)>)");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(std::regex_match(line, line_re)) << "NCCL's parser: \"" << line << "\"";
  }
  const auto doc = lx::Doc::parse(text);
  const xmlNode* system = xmlDocGetRootElement(doc.get());
  ASSERT_EQ(name(system), "system");
  EXPECT_EQ(lx::attr(system, "version"), "1");  // any other version is refused
  // NCCL's spellings of the PCIe generations (its kvDictPciGen, by prefix).
  const std::regex speed(R"((2\.5|5\.0|8\.0|16\.0|32\.0|64\.0) GT/s PCIe)");
  const std::regex bdf(R"([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])");
  for (const xmlNode* cpu : elements(system)) {
    ASSERT_EQ(name(cpu), "cpu");
    EXPECT_THAT(lx::attr(cpu, "numaid"), ::testing::MatchesRegex("[0-9]+"));
    std::vector<const xmlNode*> todo = elements(cpu);
    while (!todo.empty()) {
      const xmlNode* pci = todo.back();
      todo.pop_back();
      ASSERT_EQ(name(pci), "pci");
      const std::string busid = lx::attr(pci, "busid");
      EXPECT_TRUE(std::regex_match(busid, bdf)) << busid;
      const auto kids = elements(pci);
      if (!kids.empty()) {
        EXPECT_EQ(lx::attr(pci, "class"), "0x060400") << busid;  // a bridge
      } else {
        EXPECT_THAT(lx::attr(pci, "class"), ::testing::MatchesRegex("0x0[23][0-9a-f]{4}")) << busid;
      }
      const std::string s = lx::attr(pci, "link_speed");
      EXPECT_TRUE(s.empty() || std::regex_match(s, speed)) << busid << ": " << s;
      const std::string w = lx::attr(pci, "link_width");
      EXPECT_TRUE(w.empty() || std::regex_match(w, std::regex("[0-9]+"))) << busid << ": " << w;
      todo.insert(todo.end(), kids.begin(), kids.end());
    }
  }
}

// What the plan says for each device: its guest BDF, NCCL's parents for it
// (every second guest bridge up from the device, below its expander: the
// upstream ports of the switches it sits in; top first), its guest node,
// and the expander it sits below.
struct Want {
  Leaf leaf;
  std::string pxb;
};

std::map<std::string, Want> expected(const nlohmann::json& plan) {
  std::map<std::string, nlohmann::json> bridge;
  for (const auto& b : plan["bridges"]) {
    bridge[b["id"]] = b;
  }
  std::map<std::string, Want> want;
  for (const auto& d : plan["devices"]) {
    Want w;
    w.leaf.numaid = std::to_string(d["guest_node"].get<int>());
    std::vector<std::string> path;  // device side first
    for (std::string id = d["bus"];; id = bridge[id]["bus"]) {
      const auto& b = bridge[id];
      if (b["model"] == "pxb-pcie") {
        w.pxb = id;
        break;
      }
      const auto& parent = bridge[b["bus"].get<std::string>()];
      path.push_back(
          format_bdf(0, parent["secondary"].get<unsigned>(), b["slot"].get<unsigned>(), 0));
    }
    for (std::size_t i = 1; i < path.size(); i += 2) {
      w.leaf.bridges.insert(w.leaf.bridges.begin(), path[i]);
    }
    want[d["guest_bdf"]] = w;
  }
  return want;
}

bool synthetic(const std::string& busid) {
  return busid.starts_with("ffff:");
}

// @synthetic_switches: whether the fixture's expanders stand for switches,
// so that the devices below one expander share one synthetic bridge.
void expect_matches_plan(const std::string& fixture, const Args& devs, std::size_t leaves,
                         bool synthetic_switches) {
  const std::string text = run("nccl-topo", fixture, devs);
  expect_nccl_accepts(text);
  const auto plan = nlohmann::json::parse(run("plan", fixture, devs, true));
  const auto want = expected(plan);
  const auto doc = lx::Doc::parse(text);
  std::multimap<std::string, Leaf> got;
  for (const xmlNode* cpu : elements(xmlDocGetRootElement(doc.get()))) {
    std::vector<std::string> path;
    collect(cpu, path, lx::attr(cpu, "numaid"), got);
  }
  EXPECT_EQ(got.size(), leaves);
  std::map<std::string, std::string> switch_of_pxb;  // expander -> its synthetic bridge
  for (const auto& [busid, leaf] : got) {
    EXPECT_EQ(got.count(busid), 1U) << busid << " named twice";
    ASSERT_TRUE(want.contains(busid)) << busid << " is no planned device";
    const Want& w = want.at(busid);
    std::vector<std::string> real;
    std::vector<std::string> fake;
    for (const auto& b : leaf.bridges) {
      (synthetic(b) ? fake : real).push_back(b);
    }
    EXPECT_EQ(real, w.leaf.bridges) << busid;
    EXPECT_EQ(leaf.numaid, w.leaf.numaid) << busid;
    ASSERT_EQ(fake.size(), synthetic_switches ? 1U : 0U) << busid;
    if (synthetic_switches) {
      EXPECT_EQ(leaf.bridges.front(), fake.front()) << busid << ": outermost";
      const auto [it, fresh] = switch_of_pxb.emplace(w.pxb, fake.front());
      EXPECT_EQ(it->second, fake.front()) << busid << " is below " << w.pxb;
    }
  }
  // One synthetic bridge per expander, not shared between expanders.
  std::set<std::string> distinct;
  for (const auto& [pxb, sw] : switch_of_pxb) {
    EXPECT_TRUE(distinct.insert(sw).second) << sw << " stands for two expanders";
  }
}

TEST(NcclTopo, EightGpusOnTheHgxHostFollowThePlan) {
  expect_matches_plan("hgx-vm", kEightGpus, 16, false);
}

TEST(NcclTopo, TwoNodesOnTheEmulatedHostFollowThePlan) {
  expect_matches_plan("emulated-vm", {"gpu0", "nic0", "gpu1", "nic1", "vcpus", "4"}, 4, true);
}

// A multifunction GPU: its audio function (class 0x0403) is assigned but
// NCCL has no use for it, so only the GPU is named.
TEST(NcclTopo, OtherClassesAreLeftOut) {
  const std::string text = run("nccl-topo", "multifunction", {"gpu0", "3d:00.1"});
  expect_nccl_accepts(text);
  EXPECT_THAT(text, HasSubstr("busid=\"0000:23:00.0\" class=\"0x030200\""));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("0000:23:00.1")));
}

// The host's link speeds, not QEMU's 2.5 GT/s x1 switch ports.
TEST(NcclTopo, LinksAreTheHosts) {
  const std::string text = run("nccl-topo", "hgx-vm", {"gpu0", "nic2"});
  EXPECT_THAT(text, HasSubstr("link_speed=\"32.0 GT/s PCIe\" link_width=\"16\""));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("2.5 GT/s")));
}

// NCCL knows a switch by the ids of its <pci> element, vendor, device and
// subsystem vendor and device as one 64-bit number, and flattens the two
// levels of a Broadcom PEX switch by them (ncclTopoFlattenBcmSwitches).
// QEMU's ports have ids of their own (Red Hat's, TI's), so each mirrored
// switch must carry the ids of the host port it stands for.
TEST(NcclTopo, SwitchesCarryTheHostPortsIds) {
  const FsReader sys(testdata("hgx-vm/sys"));
  const Topology topo(PciTree::read(sys, {}));
  PlanRequest req{.devices = {}, .vcpus = 16, .memory_mib = 65536, .hugepages = {}};
  for (const auto& a : kEightGpus) {
    if (a == "vcpus") {
      break;
    }
    req.devices.push_back(a);
  }
  const VmPlan plan = plan_vm(topo, sys, req);
  const std::string text = nccl_topology_xml(plan, topo.tree());
  const auto doc = lx::Doc::parse(text);
  std::map<std::string, const xmlNode*> switches;  // guest busid -> element
  std::vector<const xmlNode*> todo = elements(xmlDocGetRootElement(doc.get()));
  while (!todo.empty()) {
    const xmlNode* n = todo.back();
    todo.pop_back();
    const auto kids = elements(n);
    if (name(n) == "pci" && !kids.empty() && !lx::attr(n, "busid").starts_with("ffff:")) {
      switches[lx::attr(n, "busid")] = n;
    }
    todo.insert(todo.end(), kids.begin(), kids.end());
  }
  auto id = [](const xmlNode* n) {
    std::uint64_t v = 0;
    for (const char* a : {"vendor", "device", "subsystem_vendor", "subsystem_device"}) {
      v = (v << 16U) | std::stoull(lx::attr(n, a), nullptr, 16);
    }
    return v;
  };
  std::size_t seen = 0;
  for (const auto& b : plan.bridges) {
    const auto it = switches.find(b.guest_bdf);
    if (b.guest_bdf.empty() || it == switches.end()) {
      continue;
    }
    const PciDevice* h = topo.tree().find(b.host);
    ASSERT_NE(h, nullptr) << b.host;
    const std::uint64_t want = (std::uint64_t{h->vendor} << 48U) |
                               (std::uint64_t{h->device} << 32U) |
                               (std::uint64_t{h->subsystem_vendor} << 16U) | h->subsystem_device;
    EXPECT_EQ(id(it->second), want) << b.guest_bdf << " stands for host " << b.host;
    ++seen;
  }
  EXPECT_EQ(seen, switches.size()) << "a switch in the file that the plan does not mirror";
  EXPECT_GE(seen, 4U);
}

// NCCL's own path type between two devices of its file, as src/graph/
// paths.cc derives it from the nodes a path crosses: SYS between <cpu>s,
// PHB when only their <cpu> joins them, PIX through one switch (<pci>
// bridge), PXB through several.  Before that, as ncclTopoFlattenBcmSwitches
// does, the second level of a Broadcom PEX switch (Gen4: ids 1000:c010
// 1000:a0xx; Gen5: 1000:c030 1000:0xxx above 1000:c030 1000:1xxx) folds
// into the first.  NCCL has no NODE: two host bridges of one CPU are PHB
// to it.  Every GPU-NIC pair of the file must get the type NCCL gives the
// same pair on the host.
int bcm_gen(std::uint64_t id, unsigned level) {
  const std::uint64_t top = id & ~std::uint64_t{0xfff};
  if (top == 0x1000c0101000a000ULL) {
    return 4;
  }
  return top == (0x1000c03010000000ULL | (std::uint64_t{level} << 12U)) ? 5 : 0;
}

TEST(NcclTopo, EveryPairHasTheHostsPathTypeByNcclsRules) {
  const std::string text = run("nccl-topo", "hgx-vm", kEightGpus);
  const auto doc = lx::Doc::parse(text);
  std::map<std::string, std::uint64_t> id_of;  // bridge busid -> NCCL's 64-bit id
  struct Node {
    std::vector<std::string> bridges;  // top first
    std::string numaid;
  };
  std::map<std::string, Node> leaf;
  std::function<void(const xmlNode*, std::vector<std::string>&, const std::string&)> walk =
      [&](const xmlNode* n, std::vector<std::string>& up, const std::string& numaid) {
        for (const xmlNode* c : elements(n)) {
          const std::string busid = lx::attr(c, "busid");
          if (elements(c).empty()) {
            leaf[busid] = {up, numaid};
            continue;
          }
          std::uint64_t v = 0;
          for (const char* a : {"vendor", "device", "subsystem_vendor", "subsystem_device"}) {
            const std::string x = lx::attr(c, a);
            v = (v << 16U) | (x.empty() ? 0 : std::stoull(x, nullptr, 16));
          }
          id_of[busid] = v;
          up.push_back(busid);
          walk(c, up, numaid);
          up.pop_back();
        }
      };
  for (const xmlNode* cpu : elements(xmlDocGetRootElement(doc.get()))) {
    std::vector<std::string> up;
    walk(cpu, up, lx::attr(cpu, "numaid"));
  }
  for (auto& [busid, l] : leaf) {
    for (std::size_t k = l.bridges.size(); k-- > 1;) {
      const int gen = bcm_gen(id_of[l.bridges[k - 1]], 0);
      if (gen != 0 && bcm_gen(id_of[l.bridges[k]], 1) == gen) {
        l.bridges.erase(l.bridges.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
  }
  auto nccl_type = [](const Node& a, const Node& b) -> std::string {
    if (a.numaid != b.numaid) {
      return "SYS";
    }
    const auto [ia, ib] =
        std::mismatch(a.bridges.begin(), a.bridges.end(), b.bridges.begin(), b.bridges.end());
    if (ia == a.bridges.begin()) {
      return "PHB";
    }
    const auto crossed = (a.bridges.end() - ia) + (b.bridges.end() - ib) + 1;
    return crossed == 1 ? "PIX" : "PXB";
  };

  const auto plan = nlohmann::json::parse(run("plan", "hgx-vm", kEightGpus, true));
  std::map<std::string, std::string> guest_bdf;  // host name -> guest bus id
  for (const auto& d : plan["devices"]) {
    guest_bdf[d["name"]] = d["guest_bdf"];
  }
  const auto topo =
      nlohmann::json::parse(run_cli({"-j", "topo", "--sysfs-root", testdata("hgx-vm/sys")}).out);
  int pairs = 0;
  for (const auto& p : topo["pairs"]) {
    const auto g = guest_bdf.find(p["gpu"]);
    const auto n = guest_bdf.find(p["nic"]);
    if (g == guest_bdf.end() || n == guest_bdf.end()) {
      continue;
    }
    ASSERT_TRUE(leaf.contains(g->second) && leaf.contains(n->second)) << g->second << n->second;
    const std::string host = p["path"] == "NODE" ? "PHB" : p["path"].get<std::string>();
    EXPECT_EQ(nccl_type(leaf[g->second], leaf[n->second]), host) << p["gpu"] << "-" << p["nic"];
    ++pairs;
  }
  EXPECT_EQ(pairs, 64);  // 8 GPUs x 8 NICs
}

TEST(NcclTopo, MatchesGolden) {
  std::string note;
  EXPECT_TRUE(matches_golden("hgx-vm.nccl-topo.xml", run("nccl-topo", "hgx-vm", kEightGpus), &note))
      << note;
}

TEST(NcclTopo, RefusalsAreThePlans) {
  const auto r = run_cli({"vm", "nccl-topo", "gpu9", "--sysfs-root", testdata("hgx-vm/sys")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("no device \"gpu9\""));
}

}  // namespace
}  // namespace kvmai::kvmaictl
