#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::run_cli;
using testing::testdata;

std::vector<std::string> keys(const nlohmann::ordered_json& o) {
  std::vector<std::string> k;
  for (const auto& [key, value] : o.items()) {
    k.push_back(key);
  }
  return k;
}

nlohmann::ordered_json topo_json(const std::string& fixture, Args extra = {}) {
  Args args{"-j", "topo", "show", "--sysfs-root", testdata(fixture + "/sys")};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return nlohmann::ordered_json::parse(r.out);
}

// The schema is an interface: a key added, renamed or moved must show up
// here as a deliberate change.
TEST(TopoJson, SchemaIsStable) {
  const auto j = topo_json("hgx");
  EXPECT_EQ(keys(j), (std::vector<std::string>{"devices", "vfs", "switches", "pairs"}));
  EXPECT_EQ(
      keys(j["devices"][0]),
      (std::vector<std::string>{"name", "kind", "bdf", "class", "vendor", "device", "numa_node",
                                "iommu_group", "iommu_group_type", "driver", "ats", "switch",
                                "sriov_totalvfs", "sriov_numvfs", "mdev_types", "upstream"}));
  EXPECT_EQ(keys(j["devices"][0]["upstream"][0]), (std::vector<std::string>{"bdf", "role"}));
  EXPECT_EQ(keys(j["switches"][0]), (std::vector<std::string>{"name", "kind", "upstream_port",
                                                              "root", "downstream_ports"}));
  const auto& pair = j["pairs"][2];
  EXPECT_EQ(keys(pair),
            (std::vector<std::string>{"gpu", "nic", "path", "switches", "verdict", "reason",
                                      "isolated", "ats_both", "redirects", "ports"}));
  EXPECT_EQ(keys(pair["ports"][0]), (std::vector<std::string>{"bdf", "role", "acs"}));
  EXPECT_EQ(keys(pair["ports"][0]["acs"]),
            (std::vector<std::string>{"state", "cap", "ctl", "cap_bits", "ctl_bits"}));
}

// Operators pass VFs, not PFs: each VF with its PF, number and driver.
TEST(TopoJson, ListsVfsWithPfAndIndex) {
  const auto j = topo_json("multifunction");
  ASSERT_EQ(j["vfs"].size(), 2U);
  for (int i = 0; i < 2; ++i) {
    const auto& vf = j["vfs"][i];
    EXPECT_EQ(vf["bdf"], "0000:3f:00." + std::to_string(2 + i));
    EXPECT_EQ(vf["pf"], "0000:3f:00.0");
    EXPECT_EQ(vf["pf_name"], "nic0");
    EXPECT_EQ(vf["index"], i);
    EXPECT_EQ(vf["driver"], i == 0 ? "mlx5_core" : "vfio-pci");  // VF 1 waits for a VM
    EXPECT_EQ(vf["numa_node"], 0);
  }
  const auto& nic0 = j["devices"][2];
  ASSERT_EQ(nic0["name"], "nic0");
  EXPECT_EQ(nic0["sriov_totalvfs"], 8);
  EXPECT_EQ(nic0["sriov_numvfs"], 2);
  // VFs are never listed as NICs of their own.
  for (const auto& d : j["devices"]) {
    EXPECT_NE(d["bdf"], "0000:3f:00.2");
  }
}

TEST(TopoJson, ListsMdevTypes) {
  const auto j = topo_json("multifunction");
  const auto& gpu1 = j["devices"][1];
  ASSERT_EQ(gpu1["name"], "gpu1");
  ASSERT_EQ(gpu1["mdev_types"].size(), 2U);
  EXPECT_EQ(gpu1["mdev_types"][0]["id"], "nvidia-222");
  EXPECT_EQ(gpu1["mdev_types"][0]["name"], "GRID T4-4Q");
  EXPECT_EQ(gpu1["mdev_types"][0]["available_instances"], 4);
  EXPECT_EQ(gpu1["mdev_types"][0]["device_api"], "vfio-pci");
  EXPECT_TRUE(j["devices"][0]["mdev_types"].empty());
}

TEST(TopoJson, EmulatedGpu0Nic0IsPixThroughExpanderAndRedirected) {
  const auto j = topo_json("emulated");
  const auto& p = j["pairs"][0];
  EXPECT_EQ(p["gpu"], "gpu0");
  EXPECT_EQ(p["nic"], "nic0");
  EXPECT_EQ(p["path"], "PIX");
  EXPECT_EQ(p["switches"], nlohmann::ordered_json::array({"sw0"}));
  EXPECT_EQ(j["switches"][0]["kind"], "expander");
  EXPECT_EQ(p["verdict"], "root-complex");
  EXPECT_EQ(p["redirects"].size(), 4U);
  EXPECT_EQ(p["redirects"][0]["port"], "0000:20:00.0");
  EXPECT_EQ(p["redirects"][0]["bit"], "RR");
}

TEST(TopoJson, EmulatedWithDtIsDirectTranslated) {
  const auto j = topo_json("emulated-dt");
  EXPECT_EQ(j["pairs"][0]["path"], "PIX");
  EXPECT_EQ(j["pairs"][0]["verdict"], "direct-translated");
}

TEST(TopoJson, FilterByNameOrBdf) {
  const auto by_name = topo_json("hgx", {"gpu3"});
  EXPECT_EQ(by_name["devices"].size(), 1U);
  EXPECT_EQ(by_name["pairs"].size(), 11U);  // one per NIC
  const auto by_bdf = topo_json("hgx", {"0000:3b:00.0"});
  EXPECT_EQ(by_bdf["pairs"], by_name["pairs"]);
}

TEST(Topo, UnknownDeviceFails) {
  const auto r = run_cli({"topo", "show", "gpu99", "--sysfs-root", testdata("hgx/sys")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: topo show: no GPU or NIC \"gpu99\"\n");
}

TEST(Topo, NotASysfsTreeFails) {
  const auto r = run_cli({"topo", "--sysfs-root", testdata("hgx/proc")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("not a sysfs tree"));
}

TEST(Topo, MissingOptionValueIsUsageError) {
  const auto r = run_cli({"topo", "show", "--sysfs-root"});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("Usage: kvmaictl topo show"));
}

TEST(Topo, VerboseTextShowsPortsAndAcs) {
  const auto r = run_cli({"-v", "topo", "show", "gpu0", "--sysfs-root", testdata("emulated/sys")});
  EXPECT_THAT(r.out, HasSubstr("0000:20:00.0 root-port acs cap SV,TB,RR,CR,UF,DT ctl SV,RR,CR,UF"));
}

}  // namespace
}  // namespace kvmaictl
