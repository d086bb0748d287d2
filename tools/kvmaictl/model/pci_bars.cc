#include "model/pci_bars.h"

#include <charconv>
#include <sstream>

namespace kvmai::kvmaictl {
namespace {

// IORESOURCE_* of include/linux/ioport.h, as the kernel prints them.
constexpr std::uint64_t kIoresourceIo = 0x100;
constexpr std::uint64_t kIoresourceMem = 0x200;
constexpr std::uint64_t kIoresourcePrefetch = 0x2000;
constexpr std::uint64_t kIoresourceMem64 = 0x100000;
constexpr int kBars = 6;

bool parse_hex(const std::string& s, std::uint64_t& value) {
  std::string_view v = s;
  if (v.starts_with("0x")) {
    v.remove_prefix(2);
  }
  const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), value, 16);
  return error == std::errc() && end == v.data() + v.size() && !v.empty();
}

}  // namespace

std::vector<Bar> parse_resource(std::string_view text) {
  std::vector<Bar> bars;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int index = 0; index < kBars && std::getline(in, line); ++index) {
    std::istringstream fields(line);
    std::string a;
    std::string b;
    std::string c;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
    std::uint64_t flags = 0;
    if (!(fields >> a >> b >> c) || !parse_hex(a, start) || !parse_hex(b, end) ||
        !parse_hex(c, flags)) {
      continue;
    }
    // An unimplemented BAR, or the upper half of a 64-bit one: all zeros.
    if (end <= start || (flags & (kIoresourceIo | kIoresourceMem)) == 0) {
      continue;
    }
    bars.push_back({.index = index,
                    .size = end - start + 1,
                    .io = (flags & kIoresourceIo) != 0,
                    .mem64 = (flags & kIoresourceMem64) != 0,
                    .prefetchable = (flags & kIoresourcePrefetch) != 0});
  }
  return bars;
}

std::string format_size(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P"};
  std::size_t unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

std::string describe_bar(const Bar& bar) {
  std::string s = format_size(bar.size);
  if (bar.io) {
    return s + " io";
  }
  if (bar.mem64) {
    s += " 64-bit";
  }
  if (bar.prefetchable) {
    s += " pref";
  }
  return s;
}

}  // namespace kvmai::kvmaictl
