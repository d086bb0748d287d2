// How a command fails, and the exit status each way gives.
#pragma once

#include <exception>
#include <stdexcept>

namespace kvmai::kvmaictl {

enum ExitCode {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitCannotExec = 127,  // a command that runs another could not (as env(1))
};

// Wrong words or options: exit 2, one line on stderr.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The operation was refused or failed: exit 1.
class OpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The command said what went wrong in a format of its own already (a
// libvirt hook's single "kvmai: ..." line, which libvirt copies into its
// error): exit with `code` and print nothing more.
class QuietExit : public std::exception {
 public:
  explicit QuietExit(int code) : code_(code) {}
  int code() const { return code_; }
  const char* what() const noexcept override { return "exit status already reported"; }

 private:
  int code_;
};

}  // namespace kvmai::kvmaictl
