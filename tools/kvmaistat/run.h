// The tool: options in, samples out, an exit code back.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kvmai::kvmaistat {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRevoked = 3;

// `args` without the program name.  Errors go to `raw_err`, one line each;
// what either stream gets is escaped (common/escape.h).
int run(const std::vector<std::string>& args, std::ostream& raw_out, std::ostream& raw_err);

}  // namespace kvmai::kvmaistat
