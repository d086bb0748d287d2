// `topo matrix` over the hgx fixture against a matrix written out by hand
// from the fixture's layout (gen_fixtures.py, hgx()), not computed by the
// code that prints it.
//
// The classes are NVML's topology levels (nvmlGpuTopologyLevel_t), which
// `nvidia-smi topo -m` prints as:
//   PIX  NVML_TOPOLOGY_SINGLE      one PCIe switch at most
//   PXB  NVML_TOPOLOGY_MULTIPLE    several switches, no host bridge
//   PHB  NVML_TOPOLOGY_HOSTBRIDGE  through one host bridge
//   NODE NVML_TOPOLOGY_NODE        between host bridges of one NUMA node
//   SYS  NVML_TOPOLOGY_SYSTEM      between NUMA nodes
// hgx's GPUs and RDMA NICs, by where they sit:
//   A  PEX switch sw0, host bridge pci0000:15, node 0: gpu0 gpu1 nic2 nic3
//   B  PEX switch sw1, host bridge pci0000:37, node 0: gpu2 gpu3 nic4 nic5
//   C  PEX switch sw2, root port 97:01.0 of pci0000:97, node 1: gpu4 gpu5 nic6 nic7
//   D  PEX switch sw3, root port 97:03.0 of pci0000:97, node 1: gpu6 gpu7 nic8
//   E  the BlueField-like card's switch sw4, below a downstream port of
//      sw3: nic9 and nic10, two functions of one device
// so: within A, B, C or D: PIX (one switch); nic9-nic10: PIX (one link, no
// switch); D-E: PXB (sw3 and sw4); C-D and C-E: PHB (both below
// pci0000:97); A-B: NODE; A or B with C, D or E: SYS. nic0 and nic1
// (ixgbe, no RDMA device) are management NICs: not in the matrix.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::run_cli;
using testing::testdata;

// Row by row, in the matrix's order: GPUs, then RDMA NICs.
const std::vector<std::pair<std::string, std::string>> kHgx{
    // clang-format off
    {"gpu0",  "X    PIX  NODE NODE SYS  SYS  SYS  SYS  PIX  PIX  NODE NODE SYS  SYS  SYS  SYS  SYS"},
    {"gpu1",  "PIX  X    NODE NODE SYS  SYS  SYS  SYS  PIX  PIX  NODE NODE SYS  SYS  SYS  SYS  SYS"},
    {"gpu2",  "NODE NODE X    PIX  SYS  SYS  SYS  SYS  NODE NODE PIX  PIX  SYS  SYS  SYS  SYS  SYS"},
    {"gpu3",  "NODE NODE PIX  X    SYS  SYS  SYS  SYS  NODE NODE PIX  PIX  SYS  SYS  SYS  SYS  SYS"},
    {"gpu4",  "SYS  SYS  SYS  SYS  X    PIX  PHB  PHB  SYS  SYS  SYS  SYS  PIX  PIX  PHB  PHB  PHB"},
    {"gpu5",  "SYS  SYS  SYS  SYS  PIX  X    PHB  PHB  SYS  SYS  SYS  SYS  PIX  PIX  PHB  PHB  PHB"},
    {"gpu6",  "SYS  SYS  SYS  SYS  PHB  PHB  X    PIX  SYS  SYS  SYS  SYS  PHB  PHB  PIX  PXB  PXB"},
    {"gpu7",  "SYS  SYS  SYS  SYS  PHB  PHB  PIX  X    SYS  SYS  SYS  SYS  PHB  PHB  PIX  PXB  PXB"},
    {"nic2",  "PIX  PIX  NODE NODE SYS  SYS  SYS  SYS  X    PIX  NODE NODE SYS  SYS  SYS  SYS  SYS"},
    {"nic3",  "PIX  PIX  NODE NODE SYS  SYS  SYS  SYS  PIX  X    NODE NODE SYS  SYS  SYS  SYS  SYS"},
    {"nic4",  "NODE NODE PIX  PIX  SYS  SYS  SYS  SYS  NODE NODE X    PIX  SYS  SYS  SYS  SYS  SYS"},
    {"nic5",  "NODE NODE PIX  PIX  SYS  SYS  SYS  SYS  NODE NODE PIX  X    SYS  SYS  SYS  SYS  SYS"},
    {"nic6",  "SYS  SYS  SYS  SYS  PIX  PIX  PHB  PHB  SYS  SYS  SYS  SYS  X    PIX  PHB  PHB  PHB"},
    {"nic7",  "SYS  SYS  SYS  SYS  PIX  PIX  PHB  PHB  SYS  SYS  SYS  SYS  PIX  X    PHB  PHB  PHB"},
    {"nic8",  "SYS  SYS  SYS  SYS  PHB  PHB  PIX  PIX  SYS  SYS  SYS  SYS  PHB  PHB  X    PXB  PXB"},
    {"nic9",  "SYS  SYS  SYS  SYS  PHB  PHB  PXB  PXB  SYS  SYS  SYS  SYS  PHB  PHB  PXB  X    PIX"},
    {"nic10", "SYS  SYS  SYS  SYS  PHB  PHB  PXB  PXB  SYS  SYS  SYS  SYS  PHB  PHB  PXB  PIX  X"},
    // clang-format on
};

std::vector<std::string> split(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> v;
  for (std::string w; in >> w;) {
    v.push_back(w);
  }
  return v;
}

nlohmann::json matrix_json(const std::string& fixture) {
  const auto r = run_cli({"-j", "topo", "matrix", "--sysfs-root", testdata(fixture + "/sys")});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(TopoMatrix, HgxMatchesNvmlLevelsFromTheLayout) {
  const auto j = matrix_json("hgx");
  const auto& devices = j["devices"];
  ASSERT_EQ(devices.size(), kHgx.size());
  for (std::size_t i = 0; i < kHgx.size(); ++i) {
    const auto& [name, row] = kHgx[i];
    const auto want = split(row);
    ASSERT_EQ(want.size(), kHgx.size()) << name;
    EXPECT_EQ(devices[i]["name"], name);
    const auto& paths = devices[i]["paths"];
    ASSERT_EQ(paths.size(), kHgx.size()) << name;
    for (std::size_t k = 0; k < kHgx.size(); ++k) {
      EXPECT_EQ(paths[kHgx[k].first], want[k]) << name << " - " << kHgx[k].first;
    }
  }
  EXPECT_EQ(j["management_nics"], nlohmann::json({"nic0", "nic1"}));
}

TEST(TopoMatrix, HgxAffinityAndRdmaDevices) {
  const auto j = matrix_json("hgx");
  const auto& d = j["devices"];
  // Socket 0: CPUs 0-55 and their SMT siblings 112-167 (hgx_topo_extras).
  EXPECT_EQ(d[0]["cpu_affinity"], "0-55,112-167");
  EXPECT_EQ(d[0]["numa_affinity"], 0);
  EXPECT_EQ(d[4]["cpu_affinity"], "56-111,168-223");
  EXPECT_EQ(d[4]["numa_affinity"], 1);
  // mlx5_core numbers its RDMA devices in probe (BDF) order.
  EXPECT_EQ(d[8]["name"], "nic2");
  EXPECT_EQ(d[8]["rdma_devices"], nlohmann::json({"mlx5_0"}));
  EXPECT_EQ(d[16]["rdma_devices"], nlohmann::json({"mlx5_8"}));
  EXPECT_EQ(d[0]["rdma_devices"], nlohmann::json::array());
}

// The emulated host's virtio NICs have no RDMA device: GPUs only, and the
// NICs named as management NICs.
TEST(TopoMatrix, VirtioNicsAreManagementNics) {
  const auto r = run_cli(
      {"topo", "matrix", "--sysfs-root", testdata("emulated/sys"), "--host-bridge-switches"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_THAT(r.out, ::testing::HasSubstr("Management NICs, not in the matrix: nic0, nic1\n"));
  EXPECT_THAT(r.out, ::testing::Not(::testing::HasSubstr("RDMA NICs:")));
  EXPECT_THAT(r.out, ::testing::StartsWith("      gpu0  gpu1  CPUS"));
}

}  // namespace
}  // namespace kvmai::kvmaictl
