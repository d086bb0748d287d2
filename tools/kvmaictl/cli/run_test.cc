#include "testing/run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::run_cli;
using ::testing::StartsWith;

TEST(MatchWord, ExactBeatsPrefix) {
  EXPECT_EQ(match_word("show", {"show", "showall"}, "command"), 0U);
  EXPECT_EQ(match_word("sh", {"add", "show"}, "command"), 1U);
}

TEST(MatchWord, AmbiguousPrefixNamesTheCandidates) {
  try {
    match_word("s", {"set", "show"}, "command");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "command \"s\" is ambiguous (set, show)");
  }
}

TEST(MatchWord, TypoSuggests) {
  try {
    match_word("tpoo", {"check", "topo", "version"}, "object");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "object \"tpoo\" is unknown (did you mean \"topo\"?)");
  }
  EXPECT_EQ(suggest("zzzzzz", {"topo"}), "");
}

TEST(Cli, ObjectsAreRegisteredAndSorted) {
  std::vector<std::string> names;
  for (const auto& o : objects()) {
    names.emplace_back(o.name);
  }
  EXPECT_THAT(names, ::testing::ElementsAre("check", "counters", "dev", "group", "hook", "monitor",
                                            "pmu", "topo", "version", "vm"));
}

TEST(Cli, HelpAtEveryLevelOpensNoSocket) {
  for (const Args& a : std::vector<Args>{{"help"},
                                         {"-h"},
                                         {"topo", "help"},
                                         {"topo", "show", "help"},
                                         {"topo", "show", "--help"},
                                         {"version", "help"},
                                         {"group", "help"},
                                         {"group", "add", "--help"},
                                         {"dev", "-h"},
                                         {"monitor", "help"},
                                         {"pmu", "help"},
                                         {"pmu", "assign", "-h"},
                                         {"check", "-h"}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitOk) << a.front();
    EXPECT_THAT(r.out, StartsWith("Usage: kvmaictl")) << a.front();
    EXPECT_EQ(r.err, "");
  }
}

TEST(Cli, NoObjectIsUsageError) {
  const auto r = run_cli({});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("Error: missing OBJECT\nUsage: kvmaictl"));
}

TEST(Cli, UnknownObjectSuggests) {
  const auto r = run_cli({"vresion"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err,
              StartsWith("Error: object \"vresion\" is unknown (did you mean \"version\"?)\n"));
}

TEST(Cli, UnknownCommandSuggestsAndPrintsObjectUsage) {
  const auto r = run_cli({"topo", "shwo"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err,
              StartsWith("Error: topo: command \"shwo\" is unknown (did you mean \"show\"?)\n"
                         "Usage: kvmaictl topo show"));
}

TEST(Cli, BadOptionIsUsageErrorWithCommandPrefix) {
  const auto r = run_cli({"topo", "show", "--frob"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("Error: topo show: unrecognised option '--frob'\nUsage: "));
  EXPECT_EQ(r.out, "");
}

TEST(Cli, BadGlobalOptionIsUsageError) {
  const auto r = run_cli({"--frob", "version"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unrecognised option '--frob'"));
}

TEST(Cli, PrefixesOfObjectAndCommandWork) {
  const auto r = run_cli({"to", "sh", "--sysfs-root", testing::testdata("flat/sys")});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
}

TEST(Keywords, OperandsThenKeywords) {
  const auto k = parse_keywords({"g1", "vm", "vm1", "bind"}, {"NAME"},
                                {{"vm", "VMID"}, {"mode", "MODE"}, {"bind-socket", ""}});
  EXPECT_EQ(k.operands, std::vector<std::string>{"g1"});
  EXPECT_EQ(k.value("vm"), "vm1");
  EXPECT_TRUE(k.has("bind-socket"));
  EXPECT_EQ(k.value("bind-socket"), "");
  EXPECT_FALSE(k.has("mode"));
}

TEST(Keywords, Errors) {
  const std::vector<Keyword> kws{{"vm", "VMID"}, {"bind-socket", ""}};
  const auto message = [&](const Args& a) {
    try {
      parse_keywords(a, {"NAME"}, kws);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({}), "missing NAME");
  EXPECT_EQ(message({"g", "vm"}), "missing VMID after \"vm\"");
  EXPECT_EQ(message({"g", "bind", "bind"}), "\"bind-socket\" given twice");
  EXPECT_EQ(message({"g", "vn", "x"}), "keyword \"vn\" is unknown (did you mean \"vm\"?)");
  EXPECT_EQ(message({"-x"}), "unrecognised option '-x'");
  // A value may look like an option.
  EXPECT_EQ(message({"g", "vm", "-1"}), "no error");
}

}  // namespace
}  // namespace kvmai::kvmaictl
