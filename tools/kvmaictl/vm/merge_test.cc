// `kvmaictl vm plan ... format libvirt merge FILE` (vm/merge.h): the plan
// put into a domain the operator has, on 1, 2, 4 and 8 H100s of hgx-vm, the
// domain's own devices kept, the result a domain libvirt accepts; and every
// clash refused with the element that clashes named.
#include "vm/merge.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/errors.h"
#include "testing/plan_words.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::hgx_gpus;
using testing::matches_golden;
using ::testing::Not;
using testing::operator+;
using testing::run_cli;
using testing::sh;
using testing::testdata;

const std::string kDomain = testdata("domains/train1.xml");

// The words of a training guest on @n GPUs and the RDMA NIC of each of
// their switches: 1 GiB pages, vCPUs pinned 1:1.
Args training(int n) {
  Args a = hgx_gpus(n);
  for (int sw = 0; sw < (n + 1) / 2; ++sw) {
    a.push_back("nic" + std::to_string(2 + 2 * sw));
  }
  a.insert(a.end(),
           {"vcpus", "8", "memory", "65536", "hugepages", "/dev/hugepages1G", "pin", "vcpu"});
  return a;
}

testing::RunResult plan(const Args& words, const std::string& root = testdata("hgx-vm")) {
  Args args{"vm", "plan"};
  args.insert(args.end(), words.begin(), words.end());
  args.insert(args.end(), {"--root", root});
  return run_cli(args);
}

std::string merged(const Args& words, const std::string& domain = kDomain) {
  Args a = words;
  a.insert(a.end(), {"format", "libvirt", "merge", domain});
  const auto r = plan(a);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.out;
}

// A copy of train1.xml with @edit applied to its text, as a file.
class Domain {
 public:
  explicit Domain(const std::function<void(std::string&)>& edit) {
    std::ifstream in(kDomain);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    edit(s);
    path_ = std::filesystem::temp_directory_path() / ("kvmaictl-merge-" + std::to_string(getpid()) +
                                                      "-" + std::to_string(++count_) + ".xml");
    std::ofstream(path_) << s;
  }
  ~Domain() { std::filesystem::remove(path_); }
  Domain(const Domain&) = delete;
  Domain& operator=(const Domain&) = delete;
  std::string path() const { return path_.string(); }

 private:
  static inline int count_ = 0;
  std::filesystem::path path_;
};

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

std::string refusal(const Args& words, const std::string& domain) {
  Args a = words;
  a.insert(a.end(), {"format", "libvirt", "merge", domain});
  const auto r = plan(a);
  EXPECT_EQ(r.rc, kExitFailed) << r.out;
  return r.err;
}

::testing::AssertionResult validates(const std::string& xml) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("kvmaictl-merged-" + std::to_string(getpid()) + ".xml");
  std::ofstream(path) << xml;
  const auto r = sh("virt-xml-validate '" + path.string() + "' domain 2>&1");
  std::filesystem::remove(path);
  if (r.rc == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "virt-xml-validate exit " << r.rc << ":\n" << r.out;
}

// One golden a GPU count: the QEMU arguments and the merged domain of the
// same training guest, so that firmware, window, huge pages and pinning
// are seen to agree in both formats.
TEST(Merge, TrainingGuestOnOneTwoFourAndEightGpus) {
  for (const int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(std::to_string(n) + " GPUs");
    const auto qemu = plan(training(n));
    ASSERT_EQ(qemu.rc, kExitOk) << qemu.err;
    const std::string xml = merged(training(n) + Args{"group", "train1-p2p"});
    EXPECT_TRUE(validates(xml));
    std::string note;
    EXPECT_TRUE(matches_golden("hgx-vm.train" + std::to_string(n) + ".golden",
                               "# vm plan " + std::to_string(n) + " GPUs, format qemu\n" +
                                   qemu.out + "# the same, format libvirt merge train1.xml\n" + xml,
                               &note))
        << note;
  }
}

// What the domain had of its own is there still; what the plan decides is
// the plan's, once.
TEST(Merge, KeepsTheDomainsOwnDevicesAndReplacesItsShape) {
  const std::string xml = merged(training(2));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(xml.c_str()));
  const pugi::xml_node d = doc.document_element();
  EXPECT_STREQ(d.child_value("name"), "train1");
  EXPECT_STREQ(d.child_value("uuid"), "5b0c3d4e-1f2a-4b6c-9d8e-7f6a5b4c3d2e");
  EXPECT_TRUE(d.child("currentMemory").empty());
  EXPECT_STREQ(d.child_value("memory"), "65536");
  EXPECT_STREQ(d.child("memory").attribute("unit").value(), "MiB");
  EXPECT_STREQ(d.child_value("vcpu"), "8");
  EXPECT_EQ(d.select_nodes("vcpu").size(), 1U);
  EXPECT_EQ(d.select_nodes("cpu").size(), 1U);
  EXPECT_STREQ(d.child("cpu").attribute("mode").value(), "host-passthrough");
  // <cputune>: the domain's shares kept, its pin of vCPU 0 replaced by 8.
  EXPECT_STREQ(d.child("cputune").child_value("shares"), "2048");
  EXPECT_EQ(d.select_nodes("cputune/vcpupin").size(), 8U);
  EXPECT_EQ(d.select_nodes("cputune/emulatorpin").size(), 1U);
  EXPECT_EQ(d.select_nodes("memoryBacking/hugepages/page[@size='1048576']").size(), 1U);
  EXPECT_STREQ(d.child("os").attribute("firmware").value(), "efi");
  EXPECT_STREQ(d.child("os").child("type").attribute("machine").value(), "pc-q35-7.2");
  EXPECT_FALSE(d.select_node("features/acpi").node().empty());
  EXPECT_FALSE(d.select_node("features/vmport").node().empty());
  EXPECT_STREQ(d.select_node("features/ioapic").node().attribute("driver").value(), "qemu");
  EXPECT_FALSE(
      d.select_node("sysinfo[@type='fwcfg']/entry[@name='opt/ovmf/X-PciMmio64Mb']").node().empty());
  EXPECT_FALSE(d.select_node("metadata/*[local-name()='libosinfo']").node().empty());
  for (const char* kept : {"devices/disk", "devices/interface", "devices/console",
                           "devices/memballoon", "devices/controller[@type='usb']"}) {
    EXPECT_EQ(d.select_nodes(kept).size(), 1U) << kept;
  }
  EXPECT_EQ(d.select_nodes("devices/iommu").size(), 1U);
  EXPECT_EQ(d.select_nodes("devices/hostdev").size(), 3U);  // gpu0, gpu1, nic2

  // PCI controllers: 0..N without a gap (libvirt would fill one with ports
  // of its own), the domain's 1-4 as they were, the plan's from 5; every
  // address on a bus names one of them.
  std::set<long> indexes;
  for (const auto& c : d.select_nodes("devices/controller[@type='pci']")) {
    EXPECT_TRUE(indexes.insert(c.node().attribute("index").as_int()).second);
  }
  ASSERT_FALSE(indexes.empty());
  EXPECT_EQ(*indexes.rbegin() + 1, static_cast<long>(indexes.size()));
  EXPECT_STREQ(d.select_node("devices/controller[@index='5']").node().attribute("model").value(),
               "pcie-expander-bus");
  for (const auto& a : d.select_nodes("devices/*/address[@type='pci']")) {
    const long bus = std::stol(a.node().attribute("bus").value(), nullptr, 0);
    EXPECT_TRUE(indexes.contains(bus)) << a.parent().name() << " on bus " << bus;
  }
  for (const auto& h : d.select_nodes("devices/hostdev/address")) {
    EXPECT_GE(std::stol(h.node().attribute("bus").value(), nullptr, 0), 5);
  }
}

// libvirt's QEMU namespace under the domain's own prefix, when it has one.
TEST(Merge, CliqueOverrideUsesTheDomainsPrefix) {
  const Domain dom([](std::string& s) {
    replace_once(s, "<domain type='kvm'>",
                 "<domain type='kvm' xmlns:q='http://libvirt.org/schemas/domain/qemu/1.0'>");
    replace_once(s, "</domain>",
                 "<q:commandline><q:arg value='-no-user-config'/></q:commandline></domain>");
  });
  const std::string xml = merged(hgx_gpus(8) + Args{"vcpus", "8", "memory", "65536"}, dom.path());
  EXPECT_THAT(xml, HasSubstr("<q:override>"));
  EXPECT_THAT(xml, HasSubstr("<q:property name=\"x-nv-gpudirect-clique\""));
  EXPECT_THAT(xml, Not(HasSubstr("qemu:")));
  EXPECT_THAT(xml, HasSubstr("<q:arg value=\"-no-user-config\" />"));
  EXPECT_TRUE(validates(xml));
}

TEST(Merge, ClashesAreRefusedByName) {
  const Args two = hgx_gpus(2);
  struct Clash {
    std::string from, to, err;
  };
  for (const auto& c : std::vector<Clash>{
           {"<domain type='kvm'>", "<domain type='qemu'>",
            "domain 'train1' is of type 'qemu': assigned devices need type=\"kvm\""},
           {"machine='pc-q35-7.2'", "machine='pc-i440fx-7.2'",
            "domain 'train1' has machine 'pc-i440fx-7.2': pcie-expander-bus and PCIe ports "
            "exist on q35 only"},
           {"<memballoon",
            "<hostdev mode='subsystem' type='pci' managed='no'><source><address "
            "domain='0x0000' bus='0x18' slot='0x00' function='0x0'/></source>"
            "</hostdev><memballoon",
            "domain 'train1' assigns 0000:18:00.0 already (a <hostdev>), which the plan assigns "
            "as gpu0"},
           {"<model type='virtio'/>", "<model type='virtio'/><alias name='ua-gpu1'/>",
            "domain 'train1' has an alias ua-gpu1 already, the plan's for gpu1"},
           {"<memballoon", "<iommu model='virtio'/><memballoon",
            "domain 'train1' has an IOMMU of model 'virtio': the plan's devices use the intel "
            "IOMMU's device-IOTLB"},
           {"<apic/>", "<apic/><ioapic driver='kvm'/>",
            "domain 'train1' has <ioapic driver=\"kvm\">: the intel IOMMU's interrupt remapping "
            "needs the split irqchip (driver=\"qemu\")"},
           {"<os>", "<os firmware='bios'>",
            "domain 'train1' boots firmware 'bios': the plan's 64-bit BARs want UEFI (or plan "
            "with firmware bios)"},
           {"<controller type='sata'",
            "<controller type='pci' index='5' model='pcie-expander-bus'><target busNr='64'/>"
            "</controller><controller type='sata'",
            "domain 'train1' has a pcie-expander-bus of its own (index 5): merge into a domain "
            "whose PCI controllers hang off pcie-root"},
           {"<name>train1</name>", "<name>train1\x1b[31m</name>",
            "domain 'train1?[31m' is of type 'qemu'"},
       }) {
    SCOPED_TRACE(c.to);
    const Domain dom([&](std::string& s) {
      replace_once(s, c.from, c.to);
      if (c.from.starts_with("<name>")) {
        replace_once(s, "<domain type='kvm'>", "<domain type='qemu'>");
      }
    });
    EXPECT_THAT(refusal(two, dom.path()), HasSubstr("Error: vm plan: merge: " + c.err));
  }
}

// A domain holding the planned mdev already (a <hostdev type='mdev'>) is
// refused by its UUID; one holding another mdev, or its parent's address
// for a PCI hostdev, is not that device.
TEST(Merge, MdevAssignedAlreadyIsRefusedByUuid) {
  const std::string uuid = "6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d10";
  const auto hostdev = [](const std::string& source) {
    return "<hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='" +
           source + "'/></source></hostdev><memballoon";
  };
  const Args words{uuid, "format", "libvirt", "merge"};
  const auto merge = [&](const Domain& dom) {
    Args a = words;
    a.push_back(dom.path());
    return plan(a, testdata("multifunction"));
  };
  const Domain same([&](std::string& s) { replace_once(s, "<memballoon", hostdev(uuid)); });
  auto r = merge(same);
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("domain 'train1' assigns " + uuid +
                               " already (a <hostdev>), which the plan assigns as " + uuid));
  const Domain other([&](std::string& s) {
    replace_once(s, "<memballoon", hostdev("6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d11"));
  });
  r = merge(other);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<address uuid=\"" + uuid + "\""));
  const Domain parent([&](std::string& s) {
    replace_once(s, "<memballoon",
                 "<hostdev mode='subsystem' type='pci' managed='no'><source><address "
                 "domain='0x0000' bus='0x3e' slot='0x00' function='0x0'/></source>"
                 "</hostdev><memballoon");
  });
  r = merge(parent);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
}

TEST(Merge, MoreBusesThanFitBelowTheFirstExpanderAreRefused) {
  const auto j = nlohmann::json::parse(plan(Args{"-j"} + hgx_gpus(2)).out);
  int first = 256;
  for (const auto& b : j["bridges"]) {
    if (b["model"] == "pxb-pcie") {
      first = std::min(first, b["bus_nr"].get<int>());
    }
  }
  ASSERT_LT(first, 256);
  // train1 has 4 root ports; add ports up to one below the expander's bus,
  // which still fits, then one more, which does not.
  auto ports = [](int from, int to) {
    std::string s;
    for (int i = from; i <= to; ++i) {
      s += "<controller type='pci' index='" + std::to_string(i) + "' model='pcie-root-port'/>";
    }
    return s;
  };
  {
    const Domain fits([&](std::string& s) {
      replace_once(s, "<controller type='sata'", ports(5, first - 1) + "<controller type='sata'");
    });
    EXPECT_THAT(merged(hgx_gpus(2), fits.path()),
                HasSubstr("<controller type=\"pci\" index=\"" + std::to_string(first) +
                          "\" model=\"pcie-expander-bus\">"));
  }
  const Domain full([&](std::string& s) {
    replace_once(s, "<controller type='sata'", ports(5, first) + "<controller type='sata'");
  });
  EXPECT_THAT(refusal(hgx_gpus(2), full.path()),
              HasSubstr(fmt::format("domain 'train1' has {} PCI buses of its own below "
                                    "pcie-root, which reach the plan's first expander bus 0x{:02x}",
                                    first, first)));
}

TEST(Merge, FirmwareBiosRefusesAUefiDomain) {
  const Domain dom([](std::string& s) { replace_once(s, "<os>", "<os firmware='efi'>"); });
  EXPECT_THAT(refusal({"nic2", "nic3", "firmware", "bios"}, dom.path()),
              HasSubstr("domain 'train1' boots UEFI (<os firmware> or <loader>), not the plan's "
                        "firmware bios"));
}

TEST(Merge, KvmaiMetadataIsNotDoubled) {
  const Domain dom([](std::string& s) {
    replace_once(s, "</metadata>",
                 "<k:vm xmlns:k='https://kvm-ai.dev/xmlns/libvirt/1'><k:group name='old' "
                 "mode='translated' from='hostdevs'/></k:vm></metadata>");
  });
  EXPECT_THAT(refusal(hgx_gpus(2) + Args{"group", "train1-p2p"}, dom.path()),
              HasSubstr("domain 'train1' has kvm-ai metadata (<k:vm>) already: drop it or merge "
                        "without group NAME"));
  // Without group NAME the domain's own metadata stays as it is.
  EXPECT_THAT(merged(hgx_gpus(2), dom.path()), HasSubstr("<k:group name=\"old\""));
}

TEST(Merge, BadFilesSayWhatIsWrong) {
  auto r = plan(hgx_gpus(2) + Args{"format", "libvirt", "merge", "/nonexistent/dom.xml"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: vm plan: merge /nonexistent/dom.xml: No such file or directory\n");
  const Domain broken([](std::string& s) { replace_once(s, "</domain>", ""); });
  EXPECT_THAT(refusal(hgx_gpus(2), broken.path()), HasSubstr("merge: not XML ("));
  const Domain net([](std::string& s) { s = "<network><name>default</name></network>"; });
  EXPECT_THAT(refusal(hgx_gpus(2), net.path()),
              HasSubstr("merge: not a libvirt domain (its root element is <network>)"));
  r = plan(hgx_gpus(2) + Args{"merge", kDomain});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("merge FILE goes with format libvirt"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
