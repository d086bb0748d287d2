// kvmai replies for the group, dev and monitor tests.
#pragma once

#include <linux/kvmai.h>

#include <functional>
#include <memory>

#include "cli/command.h"
#include "testing/fake_transport.h"

namespace kvmai::kvmaictl::testing {

// A group as the module reports it: two members, two ports, one pair.
inline AttrSet sample_group(const std::string& name = "vm1-p2p",
                            std::uint32_t state = KVMAI_STATE_ENABLED) {
  AttrSet bar0;
  bar0.put_u32(KVMAI_A_BAR_INDEX, 0)
      .put_u64(KVMAI_A_BAR_ADDR, 0x38000000000)
      .put_u64(KVMAI_A_BAR_SIZE, 0x1000000000);
  AttrSet bar2;
  bar2.put_u32(KVMAI_A_BAR_INDEX, 2)
      .put_u64(KVMAI_A_BAR_ADDR, 0xfd000000)
      .put_u64(KVMAI_A_BAR_SIZE, 0x1000000);
  AttrSet gpu;
  gpu.put_string(KVMAI_A_MEMBER_PCI_ADDR, "0000:21:00.0")
      .put_string(KVMAI_A_MEMBER_DRIVER, "vfio-pci")
      .put_u8(KVMAI_A_MEMBER_ATS, 1)
      .put_nested(KVMAI_A_MEMBER_BAR, bar0)
      .put_nested(KVMAI_A_MEMBER_BAR, bar2);
  AttrSet nic;
  nic.put_string(KVMAI_A_MEMBER_PCI_ADDR, "0000:22:00.0")
      .put_string(KVMAI_A_MEMBER_DRIVER, "vfio-pci")
      .put_u8(KVMAI_A_MEMBER_ATS, 0);
  AttrSet port_a;
  port_a.put_string(KVMAI_A_PORT_PCI_ADDR, "0000:20:00.0")
      .put_u32(KVMAI_A_PORT_ACS_CAP, 0x5f)
      .put_u32(KVMAI_A_PORT_ACS_SAVED, 0x1d)
      .put_u32(KVMAI_A_PORT_ACS_TARGET, 0x5d)
      .put_u32(KVMAI_A_PORT_ACS_CURRENT, 0x5d)
      .put_u32(KVMAI_A_PORT_USERS, 1);
  AttrSet port_b;
  port_b.put_string(KVMAI_A_PORT_PCI_ADDR, "0000:20:01.0")
      .put_u32(KVMAI_A_PORT_ACS_CAP, 0x5f)
      .put_u32(KVMAI_A_PORT_ACS_SAVED, 0)
      .put_u32(KVMAI_A_PORT_ACS_TARGET, 0x40)
      .put_u32(KVMAI_A_PORT_ACS_CURRENT, 0x40)
      .put_u32(KVMAI_A_PORT_USERS, 2);
  AttrSet pair;
  pair.put_string(KVMAI_A_PAIR_A, "0000:21:00.0")
      .put_string(KVMAI_A_PAIR_B, "0000:22:00.0")
      .put_u32(KVMAI_A_PAIR_TYPE, KVMAI_PATH_TYPE_HOST_BRIDGE)
      .put_string(KVMAI_A_PAIR_VIA, "pci0000:20");
  AttrSet g;
  g.put_string(KVMAI_A_GROUP_NAME, name)
      .put_u32(KVMAI_A_GROUP_ID, 1)
      .put_string(KVMAI_A_GROUP_VM, "vm1")
      .put_u32(KVMAI_A_GROUP_MODE, KVMAI_MODE_TRANSLATED)
      .put_u32(KVMAI_A_GROUP_STATE, state)
      .put_nested(KVMAI_A_GROUP_MEMBER, gpu)
      .put_nested(KVMAI_A_GROUP_MEMBER, nic)
      .put_nested(KVMAI_A_GROUP_PORT, port_a)
      .put_nested(KVMAI_A_GROUP_PORT, port_b)
      .put_nested(KVMAI_A_GROUP_PAIR, pair);
  return g;
}

// A group just created: nothing in it yet.
inline AttrSet empty_group(const std::string& name, std::uint32_t mode = KVMAI_MODE_TRANSLATED) {
  AttrSet g;
  g.put_string(KVMAI_A_GROUP_NAME, name)
      .put_u32(KVMAI_A_GROUP_ID, 7)
      .put_string(KVMAI_A_GROUP_VM, "vm1")
      .put_u32(KVMAI_A_GROUP_MODE, mode)
      .put_u32(KVMAI_A_GROUP_STATE, KVMAI_STATE_DISABLED);
  return g;
}

inline GenlMessage message(std::uint8_t cmd, AttrSet attrs) {
  GenlMessage m;
  m.cmd = cmd;
  m.attrs = std::move(attrs);
  return m;
}

// Hands out FakeTransports for family "kvmai", each prepared by `setup`,
// all logging to `log`.
inline TransportFactory fake_kvmai(const std::shared_ptr<FakeTransport::Log>& log,
                                   const std::function<void(FakeTransport&)>& setup = {}) {
  return [log, setup](std::string_view family) -> std::unique_ptr<GenlTransport> {
    if (family != "kvmai") {
      throw std::logic_error("unexpected family " + std::string(family));
    }
    auto t = std::make_unique<FakeTransport>(log);
    if (setup) {
      setup(*t);
    }
    return t;
  };
}

// Fails every request with `error` and the kernel's `extack`.
inline TransportFactory failing_kvmai(const std::shared_ptr<FakeTransport::Log>& log, int error,
                                      const std::string& extack) {
  return fake_kvmai(log, [=](FakeTransport& t) { t.error = GenlError::kernel(error, extack); });
}

inline TransportFactory no_kvmai() {
  return [](std::string_view family) -> std::unique_ptr<GenlTransport> {
    throw GenlError::family_not_found(family);
  };
}

}  // namespace kvmai::kvmaictl::testing
