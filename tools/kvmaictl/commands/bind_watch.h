// The bind-socket pattern: what a request creates lives as long as the
// socket that sent it, so the command keeps that socket open until SIGINT,
// SIGTERM, or a notification says the object ended some other way.
#pragma once

#include <functional>
#include <optional>

#include "cli/command.h"
#include "client/kvmai.h"
#include "common/stop_signals.h"

namespace kvmai::kvmaictl {

class BindWatch {
 public:
  // Set up before the request, so that no notification or signal arriving
  // between the request and the wait is missed. Does nothing unless `bind`.
  BindWatch(const Context& ctx, bool bind) {
    if (bind) {
      watcher_.emplace(ctx.connect, nullptr);
      watcher_->subscribe();
      stop_.emplace();
    }
  }

  // Flushes the output, then waits while `keep_waiting` says a
  // notification is not the end of the object.
  void hold(Context& ctx, const std::function<bool(const Event&)>& keep_waiting) {
    ctx.out.emit();
    watcher_->watch(keep_waiting, stop_->fd());
  }

 private:
  std::optional<Kvmai> watcher_;
  std::optional<StopSignals> stop_;
};

}  // namespace kvmai::kvmaictl
