#include "cli/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "common/escape.h"
#include "common/format.h"

namespace kvmai::kvmaictl {
namespace {

template <typename T>
std::vector<std::string_view> names_of(const std::vector<T>& items) {
  std::vector<std::string_view> names;
  names.reserve(items.size());
  for (const auto& i : items) {
    names.push_back(i.name);
  }
  return names;
}

// A name and its summary, the summaries aligned.
std::string summary_line(std::string_view name, std::string_view summary) {
  return fmt::format("  {:<10}{}\n", name, summary);
}

std::string option_line(const GlobalOption& o) {
  const std::string shortname = o.short_name != 0 ? fmt::format("-{},", o.short_name) : "";
  const std::string longname = o.value_name.empty() ? fmt::format("--{}", o.name)
                                                    : fmt::format("--{} {}", o.name, o.value_name);
  return fmt::format("  {:<4}{:<25}{}\n", shortname, longname, o.help);
}

const Command& command_named(const Object& o, std::string_view name) {
  return o.commands[match_word(name, names_of(o.commands), "command")];
}

}  // namespace

std::string main_usage(const std::vector<Object>& table) {
  std::string s = fmt::format(
      "Usage: kvmaictl [ OPTION ]... OBJECT {{ COMMAND | help }}\n"
      "       kvmaictl help\n"
      "where  OBJECT := {{ {} }}\n\n",
      join(names_of(table), " | "));
  for (const auto& o : table) {
    s += summary_line(o.name, o.summary);
  }
  s += "\nOptions, anywhere before \"--\" (--opt VALUE or --opt=VALUE):\n";
  for (const auto& o : global_options()) {
    s += option_line(o);
  }
  return s;
}

std::string command_usage(const Object& o, const Command& c) {
  return c.usage.empty() ? fmt::format("kvmaictl {} {}", o.name, c.name)
                         : fmt::format("kvmaictl {} {} {}", o.name, c.name, c.usage);
}

std::string object_usage(const Object& o) {
  std::string s;
  std::string_view lead = "Usage: ";
  for (const auto& c : o.commands) {
    s += fmt::format("{}{}\n", lead, command_usage(o, c));
    lead = "       ";
  }
  s += fmt::format("{}kvmaictl {} help\n\n", lead, o.name);
  for (const auto& c : o.commands) {
    s += summary_line(c.name, c.name == o.default_command ? fmt::format("{} (default)", c.summary)
                                                          : std::string(c.summary));
  }
  return s;
}

int run(const std::vector<Object>& table, const Args& argv, std::ostream& raw_out,
        std::ostream& raw_err, const TransportFactory& connect, const Environment& environment) {
  // Everything written from here on may quote other parties (escape.h).
  EscapedStream out(raw_out);
  EscapedStream err(raw_err);
  GlobalOptions opts;
  options_from_environment(opts, environment);
  std::string where;  // what usage errors are prefixed with
  const Object* obj = nullptr;
  const Command* cmd = nullptr;
  Words words;
  try {
    bool options = true;
    std::size_t i = skip_global_options(argv, 0, opts, options, false);
    if (i == argv.size() || argv[i] == "help") {
      if (i == argv.size() && !opts.help) {
        throw UsageError("missing OBJECT (see \"kvmaictl help\")");
      }
      out << main_usage(table);
      return kExitOk;
    }
    obj = &table[match_word(argv[i++], names_of(table), "object")];
    where = obj->name;
    // An option the object's default command takes ends the global ones
    // (`monitor --count 3`).
    i = skip_global_options(argv, i, opts, options, !obj->default_command.empty());
    if (i < argv.size() && argv[i] == "help") {
      out << object_usage(*obj);
      return kExitOk;
    }
    if (i < argv.size() && (!options || !argv[i].starts_with('-'))) {
      cmd = &command_named(*obj, argv[i++]);
    } else if (opts.help) {
      out << object_usage(*obj);
      return kExitOk;
    } else if (obj->default_command.empty()) {
      throw UsageError("missing COMMAND");
    } else {
      cmd = &command_named(*obj, obj->default_command);
    }
    where = fmt::format("{} {}", obj->name, cmd->name);
    try {
      words =
          parse_words(cmd->syntax, Args(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end()),
                      opts, options);
    } catch (const UsageError&) {
      if (!opts.help) {
        throw;
      }
      words.help = true;  // -h with words that do not parse: the usage says how
    }
    if (words.help || opts.help) {
      out << "Usage: " << command_usage(*obj, *cmd) << '\n';
      return kExitOk;
    }
    // Refused rather than ignored: a script asking for JSON must not get
    // another format, or nothing, with exit 0.
    if (opts.json && !cmd->no_json.empty()) {
      throw UsageError(fmt::format("-j: no JSON output ({})", cmd->no_json));
    }
  } catch (const UsageError& e) {
    err << "Error: " << (where.empty() ? "" : where + ": ") << e.what() << '\n';
    return kExitUsage;
  }

  Printer printer(out, !opts.json    ? Format::text
                       : opts.pretty ? Format::json_pretty
                                     : Format::json);
  Context ctx{printer, err, opts, connect, where};
  int rc = kExitOk;
  std::string failure;
  try {
    cmd->run(words, ctx);
  } catch (const QuietExit& e) {
    rc = e.code();
  } catch (const UsageError& e) {
    failure = e.what();
    rc = kExitUsage;
  } catch (const std::exception& e) {
    failure = e.what();
    rc = kExitFailed;
  }
  // What was printed before a failure is still a complete document.
  if (rc == kExitOk || (rc == kExitFailed && !printer.empty())) {
    printer.finish();
  }
  out.flush();
  if (!failure.empty()) {
    err << "Error: " << where << ": " << failure << '\n';
  }
  return rc;
}

}  // namespace kvmai::kvmaictl
