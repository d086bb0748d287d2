#include "commands/pmu_exec.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/kvmai.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "client/names.h"
#include "commands/commands.h"

namespace kvmai::kvmaictl {
namespace {

static_assert(KVMAI_DEV_VM_LEN == KVMAI_VM_LEN, "kvmai_dev.h and kvmai.h disagree on VM names");
static_assert(KVMAI_DEV_UNIT_LEN == KVMAI_UNIT_LEN,
              "kvmai_dev.h and kvmai.h disagree on unit names");

constexpr std::string_view kRootAdvice = "pass --user USER (--user root to keep root)";

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

static_assert(std::is_same_v<uid_t, gid_t>, "one id parser serves users and groups");

// The id `s` spells in decimal, or nullopt when it is not a number. The
// largest value is -1 to setres[ug]id(2), "leave it as it is": refused,
// with any that does not fit, lest root stay.
std::optional<uid_t> numeric_id(const std::string& s, std::string_view what) {
  if (s.empty() ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || value >= std::numeric_limits<uid_t>::max()) {
    throw OpError(std::string(what) + " " + s + " is out of range");
  }
  return static_cast<uid_t>(value);
}

// Runs `lookup(entry, buffer, size, &result)`, a get*_r(3) function, with
// `buf` grown until the entry fits (its strings point into `buf`): whether
// there is one.
template <typename Entry, typename Lookup>
bool look_up(Entry& entry, std::vector<char>& buf, const Lookup& lookup, const std::string& what) {
  constexpr std::size_t kMaxBuffer = 1 << 20;
  buf.resize(1024);
  for (;;) {
    Entry* result = nullptr;
    const int error = lookup(&entry, buf.data(), buf.size(), &result);
    if (error == ERANGE && buf.size() < kMaxBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (result != nullptr) {
      return true;
    }
    // What getpwnam_r(3) lists as "not found", besides 0.
    if (error == 0 || error == ENOENT || error == ESRCH || error == EBADF || error == EPERM) {
      return false;
    }
    throw OpError("cannot look up " + what + ": " + std::strerror(error));
  }
}

struct PasswdEntry {
  uid_t uid;
  gid_t gid;
  std::string name;
};

std::optional<PasswdEntry> user_by_name(const std::string& name) {
  passwd pw{};
  std::vector<char> buf;
  const auto lookup = [&](passwd* e, char* b, std::size_t n, passwd** r) {
    return ::getpwnam_r(name.c_str(), e, b, n, r);
  };
  if (!look_up(pw, buf, lookup, "user " + printable(name))) {
    return std::nullopt;
  }
  return PasswdEntry{pw.pw_uid, pw.pw_gid, pw.pw_name};
}

std::optional<PasswdEntry> user_by_uid(uid_t uid) {
  passwd pw{};
  std::vector<char> buf;
  const auto lookup = [&](passwd* e, char* b, std::size_t n, passwd** r) {
    return ::getpwuid_r(uid, e, b, n, r);
  };
  if (!look_up(pw, buf, lookup, "uid " + std::to_string(uid))) {
    return std::nullopt;
  }
  return PasswdEntry{pw.pw_uid, pw.pw_gid, pw.pw_name};
}

gid_t group_id(const std::string& name) {
  if (const auto id = numeric_id(name, "gid")) {
    return *id;
  }
  group entry{};
  std::vector<char> buf;
  const auto lookup = [&](group* e, char* b, std::size_t n, group** r) {
    return ::getgrnam_r(name.c_str(), e, b, n, r);
  };
  if (!look_up(entry, buf, lookup, "group " + printable(name))) {
    throw OpError("no group " + printable(name));
  }
  return entry.gr_gid;
}

// `name`'s groups as login gives them: `gid` and every group listing it.
std::vector<gid_t> group_list(const std::string& name, gid_t gid) {
  constexpr int kMaxGroups = 65536;  // NGROUPS_MAX
  int size = 32;
  std::vector<gid_t> groups;
  for (;;) {
    groups.resize(static_cast<std::size_t>(size));
    int count = size;
    if (::getgrouplist(name.c_str(), gid, groups.data(), &count) >= 0) {
      groups.resize(static_cast<std::size_t>(count));
      return groups;
    }
    // glibc says how many there are; others may not.
    size = std::max(count, size * 2);
    if (size > kMaxGroups) {
      throw OpError("user " + printable(name) + " is in more than " + std::to_string(kMaxGroups) +
                    " groups");
    }
  }
}

// Throws std::system_error with errno for `step`, the call that failed
// (and `number`, its argument worth naming), read before anything can
// change it.
[[noreturn]] void fail(std::string_view step, std::optional<int> number = std::nullopt) {
  const int error = errno;
  std::string what(step);
  if (number) {
    what += " " + std::to_string(*number);
  }
  throw std::system_error(error, std::generic_category(), what);
}

// prctl(2), variadic in C, with the arguments the options used here take.
int prctl_call(int option, unsigned long arg2 = 0, unsigned long arg3 = 0) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): prctl(2) is variadic.
  return ::prctl(option, arg2, arg3, 0UL, 0UL);
}

// The capability sets of the calling thread, through the system calls:
// glibc has no wrapper, and two calls do not warrant libcap.
using CapabilitySets = std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3>;

CapabilitySets capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapabilitySets sets{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): syscall(2) is variadic.
  if (::syscall(SYS_capget, &header, sets.data()) != 0) {
    fail("capget");
  }
  return sets;
}

void clear_capabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  CapabilitySets none{};
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): syscall(2) is variadic.
  if (::syscall(SYS_capset, &header, none.data()) != 0) {
    fail("capset");
  }
}

// The highest capability number this kernel knows: its bounding set has
// each up to it.
int last_capability() {
  constexpr const char* kPath = "/proc/sys/kernel/cap_last_cap";
  std::ifstream in(kPath);
  int last = -1;
  if (!(in >> last) || last < 0 || last >= 32 * _LINUX_CAPABILITY_U32S_3) {
    throw OpError(std::string("cannot read ") + kPath + " (is /proc mounted?)");
  }
  return last;
}

// Throws OpError for `what`, unless `ok`.
void expect(bool ok, const std::string& what) {
  if (!ok) {
    throw OpError(what);
  }
}

// What the kernel now says of the process, checked rather than assumed:
// an exec with anything left would hand it to the VMM.
void verify_dropped(const Credentials& c, int last_cap) {
  uid_t ruid = 0;
  uid_t euid = 0;
  uid_t suid = 0;
  if (::getresuid(&ruid, &euid, &suid) != 0) {
    fail("getresuid");
  }
  expect(ruid == c.uid && euid == c.uid && suid == c.uid, "uids not all " + std::to_string(c.uid));
  gid_t rgid = 0;
  gid_t egid = 0;
  gid_t sgid = 0;
  if (::getresgid(&rgid, &egid, &sgid) != 0) {
    fail("getresgid");
  }
  expect(rgid == c.gid && egid == c.gid && sgid == c.gid, "gids not all " + std::to_string(c.gid));
  const int count = ::getgroups(0, nullptr);
  if (count < 0) {
    fail("getgroups");
  }
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  if (::getgroups(count, groups.data()) != count) {
    fail("getgroups");
  }
  std::vector<gid_t> wanted = c.groups;
  std::ranges::sort(groups);
  std::ranges::sort(wanted);
  expect(groups == wanted, "supplementary groups other than asked");
  for (const auto& set : capabilities()) {
    expect(set.effective == 0 && set.permitted == 0 && set.inheritable == 0,
           "capabilities left after capset");
  }
  for (int cap = 0; cap <= last_cap; ++cap) {
    expect(prctl_call(PR_CAPBSET_READ, cap) == 0,
           "capability " + std::to_string(cap) + " left in the bounding set");
    expect(prctl_call(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap) == 0,
           "capability " + std::to_string(cap) + " left in the ambient set");
  }
  expect(prctl_call(PR_GET_NO_NEW_PRIVS) == 1, "no_new_privs not set");
  // The proof: root cannot be had back. (Were it, the process stops here.)
  expect(::setresuid(0, 0, 0) != 0 && errno == EPERM, "root regained after the drop");
}

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

ExecCall exec_call(const Words& words) {
  ExecCall c;
  bool vm_taken = false;
  for (const auto& w : words.words) {
    if (w.param == "user" || w.param == "group") {
      if (w.value.empty()) {
        throw UsageError(fmt::format("missing {} after \"--{}\"",
                                     w.param == "user" ? "USER" : "GROUP", w.param));
      }
      if (w.param == "user") {
        c.user = w.value;
      } else {
        c.group = w.value;
      }
    } else if (w.param.empty() && !vm_taken) {
      c.vm = checked_name("VM", w.value, KVMAI_DEV_VM_LEN);
      vm_taken = true;
    } else {
      // Bare unit names, as pmu assign and release take them, or after the
      // keyword `unit`, for a unit whose name would read as a keyword or an
      // option.
      if (std::find(c.units.begin(), c.units.end(), w.value) != c.units.end()) {
        throw UsageError(fmt::format("unit \"{}\" given twice", printable(w.value)));
      }
      c.units.push_back(checked_name("unit name", w.value, KVMAI_DEV_UNIT_LEN));
    }
  }
  c.command = words.after_dash;
  // The descriptors need root, the VMM does not: root is kept only when
  // asked for by name.
  if (c.user.empty()) {
    throw UsageError(
        fmt::format("refusing to run {} as root: {}", printable(c.command.front()), kRootAdvice));
  }
  return c;
}

ExecCall parse_exec(const Args& args) {
  GlobalOptions ignored;
  return exec_call(parse_words(table_command("pmu", "exec").syntax, args, ignored));
}

Credentials resolve_credentials(const std::string& user, const std::optional<std::string>& group) {
  Credentials c;
  std::optional<PasswdEntry> entry;
  if (const auto uid = numeric_id(user, "uid")) {
    c.uid = *uid;
    entry = user_by_uid(*uid);
  } else {
    entry = user_by_name(user);
    if (!entry) {
      throw OpError("no user " + printable(user));
    }
    c.uid = entry->uid;
  }
  if (c.is_root()) {
    if (group) {
      throw OpError("--group is not for root: --user root keeps root's credentials");
    }
    return c;
  }
  if (group) {
    c.gid = group_id(*group);
    c.groups = {c.gid};
    return c;
  }
  if (!entry) {
    throw OpError("uid " + user + " has no passwd entry: pass --group GROUP");
  }
  c.gid = entry->gid;
  c.groups = group_list(entry->name, entry->gid);
  return c;
}

void drop_privileges(const Credentials& c) {
  const std::string to = "uid " + std::to_string(c.uid) + " gid " + std::to_string(c.gid);
  if (c.is_root()) {
    throw OpError("cannot drop privileges to root");
  }
  try {
    // Groups and gid first: changing them needs CAP_SETGID, which the
    // change of uid takes away.
    if (::setgroups(c.groups.size(), c.groups.data()) != 0) {
      fail("setgroups");
    }
    if (::setresgid(c.gid, c.gid, c.gid) != 0) {
      fail("setresgid");
    }
    // The bounding set caps what an exec could grant (file capabilities,
    // setuid root binaries): emptied while CAP_SETPCAP is still held.
    const int last_cap = last_capability();
    for (int cap = 0; cap <= last_cap; ++cap) {
      if (prctl_call(PR_CAPBSET_DROP, cap) != 0) {
        fail("PR_CAPBSET_DROP of capability", cap);
      }
    }
    if (prctl_call(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL) != 0) {
      fail("PR_CAP_AMBIENT_CLEAR_ALL");
    }
    if (::setresuid(c.uid, c.uid, c.uid) != 0) {
      fail("setresuid");
    }
    // Leaving uid 0 empties the permitted and effective sets, unless
    // securebits the process inherited keep them (SECBIT_KEEP_CAPS,
    // SECBIT_NO_SETUID_FIXUP), and never the inheritable one: each is
    // emptied here whatever came before.
    clear_capabilities();
    if (prctl_call(PR_SET_NO_NEW_PRIVS, 1) != 0) {
      fail("PR_SET_NO_NEW_PRIVS");
    }
    verify_dropped(c, last_cap);
  } catch (const std::system_error& e) {
    throw OpError("cannot drop to " + to + ": " + e.what());
  } catch (const OpError& e) {
    throw OpError("cannot drop to " + to + ": " + e.what());
  }
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

void launch(const ExecCall& call, Context& ctx, const UnitFdSourceFactory& open_source) {
  // Looked up first: a user who does not resolve stops the command before
  // anything is asked of the module.
  const Credentials creds = resolve_credentials(call.user, call.group);
  std::vector<std::string> units = call.units;
  if (units.empty()) {
    // The socket closes with the client, long before the exec.
    units = ctx.kvmai().pmu_record(call.vm).unit_names();
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
  // Last, with the descriptors in place: they were opened with root's
  // rights and stay open whoever the process becomes.
  if (!creds.is_root()) {
    drop_privileges(creds);
  }
  ctx.err.flush();
  exec_command(call.command);
  const int error = errno;
  ctx.err << "Error: " << ctx.where << ": " << call.command.front() << ": " << std::strerror(error)
          << '\n';
  throw QuietExit(kExitCannotExec);
}

}  // namespace kvmai::kvmaictl
