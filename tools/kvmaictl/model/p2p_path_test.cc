#include "model/p2p_path.h"

#include <gtest/gtest.h>

#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::testdata;

struct Fixture {
  // The emulated host's ACS switches are host bridges, and it says so.
  explicit Fixture(const std::string& name)
      : sys(testdata(name + "/sys")),
        tree(PciTree::read(sys, {.host_bridge_switches = name.starts_with("emulated")})) {}
  P2pPath path(const char* a, const char* b) const {
    return classify(tree, *tree.find(a), *tree.find(b));
  }
  FsReader sys;
  PciTree tree;
};

TEST(P2pPath, SameSwitchIsPixAndKernelDefaultRedirects) {
  const Fixture f("hgx");
  const auto p = f.path("0000:3a:00.0", "0000:3c:00.0");  // gpu2, nic4 on sw1
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_EQ(p.switches, std::vector<std::string>{"0000:38:00.0"});
  ASSERT_EQ(p.ports.size(), 2U);
  EXPECT_EQ(p.ports[0]->bdf, "0000:39:00.0");
  EXPECT_EQ(p.ports[1]->bdf, "0000:39:02.0");
  EXPECT_EQ(p.verdict, Verdict::root_complex);
  ASSERT_EQ(p.redirects.size(), 4U);
  EXPECT_EQ(p.redirects[0].port, "0000:39:00.0");
  EXPECT_EQ(p.redirects[0].bit, "RR");
  EXPECT_EQ(p.redirects[1].bit, "CR");
  EXPECT_EQ(p.reason, "through root complex: 0000:39:00.0 RR,CR; 0000:39:02.0 RR,CR");
}

TEST(P2pPath, DtWithAtsOnBothEndsIsDirectTranslated) {
  const Fixture f("hgx");
  const auto p = f.path("0000:18:00.0", "0000:1a:00.0");  // sw0: ACS 0x5d, ATS on
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_EQ(p.verdict, Verdict::direct_translated);
  EXPECT_TRUE(p.ats_both);
}

TEST(P2pPath, DtWithoutAtsStillRedirects) {
  const Fixture f("hgx");
  const auto p = f.path("0000:18:00.0", "0000:1c:00.0");  // gpu0 (ATS on) to NVMe (no ATS)
  EXPECT_EQ(p.verdict, Verdict::root_complex);
}

TEST(P2pPath, RedirectClearedIsDirect) {
  const Fixture f("hgx");
  const auto p = f.path("0000:9a:00.0", "0000:9c:00.0");  // sw2: ACS ctl SV|UF
  EXPECT_EQ(p.verdict, Verdict::direct);
  EXPECT_TRUE(p.ports_without_acs.empty());
}

TEST(P2pPath, NestedSwitchIsPxb) {
  const Fixture f("hgx");
  const auto p = f.path("0000:ba:00.0", "0000:c2:00.0");  // gpu6 to the BlueField-like NIC
  EXPECT_EQ(p.path_class, PathClass::PXB);
  EXPECT_EQ(p.switches, (std::vector<std::string>{"0000:b8:00.0", "0000:c0:00.0"}));
  EXPECT_EQ(p.ports.size(), 4U);
}

TEST(P2pPath, RootPortsOfOneHostBridgeArePhb) {
  const Fixture f("hgx");
  const auto p = f.path("0000:9a:00.0", "0000:bc:00.0");
  EXPECT_EQ(p.path_class, PathClass::PHB);
  EXPECT_EQ(p.verdict, Verdict::host_bridge);
}

TEST(P2pPath, HostBridgesOfOneNodeAreNodeAndAcrossNodesSys) {
  const Fixture f("hgx");
  EXPECT_EQ(f.path("0000:18:00.0", "0000:3c:00.0").path_class, PathClass::NODE);
  EXPECT_EQ(f.path("0000:18:00.0", "0000:9c:00.0").path_class, PathClass::SYS);
}

TEST(P2pPath, FlatHostIsPhb) {
  const Fixture f("flat");
  EXPECT_EQ(f.path("0000:01:00.0", "0000:06:00.0").path_class, PathClass::PHB);
}

TEST(P2pPath, NoAcsIsDirectButNotIsolated) {
  const Fixture f("noacs");
  const auto p = f.path("0000:12:00.0", "0000:13:00.0");
  EXPECT_EQ(p.verdict, Verdict::direct);
  EXPECT_EQ(p.ports_without_acs.size(), 2U);
  EXPECT_EQ(p.reason, "direct, not isolated: no ACS on 0000:11:00.0, 0000:11:01.0");
}

TEST(P2pPath, UnreadableAcsIsUnknown) {
  const Fixture f("unprivileged");
  const auto p = f.path("0000:3d:00.0", "0000:3f:00.0");
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_EQ(p.verdict, Verdict::unknown);
}

TEST(P2pPath, HostBridgeCountedAsSwitch) {
  const Fixture f("emulated");
  const auto p = f.path("0000:21:00.0", "0000:22:00.0");
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_EQ(p.switches, std::vector<std::string>{"pci0000:20"});
  EXPECT_EQ(p.verdict, Verdict::root_complex);
  EXPECT_EQ(p.reason, "through root complex: 0000:20:00.0 RR,CR; 0000:20:01.0 RR,CR");
  EXPECT_EQ(f.path("0000:21:00.0", "0000:42:00.0").path_class, PathClass::SYS);
}

// Without --host-bridge-switches, a host bridge is one: the root ports of
// the emulated host's expanders are those of a root complex.
TEST(P2pPath, HostBridgeAsItIs) {
  const FsReader sys(testdata("emulated/sys"));
  const PciTree tree = PciTree::read(sys);
  const auto p = classify(tree, *tree.find("0000:21:00.0"), *tree.find("0000:22:00.0"));
  EXPECT_EQ(p.path_class, PathClass::PHB);
  EXPECT_TRUE(p.switches.empty());
  EXPECT_EQ(p.verdict, Verdict::host_bridge);
}

TEST(P2pPath, EmulatedWithDtIsDirectTranslated) {
  const Fixture f("emulated-dt");
  const auto p = f.path("0000:21:00.0", "0000:22:00.0");
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_EQ(p.verdict, Verdict::direct_translated);
}

TEST(P2pPath, FunctionsOfOneDeviceCrossNoPort) {
  const Fixture f("multifunction");
  const auto p = f.path("0000:3f:00.0", "0000:3f:00.1");
  EXPECT_EQ(p.path_class, PathClass::PIX);
  EXPECT_TRUE(p.ports.empty());
  EXPECT_TRUE(p.switches.empty());
  EXPECT_EQ(p.verdict, Verdict::direct);
}

}  // namespace
}  // namespace kvmai::kvmaictl
