// A GenlTransport for unit tests: canned replies per command, and a record
// of what was asked.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genl.h"

namespace kvmaictl::testing {

class FakeTransport final : public GenlTransport {
 public:
  struct Log {
    std::vector<std::uint8_t> commands;
    std::vector<std::string> groups;
  };

  explicit FakeTransport(std::shared_ptr<Log> log) : log_(std::move(log)) {}

  std::map<std::uint8_t, std::vector<GenlMessage>> replies;
  std::optional<GenlError> error;  // thrown by every request/dump when set
  std::vector<GenlMessage> notifications;

  GenlMessage request(std::uint8_t cmd, const AttrSet& /*attrs*/) override {
    log_->commands.push_back(cmd);
    if (error) {
      throw *error;
    }
    return replies.at(cmd).at(0);
  }
  std::vector<GenlMessage> dump(std::uint8_t cmd, const AttrSet& /*attrs*/) override {
    log_->commands.push_back(cmd);
    if (error) {
      throw *error;
    }
    return replies[cmd];
  }
  void subscribe(std::string_view group) override { log_->groups.emplace_back(group); }
  void receive(const std::function<bool(const GenlMessage&)>& on_message) override {
    for (const auto& n : notifications) {
      if (!on_message(n)) {
        return;
      }
    }
  }

 private:
  std::shared_ptr<Log> log_;
};

}  // namespace kvmaictl::testing
