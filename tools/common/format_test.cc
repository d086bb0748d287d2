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

// ASCII letters only: a UUID or PCI address, never a locale's idea of case.
TEST(ToLower, AsciiLettersOnly) {
  EXPECT_EQ(to_lower("C2177883-F1BB-47F0-914D-32A22E3A8804"),
            "c2177883-f1bb-47f0-914d-32a22e3a8804");
  EXPECT_EQ(to_lower("0000:AB:1F.7"), "0000:ab:1f.7");
  EXPECT_EQ(to_lower("\xc3\x89t\xc3\xa9"), "\xc3\x89t\xc3\xa9");
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
