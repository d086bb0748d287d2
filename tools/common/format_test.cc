#include "common/format.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/names.h"

namespace kvmai {
namespace {

TEST(ToHex, PrefixAndPadding) {
  EXPECT_EQ(to_hex(0x1f), "0x1f");
  EXPECT_EQ(to_hex(0x5d, 4), "0x005d");
  EXPECT_EQ(to_hex(0, 2), "0x00");
  EXPECT_EQ(to_hex(0x38000000000, 16), "0x0000038000000000");
  EXPECT_EQ(to_hex(0x123456, 2), "0x123456");  // never cut
}

TEST(Join, SeparatorsBetweenOnly) {
  EXPECT_EQ(join(std::vector<std::string>{}, ", "), "");
  EXPECT_EQ(join(std::vector<std::string>{"a"}, ", "), "a");
  EXPECT_EQ(join(std::vector<std::string_view>{"a", "b", "c"}, ":"), "a:b:c");
  EXPECT_EQ(join(std::vector<int>{3, 4}, ":"), "3:4");
}

enum class Color { red, green, blue };
constexpr Named<Color> kColors[] = {{Color::red, "red"}, {Color::green, "green"}};

TEST(Names, BothWays) {
  EXPECT_EQ(name_of(kColors, Color::green), "green");
  EXPECT_EQ(name_of(kColors, Color::blue), "?");
  EXPECT_EQ(name_of(kColors, Color::blue, "unknown"), "unknown");
  EXPECT_EQ(value_of(kColors, "red"), Color::red);
  EXPECT_EQ(value_of(kColors, "re"), std::nullopt);
}

}  // namespace
}  // namespace kvmai
