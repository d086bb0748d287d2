// Which domains may hold uncore units whole: the memory rule against a
// domain's <numatune>, the PCIe-stack rule against the devices below the
// stack the kernel maps a unit to, on a recorded-style sysfs of two
// packages (testing/hook.h) with two expander stacks.
#include "hook/entitlement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/sysfs.h"
#include "testing/hook.h"

namespace kvmai::kvmaictl::hook {
namespace {

using kvmai::kvmaictl::testing::domain_xml;
using kvmai::kvmaictl::testing::kvmai_vm;
using kvmai::kvmaictl::testing::TempDir;
using kvmai::kvmaictl::testing::write_host_topology;
using ::testing::HasSubstr;

// Stack 0000:10 on package 0: a root port, a GPU and a NIC below it;
// stack 0000:30 on package 1: a root port and a GPU.  uncore_iio_1 maps
// die 0 to the first and die 1 to the second, as skx_iio_mapping_show()
// prints them; a memory-only node 2 (CXL) has no CPU.
class EntitlementHost {
 public:
  EntitlementHost() {
    write_host_topology(dir_, "");
    dir_.write("devices/system/node/node2/cpulist", "\n");
    add("pci0000:10", {"0000:10:00.0"}, "0x060400");
    add("pci0000:10", {"0000:10:00.0", "0000:11:00.0"}, "0x030200");
    add("pci0000:10", {"0000:10:00.0", "0000:12:00.0"}, "0x020000");
    add("pci0000:30", {"0000:30:00.0"}, "0x060400");
    add("pci0000:30", {"0000:30:00.0", "0000:31:00.0"}, "0x030200");
    dir_.write("devices/uncore_iio_1/die0", "0000:10\n");
    dir_.write("devices/uncore_iio_1/die1", "0000:30\n");
    link("bus/event_source/devices/uncore_iio_1", "../../../devices/uncore_iio_1");
    dir_.write("devices/uncore_iio_2/die0", "0000:10\n");
    link("bus/event_source/devices/uncore_iio_2", "../../../devices/uncore_iio_2");
  }
  const TreeReader& sys() const { return reader_; }

 private:
  // PCI function path.back() below root bus `root`, through the others.
  void add(const std::string& root, const std::vector<std::string>& path, const std::string& cls) {
    std::string rel = "devices/" + root;
    for (const auto& p : path) {
      rel += "/" + p;
    }
    dir_.write(rel + "/class", cls + "\n");
    link("bus/pci/devices/" + path.back(), "../../../" + rel);
  }
  void link(const std::string& at, const std::string& target) {
    std::filesystem::create_directories((dir_.path() / at).parent_path());
    std::filesystem::create_directory_symlink(target, dir_.path() / at);
  }

  TempDir dir_{"entitlement"};
  FsReader reader_{dir_.path()};
};

std::string numatune(const std::string& inside) {
  return "  <numatune>" + inside + "</numatune>\n";
}

// Domain vm1 with `hostdevs`, vCPUs on `cpus` and `numa` (<numatune>).
DomainXml domain(const std::vector<std::string>& hostdevs, const std::string& cpus,
                 const std::string& numa) {
  return parse_domain_xml(
      domain_xml("vm1", hostdevs, "", "", "  <vcpu cpuset='" + cpus + "'>2</vcpu>\n" + numa));
}

// The message check_entitlement() throws, "" when it does not.
std::string refusal(const std::string& unit, const std::string& cpus, const DomainXml& d,
                    const EntitlementHost& h) {
  try {
    check_entitlement("vm1", PmuPlan{.core = false, .units = {unit}, .cpus = cpus, .shared = false},
                      d, h.sys(), HostConfig{});
  } catch (const HookError& e) {
    return e.what();
  }
  return "";
}

TEST(Entitlement, UnitsByWhatTheyCount) {
  for (const char* u :
       {"uncore_iio_3", "uncore_iio_free_running_0", "uncore_irp_2", "uncore_m2pcie_1",
        "uncore_cxlcm_0", "uncore_cxldp_1", "mock_uncore_iio_0"}) {
    EXPECT_EQ(unit_counts(u), UnitCounts::pcie_stack) << u;
  }
  for (const char* u : {"uncore_imc_0", "uncore_imc_free_running_1", "uncore_cha_12",
                        "uncore_upi_0", "uncore_m2m_1", "uncore_pcu", "amd_df", "amd_l3",
                        "amd_umc_11", "mock_uncore_l3", "mock_bw"}) {
    EXPECT_EQ(unit_counts(u), UnitCounts::memory) << u;
  }
}

TEST(Entitlement, MemoryUnitsNeedStrictBindingToTheirPackagesNodes) {
  const EntitlementHost h;
  const auto bound = [&](const std::string& numa) { return domain({}, "0-3", numa); };
  EXPECT_EQ(refusal("amd_l3", "0-3", bound(numatune("<memory mode='strict' nodeset='0'/>")), h),
            "");
  // libvirt's default mode is strict.
  EXPECT_EQ(refusal("amd_df", "0-3", bound(numatune("<memory nodeset='0'/>")), h), "");
  // A domain on both packages may use both nodes.
  EXPECT_EQ(
      refusal("amd_df", "0-3,32", domain({}, "0-3,32", numatune("<memory nodeset='0-1'/>")), h),
      "");
  const std::vector<std::pair<std::string, std::string>> refused{
      {"", "but it has no <numatune><memory>"},
      {numatune("<memory mode='preferred' nodeset='0'/>"),
       "but <numatune><memory> has mode \"preferred\""},
      {numatune("<memory mode='strict' placement='auto'/>"),
       "but <numatune><memory> leaves the nodes to numad"},
      {numatune("<memory mode='strict' nodeset='0-1'/>"),
       "but <numatune><memory> has nodeset \"0-1\", which holds node 1"},
      // Memory-only nodes are no package's.
      {numatune("<memory mode='strict' nodeset='2'/>"),
       "but <numatune><memory> has nodeset \"2\", which holds node 2"},
      {numatune("<memory mode='strict' nodeset='0'/><memnode cellid='1' mode='interleave' "
                "nodeset='0'/>"),
       "but <memnode cellid='1'> has mode \"interleave\""},
  };
  for (const auto& [numa, why] : refused) {
    const std::string msg = refusal("uncore_imc_0", "0-3", bound(numa), h);
    EXPECT_THAT(msg, HasSubstr("pmu: unit uncore_imc_0 counts the memory traffic of package 0, "
                               "so domain vm1 must have its memory strictly on node 0"))
        << numa;
    EXPECT_THAT(msg, HasSubstr(why)) << numa;
  }
}

TEST(Entitlement, StackUnitsNeedEveryDeviceBelowTheStack) {
  const EntitlementHost h;
  const std::string numa = numatune("<memory nodeset='0'/>");
  EXPECT_EQ(
      refusal("uncore_iio_1", "0-3", domain({"0000:11:00.0", "0000:12:00.0"}, "0-3", numa), h), "");
  EXPECT_EQ(refusal("uncore_iio_1", "0-3", domain({"0000:11:00.0"}, "0-3", numa), h),
            "pmu: unit uncore_iio_1 counts PCIe stack 0000:10, where 0000:12:00.0 is not a PCI "
            "hostdev of domain vm1: the unit is the domain's only with every device below the "
            "stack");
  // On package 1 it counts the other stack.
  EXPECT_THAT(
      refusal("uncore_iio_1", "32-35", domain({"0000:11:00.0", "0000:12:00.0"}, "32-35", numa), h),
      HasSubstr("counts PCIe stack 0000:30, where 0000:31:00.0 is not"));
  // No mapping for die 1: nobody can tell what it counts there.
  EXPECT_THAT(refusal("uncore_iio_2", "32", domain({"0000:31:00.0"}, "32", numa), h),
              HasSubstr("pmu: unit uncore_iio_2 counts a PCIe stack, but the kernel does not say "
                        "which on die 1"));
}

// A host that shares the domain's packages gives it units without a
// counter page: plan_domain() does not hold it to either rule.
TEST(Entitlement, SharedDomainsAreNotChecked) {
  const EntitlementHost h;
  HostConfig host;
  host.pmu_shared = {"vm1"};
  const DomainXml d = parse_domain_xml(
      domain_xml("vm1", {}, kvmai_vm("      <kvmai:pmu><kvmai:unit name='amd_l3'/></kvmai:pmu>\n"),
                 "", "  <vcpu cpuset='0-3'>2</vcpu>\n"));
  EXPECT_NO_THROW(plan_domain("vm1", d, h.sys(), host));
  EXPECT_THROW(plan_domain("vm1", d, h.sys(), HostConfig{}), HookError);
}

}  // namespace
}  // namespace kvmai::kvmaictl::hook
