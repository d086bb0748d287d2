// Names of enum values, from tables: one row per value, so that a value
// and its name are written once, next to each other, and the name finds
// its value again (a keyword such as `mode direct`).
#pragma once

#include <iterator>
#include <optional>
#include <string_view>

namespace kvmai {

template <typename T>
struct Named {
  T value;
  std::string_view name;
};

// The name of `value` in `table` (an array of Named), or `unknown`.
template <typename Table, typename T>
constexpr std::string_view name_of(const Table& table, T value, std::string_view unknown = "?") {
  for (const auto& row : table) {
    if (row.value == value) {
      return row.name;
    }
  }
  return unknown;
}

// The value `name` names in `table`, exactly; nullopt when none does.
template <typename Table>
constexpr auto value_of(const Table& table, std::string_view name)
    -> std::optional<decltype(std::begin(table)->value)> {
  for (const auto& row : table) {
    if (row.name == name) {
      return row.value;
    }
  }
  return std::nullopt;
}

}  // namespace kvmai
