#include "commands/pmu_exec.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/kvmai.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "testing/pmu_replies.h"
#include "testing/run.h"

namespace kvmai::kvmaictl {
namespace {

using testing::fake_kvmai;
using testing::FakeTransport;
using ::testing::HasSubstr;
using testing::message;
using testing::run_cli;
using ::testing::StartsWith;

using Log = FakeTransport::Log;
using Commands = std::vector<std::uint8_t>;

// The message parse_exec refuses `args` with, "" when it takes them.
std::string refusal(const Args& args) {
  try {
    parse_exec(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// `path`, opened close-on-exec unless `keep` says otherwise.
UniqueFd open_fd(const char* path, bool keep = false) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): open(2) is variadic.
  UniqueFd fd(::open(path, O_RDONLY | (keep ? 0 : O_CLOEXEC)));
  if (!fd) {
    throw std::system_error(errno, std::generic_category(), path);
  }
  return fd;
}

// The device number of what `fd` is open on, 0 when nothing is.
dev_t rdev_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_rdev : 0;
}

dev_t rdev_of(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? st.st_rdev : 0;
}

// -1 when `fd` is not open.
int fd_flags(int fd) {
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-vararg): fcntl(2) is variadic.
  return ::fcntl(fd, F_GETFD);
}

// A /dev/kvmai that hands out descriptors of device files, one per unit
// (/dev/null for any unit not in `files`), or refuses a unit with an errno.
// Holds a descriptor of its own, without close-on-exec, as long as it
// lives: the one a real device would leave behind if kept open.
class FakeSource final : public UnitFdSource {
 public:
  struct Log {
    std::vector<std::pair<std::string, std::string>> asked;  // vm, unit
    std::vector<int> handed;                                 // descriptors given
  };

  FakeSource(std::shared_ptr<Log> log, std::map<std::string, const char*> files,
             std::map<std::string, int> refused = {})
      : log_(std::move(log)),
        files_(std::move(files)),
        refused_(std::move(refused)),
        own_(open_fd("/dev/full", true)) {}

  UniqueFd unit_fd(const std::string& vm, const std::string& unit) override {
    log_->asked.emplace_back(vm, unit);
    if (const auto it = refused_.find(unit); it != refused_.end()) {
      throw std::system_error(it->second, std::generic_category(), "KVMAI_UNIT_FD");
    }
    const auto it = files_.find(unit);
    UniqueFd fd = open_fd(it == files_.end() ? "/dev/null" : it->second);
    log_->handed.push_back(fd.get());
    return fd;
  }

 private:
  std::shared_ptr<Log> log_;
  std::map<std::string, const char*> files_;
  std::map<std::string, int> refused_;
  UniqueFd own_;
};

// vm1's record: the core PMU and two units, amd_df listed first.
AttrSet record_with_units() {
  AttrSet p;
  p.put_string(KVMAI_A_PMU_VM, "vm1")
      .put_flag(KVMAI_A_PMU_CORE)
      .put_nested(KVMAI_A_PMU_UNIT, testing::owned_unit("amd_df", 20, 0, 0xc0010240, 0xc0010241, 4))
      .put_nested(KVMAI_A_PMU_UNIT, testing::owned_unit("amd_l3", 16, 0, 0xc0010230, 0xc0010231, 6))
      .put_string(KVMAI_A_PMU_CPUS, "0-7");
  return p;
}

TransportFactory answering(const std::shared_ptr<Log>& log, const AttrSet& record) {
  return fake_kvmai(log, [record](FakeTransport& t) {
    t.replies[KVMAI_CMD_PMU_GET] = {message(KVMAI_CMD_PMU_GET, record)};
  });
}

// pmu_exec() run in this process with `err` as stderr; no output.
struct Exec {
  std::ostringstream out;
  Printer printer{out, Format::text};
  Context ctx;

  Exec(std::ostream& err, TransportFactory connect)
      : ctx{printer, err, {}, std::move(connect), "pmu exec"} {}
};

TEST(PmuExec, GrammarTakesTheCommandVerbatim) {
  const auto c =
      parse_exec({"--user", "nobody", "vm1", "--", "qemu", "-accel", "kvm", "--", "-h", "help"});
  EXPECT_EQ(c.vm, "vm1");
  EXPECT_TRUE(c.units.empty());
  EXPECT_EQ(c.command, (Args{"qemu", "-accel", "kvm", "--", "-h", "help"}));
}

TEST(PmuExec, GrammarUnitsInTheOrderNamed) {
  const auto c =
      parse_exec({"vm1", "unit", "amd_l3", "u", "amd_df", "un", "-x", "--user=a", "--", "q"});
  EXPECT_EQ(c.units, (std::vector<std::string>{"amd_l3", "amd_df", "-x"}));
  EXPECT_EQ(c.command, Args{"q"});
}

// As pmu assign and release take them; "unit" names one that reads as it.
TEST(PmuExec, GrammarBareUnitNames) {
  const auto c = parse_exec({"vm1", "amd_l3", "unit", "uni", "amd_df", "--user", "a", "--", "q"});
  EXPECT_EQ(c.units, (std::vector<std::string>{"amd_l3", "uni", "amd_df"}));
  EXPECT_EQ(refusal({"vm1", "amd_l3", "amd_l3", "--", "q"}), "unit \"amd_l3\" given twice");
  // The keyword as an option too, as every keyword.
  EXPECT_EQ(parse_exec({"vm1", "--unit", "a", "--unit=b", "--user", "x", "--", "q"}).units,
            (std::vector<std::string>{"a", "b"}));
}

TEST(PmuExec, GrammarErrors) {
  EXPECT_EQ(refusal({}), "missing VM");
  EXPECT_EQ(refusal({"--", "qemu"}), "missing VM");
  EXPECT_EQ(refusal({"vm1", "qemu"}), "missing \"--\" before COMMAND");
  EXPECT_EQ(refusal({"vm1"}), "missing \"--\" before COMMAND");
  EXPECT_EQ(refusal({"vm1", "--"}), "missing COMMAND after \"--\"");
  EXPECT_EQ(refusal({"vm1", "unit", "--", "q"}), "missing NAME after \"unit\"");
  EXPECT_NE(refusal({"vm1", "", "--", "q"}), "");
  EXPECT_EQ(refusal({"vm1", "unit", "a", "unit", "a", "--", "q"}), "unit \"a\" given twice");
  EXPECT_EQ(refusal({"-x", "vm1", "--", "q"}), "unrecognised option '-x'");
  EXPECT_EQ(refusal({"vm1", "--frob", "a", "--", "q"}), "unrecognised option '--frob'");
  EXPECT_EQ(refusal({"", "--", "q"}), "VM \"\" is empty");
  const std::string long_unit(KVMAI_DEV_UNIT_LEN, 'u');
  EXPECT_EQ(refusal({"vm1", "unit", long_unit, "--", "q"}),
            "unit name \"" + long_unit + "\" is longer than 63 characters");
  const std::string long_vm(KVMAI_DEV_VM_LEN, 'v');
  EXPECT_EQ(refusal({long_vm, "--", "q"}), "VM \"" + long_vm + "\" is longer than 63 characters");
  EXPECT_EQ(
      refusal({"vm1", "unit", std::string(KVMAI_DEV_UNIT_LEN - 1, 'u'), "--user", "a", "--", "q"}),
      "");
}

// Who runs the VMM is said before "--", in either form, anywhere among
// the VM and its units.
TEST(PmuExec, GrammarUserAndGroup) {
  EXPECT_EQ(refusal({"--user", "nobody", "vm1", "--", "q"}), "");
  EXPECT_EQ(refusal({"vm1", "--user=nobody", "amd_l3", "--", "q"}), "");
  EXPECT_EQ(refusal({"vm1", "--user", "65534", "--group", "kvm", "--", "q"}), "");
  EXPECT_EQ(refusal({"--group=108", "--user=libvirt-qemu", "vm1", "--", "q"}), "");

  auto c = parse_exec({"--user", "nobody", "vm1", "amd_l3", "--", "q", "--user", "x"});
  EXPECT_EQ(c.user, "nobody");
  EXPECT_EQ(c.group, std::nullopt);
  EXPECT_EQ(c.vm, "vm1");
  EXPECT_EQ(c.units, std::vector<std::string>{"amd_l3"});
  EXPECT_EQ(c.command, (Args{"q", "--user", "x"}));
  c = parse_exec({"vm1", "--group=kvm", "amd_l3", "--user=libvirt-qemu", "--", "q"});
  EXPECT_EQ(c.user, "libvirt-qemu");
  EXPECT_EQ(c.group, "kvm");
  EXPECT_EQ(c.units, std::vector<std::string>{"amd_l3"});
  // A unit named like the option, through the keyword.
  c = parse_exec({"vm1", "unit", "--user", "--user", "a", "--", "q"});
  EXPECT_EQ(c.units, std::vector<std::string>{"--user"});
  EXPECT_EQ(c.user, "a");
}

// Without --user the VMM would run as root: refused, saying how to ask.
TEST(PmuExec, GrammarRefusesRootUnlessTold) {
  EXPECT_EQ(refusal({"vm1", "--", "qemu"}),
            "refusing to run qemu as root: pass --user USER (--user root to keep root)");
  EXPECT_EQ(refusal({"vm1", "--group", "kvm", "--", "qemu"}),
            "refusing to run qemu as root: pass --user USER (--user root to keep root)");
  EXPECT_EQ(refusal({"vm1", "--user", "root", "--", "qemu"}), "");
}

TEST(PmuExec, GrammarUserErrors) {
  EXPECT_EQ(refusal({"vm1", "--user", "--", "q"}), "missing USER after \"--user\"");
  EXPECT_EQ(refusal({"vm1", "--user"}), "missing USER after \"--user\"");
  EXPECT_EQ(refusal({"--user", "a", "--", "q"}), "missing VM");
  EXPECT_EQ(refusal({"vm1", "--user=", "--", "q"}), "missing USER after \"--user\"");
  EXPECT_EQ(refusal({"vm1", "--user", "a", "--group", "--", "q"}),
            "missing GROUP after \"--group\"");
  EXPECT_EQ(refusal({"vm1", "--user", "a", "--user=b", "--", "q"}), "\"--user\" given twice");
  EXPECT_EQ(refusal({"vm1", "--user", "a", "--group", "g", "--group", "g", "--", "q"}),
            "\"--group\" given twice");
  EXPECT_EQ(refusal({"vm1", "--users", "a", "--", "q"}),
            "unrecognised option '--users' (did you mean \"--user\"?)");
  // Long options take unique prefixes, as everywhere.
  EXPECT_EQ(refusal({"vm1", "--user", "a", "--grou", "g", "--", "q"}), "");
}

// The first "--" of pmu exec's words ends them: what follows is not read
// for global options or "help".
TEST(PmuExec, CliUsageErrorsExit2) {
  for (const auto& [args, error] : std::vector<std::pair<Args, std::string>>{
           {{"pmu", "exec", "vm1", "qemu"}, "missing \"--\" before COMMAND"},
           {{"pmu", "exec", "vm1", "--"}, "missing COMMAND after \"--\""},
           {{"pmu", "exec"}, "missing VM"},
           // A "--" before the command word is not the command's.
           {{"pmu", "--", "exec", "vm1", "qemu"}, "missing \"--\" before COMMAND"}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.rc, kExitUsage) << args.back();
    EXPECT_EQ(r.err, "Error: pmu exec: " + error + "\n");
    EXPECT_EQ(r.out, "");
  }
}

// The refusal comes before anything is asked of the module or the device.
TEST(PmuExec, CliRefusesRootUnlessTold) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "exec", "vm1", "--", "qemu"}, answering(log, record_with_units()));
  EXPECT_EQ(r.rc, kExitUsage);
  EXPECT_EQ(r.err,
            "Error: pmu exec: refusing to run qemu as root: pass --user USER "
            "(--user root to keep root)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(log->commands.empty());
}

TEST(PmuExec, HelpBeforeTheDashesOnly) {
  for (const Args& a : std::vector<Args>{{"pmu", "exec", "help"},
                                         {"pmu", "exec", "-h"},
                                         {"pmu", "exec", "vm1", "-h", "--", "qemu"}}) {
    const auto r = run_cli(a);
    EXPECT_EQ(r.rc, kExitOk) << a.back();
    EXPECT_THAT(r.out, StartsWith("Usage: kvmaictl pmu exec --user USER [ --group GROUP ] VM"));
  }
  // After "--", -h, -j and help are the VMM's: the record is asked for.
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "exec", "--user", "root", "vm1", "--", "qemu", "-h", "-j", "help"},
                         testing::failing_kvmai(log, ENOENT, "vm1 has no PMU record"));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: pmu exec: vm1 has no PMU record (No such file or directory)\n");
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(log->commands, Commands{KVMAI_CMD_PMU_GET});
  EXPECT_EQ(log->requests.at(0).str(KVMAI_A_PMU_VM), "vm1");
}

TEST(PmuExec, PmuHelpDocumentsExec) {
  const auto r = run_cli({"pmu", "help"});
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("\n       kvmaictl pmu exec --user USER [ --group GROUP ] VM [ UNIT "
                               "| unit NAME ]... -- COMMAND [ ARG ]..."));
  EXPECT_THAT(r.out, HasSubstr("KVMAI_UNCORE_FDS"));
  EXPECT_THAT(r.out, HasSubstr("--user root keeps root"));
  EXPECT_THAT(r.out, HasSubstr("\n  exec      "));
}

TEST(PmuExec, RecordWithoutUnitsIsAnError) {
  AttrSet core_only;
  core_only.put_string(KVMAI_A_PMU_VM, "vm1").put_flag(KVMAI_A_PMU_CORE);
  auto log = std::make_shared<Log>();
  const auto r =
      run_cli({"pmu", "exec", "--user", "root", "vm1", "--", "qemu"}, answering(log, core_only));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: pmu exec: vm vm1 has no reserved units\n");
  EXPECT_EQ(log->commands, Commands{KVMAI_CMD_PMU_GET});
}

TEST(PmuExec, OldModuleIsNamed) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "exec", "--user=root", "vm1", "--", "qemu"},
                         testing::failing_kvmai(log, EOPNOTSUPP, ""));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("(a kvmai module without PMU operations?)"));
}

TEST(PmuExec, RequestCarriesTheNames) {
  const kvmai_unit_fd req = unit_fd_request("vm1", "amd_l3");
  EXPECT_EQ(req.flags, 0U);
  EXPECT_EQ(req.reserved, 0U);
  EXPECT_STREQ(static_cast<const char*>(req.vm), "vm1");
  EXPECT_STREQ(static_cast<const char*>(req.unit), "amd_l3");
  EXPECT_EQ(req.unit[sizeof req.unit - 1], '\0');
  const std::string long_name(KVMAI_DEV_UNIT_LEN, 'x');
  try {
    unit_fd_request("vm1", long_name);
    FAIL() << "no throw";
  } catch (const OpError& e) {
    EXPECT_EQ(e.what(), "unit name \"" + long_name + "\" is longer than 63 characters");
  }
  EXPECT_THROW(unit_fd_request(std::string(KVMAI_DEV_VM_LEN, 'v'), "amd_l3"), OpError);
}

TEST(PmuExec, UnitsAskedForInOrder) {
  auto log = std::make_shared<FakeSource::Log>();
  FakeSource source(log, {{"amd_df", "/dev/zero"}});
  const auto fds = take_unit_fds(source, "vm1", {"amd_l3", "amd_df"});
  ASSERT_EQ(fds.size(), 2U);
  EXPECT_EQ(log->asked, (std::vector<std::pair<std::string, std::string>>{{"vm1", "amd_l3"},
                                                                          {"vm1", "amd_df"}}));
  EXPECT_EQ(rdev_of(fds[0].get()), rdev_of("/dev/null"));
  EXPECT_EQ(rdev_of(fds[1].get()), rdev_of("/dev/zero"));
}

TEST(PmuExec, RefusalNamesTheUnitAndClosesWhatWasTaken) {
  for (const auto& [error, text] : std::vector<std::pair<int, std::string>>{
           {EPERM, "Operation not permitted (needs CAP_SYS_ADMIN)"},
           {ENOENT, "No such file or directory (not reserved for the VM: see pmu show)"},
           {ENODEV, "No such device (its driver took it back)"},
           {EINVAL, "Invalid argument"}}) {
    auto log = std::make_shared<FakeSource::Log>();
    FakeSource source(log, {}, {{"amd_l3", error}});
    try {
      take_unit_fds(source, "vm1", {"amd_df", "amd_l3", "amd_umc"});
      FAIL() << "no throw";
    } catch (const OpError& e) {
      EXPECT_EQ(e.what(), "unit amd_l3 of vm vm1: " + text);
    }
    EXPECT_EQ(log->asked.size(), 2U);  // none after the refusal
    ASSERT_EQ(log->handed.size(), 1U);
    EXPECT_EQ(fd_flags(log->handed[0]), -1);
  }
}

// The whole command in this process, up to the refusal: nothing is
// placed, nothing run, and the error names the unit.
TEST(PmuExec, RefusalStopsBeforeAnythingIsPlaced) {
  auto tlog = std::make_shared<Log>();
  auto slog = std::make_shared<FakeSource::Log>();
  std::ostringstream err;
  Exec e(err, answering(tlog, record_with_units()));
  try {
    launch(parse_exec({"--user", "root", "vm1", "--", "/bin/false"}), e.ctx, [&] {
      return std::make_unique<FakeSource>(slog, std::map<std::string, const char*>{},
                                          std::map<std::string, int>{{"amd_l3", EPERM}});
    });
    FAIL() << "no throw";
  } catch (const OpError& x) {
    EXPECT_STREQ(x.what(), "unit amd_l3 of vm vm1: Operation not permitted (needs CAP_SYS_ADMIN)");
  }
  // The record's order: amd_df first.
  EXPECT_EQ(slog->asked, (std::vector<std::pair<std::string, std::string>>{{"vm1", "amd_df"},
                                                                           {"vm1", "amd_l3"}}));
  EXPECT_EQ(tlog->commands, Commands{KVMAI_CMD_PMU_GET});
  EXPECT_EQ(err.str(), "");
}

TEST(PmuExec, NamedUnitsNeedNoRecord) {
  auto slog = std::make_shared<FakeSource::Log>();
  std::ostringstream err;
  Exec e(err, nullptr);  // no netlink at all
  EXPECT_THROW(launch(parse_exec({"--user", "root", "vm1", "unit", "amd_umc", "--", "q"}), e.ctx,
                      [&] {
                        return std::make_unique<FakeSource>(
                            slog, std::map<std::string, const char*>{},
                            std::map<std::string, int>{{"amd_umc", ENOENT}});
                      }),
               OpError);
  EXPECT_EQ(slog->asked, (std::vector<std::pair<std::string, std::string>>{{"vm1", "amd_umc"}}));
}

TEST(PmuExec, DeviceMissingOrNotKvmai) {
  try {
    open_kvmai_dev("/nonexistent/kvmai");
    FAIL() << "no throw";
  } catch (const OpError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/kvmai: No such file or directory (kvmai module not loaded, or one "
                 "without it?)");
  }
  // The real ioctl, on a device that does not know it.
  const auto dev = open_kvmai_dev("/dev/null");
  try {
    take_unit_fds(*dev, "vm1", {"amd_l3"});
    FAIL() << "no throw";
  } catch (const OpError& e) {
    EXPECT_STREQ(e.what(), "unit amd_l3 of vm vm1: Inappropriate ioctl for device");
  }
}

TEST(PmuExec, UncoreFdsValue) {
  EXPECT_EQ(uncore_fds_value(2), "3:4");
  EXPECT_EQ(uncore_fds_value(1), "3");
  EXPECT_EQ(uncore_fds_value(0), "");
  EXPECT_EQ(uncore_fds_value(3, 10), "10:11:12");
}

// The message resolve_credentials refuses `user` and `group` with.
std::string resolve_refusal(const std::string& user, const std::optional<std::string>& group = {}) {
  try {
    resolve_credentials(user, group);
  } catch (const OpError& e) {
    return e.what();
  }
  return "";
}

// nobody's entry in this machine's passwd.
struct Nobody {
  uid_t uid;
  gid_t gid;
};

std::optional<Nobody> nobody() {
  const passwd* pw = ::getpwnam("nobody");
  return pw ? std::optional<Nobody>({pw->pw_uid, pw->pw_gid}) : std::nullopt;
}

TEST(PmuExec, ResolveRootKeepsRoot) {
  for (const char* root : {"root", "0"}) {
    const Credentials c = resolve_credentials(root, std::nullopt);
    EXPECT_TRUE(c.is_root()) << root;
  }
  EXPECT_EQ(resolve_refusal("root", "kvm"),
            "--group is not for root: --user root keeps root's credentials");
}

TEST(PmuExec, ResolveNamesAndNumbers) {
  const auto n = nobody();
  if (!n) {
    GTEST_SKIP() << "no user nobody here";
  }
  // By name: the primary group and the groups listing the user.
  Credentials c = resolve_credentials("nobody", std::nullopt);
  EXPECT_EQ(c.uid, n->uid);
  EXPECT_EQ(c.gid, n->gid);
  EXPECT_NE(std::find(c.groups.begin(), c.groups.end(), n->gid), c.groups.end());
  EXPECT_FALSE(c.is_root());
  // By number, the same entry.
  c = resolve_credentials(std::to_string(n->uid), std::nullopt);
  EXPECT_EQ(c.uid, n->uid);
  EXPECT_EQ(c.gid, n->gid);
  // A group given is the only one, by name or number.
  c = resolve_credentials("nobody", "root");
  EXPECT_EQ(c.gid, 0U);
  EXPECT_EQ(c.groups, std::vector<gid_t>{0});
  c = resolve_credentials("nobody", "4321");
  EXPECT_EQ(c.gid, 4321U);
  EXPECT_EQ(c.groups, std::vector<gid_t>{4321});
  // An id without a passwd entry, with its group given.
  c = resolve_credentials("43210", "43211");
  EXPECT_EQ(c.uid, 43210U);
  EXPECT_EQ(c.gid, 43211U);
  EXPECT_EQ(c.groups, std::vector<gid_t>{43211});
}

TEST(PmuExec, ResolveRefusals) {
  EXPECT_EQ(resolve_refusal("no-such-user-kvmai"), "no user no-such-user-kvmai");
  EXPECT_EQ(resolve_refusal("a\nb\x1b[2J"), "no user a?b?[2J");
  EXPECT_EQ(resolve_refusal("no-such-user-kvmai", "no-such-group-kvmai"),
            "no user no-such-user-kvmai");
  EXPECT_EQ(resolve_refusal("43210"), "uid 43210 has no passwd entry: pass --group GROUP");
  // -1 is "leave as it is" to setresuid(2): root would stay.
  EXPECT_EQ(resolve_refusal("4294967295", "1"), "uid 4294967295 is out of range");
  EXPECT_EQ(resolve_refusal("99999999999999999999", "1"),
            "uid 99999999999999999999 is out of range");
  if (nobody()) {
    EXPECT_EQ(resolve_refusal("nobody", "no-such-group-kvmai"), "no group no-such-group-kvmai");
    EXPECT_EQ(resolve_refusal("nobody", "4294967295"), "gid 4294967295 is out of range");
  }
}

// An unknown user stops the command before the module is asked anything.
TEST(PmuExec, CliUnknownUserExits1) {
  auto log = std::make_shared<Log>();
  const auto r = run_cli({"pmu", "exec", "--user", "no-such-user-kvmai", "vm1", "--", "qemu"},
                         answering(log, record_with_units()));
  EXPECT_EQ(r.rc, kExitFailed);
  EXPECT_EQ(r.err, "Error: pmu exec: no user no-such-user-kvmai\n");
  EXPECT_TRUE(log->commands.empty());
}

// The rest changes descriptors 3 and up, credentials, and execs: each in
// a child.

// Exits 0 if the child's checks held, else prints what failed and exits 1.
[[noreturn]] void exit_with(const std::string& problems) {
  std::cerr << problems << std::flush;
  ::_exit(problems.empty() ? 0 : 1);
}

// The descriptor a FakeSource hands out for each unit named.
using UnitFiles = std::map<std::string, const char*>;

// Runs pmu_exec(args) in this process, a death test's child: it ends the
// process, with what the command exits with (kExitFailed and its one line
// for an OpError, a QuietExit's code) or as a failure when it throws
// anything else or returns.
[[noreturn]] void exec_in_child(const Args& args, const TransportFactory& connect,
                                const UnitFiles& files = {}) {
  auto slog = std::make_shared<FakeSource::Log>();
  Exec e(std::cerr, connect);
  try {
    launch(parse_exec(args), e.ctx, [&] { return std::make_unique<FakeSource>(slog, files); });
  } catch (const OpError& x) {
    std::cerr << x.what() << '\n' << std::flush;
    ::_exit(kExitFailed);
  } catch (const QuietExit& x) {
    ::_exit(x.code());
  } catch (const std::exception& x) {
    exit_with(std::string("threw: ") + x.what());
  }
  exit_with("returned");
}

// The descriptors open in this process (below 256).
std::set<int> open_fds() {
  std::set<int> s;
  for (int fd = 0; fd < 256; ++fd) {
    if (fd_flags(fd) != -1) {
      s.insert(fd);
    }
  }
  return s;
}

TEST(PmuExecDeathTest, PlacesAtThreeWithoutCloseOnExec) {
  EXPECT_EXIT(
      {
        std::ostringstream problems;
        const auto check = [&](bool ok, const std::string& what) {
          if (!ok) {
            problems << what << '\n';
          }
        };
        // Something inherited at 4, kept open on exec, and the second
        // unit's descriptor at 3, where the first one is to go.
        const UniqueFd inherited = open_fd("/dev/zero", true);
        ::dup2(inherited.get(), 4);
        UniqueFd second = open_fd("/dev/null");
        ::dup2(second.get(), 3);
        second.reset(3);
        UniqueFd first = open_fd("/dev/full");
        const int first_was = first.get();
        std::vector<UniqueFd> fds;
        fds.push_back(std::move(first));
        fds.push_back(std::move(second));
        std::set<int> expected = open_fds();
        expected.erase(first_was);

        const auto placed = place_fds(std::move(fds));
        check(placed.size() == 2 && placed[0].get() == 3 && placed[1].get() == 4, "numbers");
        check(rdev_of(3) == rdev_of("/dev/full"), "3 is not the first unit's");
        check(rdev_of(4) == rdev_of("/dev/null"), "4 is not the second unit's");
        check(fd_flags(3) == 0 && fd_flags(4) == 0, "close-on-exec left set");
        // The originals and the copies made on the way are closed.
        check(open_fds() == expected, "descriptors opened or closed besides 3 and 4");
        exit_with(problems.str());
      },
      ::testing::ExitedWithCode(0), "");
}

// What the VMM sees: its descriptors, its environment, nothing of ours.
TEST(PmuExecDeathTest, CommandInheritsTheUnitsAtThreeAndFour) {
  const std::string script =
      "fail() { echo \"$*\" >&2; exit 1; }\n"
      "[ \"$KVMAI_UNCORE_FDS\" = 3:4 ] || fail KVMAI_UNCORE_FDS=$KVMAI_UNCORE_FDS\n"
      "[ \"$KVMAI_VM\" = vm1 ] || fail KVMAI_VM=$KVMAI_VM\n"
      "[ \"$(readlink /proc/$$/fd/3)\" = /dev/zero ] || fail 3 is not amd_df\n"
      "[ \"$(readlink /proc/$$/fd/4)\" = /dev/null ] || fail 4 is not amd_l3\n"
      "ls -l /proc/$$/fd | grep -q /dev/full && fail the device is still open\n"
      "[ \"$1\" = -h ] && [ \"$2\" = -- ] && [ $# = 2 ] || fail arguments $*\n"
      "echo ran >&2\n";
  EXPECT_EXIT(
      exec_in_child({"--user", "root", "vm1", "--", "/bin/sh", "-c", script, "sh", "-h", "--"},
                    answering(std::make_shared<Log>(), record_with_units()),
                    {{"amd_df", "/dev/zero"}}),
      ::testing::ExitedWithCode(0), "^ran\n$");
}

// The line of /proc/self/status that starts with `key`, "" if none.
std::string status_line(std::string_view key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(key)) {
      return line;
    }
  }
  return "";
}

// What a launcher may have left kvmaictl besides root: capabilities kept
// across a change of uid (SECBIT_KEEP_CAPS), and CAP_NET_ADMIN inheritable
// and ambient, which an exec would pass on. False if it could not.
bool inherit_extra_capabilities() {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-vararg): prctl(2), syscall(2) are variadic.
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  std::array<__user_cap_data_struct, _LINUX_CAPABILITY_U32S_3> sets{};
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 ||
      ::syscall(SYS_capget, &header, sets.data()) != 0) {
    return false;
  }
  sets[0].inheritable |= 1U << CAP_NET_ADMIN;
  return ::syscall(SYS_capset, &header, sets.data()) == 0 &&
         ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0) == 0 &&
         ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_NET_ADMIN, 0, 0) == 1;
  // NOLINTEND(cppcoreguidelines-pro-type-vararg)
}

// drop_privileges alone: what the kernel says of the process after it.
TEST(PmuExecDeathTest, DropLeavesNoPrivilege) {
  const auto n = nobody();
  if (::geteuid() != 0 || !n) {
    GTEST_SKIP() << "needs root and a user nobody";
  }
  EXPECT_EXIT(
      {
        std::ostringstream problems;
        const auto check = [&](bool ok, const std::string& what) {
          if (!ok) {
            problems << what << '\n';
          }
        };
        check(inherit_extra_capabilities(), "cannot set up inherited capabilities");
        try {
          drop_privileges(resolve_credentials("nobody", std::nullopt));
        } catch (const std::exception& x) {
          exit_with(std::string("threw: ") + x.what());
        }
        uid_t r = 0;
        uid_t e = 0;
        uid_t s = 0;
        check(::getresuid(&r, &e, &s) == 0 && r == n->uid && e == n->uid && s == n->uid, "uids");
        check(::getresgid(&r, &e, &s) == 0 && r == n->gid && e == n->gid && s == n->gid, "gids");
        std::vector<gid_t> groups(64);
        const int count = ::getgroups(static_cast<int>(groups.size()), groups.data());
        groups.resize(count < 0 ? 0 : static_cast<std::size_t>(count));
        check(std::find(groups.begin(), groups.end(), 0) == groups.end(), "still in group 0");
        for (const char* set : {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"}) {
          const std::string line = status_line(set);
          check(line == std::string(set) + "\t0000000000000000", line);
        }
        check(status_line("NoNewPrivs:") == "NoNewPrivs:\t1", status_line("NoNewPrivs:"));
        // Root cannot be had back, by any call that would give it.
        check(::setuid(0) != 0 && ::setresuid(0, 0, 0) != 0 && ::seteuid(0) != 0, "root regained");
        check(::setgroups(0, nullptr) != 0, "setgroups allowed");
        exit_with(problems.str());
      },
      ::testing::ExitedWithCode(0), "");
}

// A drop that cannot be done (here: already unprivileged, to another
// user) says which step failed, on one line, and the command is not run.
TEST(PmuExecDeathTest, FailedDropRunsNothing) {
  const auto n = nobody();
  if (::geteuid() != 0 || !n) {
    GTEST_SKIP() << "needs root and a user nobody";
  }
  EXPECT_EXIT(
      {
        if (::setresuid(n->uid, n->uid, n->uid) != 0) {
          exit_with("setresuid");
        }
        exec_in_child({"--user", "43210", "--group", "43211", "vm1", "unit", "amd_l3", "--",
                       "/bin/sh", "-c", "echo ran >&2"},
                      nullptr);
      },
      ::testing::ExitedWithCode(kExitFailed),
      "^cannot drop to uid 43210 gid 43211: setgroups: Operation not permitted\n$");
}

// --user root: the VMM keeps what kvmaictl had, as asked.
TEST(PmuExecDeathTest, UserRootKeepsRoot) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root";
  }
  const std::string script =
      "s=/proc/$$/status\n"
      "grep -qx 'Uid:.0.0.0.0' $s || { grep Uid: $s >&2; exit 1; }\n"
      "grep -qx 'CapEff:.0000000000000000' $s && { echo no capabilities >&2; exit 1; }\n"
      "grep -qx 'NoNewPrivs:.0' $s || { grep NoNewPrivs: $s >&2; exit 1; }\n"
      "[ \"$KVMAI_UNCORE_FDS\" = 3 ] || exit 1\n"
      "echo ran >&2\n";
  EXPECT_EXIT(
      exec_in_child({"--user", "root", "vm1", "amd_l3", "--", "/bin/sh", "-c", script}, nullptr),
      ::testing::ExitedWithCode(0), "^ran\n$");
}

// What `pmu exec --user nobody` leaves the VMM: nobody's ids and groups,
// no capability in any set and no way to gain one, and still the units'
// descriptors and the environment.
TEST(PmuExecDeathTest, CommandRunsAsTheUserWithoutCapabilities) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root, to drop to nobody";
  }
  const std::string script =
      "fail() { echo \"$*\" >&2; exit 1; }\n"
      "s=/proc/$$/status\n"
      "u=$(id -u nobody); g=$(id -g nobody)\n"
      "grep -qx \"Uid:.$u.$u.$u.$u\" $s || fail $(grep Uid: $s)\n"
      "grep -qx \"Gid:.$g.$g.$g.$g\" $s || fail $(grep Gid: $s)\n"
      "for c in CapInh CapPrm CapEff CapBnd CapAmb; do\n"
      "  grep -qx \"$c:.0000000000000000\" $s || fail $(grep $c: $s)\n"
      "done\n"
      "grep -qx 'NoNewPrivs:.1' $s || fail $(grep NoNewPrivs: $s)\n"
      "[ \"$KVMAI_UNCORE_FDS\" = 3:4 ] || fail KVMAI_UNCORE_FDS=$KVMAI_UNCORE_FDS\n"
      "[ \"$KVMAI_VM\" = vm1 ] || fail KVMAI_VM=$KVMAI_VM\n"
      "[ \"$(readlink /proc/$$/fd/3)\" = /dev/zero ] || fail 3 is not amd_df\n"
      "[ \"$(readlink /proc/$$/fd/4)\" = /dev/null ] || fail 4 is not amd_l3\n"
      "echo ran >&2\n";
  EXPECT_EXIT(exec_in_child({"--user", "nobody", "vm1", "--", "/bin/sh", "-c", script},
                            answering(std::make_shared<Log>(), record_with_units()),
                            {{"amd_df", "/dev/zero"}}),
              ::testing::ExitedWithCode(0), "^ran\n$");
}

TEST(PmuExecDeathTest, FailedExecExits127NamingTheCommand) {
  EXPECT_EXIT(
      exec_in_child({"--user", "root", "vm1", "unit", "amd_l3", "--", "/nonexistent/vmm"}, nullptr),
      ::testing::ExitedWithCode(kExitCannotExec),
      "^Error: pmu exec: /nonexistent/vmm: No such file or directory\n$");
}

}  // namespace
}  // namespace kvmai::kvmaictl
