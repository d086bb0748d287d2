#include "cli/grammar.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "cli/errors.h"
#include "common/format.h"

namespace kvmai::kvmaictl {
namespace {

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

// The indexes of `candidates` that `word` names: the exact match alone,
// else every one it is a prefix of.
std::vector<std::size_t> named_by(std::string_view word,
                                  const std::vector<std::string_view>& candidates) {
  std::vector<std::size_t> prefixed;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] == word) {
      return {i};
    }
    if (!word.empty() && candidates[i].starts_with(word)) {
      prefixed.push_back(i);
    }
  }
  return prefixed;
}

std::string ambiguous(std::string_view what, std::string_view word,
                      const std::vector<std::string_view>& candidates,
                      const std::vector<std::size_t>& matches) {
  std::vector<std::string_view> names;
  names.reserve(matches.size());
  for (const auto i : matches) {
    names.push_back(candidates[i]);
  }
  return fmt::format("{} \"{}\" is ambiguous ({})", what, word, join(names, ", "));
}

std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates,
                         std::string_view prefix = {}) {
  const auto s = suggest(word, candidates);
  return s.empty() ? "" : fmt::format(" (did you mean \"{}{}\"?)", prefix, s);
}

void set_json(GlobalOptions& o, const std::string& /*value*/) {
  o.json = true;
}
void set_pretty(GlobalOptions& o, const std::string& /*value*/) {
  o.pretty = true;
  o.json = true;
}
void set_verbose(GlobalOptions& o, const std::string& /*value*/) {
  o.verbose = true;
}
void set_help(GlobalOptions& o, const std::string& /*value*/) {
  o.help = true;
}
void set_host_bridge_switches(GlobalOptions& o, const std::string& /*value*/) {
  o.host_bridge_switches = true;
}
void set_sysfs_root(GlobalOptions& o, const std::string& value) {
  o.sysfs_root = value;
  o.machine_root.clear();
}
void set_procfs_root(GlobalOptions& o, const std::string& value) {
  o.procfs_root = value;
  o.procfs_given = true;
  o.machine_root.clear();
}
void set_root(GlobalOptions& o, const std::string& value) {
  o.sysfs_root = value + "/sys";
  o.procfs_root = value + "/proc";
  o.procfs_given = true;
  o.machine_root = value;
}

// A named word found on the command line: a global option or a param.
struct Named {
  const GlobalOption* option = nullptr;
  const Param* param = nullptr;

  std::string_view name() const { return option != nullptr ? option->name : param->name; }
  std::string_view value_name() const {
    return option != nullptr ? option->value_name : param->value_name;
  }
};

// The global option or param `--name` stands for: exactly, or (unless
// `exact`) by a unique prefix.  nullopt when none; throws UsageError when
// several share the prefix.
std::optional<Named> find_long(std::string_view name, const std::vector<Param>& params,
                               bool exact) {
  std::vector<Named> all;
  std::vector<std::string_view> names;
  for (const auto& o : global_options()) {
    all.push_back({&o, nullptr});
    names.push_back(o.name);
  }
  for (const auto& p : params) {
    all.push_back({nullptr, &p});
    names.push_back(p.name);
  }
  const auto matches = named_by(name, names);
  if (matches.size() == 1 && (!exact || names[matches.front()] == name)) {
    return all[matches.front()];
  }
  if (matches.size() > 1 && !exact) {
    throw UsageError(ambiguous("option", fmt::format("--{}", name), names, matches));
  }
  return std::nullopt;
}

std::vector<std::string_view> long_names(const std::vector<Param>& params) {
  std::vector<std::string_view> names;
  for (const auto& o : global_options()) {
    names.push_back(o.name);
  }
  for (const auto& p : params) {
    names.push_back(p.name);
  }
  return names;
}

const GlobalOption* find_short(char c) {
  for (const auto& o : global_options()) {
    if (o.short_name == c && c != 0) {
      return &o;
    }
  }
  return nullptr;
}

bool looks_like_option(const std::string& word) {
  return word.size() > 1 && word.front() == '-' && word != "--";
}

// Whether every letter of "-xyz" is a global flag.
bool short_flags(std::string_view word) {
  return std::all_of(word.begin() + 1, word.end(), [](char c) {
    const GlobalOption* o = find_short(c);
    return o != nullptr && o->value_name.empty();
  });
}

// Takes the option or param at args[i] (a `--name[=value]` word) with its
// value; leaves `i` on the last word used.
struct Taken {
  Named named;
  std::string value;
};

Taken take_long(const Named& named, const Args& args, std::size_t& i,
                const std::optional<std::string>& inline_value) {
  Taken t{named, ""};
  const std::string flag = fmt::format("--{}", named.name());
  if (named.value_name().empty()) {
    if (inline_value) {
      throw UsageError(fmt::format("\"{}\" takes no value", flag));
    }
  } else if (inline_value) {
    t.value = *inline_value;
  } else if (i + 1 < args.size() && args[i + 1] != "--") {
    t.value = args[++i];  // verbatim: a value may look like an option
  } else {
    throw UsageError(fmt::format("missing {} after \"{}\"", named.value_name(), flag));
  }
  return t;
}

void apply_short(std::string_view word, GlobalOptions& opts) {
  for (const char c : word.substr(1)) {
    find_short(c)->set(opts, "");
  }
}

// Records a param's value; a param that does not repeat is taken once.
void record(Words& out, const Param& p, std::string value) {
  if (!p.repeats && out.has(p.name)) {
    throw UsageError(
        fmt::format("\"{}{}\" given twice", p.form == Param::Form::option ? "--" : "", p.name));
  }
  out.words.push_back({p.name, std::move(value)});
}

// The leading operands taken by position whatever they look like: a
// group called "vm" in `group add vm vm vm1`.
std::size_t leading_operands(const Syntax& syntax) {
  std::size_t n = 0;
  for (const auto& o : syntax.operands) {
    if (o.count != Operand::Count::one) {
      break;
    }
    ++n;
  }
  return n;
}

// The name of the first operand missing when `have` were given.
std::string_view missing_operand(const Syntax& syntax, std::size_t have) {
  for (const auto& o : syntax.operands) {
    if (o.count == Operand::Count::one || o.count == Operand::Count::some) {
      if (have == 0) {
        return o.name;
      }
      --have;
    } else if (o.count == Operand::Count::optional && have > 0) {
      --have;
    }
  }
  return {};
}

// The keyword a bare word names (exact, or a unique prefix), or nullptr.
const Param* bare_keyword(std::string_view word, const std::vector<Param>& params) {
  std::vector<const Param*> keywords;
  std::vector<std::string_view> names;
  for (const auto& p : params) {
    if (p.form == Param::Form::keyword) {
      keywords.push_back(&p);
      names.push_back(p.name);
    }
  }
  const auto matches = named_by(word, names);
  if (matches.size() > 1) {
    throw UsageError(ambiguous("keyword", word, names, matches));
  }
  return matches.empty() ? nullptr : keywords[matches.front()];
}

std::string unknown_word(std::string_view word, const std::vector<Param>& params) {
  std::vector<std::string_view> names;
  for (const auto& p : params) {
    if (p.form == Param::Form::keyword) {
      names.push_back(p.name);
    }
  }
  if (names.empty()) {
    return fmt::format("unexpected word \"{}\"", word);
  }
  return fmt::format("keyword \"{}\" is unknown{}", word, did_you_mean(word, names));
}

std::string unknown_option(std::string_view word, const std::vector<Param>& params) {
  const auto eq = word.find('=');
  const std::string_view name = word.substr(2, eq == std::string_view::npos ? eq : eq - 2);
  return fmt::format("unrecognised option '{}'{}", word,
                     word.starts_with("--") ? did_you_mean(name, long_names(params), "--") : "");
}

}  // namespace

const std::vector<GlobalOption>& global_options() {
  static const std::vector<GlobalOption> options{
      {'j', "json", "", "JSON output", set_json},
      {'p', "pretty", "", "pretty JSON output (implies -j)", set_pretty},
      {'v', "verbose", "", "more detail in text output", set_verbose},
      {'h', "help", "", "usage of the tool, object or command", set_help},
      {0, "root", "DIR",
       "read a recorded machine: DIR/sys, DIR/proc and DIR/etc (host record writes one)", set_root},
      {0, "sysfs-root", "DIR", "read sysfs from DIR (default /sys; alone, procfs is not read)",
       set_sysfs_root},
      {0, "procfs-root", "DIR", "read procfs from DIR (default /proc)", set_procfs_root},
      {0, "host-bridge-switches", "",
       "count each host bridge's root ports as one switch's downstream ports",
       set_host_bridge_switches, "KVMAICTL_HOST_BRIDGE_SWITCHES"},
  };
  return options;
}

void options_from_environment(GlobalOptions& opts,
                              const std::function<const char*(const char*)>& getenv) {
  for (const auto& o : global_options()) {
    if (o.environment.empty()) {
      continue;
    }
    const char* value = getenv(std::string(o.environment).c_str());
    if (value != nullptr && std::string_view(value) != "" && std::string_view(value) != "0") {
      o.set(opts, value);
    }
  }
}

std::vector<std::string> Words::operands() const {
  std::vector<std::string> v;
  for (const auto& w : words) {
    if (w.param.empty()) {
      v.push_back(w.value);
    }
  }
  return v;
}

std::string Words::operand(std::size_t index) const {
  const auto v = operands();
  return index < v.size() ? v[index] : std::string();
}

bool Words::has(std::string_view param) const {
  return value(param).has_value();
}

std::optional<std::string> Words::value(std::string_view param) const {
  for (const auto& w : words) {
    if (!w.param.empty() && w.param == param) {
      return w.value;
    }
  }
  return std::nullopt;
}

std::uint64_t number_of(std::string_view name, const std::string& value, std::uint64_t least,
                        std::uint64_t most) {
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n < least || n > most) {
    throw UsageError(fmt::format("{} wants a {}number, not \"{}\"", name,
                                 least == 1  ? "positive "
                                 : least > 1 ? fmt::format("{}-or-more ", least)
                                             : "",
                                 value));
  }
  return n;
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
  const auto matches = named_by(word, candidates);
  if (matches.size() == 1) {
    return matches.front();
  }
  if (matches.size() > 1) {
    throw UsageError(ambiguous(what, word, candidates, matches));
  }
  throw UsageError(
      fmt::format("{} \"{}\" is unknown{}", what, word, did_you_mean(word, candidates)));
}

std::size_t skip_global_options(const Args& args, std::size_t from, GlobalOptions& opts,
                                bool& options, bool stop_at_unknown) {
  std::size_t i = from;
  for (; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (!options || !(w == "--" || looks_like_option(w))) {
      break;
    }
    if (w == "--") {
      options = false;
    } else if (w.starts_with("--")) {
      const auto eq = w.find('=');
      const auto name = std::string_view(w).substr(2, eq == std::string::npos ? eq : eq - 2);
      const auto named = find_long(name, {}, false);
      if (!named && stop_at_unknown) {
        break;
      }
      if (!named) {
        throw UsageError(unknown_option(w, {}));
      }
      const auto inline_value =
          eq == std::string::npos ? std::nullopt : std::optional(w.substr(eq + 1));
      const Taken t = take_long(*named, args, i, inline_value);
      t.named.option->set(opts, t.value);
    } else if (short_flags(w)) {
      apply_short(w, opts);
    } else if (stop_at_unknown) {
      break;
    } else {
      throw UsageError(unknown_option(w, {}));
    }
  }
  return i;
}

Words parse_words(const Syntax& syntax, const Args& args, GlobalOptions& opts, bool options) {
  Words out;
  const std::size_t leading = leading_operands(syntax);
  const std::size_t allowed = syntax.most_operands();
  std::size_t taken = 0;  // operands
  bool data_started = false;
  bool dash_seen = false;
  const auto operand = [&](const std::string& w) {
    if (taken == allowed) {
      throw UsageError(unknown_word(w, syntax.params));
    }
    out.words.push_back({{}, w});
    ++taken;
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    if (i == 0 && options && w == "help") {
      out.help = true;
      return out;
    }
    if (w == "--" && !dash_seen && (options || !syntax.after_dash.empty())) {
      dash_seen = true;
      options = false;
      if (!syntax.after_dash.empty()) {
        out.after_dash.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
        break;
      }
      continue;
    }
    if (options && !data_started && looks_like_option(w)) {
      if (w.starts_with("--")) {
        const auto eq = w.find('=');
        const auto name = std::string_view(w).substr(2, eq == std::string::npos ? eq : eq - 2);
        // Data may follow that looks like an option: only a name spelled
        // in full is one there.
        if (const auto named = find_long(name, syntax.params, syntax.data)) {
          const auto inline_value =
              eq == std::string::npos ? std::nullopt : std::optional(w.substr(eq + 1));
          Taken t = take_long(*named, args, i, inline_value);
          if (t.named.option != nullptr) {
            t.named.option->set(opts, t.value);
          } else {
            record(out, *t.named.param, std::move(t.value));
          }
          continue;
        }
        if (!syntax.data) {
          throw UsageError(unknown_option(w, syntax.params));
        }
      } else if (short_flags(w)) {
        apply_short(w, opts);
        continue;
      } else if (!syntax.data) {
        throw UsageError(unknown_option(w, syntax.params));
      }
    }
    if (syntax.data || !options) {
      data_started = syntax.data;
      operand(w);
      continue;
    }
    if (taken < leading) {
      operand(w);
      continue;
    }
    if (const Param* p = bare_keyword(w, syntax.params)) {
      std::string value;
      if (!p->value_name.empty()) {
        // Verbatim, as a value may look like an option; but a "--" ends
        // the words a value can come from.
        if (++i == args.size() || args[i] == "--") {
          throw UsageError(fmt::format("missing {} after \"{}\"", p->value_name, p->name));
        }
        value = args[i];
      }
      record(out, *p, std::move(value));
      continue;
    }
    operand(w);
  }

  if (const auto missing = missing_operand(syntax, taken); !missing.empty()) {
    throw UsageError(fmt::format("missing {}", missing));
  }
  if (!syntax.after_dash.empty()) {
    if (!dash_seen) {
      throw UsageError(fmt::format("missing \"--\" before {}", syntax.after_dash));
    }
    if (out.after_dash.empty()) {
      throw UsageError(fmt::format("missing {} after \"--\"", syntax.after_dash));
    }
  }
  return out;
}

std::size_t Syntax::most_operands() const {
  std::size_t n = 0;
  for (const auto& o : operands) {
    if (o.count == Operand::Count::some || o.count == Operand::Count::any) {
      return std::numeric_limits<std::size_t>::max();
    }
    ++n;
  }
  return n;
}

}  // namespace kvmai::kvmaictl
