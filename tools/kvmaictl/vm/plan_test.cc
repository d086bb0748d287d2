#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_cli;
using testing::testdata;

nlohmann::ordered_json plan_json(const std::string& fixture, Args devs) {
  Args args{"-j", "vm", "plan"};
  args.insert(args.end(), devs.begin(), devs.end());
  args.insert(args.end(), {"--sysfs-root", testdata(fixture + "/sys")});
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return nlohmann::ordered_json::parse(r.out);
}

// The model of each guest bridge on a device's way up, device first.
std::vector<std::string> chain(const nlohmann::ordered_json& plan, const std::string& dev) {
  std::string bus;
  for (const auto& d : plan["devices"]) {
    if (d["name"] == dev) {
      bus = d["bus"];
    }
  }
  std::vector<std::string> models;
  while (!bus.empty() && bus != "pcie.0") {
    std::string next;
    for (const auto& b : plan["bridges"]) {
      if (b["id"] == bus) {
        models.push_back(b["model"]);
        next = b["bus"];
      }
    }
    if (next.empty()) {
      return {"(dangling " + bus + ")"};
    }
    bus = next;
  }
  return models;
}

// A GPU and its NIC below one expander: one pxb on their node, a root port
// each, as on the host; so the pair stays PIX through one host bridge.
TEST(VmPlan, PairBelowOneExpanderKeepsItsRootPorts) {
  const auto p = plan_json("emulated-vm", {"gpu0", "nic0", "vcpus", "4", "memory", "2048"});
  ASSERT_EQ(p["nodes"].size(), 1U);
  EXPECT_EQ(p["nodes"][0]["host_node"], 0);
  EXPECT_EQ(p["nodes"][0]["vcpus"], 4);
  EXPECT_EQ(p["nodes"][0]["memory_mib"], 2048);
  EXPECT_EQ(chain(p, "gpu0"), (std::vector<std::string>{"pcie-root-port", "pxb-pcie"}));
  EXPECT_EQ(chain(p, "nic0"), (std::vector<std::string>{"pcie-root-port", "pxb-pcie"}));
  EXPECT_NE(p["devices"][0]["bus"], p["devices"][1]["bus"]);
  EXPECT_EQ(p["bridges"][0]["numa_node"], 0);
  EXPECT_EQ(p["bridges"][0]["host"], "pci0000:20");
}

// Two host nodes: two guest nodes, one expander on each, CPUs and memory
// split evenly, each device on its host node's guest node.
TEST(VmPlan, TwoNodesGiveTwoGuestNodesAndExpanders) {
  const auto p =
      plan_json("emulated-vm", {"gpu0", "nic0", "gpu1", "nic1", "vcpus", "4", "memory", "512"});
  ASSERT_EQ(p["nodes"].size(), 2U);
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(p["nodes"][n]["id"], n);
    EXPECT_EQ(p["nodes"][n]["host_node"], n);
    EXPECT_EQ(p["nodes"][n]["vcpus"], 2);
    EXPECT_EQ(p["nodes"][n]["memory_mib"], 256);
  }
  int pxbs = 0;
  for (const auto& b : p["bridges"]) {
    if (b["model"] == "pxb-pcie") {
      EXPECT_EQ(b["numa_node"], pxbs);
      ++pxbs;
    }
  }
  EXPECT_EQ(pxbs, 2);
  for (const auto& d : p["devices"]) {
    const std::string name = d["name"];
    EXPECT_EQ(d["guest_node"], name.back() == '0' ? 0 : 1) << name;
  }
}

std::map<std::string, int> model_counts(const nlohmann::ordered_json& plan) {
  std::map<std::string, int> n;
  for (const auto& b : plan["bridges"]) {
    ++n[b["model"].get<std::string>()];
  }
  return n;
}

// The HGX-like host with everything bound to vfio-pci: 1, 2, 4 and 8 GPUs
// with their NICs.  Switches are mirrored one to one (one upstream port,
// one downstream port per device), host bridges one expander each.
TEST(VmPlanHgx, OneGpuAndItsNicShareAMirroredSwitch) {
  const auto p = plan_json("hgx-vm", {"gpu0", "nic2"});
  const std::vector<std::string> path{"xio3130-downstream", "x3130-upstream", "pcie-root-port",
                                      "pxb-pcie"};
  EXPECT_EQ(chain(p, "gpu0"), path);
  EXPECT_EQ(chain(p, "nic2"), path);
  EXPECT_EQ(model_counts(p), (std::map<std::string, int>{{"pxb-pcie", 1},
                                                         {"pcie-root-port", 1},
                                                         {"x3130-upstream", 1},
                                                         {"xio3130-downstream", 2}}));
  EXPECT_TRUE(p["devices"][0]["clique"].is_null());  // one GPU: no clique
}

TEST(VmPlanHgx, TwoGpusOneSwitch) {
  const auto p = plan_json("hgx-vm", {"gpu0", "gpu1", "nic2", "nic3"});
  EXPECT_EQ(model_counts(p), (std::map<std::string, int>{{"pxb-pcie", 1},
                                                         {"pcie-root-port", 1},
                                                         {"x3130-upstream", 1},
                                                         {"xio3130-downstream", 4}}));
  EXPECT_EQ(p["devices"][0]["clique"], 0);
  EXPECT_EQ(p["devices"][1]["clique"], 0);
  EXPECT_TRUE(p["devices"][2]["clique"].is_null());  // NICs are in no clique
}

// Two switches on two host bridges of socket 0: two expanders on one guest
// node, so the crossed pairs stay NODE, not PHB.
TEST(VmPlanHgx, FourGpusTwoHostBridgesOneNode) {
  const auto p = plan_json(
      "hgx-vm", {"gpu0", "gpu1", "gpu2", "gpu3", "nic2", "nic3", "nic4", "nic5", "vcpus", "8"});
  ASSERT_EQ(p["nodes"].size(), 1U);
  EXPECT_EQ(model_counts(p), (std::map<std::string, int>{{"pxb-pcie", 2},
                                                         {"pcie-root-port", 2},
                                                         {"x3130-upstream", 2},
                                                         {"xio3130-downstream", 8}}));
  for (const auto& b : p["bridges"]) {
    if (b["model"] == "pxb-pcie") {
      EXPECT_EQ(b["numa_node"], 0);
    }
  }
}

// The whole host: two nodes, three host bridges, and the BlueField-like
// NIC behind a switch nested in switch 3 keeps both switch levels.
TEST(VmPlanHgx, EightGpusTwoNodesNestedSwitch) {
  const auto p =
      plan_json("hgx-vm", {"gpu0",      "gpu1",      "gpu2",  "gpu3", "gpu4",      "gpu5",
                           "gpu6",      "gpu7",      "nic2",  "nic3", "nic4",      "nic5",
                           "nic6",      "nic7",      "nic8",  "nic9", "nvswitch0", "nvswitch1",
                           "nvswitch2", "nvswitch3", "vcpus", "16",   "memory",    "65536"});
  ASSERT_EQ(p["nodes"].size(), 2U);
  EXPECT_EQ(p["nodes"][1]["vcpus"], 8);
  EXPECT_EQ(p["nodes"][1]["memory_mib"], 32768);
  EXPECT_EQ(model_counts(p)["pxb-pcie"], 3);
  EXPECT_EQ(model_counts(p)["x3130-upstream"], 5);  // four PEX switches and the nested one
  EXPECT_EQ(chain(p, "nic9"),
            (std::vector<std::string>{"xio3130-downstream", "x3130-upstream", "xio3130-downstream",
                                      "x3130-upstream", "pcie-root-port", "pxb-pcie"}));
  int clique = 0;
  for (const auto& d : p["devices"]) {
    clique += d["clique"] == 0 ? 1 : 0;
  }
  EXPECT_EQ(clique, 8);
}

// NVLink on an HGX baseboard runs through its NVSwitches: a VM given every
// GPU must take them along, a VM given some is told it has no NVLink.
TEST(VmPlanHgx, NvswitchesGoWithTheWholeBaseboard) {
  Args eight{"gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"};
  Args args{"vm", "plan"};
  args.insert(args.end(), eight.begin(), eight.end());
  args.insert(args.end(), {"--sysfs-root", testdata("hgx-vm/sys")});
  const auto r = run_cli(args);
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "Error: vm plan: every NVIDIA GPU of the host is planned but not nvswitch0 nvswitch1 "
            "nvswitch2 nvswitch3: NVLink between them needs the baseboard's NVSwitches passed "
            "through as well (and NVIDIA Fabric Manager in the guest)\n");

  eight.insert(eight.end(), {"nvswitch0", "nvswitch1", "nvswitch2", "nvswitch3"});
  const auto whole = plan_json("hgx-vm", eight);
  EXPECT_EQ(whole["devices"].size(), 12U);
  EXPECT_THAT(whole["notes"].dump(), HasSubstr("must run NVIDIA Fabric Manager"));

  const auto two = plan_json("hgx-vm", {"gpu0", "gpu1"});
  EXPECT_THAT(two["notes"].dump(), HasSubstr("NVLink: 2 of the host's 8 NVIDIA GPUs"));
  EXPECT_THAT(plan_json("hgx-vm", {"gpu0"})["notes"].dump(), ::testing::Not(HasSubstr("NVLink")));
}

TEST(VmPlan, QemuFormatIsOneOptionPerLine) {
  const auto r = run_cli({"vm", "plan", "gpu0", "nic1", "vcpus", "2", "memory", "256",
                          "--sysfs-root", testdata("emulated-vm/sys")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("-device pxb-pcie,id=pxb0,bus=pcie.0,bus_nr=32,numa_node=0\n"));
  EXPECT_THAT(r.out, HasSubstr("-device pxb-pcie,id=pxb1,bus=pcie.0,bus_nr=64,numa_node=1\n"));
  EXPECT_THAT(r.out, HasSubstr("-device vfio-pci,host=0000:21:00.0,bus=rp0,addr=0x00.0\n"));
  EXPECT_THAT(r.out, HasSubstr("-device pcie-root-port,id=rp0,bus=pxb0,addr=0x00.0,chassis=1"));
  EXPECT_THAT(r.out, HasSubstr("-numa node,nodeid=1,cpus=1-1,memdev=mem1\n"));
  EXPECT_THAT(r.out, HasSubstr("host-nodes=1,policy=bind"));
  EXPECT_THAT(r.out, HasSubstr("device-iotlb=on"));
  EXPECT_THAT(r.out, HasSubstr("host-phys-bits=on"));
}

// Whole outputs, reviewed once: the QEMU arguments for the whole HGX-like
// host and for the emulated host's two nodes.
TEST(VmPlanGolden, QemuArgs) {
  const Args eight{"gpu0",      "gpu1",      "gpu2",  "gpu3", "gpu4",      "gpu5",
                   "gpu6",      "gpu7",      "nic2",  "nic3", "nic4",      "nic5",
                   "nic6",      "nic7",      "nic8",  "nic9", "nvswitch0", "nvswitch1",
                   "nvswitch2", "nvswitch3", "vcpus", "16",   "memory",    "65536"};
  for (const auto& [fixture, devs] : std::vector<std::pair<std::string, Args>>{
           {"hgx-vm", eight}, {"emulated-vm", {"gpu0", "gpu1", "nic0", "nic1"}}}) {
    Args args{"vm", "plan"};
    args.insert(args.end(), devs.begin(), devs.end());
    args.insert(args.end(), {"--sysfs-root", testdata(fixture + "/sys")});
    const auto r = run_cli(args);
    ASSERT_EQ(r.rc, kExitOk) << r.err;
    std::string note;
    EXPECT_TRUE(testing::matches_golden(fixture + ".plan.qemu.txt", r.out, &note)) << note;
  }
}

// Guest memory on huge pages from a hugetlbfs mount, per node, preallocated;
// the mount's page size is the one /proc/mounts gives it.
TEST(VmPlan, HugepagesBackEachNode) {
  const auto root = testdata("emulated-vm");
  auto r = run_cli({"vm", "plan", "gpu0", "gpu1", "memory", "2048", "hugepages", "/dev/hugepages",
                    "--root", root});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("-object memory-backend-file,id=mem0,mem-path=/dev/hugepages,"
                               "prealloc=on,size=1024M,host-nodes=0,policy=bind\n"));
  EXPECT_THAT(r.out, HasSubstr("id=mem1,mem-path=/dev/hugepages,prealloc=on,size=1024M,"
                               "host-nodes=1,policy=bind\n"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("memory-backend-ram")));
  r = run_cli(
      {"-j", "vm", "plan", "gpu0", "hugepages", "/dev/hugepages1G", "--root", testdata("hgx-vm")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["hugepage_kib"], 1048576);

  r = run_cli({"vm", "plan", "gpu0", "hugepages", "hugepages", "--root", root});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("hugepages wants the absolute path of a hugetlbfs mount"));
  r = run_cli({"vm", "plan", "gpu0", "hugepages", "/dev/hugepages1G", "--root", root});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("hugepages /dev/hugepages1G: nothing is mounted there"));
  r = run_cli({"vm", "plan", "gpu0", "hugepages", "/proc", "--root", root});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("hugepages /proc: a proc mount, not hugetlbfs"));
  // A sysfs tree alone says nothing of the mounts of its machine.
  r = run_cli({"vm", "plan", "gpu0", "hugepages", "/dev/hugepages", "--sysfs-root",
               testdata("emulated-vm/sys")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("give --procfs-root or --root"));
}

// `format json` is JSON with or without -j, as the man page says.
TEST(VmPlan, FormatJsonWithoutDashJIsJson) {
  const auto r = run_cli({"vm", "plan", "gpu0", "nic0", "format", "json", "--sysfs-root",
                          testdata("emulated-vm/sys")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "not JSON: \"" << r.out << "\"";
  EXPECT_EQ(j["devices"].size(), 2U);
}

TEST(VmPlan, RefusalsNameTheDevice) {
  const auto sys = testdata("emulated-vm/sys");
  auto r = run_cli({"vm", "plan", "gpu9", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("no device \"gpu9\""));
  r = run_cli({"vm", "plan", "gpu0", "nic0", "--sysfs-root", testdata("emulated/sys")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("nic0 (0000:22:00.0) is bound to virtio-pci, not vfio-pci"));
  r = run_cli({"vm", "plan", "gpu0", "gpu0", "--sysfs-root", sys});
  EXPECT_THAT(r.err, HasSubstr("named twice"));
  r = run_cli({"vm", "plan", "gpu0", "nic1", "vcpus", "3", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("vcpus (3) must be a multiple"));
  r = run_cli({"vm", "plan", "0000:20:00.0", "--sysfs-root", sys});
  EXPECT_THAT(r.err, HasSubstr("is a bridge"));
}

// VFIO assigns whole IOMMU groups: half a group is refused, naming the rest.
TEST(VmPlan, PartIommuGroupIsRefused) {
  const auto sys = testdata("multifunction/sys");
  auto r = run_cli({"vm", "plan", "gpu0", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("IOMMU group 40 of 0000:3d:00.0 also holds 0000:3d:00.1, which "
                               "is not assigned"));
  r = run_cli({"vm", "plan", "gpu0", "3d:00.1", "--sysfs-root", sys});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
}

// Guest addresses are fixed before the guest boots: bus numbers depth
// first below each expander in slot order, as SeaBIOS gives them.
TEST(VmPlanHgx, GuestBusNumbersAreDepthFirstInSlotOrder) {
  const auto p = plan_json("hgx-vm", {"gpu0", "gpu4", "nic2", "nic6", "vcpus", "4"});
  std::map<std::string, std::string> bdf;
  for (const auto& d : p["devices"]) {
    bdf[d["name"]] = d["guest_bdf"];
  }
  // pxb0 (bus 0x20): rp0 -> 0x21, up0 -> 0x22, dp0 (gpu0) -> 0x23, dp1 (nic2) -> 0x24;
  // pxb1 (bus 0x40) the same for gpu4 and nic6.
  EXPECT_EQ(bdf, (std::map<std::string, std::string>{{"gpu0", "0000:23:00.0"},
                                                     {"nic2", "0000:24:00.0"},
                                                     {"gpu4", "0000:43:00.0"},
                                                     {"nic6", "0000:44:00.0"}}));
}

// A GPU and its audio function: one guest device, function 0 first and
// multifunction, whatever order they were named in.
TEST(VmPlan, MultifunctionDeviceKeepsFunctionZeroFirst) {
  const auto r =
      run_cli({"vm", "plan", "3d:00.1", "gpu0", "--sysfs-root", testdata("multifunction/sys")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(
      r.out,
      HasSubstr("-device vfio-pci,host=0000:3d:00.0,bus=dp0,addr=0x00.0,multifunction=on\n"));
  EXPECT_THAT(r.out, HasSubstr("-device vfio-pci,host=0000:3d:00.1,bus=dp0,addr=0x00.1\n"));
}

// A VF goes where its PF sits (below the PF's switch port), as a device of
// its own at function 0, and a GPU below the same switch keeps its PIX path.
TEST(VmPlan, VfMemberSitsBelowItsPfsPort) {
  const auto p = plan_json("multifunction", {"gpu0", "3d:00.1", "3f:00.3"});
  EXPECT_EQ(chain(p, "0000:3f:00.3"),
            (std::vector<std::string>{"xio3130-downstream", "x3130-upstream", "pcie-root-port",
                                      "pxb-pcie"}));
  EXPECT_EQ(chain(p, "gpu0"), chain(p, "0000:3f:00.3"));
  std::string gpu_dp;
  std::string vf_dp;
  for (const auto& d : p["devices"]) {
    if (d["host_bdf"] == "0000:3f:00.3") {
      vf_dp = d["bus"];
      EXPECT_EQ(d["function"], 0);
    } else if (d["name"] == "gpu0") {
      gpu_dp = d["bus"];
    }
  }
  EXPECT_NE(gpu_dp, vf_dp);  // two downstream ports of one upstream port
  EXPECT_EQ(model_counts(p)["x3130-upstream"], 1);
}

// A VF still bound to its PF's driver is refused like any other device.
TEST(VmPlan, VfNotOnVfioIsRefused) {
  const auto r = run_cli({"vm", "plan", "3f:00.2", "--sysfs-root", testdata("multifunction/sys")});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("3f:00.2 (0000:3f:00.2) is bound to mlx5_core, not vfio-pci"));
}

// multifunction's second GPU (3e:00.0) holds this vGPU mdev.
constexpr const char* kMdev = "6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d10";

const nlohmann::ordered_json* device_of(const nlohmann::ordered_json& plan,
                                        const std::string& name) {
  for (const auto& d : plan["devices"]) {
    if (d["name"] == name) {
      return &d;
    }
  }
  return nullptr;
}

// An mdev sits where its parent would: below the parent's downstream port
// of the switch it shares with gpu0, on the parent's node; its BARs are not
// its parent's, and a vGPU is in no GPUDirect clique.
TEST(VmPlan, MdevSharesItsParentsPath) {
  const auto p = plan_json("multifunction", {"gpu0", "3d:00.1", kMdev});
  const auto* m = device_of(p, kMdev);
  ASSERT_NE(m, nullptr) << p.dump(2);
  EXPECT_EQ((*m)["mdev"], kMdev);
  EXPECT_EQ((*m)["host_bdf"], "0000:3e:00.0");
  EXPECT_EQ((*m)["guest_node"], 0);
  EXPECT_TRUE((*m)["clique"].is_null());
  EXPECT_EQ(chain(p, kMdev), chain(p, "gpu0"));
  EXPECT_NE((*m)["bus"], (*device_of(p, "gpu0"))["bus"]);
  EXPECT_EQ(model_counts(p)["x3130-upstream"], 1);
  const auto without = plan_json("multifunction", {"gpu0", "3d:00.1"});
  EXPECT_EQ(p["mmio64"]["need"], without["mmio64"]["need"]);
  EXPECT_THAT(p["notes"].dump(), HasSubstr("mdev " + std::string(kMdev) + ": its BARs"));
}

TEST(VmPlan, MdevIsOpenedByItsSysfsPath) {
  const auto r = run_cli({"vm", "plan", kMdev, "--sysfs-root", testdata("multifunction/sys")});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("-device vfio-pci,sysfsdev=/sys/bus/mdev/devices/" +
                               std::string(kMdev) + ",bus=dp0,addr=0x00.0\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("host=0000:3e:00.0")));
}

TEST(VmPlan, MdevRefusals) {
  const auto plan = [](Args words) {
    Args args{"vm", "plan"};
    args.insert(args.end(), words.begin(), words.end());
    args.insert(args.end(), {"--sysfs-root", testdata("multifunction/sys")});
    return run_cli(args);
  };
  auto r = plan({"6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d11"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("no mediated device 6f8b1a52-3c1e-4f0a-9d2b-7e5c4a3b2d11"));
  r = plan({kMdev, kMdev});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("mdev " + std::string(kMdev) + " is named twice"));
  // Its parent stays with its vendor driver: not a device to assign.
  r = plan({"3e:00.0"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("is bound to nvidia, not vfio-pci"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
