// The tool: options in, samples out, an exit code back.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kvmaistat {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitRevoked = 3;

// `args` without the program name.  Errors go to `err`, one line each.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kvmaistat
