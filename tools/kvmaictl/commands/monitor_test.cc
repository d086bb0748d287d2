#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <linux/kvmai.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/pmu_replies.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::empty_group;
using testing::fake_kvmai;
using testing::FakeTransport;
using testing::message;
using testing::run_cli;
using testing::sample_group;
using ::testing::StartsWith;

using Log = FakeTransport::Log;

// A group's life as the monitor group hears it, with a stray message.
TransportFactory life_of_a_group(const std::shared_ptr<Log>& log) {
  return fake_kvmai(log, [](FakeTransport& t) {
    t.notifications = {
        message(KVMAI_CMD_GROUP_CREATE_NTF, empty_group("vm1-p2p")),
        message(KVMAI_CMD_GROUP_GET, empty_group("vm1-p2p")),  // not a notification
        message(KVMAI_CMD_GROUP_CHANGE_NTF, sample_group()),
        message(KVMAI_CMD_GROUP_DELETE_NTF, sample_group("vm1-p2p", KVMAI_STATE_DISABLED)),
    };
  });
}

TEST(Monitor, OneLinePerNotification) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"monitor"}, life_of_a_group(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(log->groups, std::vector<std::string>{"monitor"});
  EXPECT_TRUE(log->commands.empty());
  EXPECT_EQ(r.out,
            "[group create] vm1-p2p state disabled mode translated vm vm1 members -\n"
            "[group change] vm1-p2p state enabled mode translated vm vm1 members "
            "0000:21:00.0,0000:22:00.0\n"
            "[group delete] vm1-p2p\n");
}

TEST(Monitor, CountStops) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"monitor", "--count", "2"}, life_of_a_group(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  EXPECT_THAT(r.out, StartsWith("[group create] vm1-p2p "));
}

// -j monitor prints one JSON object per line.
std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::istringstream lines(out);
  std::vector<nlohmann::json> events;
  for (std::string line; std::getline(lines, line);) {
    events.push_back(nlohmann::json::parse(line));
  }
  return events;
}

TEST(Monitor, JsonIsOneObjectPerLine) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "monitor", "all", "--count", "3"}, life_of_a_group(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto events = json_lines(r.out);
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0]["event"], "create");
  EXPECT_EQ(events[1]["event"], "change");
  EXPECT_EQ(events[1]["group"]["state"], "enabled");
  EXPECT_EQ(events[1]["group"]["member"].size(), 2U);
  EXPECT_EQ(events[2]["event"], "delete");
  EXPECT_EQ(events[2]["group"]["name"], "vm1-p2p");
}

// PMU ownership: a change while the VM owns something, a release once it
// owns nothing.
TransportFactory pmu_changes(const std::shared_ptr<Log>& log) {
  return fake_kvmai(log, [](FakeTransport& t) {
    t.notifications = {
        message(KVMAI_CMD_PMU_CHANGE_NTF, testing::sample_pmu_vm1()),
        message(KVMAI_CMD_PMU_CHANGE_NTF, testing::sample_pmu_vm2()),
        message(KVMAI_CMD_PMU_CHANGE_NTF, testing::released_pmu("vm1")),
    };
  });
}

TEST(Monitor, PmuChangesAndReleases) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"monitor"}, pmu_changes(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "[pmu change] vm1 core yes units uncore_imc_0 cpus 0-31\n"
            "[pmu change] vm2 core no units uncore_cha_0 cpus 16-47\n"
            "[pmu release] vm1\n");
}

TEST(Monitor, JsonNamesTheObject) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"-j", "monitor"}, pmu_changes(log));
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto events = json_lines(r.out);
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0]["object"], "pmu");
  EXPECT_EQ(events[0]["event"], "change");
  EXPECT_EQ(events[0]["pmu"]["core"], true);
  EXPECT_EQ(events[0]["pmu"]["unit"][0]["name"], "uncore_imc_0");
  EXPECT_EQ(events[0]["pmu"]["unit"][0]["msr"][1]["write_mask"], 0x0000ffffffffffffULL);
  EXPECT_FALSE(events[0].contains("group"));
  EXPECT_EQ(events[2]["event"], "release");
  EXPECT_EQ(events[2]["pmu"]["vm"], "vm1");
  EXPECT_EQ(events[2]["pmu"]["unit"], nlohmann::json::array());
  // Group events say what they are the same way.
  const auto g = run_cli({"-j", "monitor", "--count", "1"}, life_of_a_group(log));
  EXPECT_EQ(nlohmann::json::parse(g.out)["object"], "group");
}

TEST(Monitor, BadCountIsUsageError) {
  for (const Args& a : std::vector<Args>{
           {"monitor", "--count"}, {"monitor", "--count", "many"}, {"monitor", "extra"}}) {
    EXPECT_EQ(run_cli(a).rc, kExitUsage) << a.back();
  }
}

TEST(Monitor, WithoutModuleSaysSo) {
  const auto r = run_cli({"monitor"}, testing::no_kvmai());
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, StartsWith("Error: monitor all: kvmai module not loaded"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
