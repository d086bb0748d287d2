#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/pci_tree.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
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
  // The emulated host's ACS switches are host bridges, and it says so.
  if (fixture.starts_with("emulated")) {
    args.emplace_back("--host-bridge-switches");
  }
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return nlohmann::ordered_json::parse(r.out);
}

// The schema is an interface: a key added, renamed or moved must show up
// here as a deliberate change.
TEST(TopoJson, SchemaIsStable) {
  const auto j = topo_json("hgx");
  EXPECT_EQ(keys(j),
            (std::vector<std::string>{"devices", "vfs", "switches", "nvswitches", "pairs"}));
  EXPECT_EQ(keys(j["devices"][0]),
            (std::vector<std::string>{
                "name",   "kind",    "nic_kind",       "bdf",          "class",
                "vendor", "device",  "numa_node",      "iommu_group",  "iommu_group_type",
                "driver", "ats",     "rdma_devices",   "switch",       "local_cpulist",
                "link",   "bars",    "sriov_totalvfs", "sriov_numvfs", "mdev_types",
                "mig",    "upstream"}));
  EXPECT_EQ(keys(j["devices"][0]["link"]),
            (std::vector<std::string>{"speed", "width", "max_speed", "max_width"}));
  EXPECT_EQ(keys(j["devices"][0]["bars"][0]),
            (std::vector<std::string>{"index", "size", "type", "mem64", "prefetchable"}));
  EXPECT_EQ(keys(j["nvswitches"][0]),
            (std::vector<std::string>{"name", "bdf", "vendor", "device", "numa_node", "iommu_group",
                                      "driver"}));
  EXPECT_EQ(keys(j["devices"][0]["upstream"][0]), (std::vector<std::string>{"bdf", "role"}));
  EXPECT_EQ(keys(j["switches"][0]), (std::vector<std::string>{"name", "kind", "upstream_port",
                                                              "root", "downstream_ports"}));
  const auto& pair = j["pairs"][2];
  EXPECT_EQ(keys(pair), (std::vector<std::string>{"gpu", "nic", "path", "nic_kind", "switches",
                                                  "verdict", "reason", "isolated", "isolation",
                                                  "unchecked", "ats_both", "redirects", "ports"}));
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

// NVIDIA vGPU on SR-IOV: each VF's type and the types it can take, from
// the files the driver puts below it; VFs of a GPU are not GPUs of their
// own.
TEST(TopoJson, ListsVgpuTypesOfGpuVfs) {
  const std::string root = testdata("vgpu");
  const auto j = topo_json("vgpu", {"--procfs-root", root + "/proc"});
  ASSERT_EQ(j["devices"].size(), 3U);
  EXPECT_EQ(j["devices"][0]["name"], "gpu0");
  EXPECT_EQ(j["devices"][1]["name"], "gpu1");
  EXPECT_EQ(j["devices"][2]["name"], "nic0");
  ASSERT_EQ(j["vfs"].size(), 4U);
  EXPECT_EQ(j["vfs"][0]["pf_name"], "gpu0");
  EXPECT_EQ(j["vfs"][0]["vgpu_type"], 1414);
  ASSERT_EQ(j["vfs"][0]["vgpu_types"].size(), 3U);
  EXPECT_EQ(j["vfs"][0]["vgpu_types"][0]["id"], 1414);
  EXPECT_EQ(j["vfs"][0]["vgpu_types"][0]["name"], "NVIDIA H100-1-10C");
  EXPECT_EQ(j["vfs"][0]["vgpu_types"][2]["id"], 1428);
  // VF 1: no vGPU yet; its list starts with a header line, not a type.
  EXPECT_EQ(j["vfs"][1]["vgpu_type"], 0);
  EXPECT_EQ(j["vfs"][1]["vgpu_types"], j["vfs"][0]["vgpu_types"]);
  // VFs 2 and 3 have no nvidia/ directory.
  EXPECT_TRUE(j["vfs"][2]["vgpu_type"].is_null());
  EXPECT_TRUE(j["vfs"][2]["vgpu_types"].empty());
}

// MIG: GPU and compute instances as the driver lists them in procfs, found
// through the GPU's device minor, in number order.
TEST(TopoJson, ListsMigInstancesFromProcfs) {
  const std::string root = testdata("vgpu");
  const auto j = topo_json("vgpu", {"--procfs-root", root + "/proc"});
  EXPECT_TRUE(j["devices"][0]["mig"].empty());  // minor 0: no GPU instance
  const auto& mig = j["devices"][1]["mig"];
  ASSERT_EQ(mig.size(), 2U);
  EXPECT_EQ(mig[0]["gpu_instance"], 1);
  EXPECT_EQ(mig[0]["compute_instances"], nlohmann::ordered_json::array({0}));
  EXPECT_EQ(mig[1]["gpu_instance"], 2);
  EXPECT_EQ(mig[1]["compute_instances"], nlohmann::ordered_json::array({0, 1}));

  const auto r = run_cli({"topo", "--sysfs-root", root + "/sys", "--procfs-root", root + "/proc"});
  EXPECT_THAT(r.out, HasSubstr("MIG GPU  BDF           GI  CI\n"
                               "gpu1    0000:18:00.0  1   0\n"
                               "gpu1    0000:18:00.0  2   0,1\n"));
  EXPECT_THAT(r.out,
              HasSubstr("0000:17:00.1  0000:17:00.0  gpu0     0      10de:2330  0     14     "
                        "nvidia      1414 (NVIDIA H100-1-10C)\n"));
}

// A recorded sysfs tree alone is not mixed with this machine's procfs.
TEST(TopoJson, RecordedSysfsAloneReadsNoProcfs) {
  const auto j = topo_json("vgpu");
  EXPECT_TRUE(j["devices"][1]["mig"].empty());
}

TEST(VgpuTypes, ParsesIdColonNameLines) {
  const auto t = parse_vgpu_types(
      "ID    : vGPU Name\n 557 : NVIDIA L4-1Q \r\n\nnot a line\n"
      "x12 : bad id\n558:NVIDIA L4-2Q\n");
  ASSERT_EQ(t.size(), 2U);
  EXPECT_EQ(t[0].id, 557);
  EXPECT_EQ(t[0].name, "NVIDIA L4-1Q");
  EXPECT_EQ(t[1].id, 558);
  EXPECT_EQ(t[1].name, "NVIDIA L4-2Q");
  EXPECT_TRUE(parse_vgpu_types("").empty());
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

// Said once for every run, as the emulated host does.
TEST(TopoJson, HostBridgeSwitchesFromTheEnvironment) {
  const Args args{"-j", "topo", "--sysfs-root", testdata("emulated/sys")};
  std::ostringstream out;
  std::ostringstream err;
  const auto env = [](const char* name) -> const char* {
    return std::string_view(name) == "KVMAICTL_HOST_BRIDGE_SWITCHES" ? "1" : nullptr;
  };
  ASSERT_EQ(run(command_table(), args, out, err, nullptr, env), kExitOk) << err.str();
  EXPECT_EQ(nlohmann::ordered_json::parse(out.str()), topo_json("emulated"));
  // Without: a host bridge, the path through it.
  const auto plain = run_cli(args);
  EXPECT_EQ(nlohmann::ordered_json::parse(plain.out)["pairs"][0]["path"], "PHB");
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
  EXPECT_EQ(r.err, "Error: topo show: missing DIR after \"--sysfs-root\"\n");
}

TEST(Topo, VerboseTextShowsPortsAndAcs) {
  const auto r = run_cli({"-v", "topo", "show", "gpu0", "--sysfs-root", testdata("emulated/sys")});
  EXPECT_THAT(r.out, HasSubstr("0000:20:00.0 root-port acs cap SV,TB,RR,CR,UF,DT ctl SV,RR,CR,UF"));
}

}  // namespace
}  // namespace kvmai::kvmaictl

namespace kvmai::kvmaictl {
namespace {

std::string topo_text(const std::string& fixture, Args words) {
  Args args{"topo"};
  args.insert(args.end(), words.begin(), words.end());
  args.insert(args.end(), {"--sysfs-root", testdata(fixture + "/sys")});
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.out;
}

// A section with nothing to list prints no header: hgx has no VFs, flat no
// switches and no NVSwitches.
TEST(TopoText, NoHeaderForAnEmptySection) {
  const auto hgx = topo_text("hgx", {"show"});
  EXPECT_THAT(hgx, ::testing::Not(HasSubstr("\nVF ")));
  EXPECT_THAT(hgx, HasSubstr("\nSWITCH "));
  const auto flat = topo_text("flat", {"show"});
  EXPECT_THAT(flat, ::testing::Not(HasSubstr("\nSWITCH ")));
  EXPECT_THAT(flat, ::testing::Not(HasSubstr("NVSWITCH")));
  EXPECT_THAT(topo_text("multifunction", {"show"}), HasSubstr("\nVF "));
}

TEST(TopoText, NamesManagementNicsAndNvswitches) {
  const auto hgx = topo_text("hgx", {"show"});
  EXPECT_THAT(hgx, HasSubstr("nic0, nic1: management NICs (no RDMA device)"));
  EXPECT_THAT(hgx, HasSubstr("\nnvswitch3  0000:be:00.0  10de:22a3"));
  EXPECT_THAT(hgx, HasSubstr("Fabric Manager"));
}

TEST(TopoJson, NicKindsRdmaDevicesLinksAndBars) {
  const auto j = topo_json("hgx");
  const auto& d = j["devices"];
  EXPECT_EQ(d[0]["nic_kind"], nullptr);
  EXPECT_EQ(d[8]["name"], "nic0");
  EXPECT_EQ(d[8]["nic_kind"], "management");
  EXPECT_EQ(d[10]["nic_kind"], "rdma");
  EXPECT_EQ(d[10]["rdma_devices"], nlohmann::ordered_json({"mlx5_0"}));
  // gpu6 trained at 16 GT/s in a 32 GT/s slot (the fixture's cur_speed).
  EXPECT_EQ(d[6]["link"]["speed"], "16.0 GT/s");
  EXPECT_EQ(d[6]["link"]["max_speed"], "32.0 GT/s");
  EXPECT_EQ(d[6]["link"]["width"], 16);
  // An H100: BAR0 16 MiB, BAR1 128 GiB and BAR3 32 MiB, 64-bit prefetchable.
  const auto& bars = d[0]["bars"];
  ASSERT_EQ(bars.size(), 3U);
  EXPECT_EQ(bars[1]["index"], 1);
  EXPECT_EQ(bars[1]["size"], 128ULL << 30U);
  EXPECT_EQ(bars[1]["mem64"], true);
  EXPECT_EQ(bars[1]["prefetchable"], true);
  EXPECT_EQ(bars[0]["prefetchable"], false);
  EXPECT_EQ(j["nvswitches"].size(), 4U);
  EXPECT_EQ(j["pairs"][0]["nic_kind"], "management");
}

// The tree puts each function below its bridge, with the ACS control of
// every port and the ATS state of every endpoint that has ATS.
TEST(TopoTree, AcsPerPortAndAtsPerEndpoint) {
  const auto text = topo_text("hgx", {"tree"});
  EXPECT_THAT(text, HasSubstr("pci0000:15 numa 0\n"
                              "`-- 0000:15:01.0  root-port [8086:352a] acs SV,RR,CR,UF\n"
                              "    `-- 0000:16:00.0  upstream-port [1000:c030] sw0 acs absent\n"
                              "        |-- 0000:17:00.0  downstream-port [1000:c030] acs "
                              "SV,RR,CR,UF,DT\n"
                              "        |   `-- 0000:18:00.0  gpu0 [10de:2330] ats enabled\n"));
  const auto r = run_cli({"-j", "topo", "tree", "--sysfs-root", testdata("hgx/sys")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& rp = j["roots"][1]["children"][0];
  EXPECT_EQ(rp["bdf"], "0000:15:01.0");
  EXPECT_EQ(rp["acs"], "SV,RR,CR,UF");
  EXPECT_EQ(rp["children"][0]["switch"], "sw0");
  EXPECT_EQ(rp["children"][0]["children"][0]["children"][0]["name"], "gpu0");
  EXPECT_EQ(rp["children"][0]["children"][0]["children"][0]["ats"], "enabled");
}

}  // namespace
}  // namespace kvmai::kvmaictl
