// What the tools write to a terminal, JSON or libvirt's error is partly
// other parties' words: a process's command name, the kernel's extack
// (which quotes them), group and VM names a tenant chose, the unit name a
// counters device reports to its guest.  A terminal acts on the control
// sequences such words can hold (OSC 52 writes the clipboard, CSI 2 J
// clears the screen), so every byte kvmaictl and kvmaistat write passes
// through EscapingStreambuf, which shows any byte but printable ASCII,
// newline and tab as \xHH.
#pragma once

#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace kvmai {

// Whether `c` reaches the output as it is.
constexpr bool passes_unescaped(unsigned char c) {
  return (c >= ' ' && c <= '~') || c == '\n' || c == '\t';
}

// `s` with every byte that does not pass shown as \xHH.
std::string escape_bytes(std::string_view s);

// Writes what it is given to `to`, escaped as escape_bytes() does. Holds
// no buffer of its own, so that it may stand in for std::cerr.
class EscapingStreambuf final : public std::streambuf {
 public:
  explicit EscapingStreambuf(std::streambuf* to) : to_(to) {}

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override { return to_->pubsync(); }

 private:
  bool put(unsigned char c);

  std::streambuf* to_;
};

// An ostream over `to` whose bytes are escaped; `to`'s flags do not carry.
class EscapedStream final : public std::ostream {
 public:
  explicit EscapedStream(std::ostream& to) : std::ostream(nullptr), buf_(to.rdbuf()) {
    rdbuf(&buf_);
  }

 private:
  EscapingStreambuf buf_;
};

}  // namespace kvmai
