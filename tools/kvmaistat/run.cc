#include "run.h"

#include <linux/kvmai_counters.h>

#include <exception>

#include "common/escape.h"
#include "common/stop_signals.h"
#include "device.h"
#include "options.h"
#include "print.h"
#include "sampler.h"

#ifndef KVMAISTAT_VERSION
#error "the build defines KVMAISTAT_VERSION"
#endif

namespace kvmai::kvmaistat {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;

std::vector<Snapshot> snapshot_all(const std::vector<Device>& devices) {
  std::vector<Snapshot> snaps;
  snaps.reserve(devices.size());
  for (const auto& d : devices) {
    snaps.push_back(take_snapshot(d.layout(), d.bar0()));
  }
  return snaps;
}

// Reports every device for which `revoked(i)` holds; whether there was one.
template <typename Revoked>
bool report_revoked(const std::vector<Device>& devices, const Revoked& revoked, const Options& opts,
                    std::ostream& out, std::ostream& err) {
  bool any = false;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (!revoked(i)) {
      continue;
    }
    any = true;
    const Device& d = devices[i];
    err << "kvmaistat: " << revoked_message(d.bdf(), d.layout().unit) << '\n';
    if (opts.json) {
      print_json(out, revoked_json(d.bdf(), d.layout().unit), opts.pretty);
    }
  }
  out.flush();
  return any;
}

int sample(const Options& opts, std::ostream& out, std::ostream& err) {
  // Before anything slow: a signal from now on ends the run cleanly.
  const StopSignals stop;

  std::vector<Device> devices;
  for (const auto& bdf : select_devices(opts.sysfs_root, opts.device)) {
    devices.push_back(Device::open(opts.sysfs_root, bdf));
  }
  // Revoked before we came: BAR0 would only read all ones.
  const auto revoked_at_open = [&](std::size_t i) {
    return devices[i].layout().state == KVMAI_CTRDEV_REVOKED;
  };
  if (report_revoked(devices, revoked_at_open, opts, out, err)) {
    return kExitRevoked;
  }
  // Only counters reading all ones send us to BAR2, whose every read exits
  // to the VMM.
  const auto revoked_in = [&](const std::vector<Snapshot>& snaps) {
    return [&devices, &snaps](std::size_t i) {
      return reads_all_ones(devices[i].layout(), snaps[i]) &&
             devices[i].read_state() == KVMAI_CTRDEV_REVOKED;
    };
  };

  auto before = snapshot_all(devices);
  if (report_revoked(devices, revoked_in(before), opts, out, err)) {
    return kExitRevoked;
  }
  const std::int64_t interval_ns = opts.interval_ms * kNsPerMs;
  std::int64_t deadline = monotonic_ns() + interval_ns;
  for (std::int64_t n = 0; opts.count == 0 || n < opts.count; ++n) {
    if (!stop.sleep_until(deadline)) {
      return kExitOk;
    }
    auto after = snapshot_all(devices);
    if (report_revoked(devices, revoked_in(after), opts, out, err)) {
      return kExitRevoked;
    }
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const Device& d = devices[i];
      const Rates rates = compute_rates(d.layout(), before[i], after[i]);
      if (opts.json) {
        print_json(out, rates_json(d.bdf(), d.layout().unit, rates), opts.pretty);
      } else {
        print_text(out, d.bdf(), d.layout().unit, rates);
      }
    }
    out.flush();
    before = std::move(after);
    // On schedule while we keep up; after a stall (a paused guest), one
    // interval from now rather than a burst of short samples.
    deadline += interval_ns;
    if (const std::int64_t now = monotonic_ns(); deadline <= now) {
      deadline = now + interval_ns;
    }
  }
  return kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& raw_out, std::ostream& raw_err) {
  // What the devices report (their unit names) is the host's word: every
  // byte goes out escaped (common/escape.h), as kvmaictl's does.
  EscapedStream out(raw_out);
  EscapedStream err(raw_err);
  Options opts;
  try {
    opts = parse_options(args);
  } catch (const UsageError& e) {
    err << "kvmaistat: " << e.what() << '\n';
    return kExitUsage;
  }
  if (opts.help) {
    out << usage();
    return kExitOk;
  }
  if (opts.version) {
    out << "kvmaistat " << KVMAISTAT_VERSION << '\n';
    return kExitOk;
  }
  try {
    return sample(opts, out, err);
  } catch (const std::exception& e) {
    out.flush();
    err << "kvmaistat: " << e.what() << '\n';
    return kExitFailed;
  }
}

}  // namespace kvmai::kvmaistat
