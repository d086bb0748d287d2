#include "model/pci_bars.h"

#include <gtest/gtest.h>

namespace kvmai::kvmaictl {
namespace {

// An H100's `resource` as the kernel prints it: BAR0 32-bit, BAR1 and BAR3
// 64-bit prefetchable (their upper halves lines of zeros), then the ROM and
// the SR-IOV lines, which are not the function's BARs.
constexpr const char* kH100 =
    "0x00000000c0000000 0x00000000c0ffffff 0x0000000000040200\n"
    "0x0000200000000000 0x0000201fffffffff 0x000000000014220c\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000202000000000 0x0000202001ffffff 0x000000000014220c\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x00000000c1000000 0x00000000c107ffff 0x0000000000046200\n"
    "0x0000203000000000 0x0000203000ffffff 0x000000000014220c\n";

TEST(PciBars, ParsesSizesAndKinds) {
  const auto bars = parse_resource(kH100);
  ASSERT_EQ(bars.size(), 3U);
  EXPECT_EQ(bars[0].index, 0);
  EXPECT_EQ(bars[0].size, 16ULL << 20U);
  EXPECT_FALSE(bars[0].mem64);
  EXPECT_FALSE(bars[0].prefetchable);
  EXPECT_EQ(bars[1].index, 1);
  EXPECT_EQ(bars[1].size, 128ULL << 30U);
  EXPECT_TRUE(bars[1].mem64);
  EXPECT_TRUE(bars[1].prefetchable);
  EXPECT_EQ(bars[2].index, 3);
  EXPECT_EQ(describe_bar(bars[0]), "16M");
  EXPECT_EQ(describe_bar(bars[1]), "128G 64-bit pref");
  EXPECT_EQ(describe_bar(bars[2]), "32M 64-bit pref");
}

TEST(PciBars, IoBarsAndOddSizes) {
  const auto bars = parse_resource(
      "0x0000000000001000 0x00000000000010ff 0x0000000000040101\n"
      "garbage\n"
      "0x00000000c0000000 0x00000000c00017ff 0x0000000000040200\n");
  ASSERT_EQ(bars.size(), 2U);
  EXPECT_EQ(describe_bar(bars[0]), "256 io");
  EXPECT_EQ(bars[1].index, 2);
  EXPECT_EQ(format_size(6 * 1024), "6K");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_TRUE(parse_resource("").empty());
}

}  // namespace
}  // namespace kvmai::kvmaictl
