// The hook's checks of <kvmai:partition> before it changes anything: the
// host's word, the domain's own hostdevs, where a VF will be.
#include "hook/partitions.h"

#include <gtest/gtest.h>

#include "testing/hook.h"

namespace kvmai::kvmaictl::hook {
namespace {

using testing::domain_xml;
using testing::kvmai_vm;
using testing::TempDir;

constexpr std::string_view kPartitionUuid = "6b3c2c8e-1f0a-4d6e-9a51-3e2f00c0beef";

// A host with the 82576 of the emulated host (offset 128, stride 2) and
// the mtty sample parent.
class PartitionHost {
 public:
  PartitionHost() {
    const std::string pf = "bus/pci/devices/0000:56:00.0/";
    dir_.write(pf + "sriov_totalvfs", "7\n");
    dir_.write(pf + "sriov_numvfs", "0\n");
    dir_.write(pf + "sriov_offset", "128\n");
    dir_.write(pf + "sriov_stride", "2\n");
    const std::string t = "class/mdev_bus/mtty/mdev_supported_types/mtty-2/";
    dir_.write(t + "available_instances", "12\n");
    dir_.write(t + "devices/.keep", "");
  }
  const TreeReader& sys() const { return reader_; }

 private:
  TempDir dir_{"sys"};
  FsReader reader_{dir_.path()};
};

HostConfig allowing(std::vector<std::string> parents) {
  return {.path = "hook.conf", .pmu_shared = {}, .partition_parents = std::move(parents)};
}

std::string refusal(const std::string& xml, const HostConfig& host) {
  const PartitionHost h;
  try {
    plan_partitions(parse_domain_xml(xml), host, h.sys());
  } catch (const HookError& e) {
    return e.what();
  }
  return "";
}

std::string mdev_hostdev(std::string_view uuid) {
  return "    <hostdev mode='subsystem' type='mdev' model='vfio-pci'><source><address uuid='" +
         std::string(uuid) + "'/></source></hostdev>\n";
}

TEST(HookPartitions, MdevOfTheDomainOnAnAllowedParent) {
  const std::string xml =
      domain_xml("vm1", {},
                 kvmai_vm("<kvmai:partition parent='mtty' type='mtty-2' uuid='" +
                          std::string(kPartitionUuid) + "' remove='yes'/>\n"),
                 mdev_hostdev(kPartitionUuid));
  const PartitionHost h;
  const auto plans = plan_partitions(parse_domain_xml(xml), allowing({"mtty"}), h.sys());
  ASSERT_EQ(plans.size(), 1U);
  EXPECT_TRUE(plans[0].mdev);
  EXPECT_EQ(plans[0].uuid, kPartitionUuid);
  EXPECT_TRUE(plans[0].remove);

  EXPECT_EQ(refusal(xml, allowing({})),
            "partition: parent mtty is not the domains' to partition: list it under "
            "[partition] parent in hook.conf");
}

TEST(HookPartitions, MdevNotAHostdevOfTheDomain) {
  const std::string xml =
      domain_xml("vm1", {},
                 kvmai_vm("<kvmai:partition parent='mtty' type='mtty-2' uuid='" +
                          std::string(kPartitionUuid) + "'/>\n"),
                 mdev_hostdev("11111111-2222-4333-8444-555555555555"));
  EXPECT_EQ(refusal(xml, allowing({"mtty"})),
            "partition: mdev 6b3c2c8e-1f0a-4d6e-9a51-3e2f00c0beef is not one of the domain's "
            "mdev hostdevs");
}

TEST(HookPartitions, MdevTypeTheParentLacks) {
  const std::string xml =
      domain_xml("vm1", {},
                 kvmai_vm("<kvmai:partition parent='mtty' type='mbochs-4' uuid='" +
                          std::string(kPartitionUuid) + "'/>\n"),
                 mdev_hostdev(kPartitionUuid));
  EXPECT_EQ(refusal(xml, allowing({"mtty"})), "partition: mtty offers no mdev type \"mbochs-4\"");
}

// VF 1 of 0000:56:00.0 is at routing ID 0x5600 + 128 + 2: 0000:56:10.2.
TEST(HookPartitions, VfAtTheAddressTheDomainIsGiven) {
  const std::string meta = kvmai_vm("<kvmai:partition parent='0000:56:00.0' vfs='2' vf='1'/>\n");
  const PartitionHost h;
  const auto plans = plan_partitions(parse_domain_xml(domain_xml("vm1", {"0000:56:10.2"}, meta)),
                                     allowing({"0000:56:00.0"}), h.sys());
  ASSERT_EQ(plans.size(), 1U);
  EXPECT_EQ(plans[0].vf_address, "0000:56:10.2");
  EXPECT_EQ(plans[0].vfs, 2);

  EXPECT_EQ(refusal(domain_xml("vm1", {"0000:56:10.0"}, meta), allowing({"0000:56:00.0"})),
            "partition: VF 1 of 0000:56:00.0 will be 0000:56:10.2, which is not a PCI hostdev "
            "of the domain");
  EXPECT_EQ(refusal(domain_xml("vm1", {"0000:56:10.2"},
                               kvmai_vm("<kvmai:partition parent='0000:56:00.0' vfs='2' "
                                        "vf='2'/>\n")),
                    allowing({"0000:56:00.0"})),
            "partition: vf=\"2\" is not below vfs=\"2\"");
  EXPECT_EQ(refusal(domain_xml("vm1", {"0000:56:10.2"},
                               kvmai_vm("<kvmai:partition parent='0000:56:00.0' vfs='0' "
                                        "vf='0'/>\n")),
                    allowing({"0000:56:00.0"})),
            "partition: vfs=\"0\" is not a positive number");
}

TEST(HookPartitions, NeitherMdevNorVf) {
  EXPECT_EQ(refusal(domain_xml("vm1", {},
                               kvmai_vm("<kvmai:partition parent='mtty' type='mtty-2' uuid='" +
                                        std::string(kPartitionUuid) + "' vfs='1' vf='0'/>\n"),
                               mdev_hostdev(kPartitionUuid)),
                    allowing({"mtty"})),
            "partition: an mdev (type, uuid) or a VF (vfs, vf, vgpu-type), not both");
  EXPECT_EQ(refusal(domain_xml("vm1", {}, kvmai_vm("<kvmai:partition parent='../x'/>\n")),
                    allowing({"../x"})),
            "partition: parent=\"../x\" is not a PCI address or an mdev parent name");
}

}  // namespace
}  // namespace kvmai::kvmaictl::hook
