// Every object and command of the command table, walked the same way: the
// global options in both forms, help, an unknown option or word, unique
// prefixes.  A command added to the table without words to run it with
// here fails the walk.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands/commands.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::cat;
using testing::run_cli;
using testing::RunResult;
using ::testing::StartsWith;

// Words each command runs with: they parse, and the command then works or
// fails as it would on a host without the module (exit 0 or 1).
const std::map<std::string, Args>& samples() {
  static const std::map<std::string, Args> s{
      {"check show", {"acs"}},
      // Where nothing can be written: the walk must not leave recordings.
      {"check record", {"/proc/kvmaictl-table-walk"}},
      {"counters show", {}},
      {"counters add", {"mock_bw", "package", "0"}},
      {"counters del", {"0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45"}},
      {"dev add", {"g1", "21:00.0"}},
      {"dev del", {"g1", "0000:21:00.0"}},
      {"group show", {"g1"}},
      {"group add", {"g1", "vm", "vm1", "mode", "translated"}},
      {"group del", {"g1"}},
      {"group set", {"g1", "state", "enabled"}},
      {"group enable", {"g1"}},
      {"group disable", {"g1"}},
      // An operation the hook does not act on: it reads no domain XML.
      {"hook qemu", {"--run-dir", "/nonexistent", "--", "vm1", "migrate", "begin", "-"}},
      {"monitor all", {"--count", "1"}},
      // Dry runs: the walk must change no host it runs on.
      {"partition show", {}},
      {"partition set", {"0000:21:00.0", "vfs", "2", "dry-run"}},
      {"partition add", {"mtty", "type", "mtty-1", "dry-run"}},
      {"partition del", {"0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45", "dry-run"}},
      {"partition apply", {"/nonexistent/partitions.toml", "dry-run"}},
      {"pmu show", {"vm1"}},
      {"pmu assign", {"vm1", "core", "amd_l3", "cpus", "0-3"}},
      {"pmu release", {"vm1", "amd_l3"}},
      // Without the module there is nothing to exec: it asks for the record first.
      {"pmu exec", {"--user", "root", "vm1", "--", "/bin/true"}},
      {"topo show", {"gpu0"}},
      {"topo matrix", {}},
      {"topo tree", {}},
      {"version show", {}},
      {"vm plan", {"gpu0", "nic0", "vcpus", "2", "memory", "256"}},
      {"vm nccl-topo", {"gpu0", "nic0", "vcpus", "2"}},
      // Files that are not there: it says so (exit 1).
      {"vm nccl-map", {"/nonexistent/plan.json", "/nonexistent/topo.xml"}},
  };
  return s;
}

TransportFactory no_module() {
  return [](std::string_view family) -> std::unique_ptr<GenlTransport> {
    throw GenlError::family_not_found(family);
  };
}

RunResult run(const Args& args) {
  return run_cli(args, no_module());
}

// The shortest prefix of `word` that no other of `words` starts with.
std::string unique_prefix(std::string_view word, const std::vector<std::string_view>& words) {
  for (std::size_t n = 1; n <= word.size(); ++n) {
    const auto p = word.substr(0, n);
    if (std::count_if(words.begin(), words.end(),
                      [&](std::string_view w) { return w.starts_with(p); }) == 1) {
      return std::string(p);
    }
  }
  return std::string(word);
}

template <typename T>
std::vector<std::string_view> names(const std::vector<T>& v) {
  std::vector<std::string_view> n;
  for (const auto& x : v) {
    n.push_back(x.name);
  }
  return n;
}

// Whether `r` is a usage error said in one line about `where`.
::testing::AssertionResult one_line_usage_error(const RunResult& r, const std::string& where) {
  if (r.rc != kExitUsage) {
    return ::testing::AssertionFailure() << "exit " << r.rc << ", stderr: " << r.err;
  }
  if (!r.err.starts_with("Error: " + where + ": ") ||
      std::count(r.err.begin(), r.err.end(), '\n') != 1 || !r.err.ends_with("\n")) {
    return ::testing::AssertionFailure() << "not one line about " << where << ": " << r.err;
  }
  return ::testing::AssertionSuccess();
}

class TableWalk : public ::testing::Test {
 protected:
  const std::string sysfs_ = testing::testdata("emulated-vm/sys");
};

TEST_F(TableWalk, EveryCommandHasSampleWords) {
  std::size_t n = 0;
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      EXPECT_TRUE(samples().contains(fmt::format("{} {}", o.name, c.name)))
          << o.name << " " << c.name << ": no words to walk it with";
      ++n;
    }
  }
  EXPECT_EQ(n, samples().size()) << "samples for commands the table does not have";
}

TEST_F(TableWalk, HelpAtEveryLevel) {
  const auto top = run({"help"});
  EXPECT_EQ(top.rc, kExitOk);
  EXPECT_THAT(top.out, StartsWith("Usage: kvmaictl "));
  for (const auto& o : command_table()) {
    const std::string object(o.name);
    for (const Args& a : {Args{object, "help"}, Args{object, "-h"}, Args{"--help", object}}) {
      const auto r = run(a);
      EXPECT_EQ(r.rc, kExitOk) << object;
      EXPECT_THAT(r.out, StartsWith("Usage: kvmaictl " + object + " ")) << object;
      EXPECT_EQ(r.err, "") << object;
    }
    for (const auto& c : o.commands) {
      const std::string command(c.name);
      const std::string usage = fmt::format("Usage: kvmaictl {} {}", object, command);
      for (const Args& a : {Args{object, command, "help"}, Args{object, command, "--help"},
                            Args{"-h", object, command}}) {
        const auto r = run(a);
        EXPECT_EQ(r.rc, kExitOk) << usage;
        EXPECT_THAT(r.out, StartsWith(usage)) << usage;
        EXPECT_EQ(r.err, "") << usage;
      }
      // Every keyword a command takes is in its usage.
      for (const auto& p : c.syntax.params) {
        EXPECT_THAT(c.usage, ::testing::HasSubstr(p.name)) << usage;
      }
    }
  }
}

// -j works or is refused: every command prints one JSON document, or
// nothing (it only changes something, or failed), or says in one line
// that it has no JSON form; never another format with -j.
TEST_F(TableWalk, JsonWorksOrIsRefused) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      const std::string where = fmt::format("{} {}", o.name, c.name);
      const auto r =
          run(cat({"-j", std::string(o.name), std::string(c.name), "--sysfs-root", sysfs_},
                  samples().at(where)));
      if (!c.no_json.empty()) {
        EXPECT_TRUE(one_line_usage_error(r, where)) << where;
        EXPECT_THAT(r.err, ::testing::HasSubstr("-j: no JSON output")) << where;
        EXPECT_EQ(r.out, "") << where;
        continue;
      }
      EXPECT_TRUE(r.rc == kExitOk || r.rc == kExitFailed) << where << ": " << r.err;
      EXPECT_TRUE(r.out.empty() || nlohmann::json::accept(r.out)) << where << ": " << r.out;
    }
  }
}

TEST_F(TableWalk, UniquePrefixesOfObjectsAndCommands) {
  for (const auto& o : command_table()) {
    const std::string object = unique_prefix(o.name, names(command_table()));
    for (const auto& c : o.commands) {
      const std::string command = unique_prefix(c.name, names(o.commands));
      const auto full = run({std::string(o.name), std::string(c.name), "help"});
      const auto shortened = run({object, command, "help"});
      EXPECT_EQ(shortened.rc, kExitOk) << object << " " << command;
      EXPECT_EQ(shortened.out, full.out) << object << " " << command;
    }
  }
}

// `--sysfs-root DIR` and `--sysfs-root=DIR`, before the object and after
// the command's words, are one thing to every command.
TEST_F(TableWalk, SysfsRootInBothFormsEverywhere) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      const std::string where = fmt::format("{} {}", o.name, c.name);
      const Args words = samples().at(where);
      const Args cmd{std::string(o.name), std::string(c.name)};
      // After the words, but before any "--" of theirs.
      const auto dash = std::find(words.begin(), words.end(), "--");
      const auto with = [&](const Args& option) {
        Args a = cmd;
        a.insert(a.end(), words.begin(), dash);
        a.insert(a.end(), option.begin(), option.end());
        a.insert(a.end(), dash, words.end());
        return a;
      };
      const auto spaced = run(with({"--sysfs-root", sysfs_}));
      EXPECT_NE(spaced.rc, kExitUsage) << where << ": " << spaced.err;
      for (const Args& a :
           {with({"--sysfs-root=" + sysfs_}), cat(Args{"--sysfs-root", sysfs_}, cat(cmd, words)),
            cat(Args{"--sysfs-root=" + sysfs_}, cat(cmd, words))}) {
        const auto r = run(a);
        EXPECT_EQ(r.rc, spaced.rc) << where << ": " << r.err;
        EXPECT_EQ(r.out, spaced.out) << where;
        EXPECT_EQ(r.err, spaced.err) << where;
      }
    }
  }
}

TEST_F(TableWalk, UnknownOptionIsAOneLineUsageError) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      const std::string where = fmt::format("{} {}", o.name, c.name);
      const Args cmd{std::string(o.name), std::string(c.name)};
      // Another program's words (the hook's) start at the first word that
      // is no option of theirs: alone, it leaves the rest missing.
      const Args words = c.syntax.data ? Args{} : samples().at(where);
      const auto r = run(cat(cat(cmd, {"--frobnicate"}), words));
      EXPECT_TRUE(one_line_usage_error(r, where)) << where;
      EXPECT_EQ(r.out, "") << where;
    }
  }
}

TEST_F(TableWalk, UnknownWordIsAOneLineUsageError) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      const std::string where = fmt::format("{} {}", o.name, c.name);
      const Args words = samples().at(where);
      GlobalOptions opts;
      const auto taken = parse_words(c.syntax, words, opts).operands().size();
      // Where another operand could stand, the word is one (a device, a
      // unit): the command says what it makes of it.
      if (c.syntax.data || taken < c.syntax.most_operands() ||
          std::find(words.begin(), words.end(), "--") != words.end()) {
        continue;
      }
      const auto r =
          run(cat(cat({std::string(o.name), std::string(c.name)}, words), {"frobnicate"}));
      EXPECT_TRUE(one_line_usage_error(r, where)) << where;
    }
  }
}

// A keyword shortened to its unique prefix is the keyword, written bare
// or as an option.
TEST_F(TableWalk, UniquePrefixesOfKeywords) {
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      // Bare, a keyword is told from the other keywords; as an option,
      // from the other params and the global options too.
      std::vector<std::string_view> keywords;
      std::vector<std::string_view> options;
      for (const auto& g : global_options()) {
        options.push_back(g.name);
      }
      for (const auto& p : c.syntax.params) {
        options.push_back(p.name);
        if (p.form == Param::Form::keyword) {
          keywords.push_back(p.name);
        }
      }
      for (const auto& p : c.syntax.params) {
        const std::string value = p.value_name.empty() ? "" : "v";
        const auto parsed = [&](const std::string& name, bool dashes) {
          Args a;
          for (std::size_t i = 0; i < c.syntax.operands.size(); ++i) {
            if (c.syntax.operands[i].count == Operand::Count::one ||
                c.syntax.operands[i].count == Operand::Count::some) {
              a.push_back("x");
            }
          }
          Args kw{dashes || p.form == Param::Form::option ? "--" + name : name};
          if (!value.empty()) {
            kw.push_back(value);
          }
          // Before another program's words, which end the options.
          a.insert(c.syntax.data ? a.begin() : a.end(), kw.begin(), kw.end());
          if (!c.syntax.after_dash.empty()) {
            a.insert(a.end(), {"--", "cmd"});
          }
          GlobalOptions opts;
          return parse_words(c.syntax, a, opts);
        };
        const std::string where = fmt::format("{} {} {}", o.name, c.name, p.name);
        for (const bool dashes : {false, true}) {
          if (!dashes && p.form == Param::Form::option) {
            continue;
          }
          // Another program's words allow no shortening.
          const std::string name = c.syntax.data ? std::string(p.name)
                                   : dashes      ? unique_prefix(p.name, options)
                                                 : unique_prefix(p.name, keywords);
          const auto w = parsed(name, dashes);
          EXPECT_EQ(w.value(p.name), value) << where << (dashes ? " as --" : "");
        }
      }
    }
  }
}

// `vm plan gpu0 vcpu 8`: a prefix of a keyword, never a device.
TEST_F(TableWalk, PlanTakesAPrefixOfVcpusAsTheKeyword) {
  const auto full = run({"vm", "plan", "gpu0", "nic0", "vcpus", "8", "--sysfs-root", sysfs_});
  const auto prefix = run({"vm", "plan", "gpu0", "nic0", "vcpu", "8", "--sysfs-root", sysfs_});
  ASSERT_EQ(full.rc, kExitOk) << full.err;
  EXPECT_EQ(prefix.rc, kExitOk) << prefix.err;
  EXPECT_EQ(prefix.out, full.out);
  EXPECT_THAT(full.out, ::testing::HasSubstr("-smp 8,"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
