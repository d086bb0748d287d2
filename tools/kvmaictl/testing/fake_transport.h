// A GenlTransport for unit tests: canned replies per command, and a record
// of what was asked.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/genl.h"

namespace kvmai::kvmaictl::testing {

class FakeTransport final : public GenlTransport {
 public:
  struct Log {
    std::vector<std::uint8_t> commands;
    std::vector<AttrSet> requests;  // attributes sent, one per command
    std::vector<std::string> groups;
    int receives = 0;
    int delivered = 0;  // notifications handed to receive()'s callback
  };

  explicit FakeTransport(std::shared_ptr<Log> log) : log_(std::move(log)) {}

  // A command without a reply here is answered by the ACK alone.
  std::map<std::uint8_t, std::vector<GenlMessage>> replies;
  std::optional<GenlError> error;  // thrown by every call when set
  std::string warning;             // extack text of every successful ACK
  std::vector<GenlMessage> notifications;
  // When set, answers every request (its first message, none: the ACK
  // alone) and dump in place of `replies`, and may throw GenlError: a
  // test's model of the module, for commands that read what they changed.
  std::function<std::vector<GenlMessage>(std::uint8_t cmd, const AttrSet& attrs)> answer;

  GenlMessage request(std::uint8_t cmd, const AttrSet& attrs) override {
    record(cmd, attrs);
    GenlMessage reply;
    if (answer) {
      const auto answered = answer(cmd, attrs);
      reply = answered.empty() ? GenlMessage{} : answered.front();
    } else if (const auto it = replies.find(cmd); it != replies.end()) {
      reply = it->second.at(0);
    }
    if (!answer || !warning.empty()) {
      reply.warning = warning;  // an answer may carry its own
    }
    return reply;
  }
  std::vector<GenlMessage> dump(std::uint8_t cmd, const AttrSet& attrs) override {
    record(cmd, attrs);
    return answer ? answer(cmd, attrs) : replies[cmd];
  }
  void subscribe(std::string_view group) override {
    log_->groups.emplace_back(group);
    fail_if_set();
  }
  void receive(const std::function<bool(const GenlMessage&)>& on_message,
               int /*wake_fd*/) override {
    ++log_->receives;
    fail_if_set();
    for (const auto& n : notifications) {
      ++log_->delivered;
      if (!on_message(n)) {
        return;
      }
    }
  }

 private:
  void record(std::uint8_t cmd, const AttrSet& attrs) {
    log_->commands.push_back(cmd);
    log_->requests.push_back(attrs);
    fail_if_set();
  }
  void fail_if_set() const {
    if (error) {
      throw *error;
    }
  }

  std::shared_ptr<Log> log_;
};

}  // namespace kvmai::kvmaictl::testing
