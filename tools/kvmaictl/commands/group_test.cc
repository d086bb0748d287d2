#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <nlohmann/json.hpp>

#include "testing/group_replies.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::fake_kvmai;
using testing::FakeTransport;
using ::testing::HasSubstr;
using testing::matches_golden;
using testing::message;
using testing::run_cli;
using testing::sample_group;
using ::testing::StartsWith;

using Log = FakeTransport::Log;
using Commands = std::vector<std::uint8_t>;

// Every group-get answered with `groups` (dump) or the first of them (do).
TransportFactory with_groups(const std::shared_ptr<Log>& log, const std::vector<AttrSet>& groups) {
  return fake_kvmai(log, [groups](FakeTransport& t) {
    for (const auto& g : groups) {
      t.replies[KVMAI_CMD_GROUP_GET].push_back(message(KVMAI_CMD_GROUP_GET, g));
    }
  });
}

TEST(Group, ShowDumpsEveryGroupText) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"group", "show"}, with_groups(log, {sample_group(), testing::empty_group("spare")}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_GROUP_GET});
  EXPECT_TRUE(log->requests.at(0).attrs().empty());
  EXPECT_TRUE(matches_golden("group.show.txt", r.out));
}

TEST(Group, ShowJsonUsesSpecNames) {
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"-p", "group"}, with_groups(log, {sample_group(), testing::empty_group("spare")}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(matches_golden("group.show.json", r.out));
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["groups"].size(), 2U);
  const auto& g = j["groups"][0];
  EXPECT_EQ(g["bind_socket"], false);
  EXPECT_EQ(g["member"][0]["bar"][0]["addr"], 0x38000000000ULL);
  EXPECT_EQ(g["port"][0]["acs_current"], 0x5d);
  EXPECT_EQ(g["pair"][0]["type"], "host-bridge");
}

// An mdev member: its UUID beside its parent's address, no BARs; the
// member lists (monitor's summary, partition users) name it by its UUID,
// as dev add does.
TEST(Group, MdevMemberShowsItsUuidAndParent) {
  AttrSet vgpu;
  vgpu.put_string(KVMAI_A_MEMBER_PCI_ADDR, "0000:55:00.0")
      .put_string(KVMAI_A_MEMBER_MDEV, "9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3")
      .put_string(KVMAI_A_MEMBER_DRIVER, "nvidia-vgpu-vfio")
      .put_u8(KVMAI_A_MEMBER_ATS, 0);
  AttrSet g = testing::empty_group("vgpus");
  g.put_nested(KVMAI_A_GROUP_MEMBER, vgpu);
  auto log = std::make_shared<Log>();
  const auto text = run_cli({"group", "show", "vgpus"}, with_groups(log, {g}));
  ASSERT_EQ(text.rc, kExitOk) << text.err;
  EXPECT_THAT(text.out, HasSubstr("member 0000:55:00.0 mdev 9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3 "
                                  "driver nvidia-vgpu-vfio ats no"));
  const auto json = run_cli({"-j", "group", "show", "vgpus"}, with_groups(log, {g}));
  const auto m = nlohmann::json::parse(json.out)["groups"][0]["member"][0];
  EXPECT_EQ(m["mdev"], "9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3");
  EXPECT_EQ(m["pci_addr"], "0000:55:00.0");
  EXPECT_TRUE(m["bar"].empty());
  EXPECT_EQ(group_of(g).member_addrs(),
            std::vector<std::string>{"9a1b4c2d-8e3f-4a5b-b6c7-d8e9f0a1b2c3"});
}

// The module splits a group too large for the reader's messages; the parts
// after the first are flagged `continued` and carry the rest of the lists.
TEST(Group, ShowJoinsASplitGroup) {
  const AttrSet whole = sample_group();
  AttrSet first;
  AttrSet rest;
  bool member_sent = false;
  for (const auto& a : whole.attrs()) {
    const bool list = a.type == KVMAI_A_GROUP_MEMBER || a.type == KVMAI_A_GROUP_PORT ||
                      a.type == KVMAI_A_GROUP_PAIR;
    if (!list) {  // name, id, vm, mode, state: in every part
      first.add(a);
      rest.add(a);
    } else if (a.type == KVMAI_A_GROUP_MEMBER && !member_sent) {
      first.add(a);
      member_sent = true;
    } else {
      rest.add(a);
    }
  }
  rest.put_flag(KVMAI_A_GROUP_CONTINUED);
  auto log = std::make_shared<Log>();
  const auto split = run_cli({"-j", "group"}, with_groups(log, {first, rest}));
  const auto joined = run_cli({"-j", "group"}, with_groups(log, {whole}));
  ASSERT_EQ(split.rc, kExitOk) << split.err;
  EXPECT_EQ(nlohmann::json::parse(split.out), nlohmann::json::parse(joined.out));
  EXPECT_EQ(nlohmann::json::parse(split.out)["groups"].size(), 1U);
}

TEST(Group, VerboseShowsAcsTargetAndCap) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-v", "group", "show", "vm1-p2p"}, with_groups(log, {sample_group()}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\n        target SV RR CR UF DT cap SV TB RR CR UF DT\n"));
}

TEST(Group, ShowNameIsADo) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"group", "show", "vm1-p2p"}, with_groups(log, {sample_group()}));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_NAME), "vm1-p2p");
  EXPECT_THAT(r.out, StartsWith("group vm1-p2p id 1 vm vm1 mode translated state enabled "
                                "bind-socket no\n"));
}

TEST(Group, ShowNoneIsEmptyArray) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "group", "show"}, with_groups(log, {}));
  ASSERT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out, "{\"groups\":[]}\n");
  EXPECT_EQ(run_cli({"group", "show"}, with_groups(log, {})).out, "");
}

TEST(Group, ShowTwoNamesIsUsageError) {
  EXPECT_EQ(run_cli({"group", "show", "a", "b"}).rc, kExitUsage);
}

TEST(Group, AddSendsNameVmModeAndPrintsTheGroup) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(
      {"group", "add", "g1", "vm", "vm1", "mode", "direct"}, fake_kvmai(log, [](FakeTransport& t) {
        t.replies[KVMAI_CMD_GROUP_NEW] = {
            message(KVMAI_CMD_GROUP_NEW, testing::empty_group("g1", KVMAI_MODE_DIRECT))};
      }));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_GROUP_NEW});
  const AttrSet& req = log->requests.at(0);
  EXPECT_EQ(req.str(KVMAI_A_GROUP_NAME), "g1");
  EXPECT_EQ(req.str(KVMAI_A_GROUP_VM), "vm1");
  EXPECT_EQ(req.u32(KVMAI_A_GROUP_MODE), KVMAI_MODE_DIRECT);
  EXPECT_FALSE(req.has(KVMAI_A_GROUP_BIND_SOCKET));
  EXPECT_EQ(r.out, "group g1 id 7 vm vm1 mode direct state disabled bind-socket no\n");
  EXPECT_EQ(log->receives, 0);
}

TEST(Group, AddWithoutModeLeavesItToTheModule) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(
      {"-j", "group", "add", "g1", "vm", "vm1"}, fake_kvmai(log, [](FakeTransport& t) {
        t.replies[KVMAI_CMD_GROUP_NEW] = {message(KVMAI_CMD_GROUP_NEW, testing::empty_group("g1"))};
      }));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_FALSE(log->requests.at(0).has(KVMAI_A_GROUP_MODE));
  EXPECT_EQ(nlohmann::json::parse(r.out)["groups"][0]["mode"], "translated");
}

TEST(Group, AddBindSocketHoldsUntilTheGroupIsDeleted) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli(
      {"group", "add", "g1", "vm", "vm1", "bind"}, fake_kvmai(log, [](FakeTransport& t) {
        t.replies[KVMAI_CMD_GROUP_NEW] = {message(KVMAI_CMD_GROUP_NEW, testing::empty_group("g1"))};
        // Another group's deletion does not end the wait; ours does.
        t.notifications = {message(KVMAI_CMD_GROUP_DELETE_NTF, testing::empty_group("other")),
                           message(KVMAI_CMD_GROUP_DELETE_NTF, testing::empty_group("g1"))};
      }));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(log->requests.at(0).has(KVMAI_A_GROUP_BIND_SOCKET));
  EXPECT_EQ(log->groups, std::vector<std::string>{"monitor"});
  EXPECT_EQ(log->receives, 1);
  EXPECT_THAT(r.out, StartsWith("group g1 "));
}

TEST(Group, AddArgumentErrorsAreUsageErrors) {
  for (const Args& a : std::vector<Args>{{"group", "add"},
                                         {"group", "add", "g1"},
                                         {"group", "add", "g1", "vm"},
                                         {"group", "add", "g1", "vm", "v", "mode", "sideways"},
                                         {"group", "add", "g1", "vm", "v", "vm", "w"},
                                         {"group", "add", "g1", "vm", "v", "colour", "red"},
                                         {"group", "add", "g1", "vm", "v", "--frob"},
                                         {"group", "add", std::string(32, 'x'), "vm", "v"},
                                         {"group", "add", "g1", "vm", std::string(64, 'v')}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitUsage) << a.size();
    EXPECT_THAT(r.err, StartsWith("Error: group add: "));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Group, KeywordsAndValuesTakePrefixes) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"group", "set", "g1", "mo", "dir", "st", "en"}, fake_kvmai(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->requests.at(0).u32(KVMAI_A_GROUP_MODE), KVMAI_MODE_DIRECT);
  EXPECT_EQ(log->requests.at(0).u32(KVMAI_A_GROUP_STATE), KVMAI_STATE_ENABLED);
}

TEST(Group, AddWithoutModuleSaysSo) {
  const auto r = run_cli({"group", "add", "g1", "vm", "vm1"}, testing::no_kvmai());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "Error: group add: kvmai module not loaded (generic netlink family \"kvmai\" not "
            "found)\n");
}

TEST(Group, DelSendsTheNameAndPrintsNothing) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "group", "del", "g1"}, fake_kvmai(log));
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_GROUP_DEL});
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_GROUP_NAME), "g1");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
}

TEST(Group, EnableAndDisableSetTheState) {
  for (const auto& [word, state] :
       {std::pair{"enable", KVMAI_STATE_ENABLED}, std::pair{"disable", KVMAI_STATE_DISABLED}}) {
    auto log = std::make_shared<Log>();
    const auto r = run_cli({"group", word, "g1"}, fake_kvmai(log));
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_EQ(log->commands, Commands{KVMAI_CMD_GROUP_SET});
    const AttrSet& req = log->requests.at(0);
    EXPECT_EQ(req.str(KVMAI_A_GROUP_NAME), "g1");
    EXPECT_EQ(req.u32(KVMAI_A_GROUP_STATE), static_cast<std::uint32_t>(state));
    EXPECT_FALSE(req.has(KVMAI_A_GROUP_MODE));
  }
}

TEST(Group, EnableWarningGoesToStderrOnce) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"group", "enable", "g1"}, fake_kvmai(log, [](FakeTransport& t) {
                           t.warning =
                               "0000:53:00.0 has no ATS enabled: its peer traffic still "
                               "goes through the IOMMU";
                         }));
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "Warning: group enable: 0000:53:00.0 has no ATS enabled: its peer traffic still goes "
            "through the IOMMU\n");
}

TEST(Group, SetModeOnly) {
  auto log = std::make_shared<Log>();
  ASSERT_EQ(run_cli({"group", "set", "g1", "mode", "translated"}, fake_kvmai(log)).rc, kExitOk);
  EXPECT_EQ(log->requests.at(0).u32(KVMAI_A_GROUP_MODE), KVMAI_MODE_TRANSLATED);
  EXPECT_FALSE(log->requests.at(0).has(KVMAI_A_GROUP_STATE));
}

TEST(Group, SetNothingIsUsageError) {
  const auto r = run_cli({"group", "set", "g1"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, StartsWith("Error: group set: nothing to set (give mode or state)\n"));
}

// Every command that talks to the module: a refusal is exit 1 and one
// line with the kernel's extack verbatim, then errno.
TEST(KvmaiCommands, KernelRefusalCarriesExtack) {
  const std::vector<std::pair<Args, std::string>> cases{
      {{"group", "show", "nope"}, "group show"},
      {{"group", "add", "g1", "vm", "v"}, "group add"},
      {{"group", "del", "nope"}, "group del"},
      {{"group", "set", "nope", "mode", "direct", "state", "enabled"}, "group set"},
      {{"group", "enable", "nope"}, "group enable"},
      {{"group", "disable", "nope"}, "group disable"},
      {{"dev", "add", "nope", "21:00.0"}, "dev add"},
      {{"dev", "del", "nope", "21:00.0"}, "dev del"},
      {{"monitor"}, "monitor all"},
  };
  for (const auto& [args, where] : cases) {
    auto log = std::make_shared<Log>();
    const auto r = run_cli(args, testing::failing_kvmai(log, ENOENT, "no group nope"));
    EXPECT_EQ(r.rc, kExitFailed) << where;
    EXPECT_EQ(r.out, "") << where;
    EXPECT_EQ(r.err, "Error: " + where + ": no group nope (No such file or directory)\n");
  }
}

}  // namespace
}  // namespace kvmai::kvmaictl
