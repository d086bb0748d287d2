#include "cli/grammar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/errors.h"

namespace kvmai::kvmaictl {
namespace {

using Count = Operand::Count;
using Form = Param::Form;

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

// group add's words.
const Syntax kGroupAdd{.operands = {{"NAME"}},
                       .params = {{"vm", "VMID"}, {"mode", "MODE"}, {"bind-socket", ""}}};
// vm plan's: operands of any number among keywords.
const Syntax kPlan{.operands = {{"DEV", Count::some}},
                   .params = {{"vcpus", "N"}, {"memory", "MIB"}, {"format", "FORMAT"}}};

// The message `args` are refused with, "" when they parse.
std::string refusal(const Syntax& syntax, const Args& args) {
  GlobalOptions opts;
  try {
    parse_words(syntax, args, opts);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Grammar, OperandsThenKeywords) {
  GlobalOptions opts;
  const auto w = parse_words(kGroupAdd, {"g1", "vm", "vm1", "bind"}, opts);
  EXPECT_EQ(w.operands(), std::vector<std::string>{"g1"});
  EXPECT_EQ(w.value("vm"), "vm1");
  EXPECT_TRUE(w.has("bind-socket"));
  EXPECT_EQ(w.value("bind-socket"), "");
  EXPECT_FALSE(w.has("mode"));
}

// A leading operand is taken by position: a group may be called "vm".
TEST(Grammar, LeadingOperandsArePositional) {
  GlobalOptions opts;
  const auto w = parse_words(kGroupAdd, {"vm", "vm", "vm1"}, opts);
  EXPECT_EQ(w.operand(0), "vm");
  EXPECT_EQ(w.value("vm"), "vm1");
}

// Every keyword also as --keyword VALUE and --keyword=VALUE.
TEST(Grammar, KeywordsAsOptions) {
  for (const Args& a : std::vector<Args>{{"g1", "--vm", "vm1", "--bind-socket"},
                                         {"g1", "--vm=vm1", "bind"},
                                         {"--vm", "vm1", "g1", "--bind"}}) {
    GlobalOptions opts;
    const auto w = parse_words(kGroupAdd, a, opts);
    EXPECT_EQ(w.operand(0), "g1") << a.front();
    EXPECT_EQ(w.value("vm"), "vm1") << a.front();
    EXPECT_TRUE(w.has("bind-socket")) << a.front();
  }
}

TEST(Grammar, Errors) {
  EXPECT_EQ(refusal(kGroupAdd, {}), "missing NAME");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "vm"}), "missing VMID after \"vm\"");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "--vm"}), "missing VMID after \"--vm\"");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "bind", "bind"}), "\"bind-socket\" given twice");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "vn", "x"}),
            "keyword \"vn\" is unknown (did you mean \"vm\"?)");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "--vn", "x"}),
            "unrecognised option '--vn' (did you mean \"--vm\"?)");
  EXPECT_EQ(refusal(kGroupAdd, {"-x"}), "unrecognised option '-x'");
  EXPECT_EQ(refusal(kGroupAdd, {"g", "--bind-socket=yes"}), "\"--bind-socket\" takes no value");
  EXPECT_EQ(refusal(Syntax{.operands = {{"NAME"}}}, {"g", "x"}), "unexpected word \"x\"");
  // A value may look like an option.
  EXPECT_EQ(refusal(kGroupAdd, {"g", "vm", "-1"}), "");
}

// `vm plan gpu0 vcpu 8`: "vcpu" is a prefix of "vcpus", never a device.
TEST(Grammar, PrefixesOfKeywordsAmongOperands) {
  GlobalOptions opts;
  const auto w = parse_words(kPlan, {"gpu0", "vcpu", "8", "nic0", "m", "1024"}, opts);
  EXPECT_EQ(w.operands(), (std::vector<std::string>{"gpu0", "nic0"}));
  EXPECT_EQ(w.value("vcpus"), "8");
  EXPECT_EQ(w.value("memory"), "1024");
  EXPECT_EQ(refusal(kPlan, {"vcpus", "8"}), "missing DEV");
}

TEST(Grammar, GlobalOptionsAmongTheWords) {
  GlobalOptions opts;
  const auto w =
      parse_words(kPlan, {"gpu0", "--sysfs-root", "/tmp/a", "-jv", "--procfs-root=/tmp/p"}, opts);
  EXPECT_EQ(w.operands(), std::vector<std::string>{"gpu0"});
  EXPECT_EQ(opts.sysfs_root, "/tmp/a");
  EXPECT_EQ(opts.procfs_root, "/tmp/p");
  EXPECT_TRUE(opts.json);
  EXPECT_TRUE(opts.verbose);
  EXPECT_EQ(refusal(kPlan, {"gpu0", "--sysfs-root"}), "missing DIR after \"--sysfs-root\"");
  // --p: --pretty or --procfs-root.
  EXPECT_EQ(refusal(kPlan, {"gpu0", "--p"}), "option \"--p\" is ambiguous (pretty, procfs-root)");
}

// After "--" every word is an operand, however it looks.
TEST(Grammar, DoubleDashEndsOptions) {
  GlobalOptions opts;
  const auto w = parse_words(kPlan, {"gpu0", "--", "-j", "vcpus"}, opts);
  EXPECT_EQ(w.operands(), (std::vector<std::string>{"gpu0", "-j", "vcpus"}));
  EXPECT_FALSE(opts.json);
}

// An option-form param is never a bare word: it takes no operand's place.
TEST(Grammar, OptionFormParams) {
  const Syntax exec{
      .operands = {{"VM"}, {"UNIT", Count::any}},
      .params = {{"user", "USER", Form::option}, {"unit", "NAME", Form::keyword, true}},
      .after_dash = "COMMAND"};
  GlobalOptions opts;
  const auto w =
      parse_words(exec, {"vm1", "user", "u", "x", "--user=a", "--", "q", "--user", "b"}, opts);
  EXPECT_EQ(w.operands(), (std::vector<std::string>{"vm1", "user"}));
  EXPECT_EQ(w.value("unit"), "x");  // "u": the keyword unit, the only one it starts
  EXPECT_EQ(w.value("user"), "a");
  EXPECT_EQ(w.after_dash, (Args{"q", "--user", "b"}));
  EXPECT_EQ(refusal(exec, {"vm1"}), "missing \"--\" before COMMAND");
  EXPECT_EQ(refusal(exec, {"vm1", "--"}), "missing COMMAND after \"--\"");
  EXPECT_EQ(refusal(exec, {"vm1", "unit", "--", "q"}), "missing NAME after \"unit\"");
}

// Another program's words: options only before them, spelled in full.
TEST(Grammar, DataOperands) {
  const Syntax hook{
      .operands = {{"DOMAIN"}, {"OPERATION"}, {"SUB-OPERATION"}, {"EXTRA", Count::any}},
      .params = {{"config", "FILE", Form::option}},
      .data = true};
  GlobalOptions opts;
  auto w = parse_words(hook, {"--config", "f", "--conf", "b", "c", "-j", "--config"}, opts);
  EXPECT_EQ(w.value("config"), "f");
  EXPECT_EQ(w.operands(), (std::vector<std::string>{"--conf", "b", "c", "-j", "--config"}));
  EXPECT_FALSE(opts.json);
  w = parse_words(hook, {"--", "--config", "b", "c"}, opts);
  EXPECT_EQ(w.operand(0), "--config");
  EXPECT_FALSE(w.has("config"));
}

TEST(Grammar, HelpAsTheFirstWordOnly) {
  GlobalOptions opts;
  EXPECT_TRUE(parse_words(kGroupAdd, {"help"}, opts).help);
  EXPECT_EQ(parse_words(kGroupAdd, {"help", "vm", "x"}, opts).operand(0), "");
  EXPECT_EQ(parse_words(kPlan, {"gpu0", "help"}, opts).operand(1), "help");
}

TEST(Grammar, Numbers) {
  EXPECT_EQ(number_of("vcpus", "8", 1), 8U);
  EXPECT_THROW(number_of("vcpus", "0", 1), UsageError);
  EXPECT_THROW(number_of("vcpus", "8x", 1), UsageError);
  EXPECT_THROW(number_of("vcpus", "-1"), UsageError);
  EXPECT_THROW(number_of("vcpus", "300", 1, 255), UsageError);
  try {
    number_of("vcpus", "many", 1);
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "vcpus wants a positive number, not \"many\"");
  }
}

}  // namespace
}  // namespace kvmai::kvmaictl
