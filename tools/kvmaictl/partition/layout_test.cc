// Reading the partitions of a host from sysfs: the `vgpu` fixture's H100
// with its VFs' vGPU types, and an mdev parent added to a copy of it.
#include "partition/layout.h"

#include <gtest/gtest.h>

#include "testing/fixture_copy.h"
#include "testing/run.h"

namespace kvmai::kvmaictl::partition {
namespace {

TEST(PartitionLayout, ReadsVfsAndTheirVgpuTypes) {
  const FsReader sys(testing::testdata("vgpu/sys"));
  const Layout l = Layout::read(sys);
  const Parent* p = l.find("0000:17:00.0");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->pci);
  EXPECT_EQ(p->driver, "nvidia");
  EXPECT_EQ(p->total_vfs, 16);
  EXPECT_EQ(p->num_vfs, 4);
  ASSERT_EQ(p->vfs.size(), 4U);
  EXPECT_EQ(p->vfs[0].bdf, "0000:17:00.1");
  EXPECT_EQ(p->vfs[0].vgpu_type, 1414);
  EXPECT_EQ(p->vfs[1].vgpu_type, 0);
  EXPECT_EQ(p->vfs[2].vgpu_type, std::nullopt);
  ASSERT_EQ(p->vgpu_types.size(), 3U);
  ASSERT_NE(p->vgpu("NVIDIA H100-80C"), nullptr);
  EXPECT_EQ(p->vgpu("NVIDIA H100-80C")->id, 1428);
  EXPECT_EQ(p->vgpu("1415")->name, "NVIDIA H100-2-20C");
  EXPECT_FALSE(p->mdev_parent());
  // VFs are no parents of their own.
  EXPECT_EQ(l.find("0000:17:00.1"), nullptr);
}

TEST(PartitionLayout, ReadsMdevParentsOfClassMdevBus) {
  const testing::FixtureCopy host("vgpu");
  const std::string t = "sys/class/mdev_bus/mtty/mdev_supported_types/";
  host.write(t + "mtty-2/name", "Dual port serial\n");
  host.write(t + "mtty-2/available_instances", "11\n");
  host.write(t + "mtty-2/device_api", "vfio-pci\n");
  host.write(t + "mtty-2/devices/83b8f4f2-509f-382f-3c1e-e6bfe0fa1001", "");
  host.write(t + "mtty-1/available_instances", "22\n");
  const FsReader sys(host.dir() / "sys");
  const Layout l = Layout::read(sys);
  const Parent* p = l.find("mtty");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->pci);
  EXPECT_FALSE(p->sriov());
  ASSERT_EQ(p->mdev_types.size(), 2U);
  EXPECT_EQ(p->mdev_type("mtty-2")->available_instances, 11);
  ASSERT_EQ(p->mdevs.size(), 1U);
  EXPECT_EQ(p->mdevs[0].uuid, "83b8f4f2-509f-382f-3c1e-e6bfe0fa1001");
  EXPECT_EQ(p->mdevs[0].type, "mtty-2");
}

TEST(PartitionLayout, ParentNames) {
  EXPECT_EQ(parent_name("17:00.0"), "0000:17:00.0");
  EXPECT_EQ(parent_name("mtty"), "mtty");
  EXPECT_EQ(parent_name("../mtty"), std::nullopt);
  EXPECT_EQ(parent_name(".."), std::nullopt);
  EXPECT_EQ(parent_name(""), std::nullopt);
  EXPECT_EQ(parent_name("a b"), std::nullopt);
}

}  // namespace
}  // namespace kvmai::kvmaictl::partition
