#include "common/escape.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kvmai {
namespace {

TEST(Escape, PrintableAsciiNewlineAndTabPass) {
  const std::string s = "group vm1-p2p\tstate enabled ~!\"\\{}\n";
  EXPECT_EQ(escape_bytes(s), s);
}

TEST(Escape, EveryOtherByteIsShownInHex) {
  // OSC 52 (write the clipboard) and CSI 2 J (clear the screen).
  EXPECT_EQ(escape_bytes("\x1b]52;c;cm0gLXJmIC8K\x07\x1b[2J"),
            "\\x1b]52;c;cm0gLXJmIC8K\\x07\\x1b[2J");
  EXPECT_EQ(escape_bytes(std::string("a\0b\r\x7f\x80\x9b\xff", 8)),
            "a\\x00b\\x0d\\x7f\\x80\\x9b\\xff");
}

TEST(Escape, StreamEscapesWhatItForwards) {
  std::ostringstream to;
  EscapedStream s(to);
  s << "comm " << std::string("\x1b[2J") << 'x' << '\x07' << 42 << '\n';
  s.flush();
  EXPECT_EQ(to.str(), "comm \\x1b[2Jx\\x0742\n");
}

}  // namespace
}  // namespace kvmai
