// Helpers shared by the unit tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "cli.h"

namespace kvmaictl::testing {

struct RunResult {
  int rc = -1;
  std::string out;
  std::string err;
};

// Runs the tool in-process. The default transport factory fails the test
// if a command opens a socket.
inline RunResult run_cli(const Args& args, const TransportFactory& connect = nullptr) {
  std::ostringstream out;
  std::ostringstream err;
  TransportFactory factory = connect;
  if (!factory) {
    factory = [](std::string_view family) -> std::unique_ptr<GenlTransport> {
      throw std::logic_error("unexpected netlink connect to " + std::string(family));
    };
  }
  RunResult r;
  r.rc = run(args, out, err, factory);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline std::string testdata(const std::string& rel) {
  return std::string(KVMAICTL_TESTDATA) + "/" + rel;
}

inline std::string read_text(const std::string& path) {
  const std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace kvmaictl::testing
