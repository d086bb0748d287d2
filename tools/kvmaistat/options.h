// The command line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/sysfs.h"

namespace kvmai::kvmaistat {

// A command line kvmaistat cannot run: exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Options {
  std::filesystem::path sysfs_root{kSysfsRoot};  // where sysfs is read (common/sysfs.h)
  std::optional<std::string> device;             // a BDF; none: every device found
  std::int64_t interval_ms = 1000;
  std::int64_t count = 0;  // samples; 0: until interrupted
  bool json = false;
  bool pretty = false;  // implies json
  bool help = false;
  bool version = false;
};

// Throws UsageError.
Options parse_options(const std::vector<std::string>& args);

std::string usage();

}  // namespace kvmai::kvmaistat
