// `kvmaictl pmu exec`, the launcher step: takes a descriptor of each of a
// VM's uncore reservations from /dev/kvmai (KVMAI_UNIT_FD), drops to the
// user the VMM is to run as, and replaces itself with the VMM, which
// inherits them at 3, 4, ... KVM attaches a VM to a reservation by such a
// descriptor (KVM_CAP_X86_UNCORE_PASSTHROUGH): whoever holds one can
// attach one VM. Taking them needs CAP_SYS_ADMIN; running the VMM with it
// would give a guest that escapes into the VMM the host, so the VMM gets
// the descriptors and nothing else of root's.
#pragma once

#include <linux/kvmai_dev.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "common/unique_fd.h"

namespace kvmai::kvmaictl {

// The first descriptor number handed over: the one after stderr.
inline constexpr int kFirstUnitFd = 3;

// `--user USER [ --group GROUP ] VM [ UNIT | unit NAME ]... -- COMMAND
// [ ARG ]...`, the options anywhere before "--" (also as --user=USER,
// --group=GROUP), as the command table's syntax takes them.
struct ExecCall {
  std::string user;                  // never empty: "root" (or 0) keeps root
  std::optional<std::string> group;  // as given
  std::string vm;
  std::vector<std::string> units;    // in the order named; none: the record's
  std::vector<std::string> command;  // never empty, verbatim
};

// The call the words of `pmu exec` make.  Throws UsageError; without
// --user, one that says to pass it.
ExecCall exec_call(const Words& words);
// exec_call() of `args` parsed as `pmu exec` parses them.
ExecCall parse_exec(const Args& args);

// Who the VMM runs as.
struct Credentials {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, as setgroups(2) takes them

  // Root was asked for explicitly: the process is left as it is.
  bool is_root() const { return uid == 0; }
};

// --user and --group as credentials. Each is a name or a decimal id (a
// number is an id, named or not). GROUP, when given, is the only group;
// otherwise USER's primary group and the groups that list USER
// (getgrouplist(3)), as login gives them, which needs a passwd entry. A
// USER of uid 0 keeps root and takes no GROUP. Throws OpError naming the
// user or group that does not resolve.
Credentials resolve_credentials(const std::string& user, const std::optional<std::string>& group);

// Becomes `c` (not root) for good, before an exec: groups, gid and uid
// (real, effective, saved), every capability set emptied (bounding,
// ambient, inheritable, permitted, effective) and no_new_privs set, so
// that nothing the process execs can gain one back (setuid or
// file-capability binaries included). Then checks what the kernel says
// of each. Throws OpError naming the step that failed; the process is
// then part-way and must not exec.
void drop_privileges(const Credentials& c);

// The ioctl's argument for `unit` of `vm`. Throws OpError naming a name
// that does not fit.
kvmai_unit_fd unit_fd_request(const std::string& vm, const std::string& unit);

// Where descriptors of reservations come from: /dev/kvmai, or a test's fake.
class UnitFdSource {
 public:
  UnitFdSource() = default;
  UnitFdSource(const UnitFdSource&) = delete;
  UnitFdSource& operator=(const UnitFdSource&) = delete;
  UnitFdSource(UnitFdSource&&) = delete;
  UnitFdSource& operator=(UnitFdSource&&) = delete;
  virtual ~UnitFdSource() = default;

  // A new close-on-exec descriptor of the reservation of `unit` for `vm`.
  // Throws std::system_error carrying the errno of a refusal.
  virtual UniqueFd unit_fd(const std::string& vm, const std::string& unit) = 0;
};

using UnitFdSourceFactory = std::function<std::unique_ptr<UnitFdSource>()>;

// The device at `path` (close-on-exec, closed with the source). Throws
// OpError when it cannot be opened.
std::unique_ptr<UnitFdSource> open_kvmai_dev(const std::string& path = KVMAI_DEV_PATH);

// A descriptor per unit, in the order of `units`. Throws OpError naming
// the unit refused ("unit amd_l3 of vm vm1: Operation not permitted ...");
// the descriptors already taken are closed then.
std::vector<UniqueFd> take_unit_fds(UnitFdSource& source, const std::string& vm,
                                    const std::vector<std::string>& units);

// The numbers `count` descriptors placed from `first` on get, ':'-separated
// ("3:4"): KVMAI_UNCORE_FDS, in the form QEMU's uncore-fds property takes.
std::string uncore_fds_value(std::size_t count, int first = kFirstUnitFd);

// Puts `fds` at `first`, `first` + 1, ... in their order, without
// close-on-exec, and closes the originals. Each is first moved above
// `first` + count, so that no placement can close one not yet placed; a
// descriptor open at one of the target numbers (inherited, say) is
// replaced. Returns the placed descriptors: they close with it, unless an
// exec comes first. Throws std::system_error.
std::vector<UniqueFd> place_fds(std::vector<UniqueFd> fds, int first = kFirstUnitFd);

// The whole command, the descriptors taken from `open_source()`'s source,
// the credentials resolved before anything is taken and dropped after the
// descriptors are placed. Returns only by throwing: the VMM has replaced
// the process otherwise. A failed exec prints "Error: pmu exec: COMMAND:
// reason" and throws QuietExit(kExitCannotExec).
void launch(const ExecCall& call, Context& ctx, const UnitFdSourceFactory& open_source);

}  // namespace kvmai::kvmaictl
