#include "client/kvmai.h"

#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <cerrno>
#include <string>
#include <vector>

#include "testing/group_replies.h"

namespace kvmai::kvmaictl {
namespace {

using testing::FakeTransport;
using Log = FakeTransport::Log;

TEST(Kvmai, GroupRecordsAreTyped) {
  const Group g = group_of(testing::sample_group());
  EXPECT_EQ(g.name, "vm1-p2p");
  EXPECT_EQ(g.mode, KVMAI_MODE_TRANSLATED);
  EXPECT_FALSE(g.bind_socket);
  EXPECT_EQ(g.member_addrs(), (std::vector<std::string>{"0000:21:00.0", "0000:22:00.0"}));
  ASSERT_EQ(g.members.at(0).bars.size(), 2U);
  EXPECT_EQ(g.members[0].bars[0].addr, 0x38000000000U);
  EXPECT_EQ(g.members[0].ats, true);
  EXPECT_EQ(g.members[1].ats, false);
  EXPECT_EQ(g.ports.at(1).acs_target, 0x40U);
  EXPECT_EQ(g.pairs.at(0).type, KVMAI_PATH_TYPE_HOST_BRIDGE);
  // Absent attributes are absent, not zero.
  const Group empty = group_of({});
  EXPECT_EQ(empty.id, std::nullopt);
  EXPECT_TRUE(empty.members.empty());
}

// No socket until the first request: `help`, and a hook with nothing to
// do, open none.
TEST(Kvmai, ConnectsOnTheFirstRequest) {
  int connects = 0;
  auto log = std::make_shared<Log>();
  const auto fake = testing::fake_kvmai(log);
  Kvmai k(
      [&](std::string_view family) {
        ++connects;
        return fake(family);
      },
      nullptr);
  EXPECT_EQ(connects, 0);
  k.group_del("g1");
  k.group_set("g1", std::nullopt, KVMAI_STATE_ENABLED);
  EXPECT_EQ(connects, 1);
  EXPECT_EQ(log->commands, (std::vector<std::uint8_t>{KVMAI_CMD_GROUP_DEL, KVMAI_CMD_GROUP_SET}));
  EXPECT_EQ(log->requests.at(1).u32(KVMAI_A_GROUP_STATE), KVMAI_STATE_ENABLED);
  EXPECT_FALSE(log->requests.at(1).has(KVMAI_A_GROUP_MODE));
}

TEST(Kvmai, WarningsGoToTheCallback) {
  auto log = std::make_shared<Log>();
  std::vector<std::string> warnings;
  Kvmai k(testing::fake_kvmai(log, [](FakeTransport& t) { t.warning = "no ATS on 0000:22:00.0"; }),
          [&](std::string_view w) { warnings.emplace_back(w); });
  k.dev_add("g1", GroupDevice::named("0000:22:00.0"));
  EXPECT_EQ(warnings, std::vector<std::string>{"no ATS on 0000:22:00.0"});
}

// ENOENT from pmu-get: the VM owns nothing.
TEST(Kvmai, FindPmuRecordOfAVmOwningNothing) {
  auto log = std::make_shared<Log>();
  Kvmai k(testing::failing_kvmai(log, ENOENT, "vm1 has no PMU record"), nullptr);
  EXPECT_EQ(k.find_pmu_record("vm1"), std::nullopt);
  EXPECT_THROW(k.pmu_record("vm1"), GenlError);
}

// A module older than PMU ownership answers EOPNOTSUPP without extack: the
// error says so, and keeps its errno for callers that look.
TEST(Kvmai, PmuOperationsOfAnOlderModule) {
  auto log = std::make_shared<Log>();
  Kvmai k(testing::failing_kvmai(log, EOPNOTSUPP, ""), nullptr);
  try {
    k.pmu_release({.vm = "vm1", .core = false, .units = {}});
    FAIL() << "no throw";
  } catch (const GenlError& e) {
    EXPECT_STREQ(e.what(), "Operation not supported (a kvmai module without PMU operations?)");
    EXPECT_EQ(e.error(), EOPNOTSUPP);
  }
}

}  // namespace
}  // namespace kvmai::kvmaictl
