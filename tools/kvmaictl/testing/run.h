// Helpers shared by the unit tests.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/run.h"
#include "commands/commands.h"

namespace kvmai::kvmaictl::testing {

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
  // The environment of the tests' host is not the tool's: none.
  r.rc = run(command_table(), args, out, err, factory,
             [](const char*) -> const char* { return nullptr; });
  r.out = out.str();
  r.err = err.str();
  return r;
}

// `a` followed by `b`: a command line from its parts.
inline Args cat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
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

// Whether `out` matches the golden file `name` in testdata/golden; with
// KVMAICTL_UPDATE_GOLDENS set, rewrites the file instead and says so in
// `note`.
inline ::testing::AssertionResult matches_golden(const std::string& name, const std::string& out,
                                                 std::string* note = nullptr) {
  const std::string path = testdata("golden/" + name);
  if (std::getenv("KVMAICTL_UPDATE_GOLDENS") != nullptr) {
    std::ofstream(path) << out;
    if (note != nullptr) {
      *note = "rewrote " + path;
    }
    return ::testing::AssertionSuccess();
  }
  if (out == read_text(path)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "output differs from " << path << ":\n" << out;
}

struct Ran {
  int rc = -1;
  std::string out;
};

// popen()'s stream, closed once; close() gives the command's wait status.
class Pipe {
 public:
  explicit Pipe(const std::string& cmd) : f_(popen(cmd.c_str(), "r")) {}
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  Pipe(Pipe&&) = delete;
  Pipe& operator=(Pipe&&) = delete;
  ~Pipe() { close(); }
  FILE* get() const { return f_; }
  int close() {
    const int status = f_ != nullptr ? pclose(f_) : -1;
    f_ = nullptr;
    return status;
  }

 private:
  FILE* f_;
};

// Runs `cmd` with /bin/sh; its standard output and exit status.
inline Ran sh(const std::string& cmd) {
  Ran r;
  Pipe p(cmd);
  if (p.get() == nullptr) {
    return r;
  }
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p.get()) != nullptr) {
    r.out += buf.data();
  }
  const int status = p.close();
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace kvmai::kvmaictl::testing
