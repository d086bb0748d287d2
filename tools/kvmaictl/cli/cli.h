// The command line: `kvmaictl [OPTIONS] OBJECT {COMMAND | help}`.
//
// Each object lives in its own file and registers itself with a
// file-scope ObjectRegistrar, so adding an object is one new source file
// (plus its line in CMakeLists.txt); nothing else names it.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/print.h"
#include "client/genl.h"

namespace kvmai::kvmaictl {

// Wrong words or options: exit 2, usage on stderr.
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

enum ExitCode {
  kExitOk = 0,
  kExitFailed = 1,
  kExitUsage = 2,
  kExitCannotExec = 127,  // a command that runs another could not (as env(1))
};

struct GlobalOptions {
  bool json = false;
  bool pretty = false;
  bool verbose = false;
};

// Opens a generic netlink transport to `family`; only called by commands
// that talk to the module, so `help` never opens a socket.
using TransportFactory = std::function<std::unique_ptr<GenlTransport>(std::string_view family)>;

// What a command handler gets.
struct Context {
  Printer& out;
  std::ostream& err;
  GlobalOptions opts;
  TransportFactory connect;
  std::string where;  // "OBJECT COMMAND", what messages are prefixed with

  // A warning the kernel gave with a successful reply (extack): one line
  // on stderr; nothing when `text` is empty.
  void warn(std::string_view text) const;
};

using Args = std::vector<std::string>;

struct Command {
  std::string_view name;
  std::string_view usage;  // what follows "kvmaictl OBJECT COMMAND", may be empty
  std::string_view summary;
  std::function<void(const Args&, Context&)> run;
  // The arguments are data that another program passes (a libvirt hook's
  // domain name): a first argument "help" is not a request for usage.
  bool data_args = false;
  // The arguments end in another program's command line after "--": the
  // first "--" of the command line reaches `run` as a word of its own
  // (other commands never see it, it only ends the global options), and
  // nothing after it is taken for a global option or "help".
  bool keeps_double_dash = false;
};

struct Object {
  std::string_view name;
  std::string_view summary;
  std::vector<Command> commands;
  std::string_view default_command;  // run when no command word is given
};

class ObjectRegistrar {
 public:
  explicit ObjectRegistrar(Object object);
};

// Every registered object, sorted by name.
const std::vector<Object>& objects();

// Picks `word` among `candidates`: an exact match, else a unique prefix.
// Returns the index, or throws UsageError naming `what` with a "did you
// mean" suggestion or the ambiguous matches.
std::size_t match_word(std::string_view word, const std::vector<std::string_view>& candidates,
                       std::string_view what);

// Nearest candidate by edit distance, if close enough to be a likely typo.
std::string_view suggest(std::string_view word, const std::vector<std::string_view>& candidates);

// Parses a command's own arguments with Boost.Program_options; boost's
// complaints become UsageError.
boost::program_options::variables_map parse_args(
    const Args& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

// iproute2-style arguments: `OPERAND... { KEYWORD [ VALUE ] }...`.
struct Keyword {
  std::string_view name;
  std::string_view value_name;  // empty: a flag, no value follows
};

struct KeywordArgs {
  std::vector<std::string> operands;
  std::vector<std::pair<std::string_view, std::string>> given;  // keyword, value ("" for a flag)

  bool has(std::string_view keyword) const;
  std::optional<std::string> value(std::string_view keyword) const;
};

// Takes one word per name in `operands` (all required), then keywords from
// `keywords`, each at most once and shortened to any unique prefix. Throws
// UsageError.
KeywordArgs parse_keywords(const Args& args, const std::vector<std::string_view>& operands,
                           const std::vector<Keyword>& keywords);

// The whole tool minus process setup; returns the exit code. What it
// writes to `out` and `err` is escaped (escape.h).
int run(const Args& argv, std::ostream& out, std::ostream& err, const TransportFactory& connect);

}  // namespace kvmai::kvmaictl
