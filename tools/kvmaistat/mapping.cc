#include "mapping.h"

#include <endian.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kvmai::kvmaistat {
namespace {

std::runtime_error system_failure(const std::filesystem::path& path, std::string_view what,
                                  int error) {
  std::string message = path.string() + ": " + std::string(what) + ": " + std::strerror(error);
  // Mapping a BAR through sysfs takes CAP_SYS_ADMIN; say so rather than
  // leave the reader to guess.
  if (error == EACCES || error == EPERM) {
    message += " (needs root)";
  }
  return std::runtime_error(message);
}

}  // namespace

UniqueFd open_read_only(const std::filesystem::path& path) {
  // Variadic only for O_CREAT's mode, which is not passed.
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg)
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw system_failure(path, "open", errno);
  }
  return UniqueFd(fd);
}

std::uint64_t file_size(const UniqueFd& fd, const std::filesystem::path& path) {
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    throw system_failure(path, "stat", errno);
  }
  return static_cast<std::uint64_t>(st.st_size);
}

Mapping::~Mapping() {
  if (addr_ != nullptr) {
    munmap(addr_, size_);
  }
}

Mapping& Mapping::operator=(Mapping&& other) noexcept {
  if (this != &other) {
    if (addr_ != nullptr) {
      munmap(addr_, size_);
    }
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Mapping Mapping::map_read_only(const UniqueFd& fd, std::size_t size,
                               const std::filesystem::path& path) {
  if (size == 0) {
    throw std::runtime_error(path.string() + ": nothing to map (size 0)");
  }
  void* addr = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (addr == MAP_FAILED) {
    throw system_failure(path, "mmap", errno);
  }
  return {addr, size};
}

std::uint64_t Mapping::load64(std::size_t offset) const {
  assert(offset % 8 == 0 && offset + 8 <= size_);
  const auto* word = reinterpret_cast<const volatile std::uint64_t*>(
      static_cast<const std::byte*>(addr_) + offset);
  return le64toh(*word);
}

std::uint32_t Mapping::load32(std::size_t offset) const {
  assert(offset % 4 == 0 && offset + 4 <= size_);
  const auto* word = reinterpret_cast<const volatile std::uint32_t*>(
      static_cast<const std::byte*>(addr_) + offset);
  return le32toh(*word);
}

std::vector<std::byte> Mapping::copy_out(std::size_t len) const {
  const std::size_t words = (len + 3) / 4;
  assert(words * 4 <= size_);
  std::vector<std::byte> bytes(words * 4);
  for (std::size_t i = 0; i < words; ++i) {
    // Back to the device's byte order: the caller decodes the structs.
    const std::uint32_t word = htole32(load32(i * 4));
    std::memcpy(bytes.data() + i * 4, &word, sizeof word);
  }
  bytes.resize(len);
  return bytes;
}

}  // namespace kvmai::kvmaistat
