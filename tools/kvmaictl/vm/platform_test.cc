// What a planned guest boots on (vm/platform.h): firmware, the 64-bit MMIO
// window for the devices' BARs, huge pages, pinning and the VFIO backend,
// the same in both formats, on 1, 2, 4 and 8 H100s of hgx-vm.
#include "vm/platform.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/errors.h"
#include "testing/plan_words.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using ::testing::HasSubstr;
using testing::hgx_gpus;
using ::testing::Not;
using testing::operator+;
using testing::run_cli;
using testing::testdata;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30U;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20U;

testing::RunResult plan(const Args& words, const std::string& root = testdata("hgx-vm"),
                        bool json = true) {
  Args args;
  if (json) {
    args.emplace_back("-j");
  }
  args.insert(args.end(), {"vm", "plan"});
  args.insert(args.end(), words.begin(), words.end());
  args.insert(args.end(), {"--root", root});
  return run_cli(args);
}

nlohmann::json plan_ok(const Args& words, const std::string& root = testdata("hgx-vm")) {
  const auto r = plan(words, root);
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  return r.rc == kExitOk ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// Each H100 takes its 128 GiB BAR1 and 32 MiB BAR3; below one downstream
// port that is 128 GiB + 32 MiB aligned to 128 GiB, so the next GPU's
// window starts at the next 128 GiB boundary.  The window asked of OVMF is
// the next power of two, the same in the JSON, the QEMU arguments and the
// libvirt domain.
TEST(Platform, WindowHoldsTheBarsOfOneTwoFourAndEightGpus) {
  std::ostringstream golden;
  for (const int n : {1, 2, 4, 8}) {
    SCOPED_TRACE(std::to_string(n) + " GPUs");
    const auto p = plan_ok(hgx_gpus(n));
    const std::uint64_t need = p["mmio64"]["need"];
    const std::uint64_t size = p["mmio64"]["size"];
    EXPECT_GE(need, n * (128 * kGiB + 32 * kMiB)) << "less than the BARs themselves";
    // Per switch: 128 GiB + 32 MiB, then at 256 GiB the second GPU.
    const std::uint64_t per_switch = n == 1 ? 128 * kGiB + 32 * kMiB : 384 * kGiB + 32 * kMiB;
    const int switches = (n + 1) / 2;
    EXPECT_EQ(need, (switches - 1) * 512 * kGiB + per_switch);
    EXPECT_EQ(size, std::bit_ceil(need));
    EXPECT_EQ(p["firmware"], "uefi");
    EXPECT_EQ(p["phys_bits"], 46);
    const auto& q = p["qemu"];
    const std::string fw_cfg = "name=opt/ovmf/X-PciMmio64Mb,string=" + std::to_string(size >> 20U);
    EXPECT_NE(std::find(q.begin(), q.end(), fw_cfg), q.end()) << q.dump();
    EXPECT_NE(std::find(q.begin(), q.end(), "/usr/share/ovmf/OVMF.fd"), q.end()) << q.dump();
    const std::string xml =
        plan(hgx_gpus(n) + Args{"format", "libvirt"}, testdata("hgx-vm"), false).out;
    EXPECT_THAT(xml, HasSubstr("<entry name=\"opt/ovmf/X-PciMmio64Mb\">" +
                               std::to_string(size >> 20U) + "</entry>"));
    EXPECT_THAT(xml, HasSubstr("<os firmware=\"efi\">"));
    golden << n << " GPUs: need " << size_text(need) << ", window " << size_text(size)
           << ", firmware " << p["firmware"].get<std::string>() << ", phys_bits " << p["phys_bits"]
           << ", vcpu_pins " << p["vcpu_pins"].size() << ", emulator_cpus "
           << p["emulator_cpus"].get<std::string>() << "\n";
  }
  std::string note;
  EXPECT_TRUE(testing::matches_golden("hgx-vm.platform.txt", golden.str(), &note)) << note;
}

// What the window cannot be: smaller than the BARs, past the CPU's
// physical address bits, or SeaBIOS's for BARs it is not told of.
TEST(Platform, WindowRefusals) {
  auto r = plan({"gpu0", "mmio64", "128G"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(
      r.err,
      "Error: vm plan: mmio64 128 GiB is less than the 128.1 GiB the devices' 64-bit BARs take\n");
  EXPECT_EQ(plan_ok({"gpu0", "mmio64", "1T"})["mmio64"]["size"], 1024 * kGiB);

  r = plan({"gpu0", "firmware", "bios"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("firmware bios: the devices' 64-bit BARs take 128.1 GiB"));

  // A host with 39 physical address bits (512 GiB) holds one H100's
  // 256 GiB window above 1 GiB of memory, not four H100s' 1 TiB.
  const auto root =
      std::filesystem::temp_directory_path() / ("kvmaictl-platform-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "proc");
  std::filesystem::create_directory_symlink(testdata("hgx-vm/sys"), root / "sys");
  for (const char* f : {"cmdline", "mounts", "meminfo", "modules"}) {
    std::filesystem::copy_file(testdata("hgx-vm/proc/") + f, root / "proc" / f);
  }
  std::ofstream(root / "proc/cpuinfo") << "processor\t: 0\n"
                                       << "address sizes\t: 39 bits physical, 48 bits virtual\n";
  EXPECT_EQ(plan_ok({"gpu0", "memory", "1024"}, root)["phys_bits"], 39);
  r = plan(hgx_gpus(4) + Args{"memory", "1024"}, root);
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "Error: vm plan: the 1 TiB MMIO window above 1024 MiB of memory ends at guest address "
            "2^41, past the host CPU's 39 physical address bits\n");
  std::filesystem::remove_all(root);

  // Without procfs the plan cannot check, and says so.
  const auto j = nlohmann::json::parse(
      run_cli({"-j", "vm", "plan", "gpu0", "--sysfs-root", testdata("hgx-vm/sys")}).out);
  EXPECT_TRUE(j["phys_bits"].is_null());
  EXPECT_THAT(j["notes"].dump(), HasSubstr("physical address bits are unknown"));
}

TEST(Platform, WordsAreChecked) {
  for (const auto& [words, err] : std::vector<std::pair<Args, std::string>>{
           {{"gpu0", "firmware", "efi"}, "firmware is uefi or bios, not \"efi\""},
           {{"gpu0", "mmio64", "2X"}, "mmio64 wants a size such as 512G or 2T, not \"2X\""},
           {{"gpu0", "mmio64", "0G"}, "mmio64 wants a size such as 512G or 2T, not \"0G\""},
           {{"gpu0", "pin", "all"}, "pin is node, vcpu or none, not \"all\""}}) {
    const auto r = plan(words);
    EXPECT_EQ(r.rc, kExitUsage) << words.back();
    EXPECT_THAT(r.err, HasSubstr(err));
  }
}

// SeaBIOS takes nothing from the plan: no -bios, no fw_cfg, no <os
// firmware>, no <sysinfo>.
TEST(Platform, BiosIsQemusDefault) {
  const Args words{"gpu0", "nic0", "firmware", "bios"};
  const auto root = testdata("emulated-vm");
  const auto args = run_cli({"vm", "plan", "gpu0", "nic0", "firmware", "bios", "--root", root});
  ASSERT_EQ(args.rc, kExitOk) << args.err;
  EXPECT_THAT(args.out, Not(HasSubstr("-bios")));
  EXPECT_THAT(args.out, Not(HasSubstr("-fw_cfg")));
  const auto xml = plan(words + Args{"format", "libvirt"}, root, false);
  ASSERT_EQ(xml.rc, kExitOk) << xml.err;
  EXPECT_THAT(xml.out, HasSubstr("<os>"));
  EXPECT_THAT(xml.out, Not(HasSubstr("<sysinfo")));
  EXPECT_THAT(xml.out, HasSubstr("<acpi />"));
}

// Huge pages only when asked, of the mount's page size; pinning by node,
// 1:1 or not at all, QEMU's threads on what the vCPUs leave.
TEST(Platform, HugepagesAndPinning) {
  auto xml = plan({"gpu0", "format", "libvirt"}, testdata("hgx-vm"), false).out;
  EXPECT_THAT(xml, Not(HasSubstr("memoryBacking")));
  xml = plan({"gpu0", "hugepages", "/dev/hugepages1G", "format", "libvirt"}, testdata("hgx-vm"),
             false)
            .out;
  EXPECT_THAT(xml, HasSubstr("<page size=\"1048576\" unit=\"KiB\" />"));
  xml =
      plan({"gpu0", "hugepages", "/dev/hugepages", "format", "libvirt"}, testdata("hgx-vm"), false)
          .out;
  EXPECT_THAT(xml, HasSubstr("<page size=\"2048\" unit=\"KiB\" />"));

  auto p = plan_ok({"gpu0", "gpu4", "vcpus", "4"});
  ASSERT_EQ(p["vcpu_pins"].size(), 4U);
  EXPECT_EQ(p["vcpu_pins"][0]["cpus"], "0-55,112-167");
  EXPECT_EQ(p["vcpu_pins"][3]["cpus"], "56-111,168-223");
  EXPECT_EQ(p["emulator_cpus"], "0-223");
  p = plan_ok({"gpu0", "gpu4", "vcpus", "4", "pin", "vcpu"});
  ASSERT_EQ(p["vcpu_pins"].size(), 4U);
  EXPECT_EQ(p["vcpu_pins"][1]["cpus"], "1");
  EXPECT_EQ(p["vcpu_pins"][2]["cpus"], "56");
  EXPECT_EQ(p["emulator_cpus"], "2-55,58-223");
  p = plan_ok({"gpu0", "pin", "none"});
  EXPECT_TRUE(p["vcpu_pins"].empty());
  EXPECT_TRUE(p["emulator_cpus"].is_null());
  EXPECT_EQ(p["vfio_backend"], "container");
}

TEST(Platform, SizesForPeople) {
  EXPECT_EQ(size_text(2 * kMiB), "2 MiB");
  EXPECT_EQ(size_text(2048 * kGiB), "2 TiB");
  EXPECT_EQ(size_text(128 * kGiB + 32 * kMiB), "128.1 GiB");
  EXPECT_EQ(size_text(1920 * kGiB + 96 * kMiB), "1.9 TiB");
  EXPECT_EQ(size_of("mmio64", "512G"), 512 * kGiB);
  EXPECT_EQ(size_of("pagesize", "1024M"), kGiB);
  EXPECT_THROW(size_of("mmio64", "512"), UsageError);
  EXPECT_THROW(size_of("mmio64", "99999999999999T"), UsageError);
}

}  // namespace
}  // namespace kvmai::kvmaictl
