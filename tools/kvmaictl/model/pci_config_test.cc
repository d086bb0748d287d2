#include "model/pci_config.h"

#include <gtest/gtest.h>

#include <vector>

namespace kvmai::kvmaictl {
namespace {

// A PCIe device's config space built by hand: PCIe cap at 0x40, then the
// given extended capabilities from 0x100.
class ConfigBuilder {
 public:
  explicit ConfigBuilder(std::size_t size = 4096) : b_(4096), size_(size) {
    put16(0x00, 0x10de);
    put16(0x02, 0x2330);
    put16(0x06, 0x0010);  // capability list
    b_[0x34] = 0x40;
    b_[0x40] = 0x10;
    put16(0x42, 0x0002 | (0x6 << 4));   // downstream port
    put16(0x44, 0x0002);                // MPS supported 512
    put16(0x48, (1 << 5) | (5 << 12));  // MPS 256, MRRS 4096
  }
  ConfigBuilder& ext(std::uint16_t id, std::uint16_t reg4, std::uint16_t reg6) {
    const std::size_t off = next_ext_;
    if (prev_ext_ != 0) {
      put16(prev_ext_ + 2, static_cast<std::uint16_t>((b_[prev_ext_ + 2] & 0xf) | (off << 4)));
    }
    put16(off, id);
    put16(off + 2, 0x0001);
    put16(off + 4, reg4);
    put16(off + 6, reg6);
    prev_ext_ = off;
    next_ext_ += 0x40;
    return *this;
  }
  // The first `size` bytes, as an unprivileged read would return.
  std::vector<std::uint8_t> bytes() const {
    return {b_.begin(), b_.begin() + static_cast<std::ptrdiff_t>(size_)};
  }

 private:
  void put16(std::size_t off, std::uint16_t v) {
    b_.at(off) = static_cast<std::uint8_t>(v);
    b_.at(off + 1) = static_cast<std::uint8_t>(v >> 8);
  }
  std::vector<std::uint8_t> b_;
  std::size_t size_;
  std::size_t next_ext_ = 0x100;
  std::size_t prev_ext_ = 0;
};

TEST(PciConfig, ParsesPcieCapability) {
  const auto c = parse_config(ConfigBuilder().bytes());
  EXPECT_EQ(c.vendor, 0x10de);
  ASSERT_TRUE(c.pcie.has_value());
  EXPECT_EQ(c.pcie->type, PortType::downstream_port);
  EXPECT_EQ(c.pcie->max_payload_supported, 512);
  EXPECT_EQ(c.pcie->max_payload, 256);
  EXPECT_EQ(c.pcie->max_read_request, 4096);
  EXPECT_EQ(c.pcie->offset, 0x40);
}

TEST(PciConfig, FindsAcsAndAtsInTheExtendedChain) {
  const auto c = parse_config(ConfigBuilder()
                                  .ext(0x0001, 0, 0)          // AER
                                  .ext(0x000d, 0x5f, 0x5d)    // ACS
                                  .ext(0x000f, 0x20, 0x8000)  // ATS enabled
                                  .bytes());
  EXPECT_TRUE(c.ext_caps_known);
  EXPECT_EQ(c.acs_presence, Presence::present);
  EXPECT_EQ(c.acs->cap, 0x5f);
  EXPECT_EQ(c.acs->ctl, 0x5d);
  EXPECT_EQ(c.ats_presence, Presence::present);
  EXPECT_TRUE(c.ats_enabled);
  EXPECT_EQ(c.sriov_presence, Presence::absent);
}

TEST(PciConfig, NoExtendedCapsMeansAbsent) {
  const auto c = parse_config(ConfigBuilder().bytes());
  EXPECT_EQ(c.acs_presence, Presence::absent);
  EXPECT_EQ(c.ats_presence, Presence::absent);
}

TEST(PciConfig, SixtyFourBytesIsUnknownNotAbsent) {
  const auto c = parse_config(ConfigBuilder(64).bytes());
  EXPECT_FALSE(c.caps_known);
  EXPECT_FALSE(c.pcie.has_value());
  EXPECT_EQ(c.acs_presence, Presence::unknown);
  EXPECT_EQ(c.ats_presence, Presence::unknown);
}

TEST(PciConfig, PcieDeviceWith256BytesHasUnknownExtendedCaps) {
  const auto c = parse_config(ConfigBuilder(256).bytes());
  EXPECT_TRUE(c.pcie.has_value());
  EXPECT_FALSE(c.ext_caps_known);
  EXPECT_EQ(c.acs_presence, Presence::unknown);
}

TEST(PciConfig, ConventionalDeviceWith256BytesIsComplete) {
  std::vector<std::uint8_t> b(256);
  b[0] = 0x36;
  b[1] = 0x1b;  // QEMU pxb-pcie: no capabilities
  const auto c = parse_config(b);
  EXPECT_TRUE(c.ext_caps_known);
  EXPECT_EQ(c.acs_presence, Presence::absent);
}

TEST(PciConfig, LoopingCapabilityListTerminates) {
  auto b = ConfigBuilder().bytes();
  b[0x41] = 0x40;  // PCIe cap points at itself
  b[0x102] = 0x01;
  b[0x103] = 0x10;  // extended cap at 0x100 points at 0x100
  b[0x100] = 0x01;
  const auto c = parse_config(b);
  EXPECT_TRUE(c.pcie.has_value());
}

TEST(AcsBits, NamesInBitOrder) {
  EXPECT_EQ(acs_bit_names(0x5d), (std::vector<std::string>{"SV", "RR", "CR", "UF", "DT"}));
  EXPECT_EQ(acs_bit_names(0x20), (std::vector<std::string>{"EC"}));
  EXPECT_TRUE(acs_bit_names(0).empty());
}

}  // namespace
}  // namespace kvmai::kvmaictl
