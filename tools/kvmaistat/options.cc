#include "options.h"

#include <boost/program_options.hpp>
#include <limits>
#include <sstream>

namespace po = boost::program_options;

namespace kvmai::kvmaistat {
namespace {

po::options_description describe(Options& o) {
  po::options_description d("Options");
  d.add_options()  //
      ("device,d", po::value<std::string>()->value_name("BDF"),
       "only this device, e.g. 0000:01:00.0 (default: every kvmai counters device)")  //
      ("interval,i", po::value(&o.interval_ms)->value_name("MS"),
       "milliseconds between samples (default: 1000)")  //
      ("count,c", po::value(&o.count)->value_name("N"),
       "stop after N samples (default: 0, until interrupted)")                     //
      ("json,j", po::bool_switch(&o.json), "JSON output, one object per line")     //
      ("pretty,p", po::bool_switch(&o.pretty), "pretty JSON output (implies -j)")  //
      ("sysfs-root", po::value<std::string>()->value_name("DIR"),
       "read sysfs from DIR (default: /sys)")            //
      ("help,h", po::bool_switch(&o.help), "this help")  //
      ("version,V", po::bool_switch(&o.version), "the version");
  return d;
}

}  // namespace

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  const auto desc = describe(o);
  po::variables_map vm;
  try {
    // No positional arguments: an empty description makes Boost refuse
    // them instead of dropping them.
    const po::positional_options_description none;
    po::store(po::command_line_parser(args).options(desc).positional(none).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  // Not read into the path directly: its operator>> would split at blanks.
  if (vm.count("sysfs-root") != 0) {
    o.sysfs_root = vm["sysfs-root"].as<std::string>();
  }
  if (vm.count("device") != 0) {
    o.device = vm["device"].as<std::string>();
  }
  // Signed types above, checked here: Boost would read "-1" into an
  // unsigned as its largest value.
  if (o.interval_ms < 1 || o.interval_ms > std::numeric_limits<std::int32_t>::max()) {
    throw UsageError("--interval must be between 1 and " +
                     std::to_string(std::numeric_limits<std::int32_t>::max()) + " ms");
  }
  if (o.count < 0) {
    throw UsageError("--count must be 0 or more");
  }
  o.json = o.json || o.pretty;
  return o;
}

std::string usage() {
  Options o;
  std::ostringstream s;
  s << "Usage: kvmaistat [OPTIONS]\n"
    << "PCIe and memory bandwidth from the kvmai counters devices (PCI class 0x110100)\n"
    << "that the host passed to this guest, read without VM exits.\n\n"
    << describe(o) << '\n'
    << "Exit status: 0 ok, 1 error, 2 bad usage, 3 a device was revoked by the host.\n";
  return s.str();
}

}  // namespace kvmai::kvmaistat
