// The whole tool minus process setup: words in, an exit code out.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace kvmai::kvmaictl {

// getenv(3), or a test's stand-in.
using Environment = std::function<const char*(const char*)>;

// Runs `argv` (without the program name) against the command `table`, the
// options the environment sets first.  What it writes to `raw_out` and
// `raw_err` is escaped (common/escape.h); a usage error is one line on
// `raw_err` and exit 2.
int run(const std::vector<Object>& table, const Args& argv, std::ostream& raw_out,
        std::ostream& raw_err, const TransportFactory& connect, const Environment& environment);

// The usage texts of `help` at each level.
std::string main_usage(const std::vector<Object>& table);
std::string object_usage(const Object& o);
// "kvmaictl OBJECT COMMAND USAGE", without "Usage: ".
std::string command_usage(const Object& o, const Command& c);

}  // namespace kvmai::kvmaictl
