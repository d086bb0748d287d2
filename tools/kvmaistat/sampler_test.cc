#include "sampler.h"

#include <gtest/gtest.h>

#include "testing/fake_sysfs.h"

namespace kvmai::kvmaistat {
namespace {

namespace kt = testing;

constexpr std::uint64_t k48 = std::uint64_t{1} << 48;

TEST(Delta, WrapsAtTheWidth) {
  EXPECT_EQ(counter_delta(100, 250, 48), 150U);
  EXPECT_EQ(counter_delta(k48 - 100, 50, 48), 150U);
  EXPECT_EQ(counter_delta(0, k48 - 1, 48), k48 - 1);
  EXPECT_EQ(counter_delta(~std::uint64_t{0}, 1, 64), 2U);
  EXPECT_EQ(counter_delta(1, 0, 1), 1U);
}

TEST(Delta, Masks) {
  EXPECT_EQ(width_mask(1), 1U);
  EXPECT_EQ(width_mask(48), k48 - 1);
  EXPECT_EQ(width_mask(64), ~std::uint64_t{0});
}

// The mock device with every counter written, then a snapshot of it.
class SnapshotTest : public ::testing::Test {
 protected:
  Snapshot snapshot_after(std::uint64_t clock, std::uint64_t in, std::uint64_t out,
                          std::uint64_t read, std::uint64_t write) {
    kt::write_counter(tmp_.path(), kBdf, kt::kClockOffset, clock);
    kt::write_counter(tmp_.path(), kBdf, kt::kPcieInOffset, in);
    kt::write_counter(tmp_.path(), kBdf, kt::kPcieOutOffset, out);
    kt::write_counter(tmp_.path(), kBdf, kt::kMemReadOffset, read);
    kt::write_counter(tmp_.path(), kBdf, kt::kMemWriteOffset, write);
    return take_snapshot(device_.layout(), device_.bar0());
  }

  static Device write_and_open(const kt::TempDir& tmp) {
    kt::write_device(tmp.path(), {});
    return Device::open(tmp.path(), kBdf);
  }

  static constexpr const char* kBdf = "0000:01:00.0";
  const kt::TempDir tmp_;
  const Device device_ = write_and_open(tmp_);
};

TEST_F(SnapshotTest, DeviceClockGivesExactRates) {
  // One second of a 1 GHz clock; 2, 1, 4 and 2 GB in 64-byte counts.
  const Snapshot a = snapshot_after(7'000'000'000, 1000, 2000, 3000, 4000);
  const Snapshot b = snapshot_after(8'000'000'000, 1000 + 31'250'000, 2000 + 15'625'000,
                                    3000 + 62'500'000, 4000 + 31'250'000);
  EXPECT_EQ(a.values.size(), 5U);
  const Rates r = compute_rates(device_.layout(), a, b);
  EXPECT_EQ(r.clock, ClockSource::device);
  EXPECT_EQ(r.interval_s, 1.0);
  EXPECT_EQ(r.time, b.realtime_s);
  ASSERT_EQ(r.pcie.size(), 1U);
  EXPECT_EQ(r.pcie[0].stack, 0);
  EXPECT_EQ(r.pcie[0].in_gbps, 2.0);
  EXPECT_EQ(r.pcie[0].out_gbps, 1.0);
  ASSERT_EQ(r.mem.size(), 1U);
  EXPECT_EQ(r.mem[0].channel, 0);
  EXPECT_EQ(r.mem[0].read_gbps, 4.0);
  EXPECT_EQ(r.mem[0].write_gbps, 2.0);
}

TEST_F(SnapshotTest, WrapsAt48Bits) {
  // Half a second; 150 counts of 64 bytes across the wrap.
  const Snapshot a = snapshot_after(~std::uint64_t{0} - 99, k48 - 100, 0, k48 - 1, 5);
  const Snapshot b = snapshot_after(499'999'900, 50, 0, 149, 5);
  const Rates r = compute_rates(device_.layout(), a, b);
  EXPECT_EQ(r.interval_s, 0.5);
  EXPECT_EQ(r.pcie[0].in_gbps, 150 * 64 / 0.5 / 1e9);
  EXPECT_EQ(r.pcie[0].out_gbps, 0.0);
  EXPECT_EQ(r.mem[0].read_gbps, 150 * 64 / 0.5 / 1e9);
  EXPECT_EQ(r.mem[0].write_gbps, 0.0);
}

TEST_F(SnapshotTest, ValuesAreMaskedToTheWidth) {
  const Snapshot a = snapshot_after(1, ~std::uint64_t{0}, k48 + 5, 0, 0);
  EXPECT_EQ(a.values[0], 1U);
  EXPECT_EQ(a.values[1], k48 - 1);
  EXPECT_EQ(a.values[2], 5U);
}

TEST_F(SnapshotTest, AStoppedDeviceClockFallsBackToMonotonic) {
  Snapshot a = snapshot_after(10, 0, 0, 0, 0);
  Snapshot b = snapshot_after(10, 15'625'000, 0, 0, 0);
  a.monotonic_ns = 1'000'000'000;
  b.monotonic_ns = 1'500'000'000;
  const Rates r = compute_rates(device_.layout(), a, b);
  EXPECT_EQ(r.clock, ClockSource::monotonic);
  EXPECT_EQ(r.interval_s, 0.5);
  EXPECT_EQ(r.pcie[0].in_gbps, 2.0);
}

TEST_F(SnapshotTest, AllOnesWithinTheWidths) {
  EXPECT_FALSE(reads_all_ones(device_.layout(), snapshot_after(0, 0, 0, 0, 0)));
  EXPECT_FALSE(reads_all_ones(
      device_.layout(), snapshot_after(~std::uint64_t{0}, k48 - 1, k48 - 1, k48 - 1, k48 - 2)));
  EXPECT_TRUE(reads_all_ones(device_.layout(),
                             snapshot_after(~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0},
                                            ~std::uint64_t{0}, ~std::uint64_t{0})));
}

Layout layout_of(std::vector<Counter> counters) {
  Layout l;
  l.counters = std::move(counters);
  return l;
}

TEST(Rates, WithoutAClockUsesMonotonicAndGroupsByIndex) {
  const Layout l = layout_of({
      {.offset = 0, .width = 64, .kind = Kind::pcie_out, .index = 3, .scale = 1, .name = ""},
      {.offset = 8, .width = 64, .kind = Kind::pcie_in, .index = 1, .scale = 1, .name = ""},
      {.offset = 16, .width = 64, .kind = Kind::mem_write, .index = 2, .scale = 1, .name = ""},
      {.offset = 24, .width = 64, .kind = Kind::pcie_in, .index = 3, .scale = 1, .name = ""},
  });
  const Snapshot a{.values = {0, 0, 0, 0}, .monotonic_ns = 0};
  const Snapshot b{.values = {2'000'000'000, 1'000'000'000, 500'000'000, 4'000'000'000},
                   .monotonic_ns = 2'000'000'000,
                   .realtime_s = 1700000000.25};
  const Rates r = compute_rates(l, a, b);
  EXPECT_EQ(r.clock, ClockSource::monotonic);
  EXPECT_EQ(r.interval_s, 2.0);
  EXPECT_EQ(r.time, 1700000000.25);
  ASSERT_EQ(r.pcie.size(), 2U);
  EXPECT_EQ(r.pcie[0].stack, 1);
  EXPECT_EQ(r.pcie[0].in_gbps, 0.5);
  EXPECT_EQ(r.pcie[0].out_gbps, std::nullopt);
  EXPECT_EQ(r.pcie[1].stack, 3);
  EXPECT_EQ(r.pcie[1].in_gbps, 2.0);
  EXPECT_EQ(r.pcie[1].out_gbps, 1.0);
  ASSERT_EQ(r.mem.size(), 1U);
  EXPECT_EQ(r.mem[0].channel, 2);
  EXPECT_EQ(r.mem[0].read_gbps, std::nullopt);
  EXPECT_EQ(r.mem[0].write_gbps, 0.25);
}

TEST(Rates, NoTimeNoRate) {
  const Layout l = layout_of(
      {{.offset = 0, .width = 64, .kind = Kind::pcie_in, .index = 0, .scale = 1, .name = ""}});
  const Snapshot a{.values = {0}, .monotonic_ns = 5};
  const Snapshot b{.values = {100}, .monotonic_ns = 5};
  EXPECT_EQ(compute_rates(l, a, b).pcie[0].in_gbps, 0.0);
}

TEST(Rates, RefusesSnapshotsOfAnotherLayout) {
  const Layout l = layout_of(
      {{.offset = 0, .width = 64, .kind = Kind::pcie_in, .index = 0, .scale = 1, .name = ""}});
  EXPECT_THROW(compute_rates(l, Snapshot{}, Snapshot{}), std::logic_error);
}

}  // namespace
}  // namespace kvmai::kvmaistat
