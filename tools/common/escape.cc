#include "common/escape.h"

#include <array>

namespace kvmai {
namespace {

constexpr std::string_view kHex = "0123456789abcdef";

std::array<char, 4> escaped(unsigned char c) {
  return {'\\', 'x', kHex[c >> 4U], kHex[c & 0xfU]};
}

}  // namespace

std::string escape_bytes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (passes_unescaped(c)) {
      out += ch;
    } else {
      const auto e = escaped(c);
      out.append(e.data(), e.size());
    }
  }
  return out;
}

bool EscapingStreambuf::put(unsigned char c) {
  if (passes_unescaped(c)) {
    return to_->sputc(static_cast<char>(c)) != traits_type::eof();
  }
  const auto e = escaped(c);
  return to_->sputn(e.data(), e.size()) == static_cast<std::streamsize>(e.size());
}

EscapingStreambuf::int_type EscapingStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) {
    return traits_type::not_eof(c);
  }
  return put(static_cast<unsigned char>(traits_type::to_char_type(c))) ? c : traits_type::eof();
}

std::streamsize EscapingStreambuf::xsputn(const char* s, std::streamsize n) {
  // Runs of bytes that pass go on in one piece.
  std::streamsize done = 0;
  while (done < n) {
    std::streamsize run = done;
    while (run < n && passes_unescaped(static_cast<unsigned char>(s[run]))) {
      ++run;
    }
    if (run > done && to_->sputn(s + done, run - done) != run - done) {
      return done;
    }
    done = run;
    if (done < n) {
      if (!put(static_cast<unsigned char>(s[done]))) {
        return done;
      }
      ++done;
    }
  }
  return n;
}

}  // namespace kvmai
