#include "model/pci_tree.h"

#include <gtest/gtest.h>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::testdata;

TEST(PciTree, ReadsChainsOfBridges) {
  const FsReader sys(testdata("hgx/sys"));
  const auto t = PciTree::read(sys);
  const PciDevice* gpu = t.find("0000:18:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->root, "pci0000:15");
  EXPECT_EQ(gpu->parents,
            (std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"}));
  EXPECT_EQ(t.find("0000:15:01.0")->role, Role::root_port);
  EXPECT_EQ(t.find("0000:16:00.0")->role, Role::upstream_port);
  EXPECT_EQ(t.find("0000:17:00.0")->role, Role::downstream_port);
  EXPECT_TRUE(gpu->is_gpu());
  EXPECT_EQ(gpu->numa_node, 0);
  EXPECT_EQ(gpu->iommu_group_type, "DMA-FQ");
  EXPECT_EQ(gpu->driver, "nvidia");
}

TEST(PciTree, HgxHasAtLeast32Endpoints) {
  const FsReader sys(testdata("hgx/sys"));
  const auto t = PciTree::read(sys);
  int endpoints = 0;
  for (const auto& d : t.devices()) {
    endpoints += d.is_bridge() ? 0 : 1;
  }
  EXPECT_GE(endpoints, 32);
}

TEST(PciTree, BootVgaIsNotAGpu) {
  const FsReader sys(testdata("hgx/sys"));
  const auto t = PciTree::read(sys);
  const PciDevice* bmc = t.find("0000:03:00.0");
  ASSERT_NE(bmc, nullptr);
  EXPECT_TRUE(bmc->boot_vga);
  EXPECT_FALSE(bmc->is_gpu());
}

TEST(PciTree, EveryDisplayControllerButBootVgaIsAGpu) {
  PciDevice d;
  for (const std::uint32_t cls : {0x030000U, 0x030100U, 0x030200U, 0x038000U}) {
    d.class_code = cls;
    EXPECT_TRUE(d.is_gpu()) << std::hex << cls;
  }
  d.boot_vga = true;
  EXPECT_FALSE(d.is_gpu());
  d.boot_vga = false;
  d.class_code = 0x040300;  // audio
  EXPECT_FALSE(d.is_gpu());
}

TEST(PciTree, EmulatedHostGpusAreVirtioGpu) {
  const FsReader sys(testdata("emulated/sys"));
  const auto t = PciTree::read(sys);
  const PciDevice* gpu = t.find("0000:21:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->class_and_subclass(), 0x0380);
  EXPECT_TRUE(gpu->is_gpu());
  EXPECT_FALSE(t.find("0000:00:01.0")->is_gpu());  // the boot VGA console
}

TEST(PciTree, VirtualFunctionsAreNotNics) {
  const FsReader sys(testdata("multifunction/sys"));
  const auto t = PciTree::read(sys);
  EXPECT_TRUE(t.find("0000:3f:00.0")->is_nic());
  EXPECT_TRUE(t.find("0000:3f:00.0")->config.multifunction);
  EXPECT_TRUE(t.find("0000:3f:00.2")->is_virtfn);
  EXPECT_FALSE(t.find("0000:3f:00.2")->is_nic());
}

// With host bridges counted as switches, those that hold root ports are:
// the emulated host's expanders, not its bus 0, whose devices sit on the
// root bus itself.
TEST(PciTree, HostBridgesWithRootPortsCountAsSwitchesWhenAsked) {
  const FsReader sys(testdata("emulated/sys"));
  const auto t = PciTree::read(sys, {.host_bridge_switches = true});
  EXPECT_FALSE(t.root("pci0000:00")->as_switch);
  EXPECT_TRUE(t.root("pci0000:20")->as_switch);
  EXPECT_TRUE(t.root("pci0000:40")->as_switch);
  const auto hgx = PciTree::read(FsReader(testdata("hgx/sys")), {.host_bridge_switches = true});
  EXPECT_TRUE(hgx.root("pci0000:15")->as_switch);
}

// Otherwise none is, whatever devices it holds (a QEMU guest's PCIe
// expander bridges included).
TEST(PciTree, HostBridgesAreNoSwitchesByDefault) {
  for (const char* fixture : {"emulated", "hgx"}) {
    const auto t = PciTree::read(FsReader(testdata(std::string(fixture) + "/sys")));
    for (const auto& [name, root] : t.roots()) {
      EXPECT_FALSE(root.as_switch) << fixture << " " << name;
    }
  }
}

TEST(PciTree, UnprivilegedRolesComeFromTheHierarchy) {
  const FsReader sys(testdata("unprivileged/sys"));
  const auto t = PciTree::read(sys);
  EXPECT_FALSE(t.find("0000:3a:01.0")->config.caps_known);
  EXPECT_EQ(t.find("0000:3a:01.0")->role, Role::root_port);
  EXPECT_EQ(t.find("0000:3b:00.0")->role, Role::upstream_port);
  EXPECT_EQ(t.find("0000:3c:00.0")->role, Role::downstream_port);
}

TEST(PciTree, BdfShape) {
  EXPECT_TRUE(looks_like_bdf("0000:18:00.0"));
  EXPECT_FALSE(looks_like_bdf("pci0000:18"));
  EXPECT_FALSE(looks_like_bdf("0000:18:00.g"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
