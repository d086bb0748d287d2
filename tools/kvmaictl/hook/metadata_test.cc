// The domain XML as the hook reads it, and kvm-ai's metadata against its
// RELAX NG schema (Documentation/admin-guide/kvmai/kvmai-libvirt.rng):
// the examples of libvirt.rst and what `vm plan ... group NAME` writes
// must pass both xmllint and the hook, and what the schema refuses the
// hook refuses too.
#include "hook/metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libxml/tree.h>
#include <linux/kvmai.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/sysfs.h"
#include "testing/hook.h"
#include "testing/libxml2.h"
#include "testing/run.h"
#include "vm/libvirt.h"

namespace kvmai::kvmaictl::hook {
namespace {

namespace lx = kvmai::kvmaictl::testing::lx;
using kvmai::kvmaictl::testing::domain_xml;
using kvmai::kvmaictl::testing::kvmai_vm;
using kvmai::kvmaictl::testing::TempDir;
using kvmai::kvmaictl::testing::write_host_topology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A host with these PCI functions in its sysfs.
class FakeSys {
 public:
  explicit FakeSys(const std::vector<std::string>& bdfs) {
    for (const auto& b : bdfs) {
      dir_.write("bus/pci/devices/" + b + "/vendor", "0x15b3\n");
    }
    write_host_topology(dir_, "");
  }
  const TreeReader& reader() const { return reader_; }

 private:
  TempDir dir_{"sys"};
  FsReader reader_{dir_.path()};
};

// ---- parsing -----------------------------------------------------------------

TEST(Metadata, ExplicitDevices) {
  const std::string xml =
      domain_xml("vm1", {"0000:11:00.0", "0000:13:00.0"},
                 kvmai_vm("      <kvmai:group name='g1' mode='direct'>\n"
                          "        <kvmai:device address='0000:11:00.0'/>\n"
                          "        <kvmai:device address='13:00.0'/>\n"
                          "      </kvmai:group>\n"
                          "      <kvmai:pmu core='yes' shared='yes'>\n"
                          "        <kvmai:unit name='amd_l3'/><kvmai:unit name='amd_df'/>\n"
                          "      </kvmai:pmu>\n"));
  const DomainXml d = parse_domain_xml(xml);
  EXPECT_EQ(d.name, "vm1");
  EXPECT_THAT(d.pci_devices, ElementsAre("0000:11:00.0", "0000:13:00.0"));
  ASSERT_TRUE(d.kvmai.present);
  EXPECT_TRUE(d.kvmai.problems.empty());
  ASSERT_EQ(d.kvmai.groups.size(), 1U);
  EXPECT_EQ(d.kvmai.groups[0].name, "g1");
  EXPECT_THAT(d.kvmai.groups[0].devices, ElementsAre("0000:11:00.0", "13:00.0"));

  const FakeSys sys({"0000:11:00.0", "0000:13:00.0"});
  const DomainPlan p =
      plan_domain("vm1", d, sys.reader(),
                  {.path = "hook.conf", .pmu_shared = {"vm1"}, .partition_parents = {}});
  EXPECT_EQ(p.vm, "vm1");
  ASSERT_EQ(p.groups.size(), 1U);
  EXPECT_EQ(p.groups[0].mode, KVMAI_MODE_DIRECT);
  EXPECT_THAT(p.groups[0].devices, ElementsAre("0000:11:00.0", "0000:13:00.0"));
  ASSERT_TRUE(p.pmu);
  EXPECT_TRUE(p.pmu->core);
  EXPECT_TRUE(p.pmu->shared);     // the host's configuration says so
  EXPECT_EQ(p.pmu->cpus, "0-3");  // domain_xml()'s <vcpu cpuset>
  EXPECT_THAT(p.pmu->units, ElementsAre("amd_l3", "amd_df"));
}

// Every PCI function the domain is given, VFs given as NICs included;
// not USB or mediated devices, not a device's guest address.
TEST(Metadata, FromHostdevs) {
  const std::string more =
      "    <interface type='hostdev' managed='yes'>\n"
      "      <mac address='52:54:00:6d:90:02'/>\n"
      "      <source><address type='pci' domain='0' bus='0x3b' slot='0x02' function='3'/>"
      "</source>\n"
      "      <address type='pci' domain='0x0000' bus='0x07' slot='0x00' function='0x0'/>\n"
      "    </interface>\n"
      "    <interface type='network'><source network='default'/></interface>\n"
      "    <hostdev mode='subsystem' type='usb'><source><vendor id='0x1234'/>"
      "<product id='0xbeef'/></source></hostdev>\n"
      "    <hostdev mode='subsystem' type='mdev' model='vfio-pci'><source>"
      "<address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source></hostdev>\n"
      "    <hostdev mode='subsystem' type='pci'><source>"
      "<address domain='0x0001' bus='017' slot='0x1f' function='0x7'/></source>"
      "<address type='pci' domain='0x0000' bus='0x08' slot='0x00' function='0x0'/></hostdev>\n";
  const std::string xml =
      domain_xml("vm1", {"0000:11:00.0"}, kvmai_vm("      <kvmai:group from='hostdevs'/>\n"), more);
  const DomainXml d = parse_domain_xml(xml);
  // bus='017' is octal, as libvirt reads numbers (strtol base 0).
  EXPECT_THAT(d.pci_devices, ElementsAre("0000:11:00.0", "0000:3b:02.3", "0001:0f:1f.7"));
  const FakeSys sys(d.pci_devices);
  const DomainPlan p = plan_domain("vm1", d, sys.reader());
  ASSERT_EQ(p.groups.size(), 1U);
  EXPECT_EQ(p.groups[0].name, "vm1");  // the domain's name
  EXPECT_EQ(p.groups[0].mode, KVMAI_MODE_TRANSLATED);
  EXPECT_EQ(p.groups[0].devices, d.pci_devices);
  EXPECT_FALSE(p.pmu);
}

// Where the vCPUs may run, and the mediated devices, as libvirt writes
// them; whether that is enough for units is plan_domain's (hook_test.cc).
TEST(Metadata, VcpusAndMdevs) {
  const std::string mdev =
      "    <hostdev mode='subsystem' type='mdev' model='vfio-pci'><source>"
      "<address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source></hostdev>\n"
      "    <hostdev mode='subsystem' type='mdev' model='vfio-ccw'><source>"
      "<address uuid='8d6ece3b-212c-4304-8f5a-d0b7974a09f9'/></source></hostdev>\n";
  DomainXml d = parse_domain_xml(
      domain_xml("vm1", {"0000:11:00.0"}, "", mdev,
                 "  <vcpu placement='static' cpuset='1-2'>\n    4\n  </vcpu>\n"
                 "  <cputune><vcpupin vcpu='0' cpuset='0'/><vcpupin vcpu='0x3' cpuset='5-6'/>"
                 "<emulatorpin cpuset='7'/></cputune>\n"));
  EXPECT_THAT(d.mdevs, ElementsAre("c2177883-f1bb-47f0-914d-32a22e3a8804",
                                   "8d6ece3b-212c-4304-8f5a-d0b7974a09f9"));
  EXPECT_EQ(d.vcpus.count, 4U);
  EXPECT_EQ(d.vcpus.cpuset, "1-2");
  EXPECT_EQ(d.vcpus.pins, (std::map<unsigned, std::string>{{0, "0"}, {3, "5-6"}}));

  // numad places the vCPUs: cpuset is ignored, as libvirt ignores it.
  d = parse_domain_xml(
      domain_xml("vm1", {}, "", "", "  <vcpu placement='auto' cpuset='1-2'>2</vcpu>\n"));
  EXPECT_EQ(d.vcpus.count, 2U);
  EXPECT_FALSE(d.vcpus.cpuset);
  // No <vcpu>: libvirt's one vCPU, free to run anywhere.
  d = parse_domain_xml(domain_xml("vm1", {}, "", "", ""));
  EXPECT_EQ(d.vcpus.count, 1U);
  EXPECT_FALSE(d.vcpus.cpuset);
  EXPECT_TRUE(d.vcpus.pins.empty());
}

TEST(Metadata, CpuSets) {
  using Set = std::set<unsigned>;
  EXPECT_EQ(parse_cpuset("0-3,^2,8"), (Set{0, 1, 3, 8}));
  EXPECT_EQ(parse_cpuset(" 1 , 4 - 5 "), (Set{1, 4, 5}));
  // In order: what an exclusion took out, a later item puts back.
  EXPECT_EQ(parse_cpuset("^2,0-3"), (Set{0, 1, 2, 3}));
  EXPECT_EQ(parse_cpuset("^0"), Set{});
  EXPECT_EQ(parse_cpuset("16383"), Set{16383});
  for (const std::string_view bad :
       {"", "a", "1,", ",1", "3-1", "1-", "-1", "^1-2", "0x1", "1 2", "16384", "0-99999999999"}) {
    EXPECT_FALSE(parse_cpuset(bad)) << bad;
  }
  EXPECT_EQ(cpu_list({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(cpu_list({5}), "5");
  EXPECT_EQ(cpu_list({}), "");
}

TEST(Metadata, NoneOfOurs) {
  EXPECT_FALSE(parse_domain_xml(domain_xml("vm1", {"0000:11:00.0"}, "")).kvmai.present);
  // Another program's metadata, and our prefix bound to another URI.
  const DomainXml d = parse_domain_xml(domain_xml(
      "vm1", {},
      "    <libosinfo:libosinfo xmlns:libosinfo='http://libosinfo.org/xmlns/libvirt/domain/1.0'>"
      "<libosinfo:os id='http://debian.org/debian/12'/></libosinfo:libosinfo>\n"
      "    <kvmai:vm xmlns:kvmai='https://example.org/not-kvm-ai'><kvmai:group/></kvmai:vm>\n"));
  EXPECT_FALSE(d.kvmai.present);
}

// libvirt keeps the prefix a domain was written with: the namespace is
// what counts.
TEST(Metadata, AnyPrefixOrDefaultNamespace) {
  for (const std::string& m : {std::string("    <k:vm xmlns:k='https://kvm-ai.dev/xmlns/libvirt/1'>"
                                           "<k:group name='g' from='hostdevs'/></k:vm>\n"),
                               std::string("    <vm xmlns='https://kvm-ai.dev/xmlns/libvirt/1'>"
                                           "<group name='g' from='hostdevs'/></vm>\n")}) {
    const DomainXml d = parse_domain_xml(domain_xml("vm1", {"0000:11:00.0", "0000:13:00.0"}, m));
    ASSERT_TRUE(d.kvmai.present) << m;
    EXPECT_TRUE(d.kvmai.problems.empty()) << d.kvmai.problems.front();
    ASSERT_EQ(d.kvmai.groups.size(), 1U);
    EXPECT_EQ(d.kvmai.groups[0].from, "hostdevs");
  }
}

TEST(Metadata, ProblemsAreCollected) {
  const DomainXml d = parse_domain_xml(
      domain_xml("vm1", {},
                 "    <kvmai:vm xmlns:kvmai='https://kvm-ai.dev/xmlns/libvirt/1' extra='1'>text"
                 "<kvmai:group><kvmai:device/><other/></kvmai:group>"
                 "<kvmai:pmu/><kvmai:pmu/></kvmai:vm>\n"
                 "    <kvmai:group xmlns:kvmai='https://kvm-ai.dev/xmlns/libvirt/1'/>\n"));
  EXPECT_TRUE(d.kvmai.present);
  EXPECT_THAT(d.kvmai.problems,
              ElementsAre("<kvmai:vm> has no attribute extra", "<kvmai:vm> holds text",
                          "<kvmai:device> without address or mdev",
                          "unknown element <other> in <kvmai:group>", "more than one <kvmai:pmu>",
                          "unknown element <kvmai:group> in <metadata> (want <kvmai:vm>)"));
}

TEST(Metadata, NotADomain) {
  EXPECT_THROW(parse_domain_xml(""), HookError);
  EXPECT_THROW(parse_domain_xml("<domain><name>vm1</domain>"), HookError);
  try {
    parse_domain_xml("<network><name>default</name></network>");
    FAIL();
  } catch (const HookError& e) {
    EXPECT_STREQ(e.what(), "standard input holds <network>, not a <domain>");
  }
}

TEST(Metadata, TheXmlsNameMustBeLibvirtsArgument) {
  const DomainXml d =
      parse_domain_xml(domain_xml("vm2", {}, kvmai_vm("      <kvmai:pmu core='yes'/>\n")));
  const FakeSys sys({});
  try {
    plan_domain("vm1", d, sys.reader());
    FAIL();
  } catch (const HookError& e) {
    EXPECT_STREQ(e.what(), "the domain XML is for \"vm2\", not \"vm1\"");
  }
}

// ---- the schema ------------------------------------------------------------------

const std::string kSchema = std::string(KVMAICTL_DOCS) + "/admin-guide/kvmai/kvmai-libvirt.rng";

// The first element in kvm-ai's namespace named `local`, depth first.
xmlNode* find_ours(xmlNode* n, std::string_view local) {
  for (; n != nullptr; n = n->next) {
    if (n->type == XML_ELEMENT_NODE && n->ns != nullptr &&
        reinterpret_cast<const char*>(n->ns->href) == kKvmaiLibvirtNs &&
        local == reinterpret_cast<const char*>(n->name)) {
      return n;
    }
    if (xmlNode* found = find_ours(n->children, local)) {
      return found;
    }
  }
  return nullptr;
}

// The <kvmai:vm> of `xml` as a document of its own, its namespace
// declarations carried along.
std::string vm_element(const std::string& xml) {
  const lx::Doc doc = lx::Doc::parse(xml);
  xmlNode* vm = find_ours(doc.root().get(), "vm");
  if (vm == nullptr) {
    throw std::runtime_error("no <kvmai:vm> in:\n" + xml);
  }
  const std::unique_ptr<xmlDoc, lx::DocFree> out(xmlNewDoc(lx::x("1.0")));
  xmlNode* copy = xmlDocCopyNode(vm, out.get(), 1);
  xmlDocSetRootElement(out.get(), copy);
  xmlReconciliateNs(out.get(), copy);
  xmlChar* mem = nullptr;
  int len = 0;
  xmlDocDumpFormatMemoryEnc(out.get(), &mem, &len, "UTF-8", 1);
  const std::unique_ptr<xmlChar, lx::XmlFree> owned(mem);
  return {reinterpret_cast<const char*>(mem), static_cast<std::size_t>(len)};
}

// xmllint's verdict on a <kvmai:vm> document.  A machine without xmllint
// (libxml2-utils, tools/devenv/deps.sh) fails here rather than skipping,
// so that a missing package cannot pass for valid XML.
::testing::AssertionResult schema_valid(const std::string& vm_doc) {
  if (testing::sh("command -v xmllint >/dev/null 2>&1").rc != 0) {
    return ::testing::AssertionFailure()
           << "xmllint not found: install libxml2-utils (libvirt-clients, which "
              "tools/devenv/deps.sh installs, depends on it)";
  }
  const TempDir dir("rng");
  const auto file = dir.write("vm.xml", vm_doc);
  const auto r = testing::sh("xmllint --noout --relaxng " + testing::sh_quote(kSchema) + " " +
                             testing::sh_quote(file.string()) + " 2>&1");
  if (r.rc == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "xmllint exit " << r.rc << ":\n" << r.out << vm_doc;
}

// The XML code blocks of a reStructuredText page, dedented.
std::vector<std::string> xml_blocks(const std::string& rst) {
  std::vector<std::string> blocks;
  std::istringstream in(rst);
  std::string line;
  bool in_block = false;
  std::string block;
  while (std::getline(in, line)) {
    if (line == ".. code-block:: xml") {
      in_block = true;
      block.clear();
      continue;
    }
    if (!in_block) {
      continue;
    }
    if (line.empty() || line.starts_with("    ")) {
      block += line.empty() ? "\n" : line.substr(4) + "\n";
      continue;
    }
    in_block = false;
    blocks.push_back(block);
  }
  if (in_block) {
    blocks.push_back(block);
  }
  return blocks;
}

TEST(Schema, TheDocumentationsExamplesAreValid) {
  const auto blocks =
      xml_blocks(testing::read_text(std::string(KVMAICTL_DOCS) + "/admin-guide/kvmai/libvirt.rst"));
  ASSERT_GE(blocks.size(), 2U);
  const FakeSys sys({"0000:11:00.0", "0000:13:00.0"});
  for (const auto& block : blocks) {
    EXPECT_TRUE(schema_valid(vm_element(block)));
    // And the hook takes it, in a domain of its own when it is a fragment.
    const std::string xml =
        block.find("<domain") != std::string::npos
            ? block
            : domain_xml("vm1", {"0000:11:00.0", "0000:13:00.0"}, "    " + block);
    const DomainXml d = parse_domain_xml(xml);
    EXPECT_TRUE(d.kvmai.present) << block;
    EXPECT_NO_THROW(plan_domain("vm1", d, sys.reader())) << block;
  }
}

struct SchemaCase {
  std::string what;
  std::string inside;  // of <kvmai:vm>
};

const std::string kDevs =
    "<kvmai:device address='0000:11:00.0'/><kvmai:device address='0000:13:00.0'/>";

TEST(Schema, AgreesWithTheHookOnValidMetadata) {
  const std::vector<SchemaCase> cases{
      {"empty", ""},
      {"pmu first", "<kvmai:pmu core='yes'/><kvmai:group name='g'>" + kDevs + "</kvmai:group>"},
      {"short addresses",
       "<kvmai:group name='g' mode='direct'><kvmai:device address='11:00.0'/>"
       "<kvmai:device address='0:13:0.0'/></kvmai:group>"},
      {"units", "<kvmai:pmu cpus='0-3' shared='no'><kvmai:unit name='uncore_cha_0'/></kvmai:pmu>"},
  };
  const FakeSys sys({"0000:11:00.0", "0000:13:00.0"});
  for (const auto& c : cases) {
    const std::string xml = domain_xml("vm1", {"0000:11:00.0", "0000:13:00.0"}, kvmai_vm(c.inside));
    EXPECT_TRUE(schema_valid(vm_element(xml))) << c.what;
    EXPECT_NO_THROW(plan_domain("vm1", parse_domain_xml(xml), sys.reader())) << c.what;
  }
}

// An mdev member: the schema takes its UUID, in either case.
TEST(Schema, TakesAnMdevMember) {
  for (const char* uuid :
       {"c2177883-f1bb-47f0-914d-32a22e3a8804", "C2177883-F1BB-47F0-914D-32A22E3A8804"}) {
    EXPECT_TRUE(schema_valid(vm_element(
        kvmai_vm(std::string("<kvmai:group name='g'><kvmai:device address='0000:11:00.0'/>") +
                 "<kvmai:device mdev='" + uuid + "'/></kvmai:group>"))))
        << uuid;
  }
  for (const char* bad : {"c2177883", "c2177883-f1bb-47f0-914d-32a22e3a8804-0"}) {
    EXPECT_FALSE(schema_valid(vm_element(
        kvmai_vm(std::string("<kvmai:group name='g'><kvmai:device address='0000:11:00.0'/>") +
                 "<kvmai:device mdev='" + bad + "'/></kvmai:group>"))))
        << bad;
  }
  EXPECT_FALSE(schema_valid(vm_element(
      kvmai_vm("<kvmai:group name='g'><kvmai:device address='0000:11:00.0'/>"
               "<kvmai:device address='0000:13:00.0' mdev='c2177883-f1bb-47f0-914d-32a22e3a8804'/>"
               "</kvmai:group>"))));
}

// The schema is no formality: it refuses, and so does the hook.
TEST(Schema, AgreesWithTheHookOnInvalidMetadata) {
  const std::vector<SchemaCase> cases{
      {"unknown mode", "<kvmai:group name='g' mode='sideways'>" + kDevs + "</kvmai:group>"},
      {"one device", "<kvmai:group name='g'><kvmai:device address='0000:11:00.0'/></kvmai:group>"},
      {"no devices", "<kvmai:group name='g'/>"},
      {"from and devices", "<kvmai:group name='g' from='hostdevs'>" + kDevs + "</kvmai:group>"},
      {"unknown from", "<kvmai:group name='g' from='all'/>"},
      {"bad address",
       "<kvmai:group name='g'><kvmai:device address='0000:11:00'/>" + kDevs + "</kvmai:group>"},
      {"slot too high",
       "<kvmai:group name='g'><kvmai:device address='0000:11:20.0'/>" + kDevs + "</kvmai:group>"},
      {"name with a space", "<kvmai:group name='g 1'>" + kDevs + "</kvmai:group>"},
      {"name too long",
       "<kvmai:group name='" + std::string(32, 'g') + "'>" + kDevs + "</kvmai:group>"},
      {"unknown attribute", "<kvmai:group name='g' colour='red'>" + kDevs + "</kvmai:group>"},
      {"unknown element", "<kvmai:groups/>"},
      {"core maybe", "<kvmai:pmu core='maybe'/>"},
      {"unit without name", "<kvmai:pmu core='yes'><kvmai:unit/></kvmai:pmu>"},
      {"bad cpus", "<kvmai:pmu core='yes' cpus='all'/>"},
      {"two pmus", "<kvmai:pmu core='yes'/><kvmai:pmu core='yes'/>"},
      {"text", "<kvmai:group name='g'>" + kDevs + "words</kvmai:group>"},
  };
  const FakeSys sys({"0000:11:00.0", "0000:13:00.0"});
  for (const auto& c : cases) {
    const std::string xml = domain_xml("vm1", {"0000:11:00.0", "0000:13:00.0"}, kvmai_vm(c.inside));
    EXPECT_FALSE(schema_valid(vm_element(xml))) << c.what;
    EXPECT_THROW(plan_domain("vm1", parse_domain_xml(xml), sys.reader()), HookError) << c.what;
  }
}

// ---- vm plan ... format libvirt group NAME -----------------------------------------

std::string plan(const Args& extra) {
  Args args{"vm", "plan", "gpu0", "nic0", "gpu1", "nic1", "vcpus", "4", "memory", "512"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--sysfs-root", testing::testdata("emulated-vm/sys")});
  const auto r = testing::run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.out;
}

TEST(Schema, VmPlanGroupMetadataIsValidAndTheHooks) {
  const std::string out = plan({"format", "libvirt", "group", "vm1-p2p"});
  const std::string vm = vm_element(out);
  EXPECT_TRUE(schema_valid(vm));
  EXPECT_THAT(vm, HasSubstr("<kvmai:group name=\"vm1-p2p\" mode=\"translated\" "
                            "from=\"hostdevs\"/>"));

  // Named, the domain is one libvirt takes, metadata included.
  lx::Doc doc = lx::Doc::parse(out);
  doc.root().text_child("name", "vm1");
  const TempDir dir("plan");
  const auto file = dir.write("domain.xml", doc.str());
  const auto v =
      testing::sh("virt-xml-validate " + testing::sh_quote(file.string()) + " domain 2>&1");
  EXPECT_EQ(v.rc, 0) << v.out;

  // The hook groups exactly the planned devices, which the host has.
  const DomainXml d = parse_domain_xml(doc.str());
  const FsReader sys(testing::testdata("emulated-vm/sys"));
  const DomainPlan p = plan_domain("vm1", d, sys);
  ASSERT_EQ(p.groups.size(), 1U);
  EXPECT_EQ(p.groups[0].name, "vm1-p2p");
  EXPECT_EQ(p.groups[0].devices.size(), 4U);
  EXPECT_EQ(p.groups[0].devices, d.pci_devices);

  // Without the keyword, no metadata (the goldens hold the rest).
  EXPECT_THAT(plan({"format", "libvirt"}), ::testing::Not(HasSubstr("metadata")));
  // -j carries the same XML.
  const auto j = nlohmann::json::parse(plan({"-j", "format", "libvirt", "group", "vm1-p2p"}));
  EXPECT_EQ(j["libvirt"], out);
}

TEST(Schema, VmPlanGroupRefusals) {
  const std::string sys = testing::testdata("emulated-vm/sys");
  auto r = testing::run_cli({"vm", "plan", "gpu0", "nic0", "group", "g", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("group NAME goes with format libvirt"));
  r = testing::run_cli(
      {"vm", "plan", "gpu0", "format", "libvirt", "group", "g", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: vm plan: group g: 1 device planned (a group holds 2 to 16)\n");
  r = testing::run_cli(
      {"vm", "plan", "gpu0", "nic0", "format", "libvirt", "group", "a b", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("group name \"a b\" has byte 0x20 at offset 1"));
  EXPECT_EQ(testing::run_cli({"vm", "nccl-topo", "gpu0", "group", "g", "--sysfs-root", sys}).rc,
            kExitFailed);  // not a keyword there: an unknown device
}

}  // namespace
}  // namespace kvmai::kvmaictl::hook
