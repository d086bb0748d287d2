#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::read_text;
using testing::run_cli;

constexpr const char* kUuid = "6f2c3a14-9d0e-4f7b-8a51-2b1e0c9d7a33";

// A sysfs tree as kvmai and the mdev core lay it out: pages of mock_bw on
// packages 0 and 1 and of mock_l3 on package 0, a device made on
// mock_bw's package 0 page, and a device of another mdev driver.
class CountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("kvmaictl-counters-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bus/pci/devices");
    page("mock_bw", 0, 0);
    page("mock_bw", 1, 1);
    page("mock_l3", 0, 1);
    device(kUuid, "kvmai-mock_bw.0", "kvmai-counters", "mock_bw", "vm1", "live");
    device("0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45", "mtty", "mtty-1", "", "", "");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }

  void page(const std::string& unit, int package, int available) {
    const fs::path parent =
        root_ / "devices/virtual/kvmai" / ("kvmai-" + unit + "." + std::to_string(package));
    const fs::path type = parent / "mdev_supported_types/kvmai-counters";
    write(type / "available_instances", std::to_string(available));
    write(type / "create", "");
    fs::create_directories(root_ / "class/mdev_bus");
    fs::create_directory_symlink(parent, root_ / "class/mdev_bus" / parent.filename());
  }

  void device(const std::string& uuid, const std::string& parent, const std::string& type,
              const std::string& unit, const std::string& vm, const std::string& state) {
    const fs::path dir = root_ / "devices/virtual/kvmai" / parent / uuid;
    fs::create_directories(dir);
    fs::create_directories(root_ / "devices/virtual/kvmai" / parent / "mdev_supported_types" /
                           type);
    fs::create_directory_symlink(fs::path("../mdev_supported_types") / type, dir / "mdev_type");
    write(dir / "remove", "");
    if (!unit.empty()) {
      write(dir / "kvmai/unit", unit);
      write(dir / "kvmai/vm", vm);
      write(dir / "kvmai/state", state);
    }
    fs::create_directories(root_ / "bus/mdev/devices");
    fs::create_directory_symlink(dir, root_ / "bus/mdev/devices" / uuid);
  }

  Args with_root(Args a) const {
    a.insert(a.end(), {"--sysfs-root", root_.string()});
    return a;
  }

  fs::path root_;
};

TEST_F(CountersTest, ShowListsPagesAndTheirDevicesOnly) {
  const auto r = run_cli(with_root({"-j", "counters", "show"}));
  ASSERT_EQ(0, r.rc) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(3U, j["pages"].size()) << r.out;
  EXPECT_EQ("kvmai-mock_bw.0", j["pages"][0]["parent"]);
  EXPECT_EQ("mock_bw", j["pages"][0]["unit"]);
  EXPECT_EQ(0, j["pages"][0]["package"]);
  EXPECT_EQ(0, j["pages"][0]["available"]);
  ASSERT_EQ(1U, j["pages"][0]["devices"].size());
  EXPECT_EQ(kUuid, j["pages"][0]["devices"][0]["uuid"]);
  EXPECT_EQ("vm1", j["pages"][0]["devices"][0]["vm"]);
  EXPECT_EQ("live", j["pages"][0]["devices"][0]["state"]);
  EXPECT_EQ(1, j["pages"][1]["package"]);
  EXPECT_TRUE(j["pages"][1]["devices"].empty());
  // The other driver's mdev is nobody's page.
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("0b1f7a62")));
}

TEST_F(CountersTest, ShowTextAndOneUnit) {
  const auto r = run_cli(with_root({"counters", "show", "mock_l3"}));
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kvmai-mock_l3.0"));
  EXPECT_THAT(r.out, HasSubstr("available 1"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("mock_bw")));
  const auto all = run_cli(with_root({"counters"}));
  EXPECT_THAT(all.out, HasSubstr("device " + std::string(kUuid) + " vm vm1 state live"));
}

TEST_F(CountersTest, AddWritesAUuidToTheOnlyPage) {
  const auto r = run_cli(with_root({"-j", "counters", "add", "mock_l3"}));
  ASSERT_EQ(0, r.rc) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string uuid = j["uuid"];
  EXPECT_THAT(uuid,
              MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ("/sys/bus/mdev/devices/" + uuid, j["sysfsdev"]);
  EXPECT_EQ(uuid, read_text((root_ / "class/mdev_bus/kvmai-mock_l3.0/mdev_supported_types/"
                                     "kvmai-counters/create")
                                .string()));
}

TEST_F(CountersTest, AddTakesPackageAndUuid) {
  const auto r = run_cli(with_root({"counters", "add", "mock_bw", "package", "1", "uuid",
                                    "1B2C3D4E-0000-4000-8000-00000000ABCD"}));
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ(
      "1b2c3d4e-0000-4000-8000-00000000abcd sysfsdev "
      "/sys/bus/mdev/devices/1b2c3d4e-0000-4000-8000-00000000abcd\n",
      r.out);
  EXPECT_EQ("1b2c3d4e-0000-4000-8000-00000000abcd",
            read_text((root_ / "class/mdev_bus/kvmai-mock_bw.1/mdev_supported_types/"
                               "kvmai-counters/create")
                          .string()));
}

TEST_F(CountersTest, AddRefusesWhatItCannotPick) {
  auto r = run_cli(with_root({"counters", "add", "mock_bw"}));
  EXPECT_EQ(2, r.rc);
  EXPECT_EQ(
      "Error: counters add: unit mock_bw has pages on packages 0, 1: say which with package N\n",
      r.err.substr(0, r.err.find('\n') + 1));
  r = run_cli(with_root({"counters", "add", "mock_bw", "package", "7"}));
  EXPECT_EQ(1, r.rc);
  EXPECT_EQ("Error: counters add: unit mock_bw has no page on package 7 (it has 0, 1)\n", r.err);
  r = run_cli(with_root({"counters", "add", "nosuch"}));
  EXPECT_EQ(1, r.rc);
  EXPECT_THAT(r.err, HasSubstr("no counter page of unit nosuch"));
  r = run_cli(with_root({"counters", "add", "mock_l3", "uuid", "not-a-uuid"}));
  EXPECT_EQ(2, r.rc);
  EXPECT_THAT(r.err, HasSubstr("bad UUID \"not-a-uuid\""));
}

TEST_F(CountersTest, AddSaysWhatTheKernelRefused) {
  // A store sysfs refuses: here a directory where the attribute was.
  const fs::path create =
      root_ / "class/mdev_bus/kvmai-mock_l3.0/mdev_supported_types/kvmai-counters/create";
  fs::remove(create);
  fs::create_directory(create);
  const auto r = run_cli(with_root({"counters", "add", "mock_l3"}));
  EXPECT_EQ(1, r.rc);
  EXPECT_EQ("Error: counters add: unit mock_l3 on package 0: Is a directory\n", r.err);
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CountersTest, DelRemovesOnlyCountersDevices) {
  auto r = run_cli(with_root({"counters", "del", kUuid}));
  ASSERT_EQ(0, r.rc) << r.err;
  EXPECT_EQ("1", read_text((root_ / "bus/mdev/devices" / kUuid / "remove").string()));
  r = run_cli(with_root({"counters", "del", "0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45"}));
  EXPECT_EQ(1, r.rc);
  EXPECT_EQ(
      "Error: counters del: 0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45 is not a kvmai counters device\n",
      r.err);
  EXPECT_EQ("\n", read_text((root_ / "bus/mdev/devices/0b1f7a62-5c3e-4d8a-9e2b-7f6a1c0d3e45/"
                                     "remove")
                                .string()));
  r = run_cli(with_root({"counters", "del", "00000000-0000-4000-8000-000000000000"}));
  EXPECT_EQ(1, r.rc);
  EXPECT_THAT(r.err, HasSubstr("no mediated device 00000000-0000-4000-8000-000000000000"));
  r = run_cli(with_root({"counters", "del", "../../x"}));
  EXPECT_EQ(2, r.rc);
  EXPECT_THAT(r.err, HasSubstr("bad UUID"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
