#include "common/sysfs.h"

#include <gtest/gtest.h>

#include <string>

namespace kvmai {
namespace {

// A host fixture of kvmaictl's tests (tools/kvmaictl/testdata).
std::string testdata(const std::string& rel) {
  return std::string(KVMAI_TESTDATA) + "/" + rel;
}

TEST(FsReader, ResolvesRelativeLinksInsideTheTree) {
  const FsReader sys(testdata("hgx/sys"));
  EXPECT_EQ(sys.resolve("bus/pci/devices/0000:18:00.0"),
            "devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
  EXPECT_EQ(link_name(sys, "bus/pci/devices/0000:18:00.0/driver"), "nvidia");
  EXPECT_EQ(link_name(sys, "bus/pci/devices/0000:18:00.0/iommu_group"), "19");
  EXPECT_FALSE(sys.resolve("no/such/file").has_value());
}

TEST(FsReader, ReadsAttributesAndBinaryConfig) {
  const FsReader sys(testdata("hgx/sys"));
  EXPECT_EQ(read_int(sys, "bus/pci/devices/0000:18:00.0/vendor", 16), 0x10de);
  EXPECT_EQ(read_int(sys, "bus/pci/devices/0000:18:00.0/numa_node"), 0);
  EXPECT_EQ(read_line(sys, "bus/pci/devices/0000:18:00.0/current_link_speed"), "32.0 GT/s PCIe");
  EXPECT_EQ(sys.read("bus/pci/devices/0000:18:00.0/config")->size(), 4096U);
  EXPECT_FALSE(sys.read("bus/pci/devices/0000:18:00.0/nope").has_value());
}

TEST(FsReader, ListsSorted) {
  const FsReader sys(testdata("emulated/sys"));
  const auto roots = sys.list("devices");
  // PCI roots among the perf PMUs, as on a live host.
  EXPECT_EQ(roots, (std::vector<std::string>{"breakpoint", "kprobe", "pci0000:00", "pci0000:20",
                                             "pci0000:40", "software", "tracepoint", "uprobe",
                                             "virtual"}));
  EXPECT_TRUE(sys.list("missing").empty());
  EXPECT_TRUE(sys.exists("class/iommu/dmar0"));
}

TEST(ReadInt, ParsesSignsAndBases) {
  const FsReader sys(testdata("flat/sys"));
  EXPECT_EQ(read_int(sys, "bus/pci/devices/0000:01:00.0/numa_node"), -1);
  EXPECT_EQ(read_int(sys, "bus/pci/devices/0000:01:00.0/class"), 0x030000);
  EXPECT_FALSE(read_int(sys, "bus/pci/devices/0000:01:00.0/current_link_speed").has_value());
}

}  // namespace
}  // namespace kvmai
