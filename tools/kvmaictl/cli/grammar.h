// The one grammar of kvmaictl's command line:
//
//   kvmaictl [ OPTION ]... OBJECT [ COMMAND ] [ WORD ]...
//
// OBJECT and COMMAND are words of the command table (commands/table.cc),
// shortened to any unique prefix.  The global options (-j, -p, -v, -h,
// --sysfs-root DIR, ...: global_options()) may stand anywhere before a
// "--", in every command the same way: `--opt VALUE` or `--opt=VALUE`, a
// long name shortened to any unique prefix, short flags alone or bundled
// (-jv).  A command's own words follow its Syntax, in the iproute2 way:
// operands, then keywords in any order (`vcpus 8`), each keyword also as
// `--vcpus 8` or `--vcpus=8`, and shortened to any unique prefix.  `help`
// as the first word after an object or command, or -h anywhere, asks for
// that level's usage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sysfs.h"

namespace kvmai::kvmaictl {

using Args = std::vector<std::string>;

// The options every command takes, whatever it does with them.
struct GlobalOptions {
  bool json = false;
  bool pretty = false;  // implies json
  bool verbose = false;
  bool help = false;
  std::string sysfs_root{kSysfsRoot};  // where sysfs is mounted (common/sysfs.h)
  std::string procfs_root{kProcfsRoot};
  // A recorded machine (--root DIR: DIR/sys, DIR/proc and its files), or
  // "/" live; empty when only --sysfs-root/--procfs-root were given.
  std::string machine_root{"/"};
  // --procfs-root given: a recorded sysfs tree is read with it, never with
  // the live /proc.
  bool procfs_given = false;
  // The root ports of each host bridge are one switch's downstream ports
  // (model/pci_tree.h, PciTree::Options): for a host whose ACS switches
  // are emulated by host bridges.
  bool host_bridge_switches = false;
};

// One global option, for parsing and for the usage text.
struct GlobalOption {
  char short_name = 0;          // 0: none
  std::string_view name;        // without "--"
  std::string_view value_name;  // empty: a flag
  std::string_view help;
  void (*set)(GlobalOptions& opts, const std::string& value) = nullptr;
  // A flag a host may set once for every run (KVMAICTL_...=1); empty for
  // none.
  std::string_view environment{};
};

// Every global option, in the order usage lists them.
const std::vector<GlobalOption>& global_options();

// The flags the environment sets (GlobalOption::environment): a variable
// set to anything but "" or "0".  `getenv` is ::getenv but in tests.
void options_from_environment(GlobalOptions& opts,
                              const std::function<const char*(const char*)>& getenv);

// A word a command takes by name.
struct Param {
  enum class Form {
    keyword,  // `NAME VALUE`, also `--NAME VALUE` and `--NAME=VALUE`
    option,   // `--NAME VALUE` and `--NAME=VALUE` only: never a bare word, so
              // it never takes the place of an operand (a unit called "user")
  };
  std::string_view name;
  std::string_view value_name;  // empty: a flag, no value follows
  Form form = Form::keyword;
  bool repeats = false;  // may be given more than once, each kept in order
};

// A word a command takes by position.
struct Operand {
  enum class Count { one, optional, some, any };  // 1, 0-1, 1 or more, 0 or more
  std::string_view name;
  Count count = Count::one;
};

struct Syntax {
  std::vector<Operand> operands{};
  std::vector<Param> params{};
  // Non-empty: the words after the first "--" are another program's
  // command line (pmu exec's COMMAND), taken verbatim; "--" and at least
  // one word are required.  Empty: "--" only ends options, so the words
  // after it are operands however they look.
  std::string_view after_dash{};
  // The operands are another program's words (libvirt's to the hook): the
  // first word that is not an option or a param spelled in full starts
  // them, and from there every word is an operand.
  bool data = false;

  // How many operands the command takes at most.
  std::size_t most_operands() const;
};

// What a command's words said.
struct Words {
  struct Word {
    std::string_view param;  // empty: an operand
    std::string value;       // a flag's is empty
  };
  std::vector<Word> words;  // in the order given
  std::vector<std::string> after_dash;
  bool help = false;  // `help` as the first word

  std::vector<std::string> operands() const;
  // The operand at `index`, or "" when there are fewer.
  std::string operand(std::size_t index) const;
  bool has(std::string_view param) const;
  // The value of `param`, the first one if it repeats.
  std::optional<std::string> value(std::string_view param) const;
};

// `value`, given to `name`, as a whole decimal number from `least` to
// `most`; throws UsageError ("vcpus wants a positive number, not \"x\"").
std::uint64_t number_of(std::string_view name, const std::string& value, std::uint64_t least = 0,
                        std::uint64_t most = std::numeric_limits<std::uint64_t>::max());

// Picks `word` among `candidates`: an exact match, else a unique prefix.
// Returns the index, or throws UsageError naming `what` with a "did you
// mean" suggestion or the ambiguous matches.
std::size_t match_word(std::string_view word, const std::vector<std::string_view>& candidates,
                       std::string_view what);

// The nearest candidate by edit distance, if close enough to be a typo.
std::string_view suggest(std::string_view word, const std::vector<std::string_view>& candidates);

// Parses a command's words (those after OBJECT COMMAND) by `syntax`; the
// global options among them go to `opts`.  `options` false: a "--" came
// before them already.  Throws UsageError.
Words parse_words(const Syntax& syntax, const Args& args, GlobalOptions& opts, bool options = true);

// Where `args` stands after the global options from `from` on: the index
// of the first other word, with `opts` set from the options and `options`
// cleared when a "--" was passed.  An option that is not global is a
// UsageError, or with `stop_at_unknown` where the words stop.
std::size_t skip_global_options(const Args& args, std::size_t from, GlobalOptions& opts,
                                bool& options, bool stop_at_unknown);

}  // namespace kvmai::kvmaictl
