// kvmaistat_fixture DIR: the sysfs trees the whole-binary tests run
// kvmaistat on.
//   DIR/live     a kvmai counters device at 0000:01:00.0, among others
//   DIR/revoked  one whose unit the host took back
//   DIR/empty    no PCI devices
#include <filesystem>
#include <iostream>

#include "testing/fake_sysfs.h"

namespace kt = kvmai::kvmaistat::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kvmaistat_fixture DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::remove_all(dir);

  const kt::FakeDevice live;
  kt::write_device(dir / "live", live);
  kt::write_counter(dir / "live", live.bdf, kt::kClockOffset, 5'000'000'000);
  kt::write_counter(dir / "live", live.bdf, kt::kPcieInOffset, 1000);
  kt::FakeDevice bridge{.bdf = "0000:00:1f.0", .class_code = "0x060100"};
  kt::write_device(dir / "live", bridge);
  kt::FakeDevice no_magic{.bdf = "0000:02:00.0", .kvmai_capability = false};
  kt::write_device(dir / "live", no_magic);

  kt::FakeDevice revoked{.state = KVMAI_CTRDEV_REVOKED};
  kt::write_device(dir / "revoked", revoked);
  for (const auto& c : revoked.counters) {
    kt::write_counter(dir / "revoked", revoked.bdf, c.offset,
                      c.width == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << c.width) - 1);
  }

  kt::write_empty_bus(dir / "empty");
  return 0;
}
