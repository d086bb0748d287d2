#include "pmu_exec.h"

#include <fcntl.h>
#include <linux/kvmai.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>
#include <system_error>
#include <utility>

#include "kvmai_group.h"
#include "kvmai_pmu.h"

namespace kvmaictl {
namespace {

static_assert(KVMAI_DEV_VM_LEN == KVMAI_VM_LEN, "kvmai_dev.h and kvmai.h disagree on VM names");
static_assert(KVMAI_DEV_UNIT_LEN == KVMAI_UNIT_LEN,
              "kvmai_dev.h and kvmai.h disagree on unit names");

constexpr std::string_view kUnit = "unit";

// What an errno of KVMAI_UNIT_FD means here, beyond strerror's words.
std::string_view unit_fd_hint(int error) {
  switch (error) {
    case EPERM:
      return " (needs CAP_SYS_ADMIN)";
    case ENOENT:
      return " (not reserved for the VM: see pmu show)";
    case ENODEV:
      return " (its driver took it back)";
    default:
      return "";
  }
}

class KvmaiDev final : public UnitFdSource {
 public:
  explicit KvmaiDev(UniqueFd dev) : dev_(std::move(dev)) {}

  UniqueFd unit_fd(const std::string& vm, const std::string& unit) override {
    kvmai_unit_fd req = unit_fd_request(vm, unit);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): ioctl(2) is variadic.
    const int fd = ::ioctl(dev_.get(), KVMAI_UNIT_FD, &req);
    if (fd < 0) {
      throw std::system_error(errno, std::generic_category(), "KVMAI_UNIT_FD");
    }
    return UniqueFd(fd);
  }

 private:
  UniqueFd dev_;
};

void set_env(const char* name, const std::string& value) {
  if (::setenv(name, value.c_str(), 1) != 0) {
    throw std::system_error(errno, std::generic_category(), std::string("setenv ") + name);
  }
}

// Replaces the process with `command`, looked up in PATH as a shell does;
// returns only if that failed, with errno set.
void exec_command(const std::vector<std::string>& command) {
  std::vector<std::string> words = command;
  std::vector<char*> argv;
  argv.reserve(words.size() + 1);
  for (auto& w : words) {
    argv.push_back(w.data());
  }
  argv.push_back(nullptr);
  ::execvp(argv.front(), argv.data());
}

}  // namespace

ExecCall parse_exec(const Args& args) {
  const auto dash = std::find(args.begin(), args.end(), "--");
  if (dash == args.begin()) {
    throw UsageError("missing VM");
  }
  if (dash == args.end()) {
    throw UsageError("missing \"--\" before COMMAND");
  }
  ExecCall c;
  for (auto it = args.begin(); it != dash; ++it) {
    const std::string& word = *it;
    if (word.starts_with('-')) {
      throw UsageError("unrecognised option '" + word + "'");
    }
    if (c.vm.empty()) {
      c.vm = checked_name("VM", word, KVMAI_DEV_VM_LEN);
      continue;
    }
    // Bare unit names, as pmu assign and release take them; the keyword
    // (shortened to any prefix, as keywords are) names one explicitly,
    // for a unit whose name would read as the keyword.
    if (!word.empty() && kUnit.starts_with(word) && ++it == dash) {
      throw UsageError("missing NAME after \"unit\"");
    }
    const std::string& unit = *it;
    if (std::find(c.units.begin(), c.units.end(), unit) != c.units.end()) {
      throw UsageError("unit \"" + printable(unit) + "\" given twice");
    }
    c.units.push_back(checked_name("unit name", unit, KVMAI_DEV_UNIT_LEN));
  }
  c.command.assign(dash + 1, args.end());
  if (c.command.empty()) {
    throw UsageError("missing COMMAND after \"--\"");
  }
  return c;
}

kvmai_unit_fd unit_fd_request(const std::string& vm, const std::string& unit) {
  kvmai_unit_fd req{};  // flags and reserved 0, names NUL-padded
  const auto fill = [](std::span<char> to, const std::string& from, std::string_view what) {
    if (from.size() >= to.size()) {
      throw OpError(std::string(what) + " \"" + printable(from) + "\" is longer than " +
                    std::to_string(to.size() - 1) + " characters");
    }
    std::copy(from.begin(), from.end(), to.begin());
  };
  fill(req.vm, vm, "VM");
  fill(req.unit, unit, "unit name");
  return req;
}

std::unique_ptr<UnitFdSource> open_kvmai_dev(const std::string& path) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): open(2) is variadic.
  UniqueFd dev(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!dev) {
    const int error = errno;
    throw OpError(path + ": " + std::strerror(error) +
                  (error == ENOENT ? " (kvmai module not loaded, or one without it?)" : ""));
  }
  return std::make_unique<KvmaiDev>(std::move(dev));
}

std::vector<UniqueFd> take_unit_fds(UnitFdSource& source, const std::string& vm,
                                    const std::vector<std::string>& units) {
  std::vector<UniqueFd> fds;
  fds.reserve(units.size());
  for (const auto& unit : units) {
    try {
      fds.push_back(source.unit_fd(vm, unit));
    } catch (const std::system_error& e) {
      const int error = e.code().value();
      throw OpError("unit " + printable(unit) + " of vm " + printable(vm) + ": " +
                    std::strerror(error) + std::string(unit_fd_hint(error)));
    }
  }
  return fds;
}

std::string uncore_fds_value(std::size_t count, int first) {
  std::string s;
  for (std::size_t i = 0; i < count; ++i) {
    s += (i == 0 ? "" : ":") + std::to_string(first + static_cast<int>(i));
  }
  return s;
}

std::vector<UniqueFd> place_fds(std::vector<UniqueFd> fds, int first) {
  const int above = first + static_cast<int>(fds.size());
  for (auto& fd : fds) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): fcntl(2) is variadic.
    UniqueFd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, above));
    if (!moved) {
      throw std::system_error(errno, std::generic_category(), "F_DUPFD_CLOEXEC");
    }
    fd = std::move(moved);  // frees the number it had, if a target
  }
  std::vector<UniqueFd> placed;
  placed.reserve(fds.size());
  for (std::size_t i = 0; i < fds.size(); ++i) {
    const int target = first + static_cast<int>(i);
    // Replaces whatever `target` was; the copy has no close-on-exec.
    if (::dup2(fds[i].get(), target) < 0) {
      throw std::system_error(errno, std::generic_category(), "dup2");
    }
    placed.emplace_back(target);
  }
  return placed;  // the moved copies close with `fds`
}

void pmu_exec(const Args& args, Context& ctx, const UnitFdSourceFactory& open_source) {
  const ExecCall call = parse_exec(args);
  std::vector<std::string> units = call.units;
  if (units.empty()) {
    // The socket closes with `t`, long before the exec.
    const auto t = ctx.connect(KVMAI_FAMILY_NAME);
    AttrSet req;
    req.put_string(KVMAI_A_PMU_VM, call.vm);
    const auto reply = pmu_module_call([&] { return t->request(KVMAI_CMD_PMU_GET, req); });
    ctx.warn(reply.warning);
    units = unit_names(reply.attrs);
    if (units.empty()) {
      throw OpError("vm " + call.vm + " has no reserved units");
    }
  }
  std::vector<UniqueFd> fds;
  {
    // So is the device: the VMM gets the reservations and nothing else.
    const auto source = open_source();
    fds = take_unit_fds(*source, call.vm, units);
  }
  const auto placed = place_fds(std::move(fds));
  set_env("KVMAI_UNCORE_FDS", uncore_fds_value(placed.size()));
  set_env("KVMAI_VM", call.vm);
  ctx.err.flush();
  exec_command(call.command);
  const int error = errno;
  ctx.err << "Error: " << ctx.where << ": " << call.command.front() << ": " << std::strerror(error)
          << '\n';
  throw QuietExit(kExitCannotExec);
}

}  // namespace kvmaictl
