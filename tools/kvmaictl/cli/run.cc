#include <algorithm>
#include <exception>
#include <sstream>

#include "cli/cli.h"
#include "common/escape.h"

namespace po = boost::program_options;

namespace kvmai::kvmaictl {
namespace {

std::vector<Object>& registry() {
  static std::vector<Object> objects;
  return objects;
}

std::string main_usage() {
  std::ostringstream s;
  s << "Usage: kvmaictl [OPTIONS] OBJECT { COMMAND | help }\n"
    << "       kvmaictl help\n"
    << "where  OBJECT := {";
  for (const auto& o : objects()) {
    s << ' ' << o.name << (&o == &objects().back() ? " }" : " |");
  }
  s << "\n       OPTIONS := { -j[son] | -p[retty] | -v[erbose] | -h[elp] }\n\n";
  for (const auto& o : objects()) {
    s << "  " << o.name << std::string(10 - std::min<std::size_t>(o.name.size(), 9), ' ')
      << o.summary << '\n';
  }
  return s.str();
}

std::string command_usage(const Object& o, const Command& c) {
  std::ostringstream s;
  s << "kvmaictl " << o.name << ' ' << c.name;
  if (!c.usage.empty()) {
    s << ' ' << c.usage;
  }
  return s.str();
}

std::string object_usage(const Object& o) {
  std::ostringstream s;
  const char* lead = "Usage: ";
  for (const auto& c : o.commands) {
    s << lead << command_usage(o, c) << '\n';
    lead = "       ";
  }
  s << lead << "kvmaictl " << o.name << " help\n\n";
  for (const auto& c : o.commands) {
    s << "  " << c.name << std::string(10 - std::min<std::size_t>(c.name.size(), 9), ' ')
      << c.summary << (c.name == o.default_command ? " (default)" : "") << '\n';
  }
  return s.str();
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0U : 1U)});
      diag = up;
    }
  }
  return row[b.size()];
}

template <typename T>
std::vector<std::string_view> names_of(const std::vector<T>& items) {
  std::vector<std::string_view> names;
  names.reserve(items.size());
  for (const auto& i : items) {
    names.push_back(i.name);
  }
  return names;
}

// A usage error raised while the words are being resolved; carries the
// usage text that fits the level reached.
struct Failure {
  std::string prefix;
  std::string message;
  std::string usage;
};

void report(std::ostream& err, const Failure& f) {
  err << "Error: ";
  if (!f.prefix.empty()) {
    err << f.prefix << ": ";
  }
  err << f.message << '\n';
  if (!f.usage.empty()) {
    err << f.usage;
  }
}

}  // namespace

ObjectRegistrar::ObjectRegistrar(Object object) {
  auto& objs = registry();
  const auto pos = std::lower_bound(objs.begin(), objs.end(), object.name,
                                    [](const Object& o, std::string_view n) { return o.name < n; });
  objs.insert(pos, std::move(object));
}

const std::vector<Object>& objects() {
  return registry();
}

std::string_view suggest(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::size_t match_word(std::string_view word, const std::vector<std::string_view>& candidates,
                       std::string_view what) {
  std::vector<std::size_t> prefixed;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == word) {
      return i;
    }
    if (!word.empty() && candidates[i].substr(0, word.size()) == word) {
      prefixed.push_back(i);
    }
  }
  if (prefixed.size() == 1) {
    return prefixed.front();
  }
  std::ostringstream msg;
  msg << what << " \"" << word << '"';
  if (prefixed.size() > 1) {
    msg << " is ambiguous (";
    for (const auto i : prefixed) {
      msg << candidates[i] << (i == prefixed.back() ? ")" : ", ");
    }
  } else {
    msg << " is unknown";
    if (const auto s = suggest(word, candidates); !s.empty()) {
      msg << " (did you mean \"" << s << "\"?)";
    }
  }
  throw UsageError(msg.str());
}

void Context::warn(std::string_view text) const {
  if (!text.empty()) {
    err << "Warning: " << where << ": " << text << '\n';
  }
}

bool KeywordArgs::has(std::string_view keyword) const {
  return value(keyword).has_value();
}

std::optional<std::string> KeywordArgs::value(std::string_view keyword) const {
  for (const auto& [k, v] : given) {
    if (k == keyword) {
      return v;
    }
  }
  return std::nullopt;
}

KeywordArgs parse_keywords(const Args& args, const std::vector<std::string_view>& operands,
                           const std::vector<Keyword>& keywords) {
  KeywordArgs out;
  std::vector<std::string_view> names;
  names.reserve(keywords.size());
  for (const auto& k : keywords) {
    names.push_back(k.name);
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word.starts_with('-')) {
      throw UsageError("unrecognised option '" + word + "'");
    }
    if (out.operands.size() < operands.size()) {
      out.operands.push_back(word);
      continue;
    }
    const Keyword& k = keywords[match_word(word, names, "keyword")];
    if (out.has(k.name)) {
      throw UsageError("\"" + std::string(k.name) + "\" given twice");
    }
    std::string value;
    if (!k.value_name.empty()) {
      if (++i == args.size()) {
        throw UsageError("missing " + std::string(k.value_name) + " after \"" +
                         std::string(k.name) + '"');
      }
      value = args[i];
    }
    out.given.emplace_back(k.name, std::move(value));
  }
  if (out.operands.size() < operands.size()) {
    throw UsageError("missing " + std::string(operands[out.operands.size()]));
  }
  return out;
}

po::variables_map parse_args(const Args& args, const po::options_description& options,
                             const po::positional_options_description& positional) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

int run(const Args& argv, std::ostream& raw_out, std::ostream& raw_err,
        const TransportFactory& connect) {
  // Everything written from here on may quote other parties (escape.h).
  EscapedStream out(raw_out);
  EscapedStream err(raw_err);
  GlobalOptions opts;
  bool help = false;
  po::options_description global("Options");
  global.add_options()                                                                //
      ("json,j", po::bool_switch(&opts.json), "JSON output")                          //
      ("pretty,p", po::bool_switch(&opts.pretty), "pretty JSON output (implies -j)")  //
      ("verbose,v", po::bool_switch(&opts.verbose), "more detail in text output")     //
      ("help,h", po::bool_switch(&help), "usage");
  po::options_description all;
  all.add(global).add_options()("words", po::value<Args>());
  po::positional_options_description positional;
  positional.add("words", -1);

  // Global options may appear anywhere before a "--"; everything Boost
  // does not know is handed, in order, to the object and command. Boost
  // would drop that "--" and leave no trace of where it stood, so it sees
  // only what precedes it; what follows is appended to the words as it is.
  const auto double_dash = std::find(argv.begin(), argv.end(), "--");
  const Args before_dash(argv.begin(), double_dash);
  Args words;
  std::size_t dash_at = 0;  // index in `words` the "--" stood before
  try {
    const auto parsed = po::command_line_parser(before_dash)
                            .options(all)
                            .positional(positional)
                            .allow_unregistered()
                            .run();
    po::variables_map vm;
    po::store(parsed, vm);
    po::notify(vm);
    words = po::collect_unrecognized(parsed.options, po::include_positional);
    dash_at = words.size();
    if (double_dash != argv.end()) {
      words.insert(words.end(), double_dash + 1, argv.end());
    }
  } catch (const po::error& e) {
    report(err, {"", e.what(), main_usage()});
    return kExitUsage;
  }
  opts.json = opts.json || opts.pretty;

  if (words.empty() || words.front() == "help") {
    if (words.empty() && !help) {
      report(err, {"", "missing OBJECT", main_usage()});
      return kExitUsage;
    }
    out << main_usage();
    return kExitOk;
  }

  // An option Boost did not know, before any object word.
  if (words.front().starts_with('-')) {
    report(err, {"", "unrecognised option '" + words.front() + "'", main_usage()});
    return kExitUsage;
  }

  const Object* obj = nullptr;
  const Command* cmd = nullptr;
  Args args;
  try {
    obj = &objects()[match_word(words.front(), names_of(objects()), "object")];
  } catch (const UsageError& e) {
    report(err, {"", e.what(), main_usage()});
    return kExitUsage;
  }
  const Args rest(words.begin() + 1, words.end());
  if (!rest.empty() && rest.front() == "help") {
    out << object_usage(*obj);
    return kExitOk;
  }
  const bool implicit = rest.empty() || rest.front().starts_with('-');
  if (implicit && (help || obj->default_command.empty())) {
    if (help) {
      out << object_usage(*obj);
      return kExitOk;
    }
    report(err, {std::string(obj->name), "missing COMMAND", object_usage(*obj)});
    return kExitUsage;
  }
  try {
    const auto word = implicit ? obj->default_command : std::string_view(rest.front());
    cmd = &obj->commands[match_word(word, names_of(obj->commands), "command")];
  } catch (const UsageError& e) {
    report(err, {std::string(obj->name), e.what(), object_usage(*obj)});
    return kExitUsage;
  }
  args.assign(rest.begin() + (implicit ? 0 : 1), rest.end());
  // Only a "--" among the command's own arguments is handed over.
  if (const std::size_t first_arg = words.size() - args.size();
      cmd->keeps_double_dash && double_dash != argv.end() && dash_at >= first_arg) {
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(dash_at - first_arg), "--");
  }
  if (help || (!cmd->data_args && !args.empty() && args.front() == "help")) {
    out << "Usage: " << command_usage(*obj, *cmd) << '\n';
    return kExitOk;
  }

  const std::string prefix = std::string(obj->name) + ' ' + std::string(cmd->name);
  Printer printer(out, !opts.json    ? Format::text
                       : opts.pretty ? Format::json_pretty
                                     : Format::json);
  Context ctx{printer, err, opts, connect, prefix};
  int rc = kExitOk;
  bool reported = false;
  Failure failure;
  try {
    cmd->run(args, ctx);
  } catch (const QuietExit& e) {
    rc = e.code();
    reported = true;
  } catch (const UsageError& e) {
    failure = {prefix, e.what(), "Usage: " + command_usage(*obj, *cmd) + '\n'};
    rc = kExitUsage;
  } catch (const std::exception& e) {
    failure = {prefix, e.what(), ""};
    rc = kExitFailed;
  }
  // What was printed before a failure is still a complete document.
  if (rc == kExitOk || (rc == kExitFailed && !printer.empty())) {
    printer.finish();
  }
  out.flush();
  if (rc != kExitOk && !reported) {
    report(err, failure);
  }
  return rc;
}

}  // namespace kvmai::kvmaictl
