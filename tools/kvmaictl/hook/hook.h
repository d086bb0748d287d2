// `kvmaictl hook qemu DOMAIN OPERATION SUB-OPERATION [EXTRA]`: libvirt's
// QEMU hook (installed as /etc/libvirt/hooks/qemu.d/kvmai), which gives a
// domain the P2P groups and PMU resources its <metadata> asks for
// (hook/metadata.h) while it runs:
//
//   prepare begin     check the metadata against the domain and the host;
//                     change nothing
//   started begin     create, fill and enable the groups; assign the PMU
//                     resources to the QEMU process (libvirt's pid file);
//                     all or nothing, and a repeat changes nothing
//   stopped end,      delete every group of the domain, release its PMU
//   release end       record, by the domain's name, whatever the XML
//                     says now; quiet when they are gone already
//   reconnect begin,  (libvirtd restarted, or took over a QEMU) put back
//   attach begin      what the module lost; never disable a group
//
// Every other operation exits 0 without reading anything.  The hook writes
// nothing on standard output (libvirt reads a filter's output there for
// some operations) and, when it fails, one line on standard error that
// libvirt puts into its error: "kvmai: ...", printable ASCII only, since
// it quotes the kernel and other processes.  It never calls libvirt.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "hook/host_config.h"

namespace kvmai::kvmaictl::hook {

struct Call {
  std::string domain;
  std::string operation;
  std::string suboperation;
  std::string extra;
  std::string run_dir = "/run/libvirt/qemu";  // where libvirt keeps DOMAIN.pid
  std::string sysfs_root = "/sys";
  std::string config{kHostConfigPath};  // the host's settings (host_config.h)
};

// `[ --run-dir DIR ] [ --config FILE ] [ -- ] DOMAIN OPERATION
// SUB-OPERATION [ EXTRA ]...`, as the command table's syntax takes it, and
// the global --sysfs-root: anything after the options is libvirt's, so a
// domain name may start with "-" (the installed script puts "--" before
// libvirt's words, which then are never options).
Call call_of(const Words& words, const GlobalOptions& opts);
// call_of() of `args` parsed as `hook qemu` parses them. Throws UsageError.
Call parse_call(const Args& args);

// Whether the hook acts on this operation; only then is the domain XML
// read.
bool acts_on(const Call& call);

// Runs the hook on `domain_xml`. Returns the exit status: 0, or 1 after
// one line on `err`. Warnings (a group left as it was on reconnect, the
// kernel's extack on success) go to `err` as "kvmai: warning: ..." lines,
// only when the hook succeeds.
int run_qemu_hook(const Call& call, std::string_view domain_xml, std::ostream& err,
                  const TransportFactory& connect);

}  // namespace kvmai::kvmaictl::hook
