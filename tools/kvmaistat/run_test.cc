// The whole tool in-process, on a fake sysfs tree.
#include "run.h"

#include <gtest/gtest.h>
#include <linux/kvmai_counters.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "device.h"
#include "sampler.h"
#include "testing/fake_sysfs.h"

namespace kvmai::kvmaistat {
namespace {

namespace kt = testing;

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

Result run_tool(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  Result r;
  r.rc = run(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream s(text);
  for (std::string line; std::getline(s, line);) {
    v.push_back(line);
  }
  return v;
}

void write_all_ones(const kt::TempDir& tmp, const kt::FakeDevice& dev) {
  for (const auto& c : dev.counters) {
    kt::write_counter(tmp.path(), dev.bdf, c.offset, ~std::uint64_t{0});
  }
}

TEST(Run, TextSamples) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-c", "2", "-i", "10"});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 6U) << r.out;
  // The fake clock does not move between samples.
  EXPECT_TRUE(l[0].starts_with("0000:01:00.0 mock_bw  interval 0.0")) << l[0];
  EXPECT_TRUE(l[0].ends_with(" s (monotonic clock)")) << l[0];
  EXPECT_EQ(l[1], "  pcie stack 0: in 0.000 GB/s  out 0.000 GB/s");
  EXPECT_EQ(l[2], "  mem channel 0: read 0.000 GB/s  write 0.000 GB/s");
  EXPECT_EQ(l[3].substr(0, 20), l[0].substr(0, 20));
}

TEST(Run, JsonLinesPerDevicePerSample) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.bdf = "0000:02:00.0", .unit = "second"});
  kt::write_device(tmp.path(), {});
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-j", "-c", "2", "-i", "10"});
  const std::chrono::duration<double> ran = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 4U) << r.out;
  for (std::size_t i = 0; i < l.size(); ++i) {
    const auto j = nlohmann::json::parse(l[i]);
    EXPECT_EQ(j["device"], i % 2 == 0 ? "0000:01:00.0" : "0000:02:00.0");
    EXPECT_EQ(j["unit"], i % 2 == 0 ? "mock_bw" : "second");
    EXPECT_TRUE(j["time"].is_number_float());
    EXPECT_GT(j["time"].get<double>(), 1e9);
    // The monotonic time between two snapshots of this run.  Not bounded
    // by -i: on a fixed schedule a late sample (a loaded machine) shortens
    // the next interval to anything above zero.
    EXPECT_GT(j["interval_s"].get<double>(), 0.0);
    EXPECT_LE(j["interval_s"].get<double>(), ran.count());
    EXPECT_EQ(j["clock"], "monotonic");
    EXPECT_EQ(j["pcie"], nlohmann::json::parse(R"([{"stack":0,"in_gbps":0.0,"out_gbps":0.0,)"
                                               R"("traffic":{"sees":["dma",)"
                                               R"("peer-through-root-complex"],)"
                                               R"("misses":["peer-in-switch"]}}])"));
    EXPECT_EQ(j["mem"], nlohmann::json::parse(R"([{"channel":0,"read_gbps":0.0,"write_gbps":0.0,)"
                                              R"("traffic":{"sees":["cpu","dma"],)"
                                              R"("misses":["peer"]}}])"));
  }
}

TEST(Run, PrettyImpliesJson) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-p", "-c", "1", "-i", "1"});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_TRUE(r.out.starts_with("{\n  \"device\": \"0000:01:00.0\",\n")) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["unit"], "mock_bw");
}

TEST(Run, OneDeviceByBdf) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  kt::write_device(tmp.path(), {.bdf = "0000:02:00.0"});
  const auto r = run_tool(
      {"--sysfs-root", tmp.path().string(), "-d", "0000:02:00.0", "-j", "-c", "1", "-i", "1"});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  const auto l = lines(r.out);
  ASSERT_EQ(l.size(), 1U);
  EXPECT_EQ(nlohmann::json::parse(l[0])["device"], "0000:02:00.0");
}

TEST(Run, RevokedAtStart) {
  const kt::TempDir tmp;
  const kt::FakeDevice dev{.state = KVMAI_CTRDEV_REVOKED};
  kt::write_device(tmp.path(), dev);
  write_all_ones(tmp, dev);
  auto r = run_tool({"--sysfs-root", tmp.path().string(), "-c", "1", "-i", "1"});
  EXPECT_EQ(r.rc, kExitRevoked);
  EXPECT_EQ(r.err, "kvmaistat: 0000:01:00.0: unit mock_bw was revoked by the host\n");
  EXPECT_EQ(r.out, "");

  r = run_tool({"--sysfs-root", tmp.path().string(), "-j", "-c", "1", "-i", "1"});
  EXPECT_EQ(r.rc, kExitRevoked);
  EXPECT_EQ(r.err, "kvmaistat: 0000:01:00.0: unit mock_bw was revoked by the host\n");
  EXPECT_EQ(r.out, R"({"device":"0000:01:00.0","unit":"mock_bw","state":"revoked"})"
                   "\n");
}

// Revoked while sampling: the counters turn to all ones first, the state
// is read then.
TEST(Run, RevokedWhileSampled) {
  const kt::TempDir tmp;
  const kt::FakeDevice dev;
  kt::write_device(tmp.path(), dev);
  const Device d = Device::open(tmp.path(), dev.bdf);
  write_all_ones(tmp, dev);
  const Snapshot s = take_snapshot(d.layout(), d.bar0());
  EXPECT_TRUE(reads_all_ones(d.layout(), s));
  EXPECT_EQ(d.read_state(), KVMAI_CTRDEV_LIVE);  // not yet: keep sampling
  kt::write_state(tmp.path(), dev.bdf, KVMAI_CTRDEV_REVOKED);
  EXPECT_EQ(d.read_state(), KVMAI_CTRDEV_REVOKED);
}

// The host takes the unit back while kvmaistat samples it: counters first,
// then the state, as a VMM may well do it.
TEST(Run, RevokedWhileRunning) {
  const kt::TempDir tmp;
  const kt::FakeDevice dev;
  kt::write_device(tmp.path(), dev);
  std::thread host([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    write_all_ones(tmp, dev);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    kt::write_state(tmp.path(), dev.bdf, KVMAI_CTRDEV_REVOKED);
  });
  // A bound, should the revocation go unnoticed.
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-j", "-c", "500", "-i", "10"});
  host.join();
  EXPECT_EQ(r.rc, kExitRevoked);
  EXPECT_EQ(r.err, "kvmaistat: 0000:01:00.0: unit mock_bw was revoked by the host\n");
  const auto l = lines(r.out);
  ASSERT_GE(l.size(), 2U) << r.out;
  EXPECT_EQ(l.back(), R"({"device":"0000:01:00.0","unit":"mock_bw","state":"revoked"})");
  EXPECT_EQ(nlohmann::json::parse(l.front())["clock"], "monotonic");
}

// Counters all ones but the unit still live: a coincidence, not the end.
TEST(Run, AllOnesButLiveKeepsSampling) {
  const kt::TempDir tmp;
  const kt::FakeDevice dev;
  kt::write_device(tmp.path(), dev);
  write_all_ones(tmp, dev);
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-c", "1", "-i", "1"});
  EXPECT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(lines(r.out).size(), 3U);
}

// Each BAR2 read is a VM exit: sampling must not need it.
TEST(Run, SamplingDoesNotTouchTheLayout) {
  const kt::TempDir tmp;
  const kt::FakeDevice dev;
  kt::write_device(tmp.path(), dev);
  const Device d = Device::open(tmp.path(), dev.bdf);
  std::filesystem::remove(tmp.path() / "devices/pci0000:00" / dev.bdf / "resource2");
  const Snapshot a = take_snapshot(d.layout(), d.bar0());
  kt::write_counter(tmp.path(), dev.bdf, kt::kClockOffset, kt::kClockHz);
  kt::write_counter(tmp.path(), dev.bdf, kt::kPcieInOffset, 1'000'000);
  const Snapshot b = take_snapshot(d.layout(), d.bar0());
  EXPECT_FALSE(reads_all_ones(d.layout(), b));
  EXPECT_EQ(compute_rates(d.layout(), a, b).pcie[0].in_gbps, 0.064);
}

TEST(Run, NoDevice) {
  const kt::TempDir tmp;
  kt::write_empty_bus(tmp.path());
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-c", "1"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "kvmaistat: no kvmai counters device (PCI class 0x110100 with the kvmai capability) "
            "in " +
                (tmp.path() / "bus/pci/devices").string() + "\n");
}

TEST(Run, BadLayoutIsARuntimeError) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.magic = 0});
  const auto r = run_tool({"--sysfs-root", tmp.path().string(), "-c", "1"});
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err,
            "kvmaistat: 0000:01:00.0: resource2: bad magic 0x00000000, expected 0x4941564b\n");
}

TEST(Run, UsageErrors) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--frobnicate"},
           {"-i"},
           {"-i", "abc"},
           {"-i", "0"},
           {"-c", "-1"},
           {"--count=-1"},
           {"extra"},
       }) {
    const auto r = run_tool(args);
    EXPECT_EQ(r.rc, kExitUsage) << args[0];
    EXPECT_TRUE(r.err.starts_with("kvmaistat: ")) << r.err;
    EXPECT_EQ(lines(r.err).size(), 1U) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(Run, HelpAndVersion) {
  auto r = run_tool({"-h"});
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_TRUE(r.out.starts_with("Usage: kvmaistat [OPTIONS]\n")) << r.out;
  for (const char* option : {"--device", "--interval", "--count", "--json", "--pretty",
                             "--sysfs-root", "--help", "--version"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  }
  r = run_tool({"--version"});
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.out, "kvmaistat " KVMAISTAT_VERSION "\n");
}

}  // namespace
}  // namespace kvmai::kvmaistat
