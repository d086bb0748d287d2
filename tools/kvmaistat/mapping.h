// File descriptors and read-only shared mappings as move-only owners.
//
// The counter BAR is mapped for the whole run and read with single aligned
// loads; the layout BAR only while it is copied out.  sysfs resourceN
// files of memory BARs support mmap only, never read(), so nothing here
// reads them any other way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/unique_fd.h"

namespace kvmai::kvmaistat {

// O_RDONLY | O_CLOEXEC; throws std::runtime_error naming `path`.
UniqueFd open_read_only(const std::filesystem::path& path);

// st_size: for a sysfs resourceN file, the size of the BAR.
std::uint64_t file_size(const UniqueFd& fd, const std::filesystem::path& path);

class Mapping {
 public:
  Mapping() = default;
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  Mapping(Mapping&& other) noexcept
      : addr_(std::exchange(other.addr_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  Mapping& operator=(Mapping&& other) noexcept;

  // PROT_READ and MAP_SHARED: a private mapping would be a snapshot of a
  // file, not a window on the device.  Throws std::runtime_error naming
  // `path`.
  static Mapping map_read_only(const UniqueFd& fd, std::size_t size,
                               const std::filesystem::path& path);

  std::size_t size() const { return size_; }

  // One aligned little-endian load each, never split, merged or hoisted
  // out of a loop by the compiler: the memory is a device's.  `offset` must
  // be aligned and inside the mapping.
  std::uint64_t load64(std::size_t offset) const;
  std::uint32_t load32(std::size_t offset) const;

  // The first `len` bytes (rounded up to 4), copied with 32-bit loads: an
  // emulated BAR handles those, where memcpy's access sizes are anyone's
  // guess.
  std::vector<std::byte> copy_out(std::size_t len) const;

 private:
  Mapping(void* addr, std::size_t size) : addr_(addr), size_(size) {}

  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kvmai::kvmaistat
