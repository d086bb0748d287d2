#include "cli/run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "commands/commands.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::run_cli;
using ::testing::StartsWith;

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

// Usage errors are one line; help is where the usage is.
TEST(Cli, NoObjectIsUsageError) {
  const auto r = run_cli({});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, "Error: missing OBJECT (see \"kvmaictl help\")\n");
}

TEST(Cli, UnknownObjectSuggests) {
  const auto r = run_cli({"vresion"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, "Error: object \"vresion\" is unknown (did you mean \"version\"?)\n");
}

TEST(Cli, UnknownCommandSuggests) {
  const auto r = run_cli({"topo", "shwo"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, "Error: topo: command \"shwo\" is unknown (did you mean \"show\"?)\n");
}

TEST(Cli, BadOptionIsUsageErrorWithCommandPrefix) {
  const auto r = run_cli({"topo", "show", "--frob"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err, "Error: topo show: unrecognised option '--frob'\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, MistypedOptionSuggests) {
  const auto r = run_cli({"topo", "--sysfs-rot", "x"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(
      r.err,
      "Error: topo show: unrecognised option '--sysfs-rot' (did you mean \"--sysfs-root\"?)\n");
}

// Global options anywhere before "--", in both forms, and shortened.
TEST(Cli, GlobalOptionsAnywhere) {
  const std::string flat = testing::testdata("flat/sys");
  const std::string want = run_cli({"-j", "topo", "show", "--sysfs-root", flat}).out;
  ASSERT_THAT(want, StartsWith("{"));
  for (const Args& a : std::vector<Args>{{"topo", "-j", "--sysfs-root=" + flat},
                                         {"--sysfs-root", flat, "topo", "show", "--json"},
                                         {"topo", "show", "--sys", flat, "-j"},
                                         {"--js", "topo", "--sysfs=" + flat}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_EQ(r.out, want) << a.front();
  }
}

// -jv: short flags bundled, as getopt takes them.
TEST(Cli, ShortFlagsBundle) {
  const auto r = run_cli({"-jp", "topo", "--sysfs-root", testing::testdata("flat/sys")});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("{\n"));
  EXPECT_EQ(run_cli({"-jx", "topo"}).err, "Error: unrecognised option '-jx'\n");
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

}  // namespace
}  // namespace kvmai::kvmaictl
