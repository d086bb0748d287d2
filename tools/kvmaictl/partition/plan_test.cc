// The planner against goldens: each case a layout, a wanted one and the
// users, and the plan (or the refusal) it gives, in
// testdata/golden/partition.plans.txt.
#include "partition/plan.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "partition/profile.h"
#include "testing/run.h"

namespace kvmai::kvmaictl::partition {
namespace {

// An H100 PF with `vfs` VFs on vfio-pci, types as NVIDIA's vGPU 17 driver
// lists them for an H100 (vGPU user guide, "Virtual GPU types for
// supported GPUs").
Parent h100(int vfs, std::vector<int> types = {}) {
  Parent p;
  p.name = "0000:17:00.0";
  p.pci = true;
  p.driver = "nvidia";
  p.total_vfs = 16;
  p.num_vfs = vfs;
  p.autoprobe = false;
  for (int i = 0; i < vfs; i++) {
    const auto ui = static_cast<std::size_t>(i);
    p.vfs.push_back({.index = i,
                     .bdf = fmt::format("0000:17:00.{}", i + 4),
                     .driver = "vfio-pci",
                     .vgpu_type = ui < types.size() ? types[ui] : 0});
  }
  p.vgpu_types = {
      {1414, "NVIDIA H100-1-10C"}, {1415, "NVIDIA H100-2-20C"}, {1428, "NVIDIA H100-80C"}};
  return p;
}

// An 82576 (igb) with 8 VFs at most, its VFs on igbvf as autoprobe leaves
// them.
Parent igb(int vfs) {
  Parent p;
  p.name = "0000:05:00.0";
  p.pci = true;
  p.driver = "igb";
  p.total_vfs = 7;
  p.num_vfs = vfs;
  p.autoprobe = true;
  for (int i = 0; i < vfs; i++) {
    p.vfs.push_back({.index = i,
                     .bdf = fmt::format("0000:05:10.{}", i * 2),
                     .driver = "igbvf",
                     .vgpu_type = std::nullopt});
  }
  return p;
}

// The kernel's sample mtty parent: two types sharing its serial ports.
Parent mtty(std::vector<Mdev> mdevs) {
  Parent p;
  p.name = "mtty";
  p.mdev_types = {{.id = "mtty-1",
                   .name = "Single port serial",
                   .available_instances = 24,
                   .device_api = "vfio-pci"},
                  {.id = "mtty-2",
                   .name = "Dual port serial",
                   .available_instances = 12,
                   .device_api = "vfio-pci"}};
  p.mdevs = std::move(mdevs);
  return p;
}

const std::string kU1 = "11111111-1111-4111-8111-111111111111";
const std::string kU2 = "22222222-2222-4222-8222-222222222222";

struct Case {
  std::string name;
  Layout now;
  std::string profile;  // a profile file's text, one profile
  Users users;
};

std::string run(const Case& c) {
  int n = 0;
  const UuidSource uuid = [&n] { return fmt::format("00000000-0000-4000-8000-{:012}", ++n); };
  std::string out = "== " + c.name + "\n";
  try {
    const auto profiles = parse_profiles(c.profile, "test.toml");
    const auto p = plan(c.now, profiles.at(0).parents, c.users, uuid);
    if (p.empty()) {
      out += "no change\n";
    }
    for (const auto& s : p.steps) {
      out += s.text() + "\n";
    }
  } catch (const Refusal& e) {
    out += std::string("refused: ") + e.what() + "\n";
  } catch (const std::runtime_error& e) {
    out += std::string("bad profile: ") + e.what() + "\n";
  }
  return out;
}

Users used(const std::string& device, const std::string& who) {
  Users u;
  u.add(device, who);
  return u;
}

TEST(PartitionPlan, MatchesGoldens) {
  const std::string igb_key = "[profile.p.\"0000:05:00.0\"]\n";
  const std::string h100_key = "[profile.p.\"0000:17:00.0\"]\n";
  const std::vector<Case> cases{
      {"igb 0 -> 4 VFs on vfio-pci", {{igb(0)}}, igb_key + "vfs = 4\n", {}},
      {"igb 4 -> 2: through 0, autoprobe off first", {{igb(4)}}, igb_key + "vfs = 2\n", {}},
      {"igb 2 -> 2 again: no change",
       {{[] {
         auto p = igb(2);
         p.autoprobe = false;
         for (auto& vf : p.vfs) {
           vf.driver = "vfio-pci";
         }
         return p;
       }()}},
       igb_key + "vfs = 2\n",
       {}},
      {"igb 2 VFs rebound to a host driver, count kept",
       {{[] {
         auto p = igb(2);
         p.vfs[0].driver = "vfio-pci";
         return p;
       }()}},
       igb_key + "vfs = 2\ndriver = \"igbvf\"\n",
       {}},
      {"igb resize refused: a VF open by a VMM",
       {{igb(4)}},
       igb_key + "vfs = 2\n",
       used("0000:05:10.4", "open by pid 812 (qemu-system-x86)")},
      {"igb resize refused: a VF in an enabled P2P group",
       {{igb(4)}},
       igb_key + "vfs = 0\n",
       used("0000:05:10.0", "in enabled P2P group g0")},
      {"igb 2 -> 0: no new VF, autoprobe left as it is", {{igb(2)}}, igb_key + "vfs = 0\n", {}},
      {"igb 2 -> 0, autoprobe back on",
       {{[] {
         auto p = igb(2);
         p.autoprobe = false;
         return p;
       }()}},
       igb_key + "vfs = 0\nautoprobe = true\n",
       {}},
      {"igb: more VFs than TotalVFs", {{igb(0)}}, igb_key + "vfs = 8\n", {}},
      {"igb: autoprobe kept on when asked",
       {{igb(0)}},
       igb_key + "vfs = 1\nautoprobe = true\ndriver = \"igbvf\"\n",
       {}},
      {"H100: 0 -> 4 VFs of type 1-10C by name",
       {{h100(0)}},
       h100_key + "vfs = 4\nvgpu-type = \"NVIDIA H100-1-10C\"\n",
       {}},
      {"H100: type changed in place, through none, by id",
       {{h100(2, {1414, 0})}},
       h100_key + "vgpu-type = [1415, 1415]\n",
       {}},
      {"H100: every VF to another type: all cleared before any is set (one type per GPU)",
       {{h100(2, {1414, 1414})}},
       h100_key + "vgpu-type = \"NVIDIA H100-2-20C\"\nvfs = 2\n",
       {}},
      {"H100: types cleared",
       {{h100(2, {1414, 1414})}},
       h100_key + "vgpu-type = [\"none\", 0]\n",
       {}},
      {"H100: type change refused for the VF in use",
       {{h100(2, {1414, 1414})}},
       h100_key + "vgpu-type = [1414, 1428]\n",
       used("0000:17:00.5", "open by pid 4242 (qemu-system-x86)")},
      {"H100: a type the VFs do not offer",
       {{h100(1)}},
       h100_key + "vgpu-type = [\"A100-1-5C\"]\n",
       {}},
      {"H100: a type for a VF past the count",
       {{h100(2)}},
       h100_key + "vgpu-type = [\"\", \"\", 1414]\n",
       {}},
      {"igb: a vGPU type on a VF without types", {{igb(1)}}, igb_key + "vgpu-type = [1414]\n", {}},
      {"mtty: 2 instances of mtty-2 created",
       {{mtty({})}},
       "[profile.p.mtty]\nmdevs = { mtty-2 = 2 }\n",
       {}},
      {"mtty: count down removes the idle one",
       {{mtty({{kU1, "mtty-2"}, {kU2, "mtty-2"}})}},
       "[profile.p.mtty]\nmdevs = { mtty-2 = 1 }\n",
       used(kU1, "open by pid 99 (qemu-system-x86)")},
      {"mtty: removal refused for the one in use",
       {{mtty({{kU1, "mtty-2"}})}},
       "[profile.p.mtty]\nmdevs = { mtty-1 = 1 }\n",
       used(kU1, "open by pid 99 (qemu-system-x86)")},
      {"mtty: named instances kept, others made",
       {{mtty({{kU1, "mtty-2"}})}},
       "[profile.p.mtty]\nmdevs = [ { type = \"mtty-2\", uuid = \"" + kU1 +
           "\" }, { type = \"mtty-1\", uuid = \"" + kU2 + "\" } ]\n",
       {}},
      {"mtty: a type it does not offer",
       {{mtty({})}},
       "[profile.p.mtty]\nmdevs = { mbochs-4 = 1 }\n",
       {}},
      {"a parent the host lacks", {{igb(0)}}, "[profile.p.\"0000:99:00.0\"]\nvfs = 1\n", {}},
      {"SR-IOV keys on an mdev parent", {{mtty({})}}, "[profile.p.mtty]\nvfs = 1\n", {}},
      {"two parents: every removal before any creation",
       {{igb(2), mtty({{kU1, "mtty-2"}})}},
       igb_key + "vfs = 3\n[profile.p.mtty]\nmdevs = { mtty-1 = 1 }\n",
       {}},
      {"bad profile: negative count", {{igb(0)}}, igb_key + "vfs = -1\n", {}},
      {"bad profile: unknown key", {{igb(0)}}, igb_key + "vf = 1\n", {}},
      {"bad profile: driver without vfs", {{igb(0)}}, igb_key + "driver = \"igbvf\"\n", {}},
      {"bad profile: more types than VFs",
       {{igb(0)}},
       igb_key + "vfs = 1\nvgpu-type = [1, 2]\n",
       {}},
      {"bad profile: a path as a driver", {{igb(0)}}, igb_key + "vfs = 1\ndriver = \"../x\"\n", {}},
      {"bad profile: not a UUID",
       {{mtty({})}},
       "[profile.p.mtty]\nmdevs = [ { type = \"mtty-1\", uuid = \"x\" } ]\n",
       {}},
      {"bad profile: TOML syntax", {{igb(0)}}, igb_key + "vfs = = 1\n", {}},
  };
  std::string out;
  for (const auto& c : cases) {
    out += run(c);
  }
  EXPECT_TRUE(testing::matches_golden("partition.plans.txt", out));
}

// A plan from a layout to itself is empty, and as_wanted of a parent is a
// way back to it: the rollback of a failed apply relies on both.
TEST(PartitionPlan, AsWantedOfTheLayoutPlansNothing) {
  Layout l{{igb(3), h100(2, {1414, 0}), mtty({{kU1, "mtty-2"}})}};
  l.parents[0].vfs[1].driver = "";
  std::vector<Wanted> back;
  for (const auto& p : l.parents) {
    back.push_back(as_wanted(p));
  }
  const auto p = plan(l, back, Users{}, [] { return std::string("?"); });
  EXPECT_TRUE(p.empty()) << p.steps.front().text();
}

// The way back from a layout the plan left half done: VFs the apply
// created go, the ones there before come back with their drivers.
TEST(PartitionPlan, AsWantedRestoresCountDriversAndMdevs) {
  const Parent before = igb(2);
  Parent four = igb(4);
  four.autoprobe = false;  // as the failed plan left it
  Layout half{{four, mtty({{kU2, "mtty-1"}})}};
  Wanted m;
  m.parent = "mtty";
  m.mdevs = std::vector<WantedMdev>{{.type = "mtty-2", .uuid = kU1}};
  const auto p = plan(half, {as_wanted(before), m}, Users{}, [] { return std::string("?"); });
  std::string text;
  for (const auto& s : p.steps) {
    text += s.text() + "\n";
  }
  EXPECT_EQ(text, "mtty: remove mdev " + kU2 +
                      " (mtty-1)\n"
                      "0000:05:00.0: sriov_numvfs 4 -> 0\n"
                      "0000:05:00.0: sriov_numvfs 0 -> 2\n"
                      "0000:05:00.0 VF 0: driver none -> igbvf\n"
                      "0000:05:00.0 VF 1: driver none -> igbvf\n"
                      "0000:05:00.0: sriov_drivers_autoprobe 0 -> 1\n"
                      "mtty: create mdev " +
                      kU1 + " (mtty-2)\n");
}

}  // namespace
}  // namespace kvmai::kvmaictl::partition
