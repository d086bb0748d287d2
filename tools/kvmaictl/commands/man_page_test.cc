// The man page and the bash completion against the command table and
// `help`, so that none of them can drift: every command's heading in
// kvmaictl(8) is what `kvmaictl OBJECT COMMAND help` prints after
// "Usage:", word for word, no heading names a command the tool lacks,
// and the completion offers every object and command.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "commands/commands.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::read_text;
using testing::run_cli;

// Roff to plain text as far as headings use it: "\-" is "-".
std::string unroff(std::string s) {
  for (std::size_t i; (i = s.find("\\-")) != std::string::npos;) {
    s.replace(i, 2, "-");
  }
  return s;
}

std::string squeeze(const std::string& s) {
  std::istringstream in(s);
  std::string out;
  for (std::string w; in >> w;) {
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// "OBJECT COMMAND" -> the usage after them, from each ".SS kvmaictl ..."
// heading; "{ add | del }" in the command's place is one heading for each.
std::map<std::string, std::string> man_commands() {
  std::map<std::string, std::string> m;
  std::istringstream in(read_text(std::string(KVMAICTL_DOCS) + "/man/kvmaictl.8"));
  const std::regex choice(R"(^\{ ([a-z-]+(?: \| [a-z-]+)*) \} ?(.*)$)");
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(".SS kvmaictl ")) {
      continue;
    }
    const std::string heading = squeeze(unroff(line.substr(13)));
    const auto space = heading.find(' ');
    const std::string object = heading.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : heading.substr(space + 1);
    std::smatch alt;
    if (std::regex_match(rest, alt, choice)) {
      std::istringstream names(alt[1].str());
      for (std::string w; names >> w;) {
        if (w != "|") {
          m[object + " " + w] = alt[2].str();
        }
      }
      continue;
    }
    const auto cmd_end = rest.find(' ');
    m[object + " " + rest.substr(0, cmd_end)] =
        cmd_end == std::string::npos ? "" : rest.substr(cmd_end + 1);
  }
  return m;
}

TEST(ManPage, HeadingsAreTheCommandsHelpUsage) {
  auto man = man_commands();
  for (const auto& o : command_table()) {
    for (const auto& c : o.commands) {
      const std::string key = fmt::format("{} {}", o.name, c.name);
      const auto r = run_cli({std::string(o.name), std::string(c.name), "help"});
      ASSERT_EQ(r.rc, kExitOk) << key;
      // The first line; the rest of a long usage is a note.
      std::string usage = r.out.substr(0, r.out.find('\n'));
      const std::string prefix = "Usage: kvmaictl " + key;
      ASSERT_TRUE(usage.starts_with(prefix)) << usage;
      usage = squeeze(usage.substr(prefix.size()));
      const auto it = man.find(key);
      if (it == man.end()) {
        ADD_FAILURE() << "kvmaictl(8) has no heading for " << key;
        continue;
      }
      EXPECT_EQ(it->second, usage) << key;
      man.erase(it);
    }
  }
  for (const auto& [key, usage] : man) {
    ADD_FAILURE() << "kvmaictl(8) documents \"" << key << "\", which the tool does not have";
  }
}

TEST(ManPage, ObjectListIsTheTable) {
  std::string objects;
  for (const auto& o : command_table()) {
    objects += fmt::format(" \" {} \" |", o.name);
  }
  objects.resize(objects.size() - 2);  // the last " |"
  const std::string want = ".IR OBJECT \" := {" + objects + " }\"";
  EXPECT_THAT(read_text(std::string(KVMAICTL_DOCS) + "/man/kvmaictl.8"),
              ::testing::HasSubstr(want + "\n"));
}

// The words the completion offers after `kvmaictl` and after each object.
TEST(Completion, OffersEveryObjectAndCommand) {
  const std::string bash =
      read_text(std::string(KVMAICTL_SOURCE_DIR) + "/kvmaictl.bash-completion");
  std::string top = "compgen -W \"";
  for (const auto& o : command_table()) {
    top += std::string(o.name) + " ";
  }
  EXPECT_THAT(bash, ::testing::HasSubstr(top + "help $opts\""));
  for (const auto& o : command_table()) {
    // The object's arm of the last `case` (the one on $object; `vm)` and
    // `group)` are also words of the case on $prev above it).
    const auto arm = bash.rfind("\n\t" + std::string(o.name) + ")\n");
    ASSERT_NE(arm, std::string::npos) << o.name;
    const auto end = bash.find("\n\t\t;;", arm);
    const std::string body = bash.substr(arm, end - arm);
    const auto w = body.find("compgen -W \"");
    ASSERT_NE(w, std::string::npos) << o.name;
    std::istringstream words(body.substr(w + 12, body.find('"', w + 12) - w - 12));
    std::set<std::string> offered;
    for (std::string x; words >> x;) {
      offered.insert(x);
    }
    for (const auto& c : o.commands) {
      EXPECT_TRUE(offered.contains(std::string(c.name))) << o.name << " " << c.name;
    }
    EXPECT_TRUE(offered.contains("help")) << o.name;
  }
}

}  // namespace
}  // namespace kvmai::kvmaictl
