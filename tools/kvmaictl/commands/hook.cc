// `kvmaictl hook qemu`: libvirt's QEMU hook (hook/hook.h), as libvirt runs
// it, with the domain XML on standard input.
#include "hook/hook.h"

#include <unistd.h>

#include <iostream>
#include <iterator>
#include <string>

#include "commands/commands.h"

namespace kvmai::kvmaictl {

void hook_qemu(const Words& words, Context& ctx) {
  const hook::Call call = hook::call_of(words, ctx.opts);
  if (!hook::acts_on(call)) {
    return;
  }
  // By hand on a terminal, the hook would wait for the XML silently.
  if (isatty(STDIN_FILENO) != 0) {
    ctx.err << "kvmai: the domain XML goes on standard input, as libvirt gives it\n";
    throw QuietExit(kExitFailed);
  }
  const std::string xml{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  if (const int rc = hook::run_qemu_hook(call, xml, ctx.err, ctx.connect); rc != kExitOk) {
    throw QuietExit(rc);
  }
}

}  // namespace kvmai::kvmaictl
