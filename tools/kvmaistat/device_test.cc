#include "device.h"

#include <gtest/gtest.h>
#include <linux/kvmai_counters.h>

#include <array>
#include <stdexcept>

#include "testing/fake_sysfs.h"

namespace kvmai::kvmaistat {
namespace {

namespace kt = testing;

// The exception's message, or "" if `f` returned.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::array<std::uint8_t, 256> config_with_caps() {
  std::array<std::uint8_t, 256> c{};
  c[0x06] = 0x10;
  c[0x34] = 0x40;
  return c;
}

void put_magic(std::array<std::uint8_t, 256>& c, std::size_t pos) {
  c[pos] = 0x4b;  // "KVAI", little endian
  c[pos + 1] = 0x56;
  c[pos + 2] = 0x41;
  c[pos + 3] = 0x49;
}

TEST(Capability, FoundAfterOtherCapabilities) {
  auto c = config_with_caps();
  c[0x40] = 0x01;  // PM
  c[0x41] = 0x50;
  c[0x50] = 0x09;  // ours
  c[0x52] = 0x08;
  put_magic(c, 0x53);
  EXPECT_TRUE(has_kvmai_capability(c));
}

TEST(Capability, NeedsTheStatusBit) {
  auto c = config_with_caps();
  c[0x06] = 0;
  c[0x40] = 0x09;
  c[0x42] = 0x08;
  put_magic(c, 0x43);
  EXPECT_FALSE(has_kvmai_capability(c));
}

TEST(Capability, LoopingListEnds) {
  auto c = config_with_caps();
  c[0x40] = 0x01;
  c[0x41] = 0x40;  // points at itself
  EXPECT_FALSE(has_kvmai_capability(c));
}

TEST(Capability, TooShortToHoldTheMagic) {
  auto c = config_with_caps();
  c[0x40] = 0x09;
  c[0x42] = 0x03;  // header only
  put_magic(c, 0x43);
  EXPECT_FALSE(has_kvmai_capability(c));
}

TEST(Capability, UnprivilegedConfigIsTooShort) {
  auto c = config_with_caps();
  c[0x40] = 0x09;
  c[0x42] = 0x08;
  put_magic(c, 0x43);
  EXPECT_FALSE(has_kvmai_capability(std::span(c).first(64)));
}

TEST(Discovery, FindsOnlyQualifyingDevicesInBusOrder) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.bdf = "0000:03:00.0"});
  kt::write_device(tmp.path(), {.bdf = "0000:01:00.0"});
  kt::write_device(tmp.path(), {.bdf = "0000:02:00.0", .kvmai_capability = false});
  kt::write_device(tmp.path(), {.bdf = "0000:04:00.0", .class_code = "0x020000"});
  EXPECT_EQ(select_devices(tmp.path(), std::nullopt),
            (std::vector<std::string>{"0000:01:00.0", "0000:03:00.0"}));
}

TEST(Discovery, SkipsRightClassWithoutMagicAndMagicWithWrongClass) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.bdf = "0000:01:00.0"});
  kt::write_device(tmp.path(), {.bdf = "0000:02:00.0", .kvmai_capability = false});
  kt::write_device(tmp.path(), {.bdf = "0000:03:00.0", .class_code = "0x118000"});
  EXPECT_EQ(select_devices(tmp.path(), std::nullopt), std::vector<std::string>{"0000:01:00.0"});
  const auto devices = pci_devices_dir(tmp.path());
  EXPECT_EQ(why_not_kvmai(devices / "0000:01:00.0"), std::nullopt);
  EXPECT_EQ(why_not_kvmai(devices / "0000:02:00.0"),
            "config: no vendor-specific capability carrying the kvmai magic");
  EXPECT_EQ(why_not_kvmai(devices / "0000:03:00.0"), "class 0x118000, not 0x110100");
}

TEST(Discovery, NoDeviceNamesTheDirectory) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.bdf = "0000:02:00.0", .kvmai_capability = false});
  EXPECT_EQ(error_of([&] { select_devices(tmp.path(), std::nullopt); }),
            "no kvmai counters device (PCI class 0x110100 with the kvmai capability) in " +
                (tmp.path() / "bus/pci/devices").string());
}

// Unprivileged, sysfs gives 64 bytes of config space: no capability list.
TEST(Discovery, ShortConfigSaysWhy) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  const auto config = tmp.path() / "devices/pci0000:00/0000:01:00.0/config";
  std::filesystem::resize_file(config, 64);
  EXPECT_EQ(error_of([&] { select_devices(tmp.path(), std::nullopt); }),
            "no kvmai counters device (PCI class 0x110100 with the kvmai capability) in " +
                (tmp.path() / "bus/pci/devices").string() +
                " (a device of that class has config space only root can read)");
  EXPECT_EQ(error_of([&] { select_devices(tmp.path(), "0000:01:00.0"); }),
            "0000:01:00.0: not a kvmai counters device: config: only 64 bytes readable, no kvmai "
            "capability in them (reading more needs root)");
}

TEST(Discovery, WantedDevice) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.bdf = "0000:01:00.0"});
  kt::write_device(tmp.path(), {.bdf = "0000:03:00.0"});
  kt::write_device(tmp.path(), {.bdf = "0000:04:00.0", .class_code = "0x020000"});
  EXPECT_EQ(select_devices(tmp.path(), "0000:03:00.0"), std::vector<std::string>{"0000:03:00.0"});
  // As lspci prints it, without the domain.
  EXPECT_EQ(select_devices(tmp.path(), "03:00.0"), std::vector<std::string>{"0000:03:00.0"});
  EXPECT_EQ(error_of([&] { select_devices(tmp.path(), "0000:04:00.0"); }),
            "0000:04:00.0: not a kvmai counters device: class 0x020000, not 0x110100");
  EXPECT_EQ(error_of([&] { select_devices(tmp.path(), "0000:09:00.0"); }),
            "0000:09:00.0: no such PCI device in " + (tmp.path() / "bus/pci/devices").string());
}

TEST(Layout, OpensAndDecodes) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  const Device d = Device::open(tmp.path(), "0000:01:00.0");
  EXPECT_EQ(d.bdf(), "0000:01:00.0");
  const Layout& l = d.layout();
  EXPECT_EQ(l.unit, "mock_bw");
  EXPECT_EQ(l.state, 0U);
  EXPECT_EQ(l.bar0_size, 4096U);
  ASSERT_EQ(l.counters.size(), 5U);
  EXPECT_EQ(l.counters[0].kind, Kind::clock);
  EXPECT_EQ(l.counters[0].scale, kt::kClockHz);
  EXPECT_EQ(l.counters[0].width, 64U);
  EXPECT_EQ(l.counters[2].kind, Kind::pcie_out);
  EXPECT_EQ(l.counters[2].offset, kt::kPcieOutOffset);
  EXPECT_EQ(l.counters[2].name, "pcie0_out");
  EXPECT_EQ(l.counters[4].kind, Kind::mem_write);
  EXPECT_EQ(d.read_state(), KVMAI_CTRDEV_LIVE);
  EXPECT_EQ(d.bar0().size(), 4096U);
}

TEST(Layout, SkipsUnknownKinds) {
  const kt::TempDir tmp;
  kt::FakeDevice dev;
  // Unknown kinds are not checked either: a later version may mean
  // anything by their fields.
  dev.counters.insert(dev.counters.begin() + 1,
                      {.offset = 0xffff0, .width = 99, .kind = 42, .name = "future"});
  kt::write_device(tmp.path(), dev);
  const Device d = Device::open(tmp.path(), "0000:01:00.0");
  ASSERT_EQ(d.layout().counters.size(), 5U);
  EXPECT_EQ(d.layout().counters[1].name, "pcie0_in");
}

std::string open_error(const kt::FakeDevice& dev) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), dev);
  return error_of([&] { Device::open(tmp.path(), dev.bdf); });
}

TEST(Layout, RefusesBadMagic) {
  EXPECT_EQ(open_error({.magic = 0x12345678}),
            "0000:01:00.0: resource2: bad magic 0x12345678, expected 0x4941564b");
}

TEST(Layout, RefusesOtherVersions) {
  EXPECT_EQ(open_error({.version = 2}),
            "0000:01:00.0: resource2: layout version 2, this kvmaistat reads version 1");
}

TEST(Layout, RefusesNoCounters) {
  EXPECT_EQ(open_error({.counters = {}}), "0000:01:00.0: resource2: the layout lists no counters");
}

TEST(Layout, RefusesMoreCountersThanBar2Holds) {
  kt::FakeDevice dev;
  dev.counters.resize(200);  // 48 + 200 * 32 bytes > 4096
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: 200 counters need 6448 bytes, BAR2 has 4096");
}

TEST(Layout, RefusesOffsetPastBar0) {
  kt::FakeDevice dev;
  dev.counters[1].offset = 4096 - 8;  // the last word: fine
  dev.counters[2].offset = 4096;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 2 (pcie0_out): offset 0x1000 is past BAR0's "
            "4096 bytes");
}

TEST(Layout, RefusesOffsetPastResource0) {
  kt::FakeDevice dev;
  dev.bar0_size = 8192;  // the layout claims more than sysfs maps
  dev.counters[3].offset = 4096;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 3 (mc0_read): offset 0x1000 is past the 4096 "
            "bytes of resource0");
}

TEST(Layout, RefusesUnalignedOffset) {
  kt::FakeDevice dev;
  dev.counters[1].offset = 12;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 1 (pcie0_in): offset 0xc is not 8-byte aligned");
}

TEST(Layout, RefusesBadWidths) {
  kt::FakeDevice dev;
  dev.counters[4].width = 0;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 4 (mc0_write): width 0, not 1 to 64");
  dev.counters[4].width = 65;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 4 (mc0_write): width 65, not 1 to 64");
}

TEST(Layout, RefusesAStoppedClockRateAndDuplicates) {
  kt::FakeDevice dev;
  dev.counters[0].scale = 0;
  EXPECT_EQ(open_error(dev), "0000:01:00.0: resource2: counter 0 (clock): a clock of 0 Hz");
  dev = {};
  dev.counters[2].kind = KVMAI_CTR_PCIE_IN;
  EXPECT_EQ(open_error(dev),
            "0000:01:00.0: resource2: counter 2 (pcie0_out): a second counter of the same kind "
            "and index");
}

TEST(Layout, ParsesTooSmallBar2) {
  const std::array<std::byte, 16> bytes{};
  EXPECT_EQ(error_of([&] { parse_layout(bytes, 4096, "0000:05:00.0"); }),
            "0000:05:00.0: resource2: 16 bytes, too small for the layout (48)");
}

TEST(Layout, UnitIsMadePrintable) {
  EXPECT_EQ(open_error({.unit = "uncore\x01\xff"}), "");
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {.unit = "uncore\x01\xff"});
  EXPECT_EQ(Device::open(tmp.path(), "0000:01:00.0").layout().unit, "uncore??");
}

TEST(Layout, MissingResourceNamesTheFile) {
  const kt::TempDir tmp;
  kt::write_device(tmp.path(), {});
  const auto dir = tmp.path() / "devices/pci0000:00/0000:01:00.0";
  std::filesystem::remove(dir / "resource0");
  EXPECT_EQ(error_of([&] { Device::open(tmp.path(), "0000:01:00.0"); }),
            (tmp.path() / "bus/pci/devices/0000:01:00.0/resource0").string() +
                ": open: No such file or directory");
}

}  // namespace
}  // namespace kvmai::kvmaistat
