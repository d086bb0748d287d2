#include "client/names.h"

#include <fmt/format.h>
#include <linux/kvmai.h>

#include "cli/errors.h"
#include "cli/grammar.h"
#include "common/format.h"

namespace kvmai::kvmaictl {

std::string name_problem(std::string_view name, std::size_t size) {
  if (name.empty()) {
    return "is empty";
  }
  if (name.size() >= size) {
    return fmt::format("is longer than {} characters", size - 1);
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (is_name_char(c)) {
      continue;
    }
    // The module's own words (kvmai_bad_name()).
    const std::string what = c > ' ' && c <= '~' ? fmt::format("'{}'", static_cast<char>(c))
                                                 : fmt::format("byte {}", to_hex(c, 2));
    return fmt::format("has {} at offset {}, which names may not hold ({})", what, i,
                       kNameCharsDoc);
  }
  return "";
}

std::string checked_name(std::string_view what, const std::string& name, std::size_t size) {
  if (const auto problem = name_problem(name, size); !problem.empty()) {
    throw UsageError(fmt::format("{} \"{}\" {}", what, printable(name), problem));
  }
  return name;
}

std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c < ' ' || c > '~') {
      c = '?';
    }
  }
  return out;
}

const EnumNames& mode_names() {
  static const EnumNames names{{KVMAI_MODE_TRANSLATED, "translated"},
                               {KVMAI_MODE_DIRECT, "direct"}};
  return names;
}

const EnumNames& state_names() {
  static const EnumNames names{{KVMAI_STATE_DISABLED, "disabled"},
                               {KVMAI_STATE_ENABLED, "enabled"}};
  return names;
}

const EnumNames& path_type_names() {
  static const EnumNames names{{KVMAI_PATH_TYPE_SWITCH, "switch"},
                               {KVMAI_PATH_TYPE_HOST_BRIDGE, "host-bridge"},
                               {KVMAI_PATH_TYPE_DEVICE, "device"},
                               {KVMAI_PATH_TYPE_NONE, "none"}};
  return names;
}

const EnumNames& feature_names() {
  static const EnumNames names{{KVMAI_FEATURE_ACS_OVERRIDE, "acs-override"},
                               {KVMAI_FEATURE_VFIO_NOTIFY, "vfio-notify"},
                               {KVMAI_FEATURE_CORE_FENCE, "core-fence"},
                               {KVMAI_FEATURE_UNCORE_RESERVE, "uncore-reserve"}};
  return names;
}

// What one instance of a unit counts for.
const EnumNames& scope_names() {
  static const EnumNames names{
      {KVMAI_SCOPE_PACKAGE, "package"}, {KVMAI_SCOPE_DIE, "die"}, {KVMAI_SCOPE_LLC, "llc"}};
  return names;
}

std::string enum_name(const EnumNames& names, std::uint32_t value) {
  const auto name = name_of(names, value, {});
  return name.empty() ? std::to_string(value) : std::string(name);
}

std::uint32_t enum_value(const EnumNames& names, std::string_view word, std::string_view what) {
  std::vector<std::string_view> words;
  words.reserve(names.size());
  for (const auto& entry : names) {
    words.push_back(entry.name);
  }
  return names[match_word(word, words, what)].value;
}

std::vector<std::string> flag_names(const EnumNames& names, std::uint32_t value) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : names) {
    if ((value & bit) != 0) {
      out.emplace_back(name);
      value &= ~bit;
    }
  }
  if (value != 0) {
    out.push_back(to_hex(value));
  }
  return out;
}

}  // namespace kvmai::kvmaictl
