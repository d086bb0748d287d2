// A function's BARs as its sysfs `resource` file gives them: the size and
// kind of each, for the views that show what a device maps (an H100's
// 128 GiB BAR1 decides the guest's 64-bit MMIO window).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvmai::kvmaictl {

struct Bar {
  int index = 0;  // 0-5
  std::uint64_t size = 0;
  bool io = false;  // an I/O port BAR, else memory
  bool mem64 = false;
  bool prefetchable = false;
};

// BARs 0-5 of a `resource` file ("start end flags" lines, in hex), those
// with an address range only; lines past the sixth (ROM, VF regions) are
// not the function's own BARs.
std::vector<Bar> parse_resource(std::string_view text);

// "16M", "128G", "2K", "512": the largest binary unit that divides `bytes`.
std::string format_size(std::uint64_t bytes);

// "16M", "128G 64-bit pref", "256 io".
std::string describe_bar(const Bar& bar);

}  // namespace kvmai::kvmaictl
