// The bind-socket pattern: what a request creates lives as long as the
// socket that sent it, so the command keeps that socket open until SIGINT,
// SIGTERM, or a notification says the object ended some other way.
#pragma once

#include <linux/kvmai.h>

#include <functional>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "client/genl.h"
#include "common/stop_signals.h"

namespace kvmai::kvmaictl {

class BindWatch {
 public:
  // Set up before the request, so that no notification or signal arriving
  // between the request and the wait is missed. Does nothing unless `bind`.
  BindWatch(Context& ctx, bool bind) {
    if (bind) {
      watcher_ = ctx.connect(KVMAI_FAMILY_NAME);
      watcher_->subscribe(KVMAI_MCGRP_MONITOR);
      stop_.emplace();
    }
  }

  // Flushes the output, then waits while `keep_waiting` says a
  // notification is not the end of the object.
  void hold(Context& ctx, const std::function<bool(const GenlMessage&)>& keep_waiting) {
    ctx.out.emit();
    watcher_->receive(keep_waiting, stop_->fd());
  }

 private:
  std::unique_ptr<GenlTransport> watcher_;
  std::optional<StopSignals> stop_;
};

}  // namespace kvmai::kvmaictl
