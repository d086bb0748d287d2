// Output for every command: each field goes through one print_* call that
// serves the text form, -j and -p alike (the iproute2 dpll way), so the text
// and the JSON are always the same data.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/format.h"
#include "common/json.h"

namespace kvmai::kvmaictl {

enum class Format { text, json, json_pretty };

// Where a field appears.
enum class Show { any, json_only, text_only };

// How a field looks in text: `label` then the value left-aligned in `width`
// columns. Fields of one line are separated by the caller's widths.
struct Col {
  std::string_view label;
  int width = 0;
};

class Printer {
 public:
  Printer(std::ostream& out, Format format);
  Printer(const Printer&) = delete;
  Printer& operator=(const Printer&) = delete;
  Printer(Printer&&) = delete;
  Printer& operator=(Printer&&) = delete;
  ~Printer() = default;

  bool json() const { return format_ != Format::text; }
  // Nothing printed to the JSON document yet.
  bool empty() const { return root_.empty(); }

  // Containers. In text they print nothing; in JSON an empty key means
  // "an element of the enclosing array".
  void open_object(std::string_view key = {});
  void close_object();
  void open_array(std::string_view key);
  void close_array();

  void print_string(std::string_view key, std::string_view value, Col col = {},
                    Show show = Show::any);
  void print_uint(std::string_view key, std::uint64_t value, Col col = {}, Show show = Show::any);
  void print_int(std::string_view key, std::int64_t value, Col col = {}, Show show = Show::any);
  void print_bool(std::string_view key, bool value, Col col = {}, Show show = Show::any);
  // A value that may be unknown: JSON null, and `unknown_text` in text.
  void print_opt_int(std::string_view key, std::optional<std::int64_t> value, Col col = {},
                     std::string_view unknown_text = "-", Show show = Show::any);
  // The same for a narrower integer (a u32 attribute, an int of sysfs).
  template <std::integral T>
  void print_opt_int(std::string_view key, std::optional<T> value, Col col = {},
                     std::string_view unknown_text = "-",
                     Show show = Show::any) requires(sizeof(T) <= sizeof(std::int32_t)) {
    print_opt_int(key, value ? std::optional<std::int64_t>(*value) : std::nullopt, col,
                  unknown_text, show);
  }
  void print_opt_string(std::string_view key, const std::optional<std::string>& value, Col col = {},
                        std::string_view unknown_text = "-", Show show = Show::any);
  void print_string_list(std::string_view key, const std::vector<std::string>& values, Col col = {},
                         Show show = Show::any);
  // A prepared JSON value (JSON only).
  void print_json(std::string_view key, Json value);

  // Text only.
  void text(std::string_view s);
  void newline();

  // Writes the JSON document (no-op in text, or when nothing was printed,
  // as for commands that only change something). Safe to call more than
  // once.
  void finish();
  // For streams of documents (monitor): writes what was printed so far as
  // one JSON document (one line with -j) and starts a new one; flushes the
  // stream in every format. finish() then writes only what came after.
  void emit();

 private:
  void put(std::string_view key, Json value);
  // One field: `value` into the JSON document, or `text` on the terminal.
  void field(std::string_view key, Json value, std::string_view text, Col col, Show show);
  void put_text(std::string_view value, Col col);

  std::ostream& out_;
  Format format_;
  Json root_;
  std::vector<Json*> stack_;
  bool finished_ = false;
};

}  // namespace kvmai::kvmaictl
