// A command of kvmaictl: its words (cli/grammar.h), its help text and its
// handler, gathered by object in the one command table
// (commands/table.cc); and what a handler gets to run with.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/errors.h"
#include "cli/grammar.h"
#include "cli/print.h"
#include "client/kvmai.h"

namespace kvmai::kvmaictl {

// What a command handler gets.
struct Context {
  Printer& out;
  std::ostream& err;
  GlobalOptions opts;
  TransportFactory connect;
  std::string where;  // "OBJECT COMMAND", what messages are prefixed with

  // A warning the kernel gave with a successful reply (extack): one line
  // on stderr; nothing when `text` is empty.
  void warn(std::string_view text) const;
  // The kvmai module's client, its warnings on stderr as warn() prints
  // them; no socket is opened before its first request.
  Kvmai kvmai() const;
};

using Handler = void (*)(const Words& words, Context& ctx);

struct Command {
  std::string_view name;
  std::string_view usage;  // what follows "kvmaictl OBJECT COMMAND", may be empty
  std::string_view summary;
  Syntax syntax;
  Handler run = nullptr;
  // Why the command has no JSON form, for the one-line refusal of -j;
  // empty: it takes -j.
  std::string_view no_json{};
};

struct Object {
  std::string_view name;
  std::string_view summary;
  std::string_view default_command;  // run when no command word is given; "" for none
  std::vector<Command> commands;
};

}  // namespace kvmai::kvmaictl
