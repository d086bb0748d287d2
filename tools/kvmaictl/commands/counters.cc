// `kvmaictl counters`: the devices through which a VM reads the counter
// page of an uncore unit it owns (counters.rst). They are mediated
// devices, so sysfs alone can make them; this spares the operator the
// paths, picks the page of a unit, refuses to touch other mdevs and says
// in one line what the kernel refused.
#include <linux/kvmai.h>

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/string_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "client/names.h"
#include "commands/commands.h"
#include "common/sysfs.h"

namespace kvmai::kvmaictl {
namespace {

// The mdev parent of a page is "kvmai-UNIT.PACKAGE", its one type
// "kvmai-counters" (kmod/counters.c).
constexpr std::string_view kParentPrefix = "kvmai-";
constexpr std::string_view kType = "kvmai-counters";
constexpr std::string_view kParents = "class/mdev_bus";
constexpr std::string_view kDevices = "bus/mdev/devices";

struct Page {
  std::string parent;
  std::string unit;
  unsigned package = 0;
  std::optional<long long> available;
};

struct Device {
  std::string uuid;
  std::string parent;
  std::optional<std::string> unit, vm, state;
};

std::string type_dir(const std::string& parent) {
  return std::string(kParents) + "/" + parent + "/mdev_supported_types/" + std::string(kType);
}

// Every counter page the kvmai module offers, by parent name.
std::vector<Page> read_pages(const TreeReader& sys) {
  std::vector<Page> pages;
  for (const auto& name : sys.list(std::string(kParents))) {
    const auto dot = name.rfind('.');
    if (!name.starts_with(kParentPrefix) || dot == std::string::npos ||
        !sys.exists(type_dir(name))) {
      continue;
    }
    Page p;
    p.parent = name;
    p.unit = name.substr(kParentPrefix.size(), dot - kParentPrefix.size());
    try {
      p.package = static_cast<unsigned>(std::stoul(name.substr(dot + 1)));
    } catch (const std::exception&) {
      continue;  // not a name kvmai gives
    }
    if (const auto n = read_int(sys, type_dir(name) + "/available_instances")) {
      p.available = *n;
    }
    pages.push_back(std::move(p));
  }
  return pages;
}

// The kvmai counters devices, with the page each was made on.
std::vector<Device> read_devices(const TreeReader& sys) {
  std::vector<Device> devices;
  for (const auto& uuid : sys.list(std::string(kDevices))) {
    const std::string dir = std::string(kDevices) + "/" + uuid;
    if (link_name(sys, dir + "/mdev_type") != std::string(kType)) {
      continue;
    }
    Device d;
    d.uuid = uuid;
    // bus/mdev/devices/UUID leads to .../PARENT/UUID.
    if (const auto real = sys.resolve(dir)) {
      const std::filesystem::path p(*real);
      d.parent = p.parent_path().filename().string();
    }
    d.unit = read_line(sys, dir + "/kvmai/unit");
    d.vm = read_line(sys, dir + "/kvmai/vm");
    d.state = read_line(sys, dir + "/kvmai/state");
    devices.push_back(std::move(d));
  }
  return devices;
}

// Writes `value` to a sysfs attribute: 0, or the errno of the refusal
// (sysfs reports a store's error on the write itself).
int write_attr(const std::filesystem::path& path, const std::string& value) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "we"),
                                                          &std::fclose);
  if (!f) {
    return errno;
  }
  if (std::fputs(value.c_str(), f.get()) < 0 || std::fflush(f.get()) != 0) {
    return errno;
  }
  return 0;
}

void print_device(Printer& out, const Device& d) {
  out.open_object();
  out.print_string("uuid", d.uuid, {.label = "device "});
  out.print_opt_string("vm", d.vm, {.label = " vm "});
  out.print_opt_string("state", d.state, {.label = " state "});
  out.close_object();
}

// The page `unit` has on `package`, or its only page.
Page pick_page(const TreeReader& sys, const std::string& unit,
               const std::optional<std::string>& package) {
  std::vector<Page> mine;
  std::string packages;
  for (auto& p : read_pages(sys)) {
    if (p.unit == unit) {
      packages += (packages.empty() ? "" : ", ") + std::to_string(p.package);
      mine.push_back(std::move(p));
    }
  }
  if (mine.empty()) {
    throw OpError("no counter page of unit " + unit +
                  " (is it an uncore unit with free-running counters, and kvmai loaded?)");
  }
  if (!package) {
    if (mine.size() > 1) {
      throw UsageError("unit " + unit + " has pages on packages " + packages +
                       ": say which with package N");
    }
    return mine.front();
  }
  for (auto& p : mine) {
    if (std::to_string(p.package) == *package) {
      return p;
    }
  }
  throw OpError("unit " + unit + " has no page on package " + *package + " (it has " + packages +
                ")");
}

}  // namespace

void counters_show(const Words& words, Context& ctx) {
  const std::string unit = words.operand(0);
  const FsReader sys(ctx.opts.sysfs_root);
  const auto devices = read_devices(sys);
  ctx.out.open_array("pages");
  for (const auto& p : read_pages(sys)) {
    if (!unit.empty() && p.unit != unit) {
      continue;
    }
    ctx.out.open_object();
    ctx.out.print_string("parent", p.parent);
    ctx.out.print_string("unit", p.unit, {.label = ": unit "});
    ctx.out.print_uint("package", p.package, {.label = " package "});
    ctx.out.print_opt_int("available", p.available, {.label = " available "});
    ctx.out.newline();
    ctx.out.open_array("devices");
    for (const auto& d : devices) {
      if (d.parent == p.parent) {
        ctx.out.text("  ");
        print_device(ctx.out, d);
        ctx.out.newline();
      }
    }
    ctx.out.close_array();
    ctx.out.close_object();
  }
  ctx.out.close_array();
}

void counters_add(const Words& words, Context& ctx) {
  const std::string& root = ctx.opts.sysfs_root;
  const std::string unit = checked_name("unit name", words.operand(0), KVMAI_UNIT_LEN);
  const FsReader sys(root);
  const Page page = pick_page(sys, unit, words.value("package"));
  std::string uuid;
  if (const auto given = words.value("uuid")) {
    try {
      uuid = boost::uuids::to_string(boost::uuids::string_generator()(*given));
    } catch (const std::runtime_error&) {
      throw UsageError("bad UUID \"" + *given + "\"");
    }
  } else {
    uuid = boost::uuids::to_string(boost::uuids::random_generator()());
  }
  if (const int e =
          write_attr(std::filesystem::path(root) / type_dir(page.parent) / "create", uuid);
      e != 0) {
    // The kernel logs why it refused, naming the unit (counters.rst).
    throw OpError("unit " + unit + " on package " + std::to_string(page.package) + ": " +
                  std::strerror(e) +
                  (e == EPERM || e == EACCES ? " (the kernel log says why; does the VM own it "
                                               "on whole packages? kvmaictl pmu show)"
                                             : ""));
  }
  ctx.out.print_string("uuid", uuid);
  ctx.out.print_string("sysfsdev", "/sys/" + std::string(kDevices) + "/" + uuid,
                       {.label = " sysfsdev "});
  ctx.out.newline();
}

void counters_del(const Words& words, Context& ctx) {
  const std::string& root = ctx.opts.sysfs_root;
  const std::string uuid = words.operand(0);
  try {
    (void)boost::uuids::string_generator()(uuid);
  } catch (const std::runtime_error&) {
    throw UsageError("bad UUID \"" + uuid + "\"");
  }
  const FsReader sys(root);
  const std::string dir = std::string(kDevices) + "/" + uuid;
  if (!sys.exists(dir)) {
    throw OpError("no mediated device " + uuid);
  }
  if (link_name(sys, dir + "/mdev_type") != std::string(kType)) {
    throw OpError(uuid + " is not a kvmai counters device");
  }
  if (const int e = write_attr(std::filesystem::path(root) / dir / "remove", "1"); e != 0) {
    throw OpError(uuid + ": " + std::strerror(e));
  }
}

}  // namespace kvmai::kvmaictl
