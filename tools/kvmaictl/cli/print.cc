#include "cli/print.h"

#include <stdexcept>

namespace kvmai::kvmaictl {

Printer::Printer(std::ostream& out, Format format)
    : out_(out), format_(format), root_(Json::object()) {
  stack_.push_back(&root_);
}

void Printer::put(std::string_view key, Json value) {
  Json& top = *stack_.back();
  if (top.is_array()) {
    top.push_back(std::move(value));
  } else {
    top[std::string(key)] = std::move(value);
  }
}

void Printer::open_object(std::string_view key) {
  if (!json()) {
    return;
  }
  put(key, Json::object());
  Json& top = *stack_.back();
  stack_.push_back(top.is_array() ? &top.back() : &top[std::string(key)]);
}

void Printer::close_object() {
  if (!json()) {
    return;
  }
  if (stack_.size() <= 1 || !stack_.back()->is_object()) {
    throw std::logic_error("Printer: close_object without open_object");
  }
  stack_.pop_back();
}

void Printer::open_array(std::string_view key) {
  if (!json()) {
    return;
  }
  put(key, Json::array());
  Json& top = *stack_.back();
  stack_.push_back(top.is_array() ? &top.back() : &top[std::string(key)]);
}

void Printer::close_array() {
  if (!json()) {
    return;
  }
  if (stack_.size() <= 1 || !stack_.back()->is_array()) {
    throw std::logic_error("Printer: close_array without open_array");
  }
  stack_.pop_back();
}

void Printer::put_text(std::string_view value, Col col) {
  out_ << col.label << value;
  for (auto n = static_cast<int>(value.size()); n < col.width; ++n) {
    out_ << ' ';
  }
}

void Printer::field(std::string_view key, Json value, std::string_view text, Col col, Show show) {
  if (json()) {
    if (show != Show::text_only) {
      put(key, std::move(value));
    }
  } else if (show != Show::json_only) {
    put_text(text, col);
  }
}

void Printer::print_string(std::string_view key, std::string_view value, Col col, Show show) {
  field(key, std::string(value), value, col, show);
}

void Printer::print_uint(std::string_view key, std::uint64_t value, Col col, Show show) {
  field(key, value, std::to_string(value), col, show);
}

void Printer::print_int(std::string_view key, std::int64_t value, Col col, Show show) {
  field(key, value, std::to_string(value), col, show);
}

void Printer::print_bool(std::string_view key, bool value, Col col, Show show) {
  field(key, value, value ? "yes" : "no", col, show);
}

void Printer::print_opt_int(std::string_view key, std::optional<std::int64_t> value, Col col,
                            std::string_view unknown_text, Show show) {
  if (value) {
    print_int(key, *value, col, show);
  } else {
    field(key, nullptr, unknown_text, col, show);
  }
}

void Printer::print_opt_string(std::string_view key, const std::optional<std::string>& value,
                               Col col, std::string_view unknown_text, Show show) {
  if (value) {
    print_string(key, *value, col, show);
  } else {
    field(key, nullptr, unknown_text, col, show);
  }
}

void Printer::print_string_list(std::string_view key, const std::vector<std::string>& values,
                                Col col, Show show) {
  std::string joined;
  for (const auto& v : values) {
    joined += joined.empty() ? "" : ",";
    joined += v;
  }
  field(key, values, joined.empty() ? "-" : joined, col, show);
}

void Printer::print_json(std::string_view key, Json value) {
  if (json()) {
    put(key, std::move(value));
  }
}

void Printer::text(std::string_view s) {
  if (!json()) {
    out_ << s;
  }
}

void Printer::newline() {
  if (!json()) {
    out_ << '\n';
  }
}

void Printer::finish() {
  if (finished_ || !json() || root_.empty()) {
    return;
  }
  finished_ = true;
  out_ << json_text(root_, format_ == Format::json_pretty ? 2 : -1) << '\n';
}

void Printer::emit() {
  if (json()) {
    if (stack_.size() != 1) {
      throw std::logic_error("Printer: emit inside an open container");
    }
    out_ << json_text(root_, format_ == Format::json_pretty ? 2 : -1) << '\n';
    root_ = Json::object();
  }
  out_.flush();
}

}  // namespace kvmai::kvmaictl
