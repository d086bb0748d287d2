// Generic netlink, as the commands see it: requests and replies as
// attribute sets, behind GenlTransport so commands can be tested against a
// fake. The real transport (libnl-genl-3) is in genl_libnl.h; this and
// genl_libnl.cc are the only files with netlink code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kvmai::kvmaictl {

// One attribute: its type and raw payload. `nested` marks a payload that is
// itself an attribute stream (sent with NLA_F_NESTED).
struct Attr {
  std::uint16_t type = 0;
  std::vector<std::uint8_t> payload;
  bool nested = false;
};

// The attributes of one message, or of one nest, in wire order.
class AttrSet {
 public:
  AttrSet() = default;

  // Parses an attribute stream (libnl's nla_* walk).
  static AttrSet parse(std::span<const std::uint8_t> stream);

  AttrSet& put_u8(std::uint16_t type, std::uint8_t value);
  AttrSet& put_u16(std::uint16_t type, std::uint16_t value);
  AttrSet& put_u32(std::uint16_t type, std::uint32_t value);
  AttrSet& put_u64(std::uint16_t type, std::uint64_t value);
  AttrSet& put_string(std::uint16_t type, std::string_view value);
  AttrSet& put_flag(std::uint16_t type);  // present, no payload
  AttrSet& put_nested(std::uint16_t type, const AttrSet& inner);
  // One more attribute as it is (e.g. taken from another set).
  AttrSet& add(const Attr& attr);

  bool has(std::uint16_t type) const { return find(type) != nullptr; }
  std::optional<std::uint8_t> u8(std::uint16_t type) const;
  std::optional<std::uint16_t> u16(std::uint16_t type) const;
  std::optional<std::uint32_t> u32(std::uint16_t type) const;
  std::optional<std::uint64_t> u64(std::uint16_t type) const;
  std::optional<std::string> str(std::uint16_t type) const;
  std::optional<AttrSet> nested(std::uint16_t type) const;
  // Every attribute of `type` (multi-attr arrays).
  std::vector<const Attr*> all(std::uint16_t type) const;

  const std::vector<Attr>& attrs() const { return attrs_; }

  // The attribute stream, framed by libnl (for nests and fakes).
  std::vector<std::uint8_t> serialize() const;

 private:
  const Attr* find(std::uint16_t type) const;
  AttrSet& put_raw(std::uint16_t type, const void* data, std::size_t size);

  std::vector<Attr> attrs_;
};

struct GenlMessage {
  std::uint8_t cmd = 0;  // 0: no reply message, the ACK alone answered
  AttrSet attrs;
  // Text the kernel put in the extended ACK of a request that succeeded:
  // a warning for the user (request() only).
  std::string warning;
};

class GenlError : public std::runtime_error {
 public:
  enum class Kind {
    family_not_found,  // module not loaded
    group_not_found,   // multicast group unknown to the family
    kernel,            // the kernel refused: errno and maybe extack text
    transport,         // socket trouble on our side
  };

  static GenlError family_not_found(std::string_view family);
  static GenlError group_not_found(std::string_view family, std::string_view group);
  // `error` is a positive errno; `extack` the kernel's message, if any.
  static GenlError kernel(int error, std::string extack);
  static GenlError transport(std::string_view what, std::string_view detail);

  // This error with `hint` after its message, in parentheses: what the
  // errno alone would leave a reader to guess.
  GenlError with_hint(std::string_view hint) const;

  Kind kind() const { return kind_; }
  int error() const { return error_; }
  const std::string& extack() const { return extack_; }

 private:
  GenlError(Kind kind, int error, std::string extack, const std::string& message);

  Kind kind_;
  int error_;
  std::string extack_;
};

// One generic netlink family, already resolved.
class GenlTransport {
 public:
  GenlTransport() = default;
  GenlTransport(const GenlTransport&) = delete;
  GenlTransport& operator=(const GenlTransport&) = delete;
  GenlTransport(GenlTransport&&) = delete;
  GenlTransport& operator=(GenlTransport&&) = delete;
  virtual ~GenlTransport() = default;

  // A "do": one request, answered by one reply message or by the ACK
  // alone (then the result has cmd 0 and no attributes). Either way the
  // result carries the ACK's warning, if any. Throws GenlError.
  virtual GenlMessage request(std::uint8_t cmd, const AttrSet& attrs) = 0;
  // A "dump": every reply until the kernel says done. Throws GenlError.
  virtual std::vector<GenlMessage> dump(std::uint8_t cmd, const AttrSet& attrs) = 0;
  // Joins a multicast group of the family (e.g. "monitor").
  virtual void subscribe(std::string_view group) = 0;
  // Delivers notifications until `on_message` returns false, or until
  // `wake_fd` (ignored when negative) becomes readable.
  virtual void receive(const std::function<bool(const GenlMessage&)>& on_message, int wake_fd) = 0;
};

// Opens a generic netlink transport to `family`; only called by commands
// that talk to the module, so `help` never opens a socket.
using TransportFactory = std::function<std::unique_ptr<GenlTransport>(std::string_view family)>;

}  // namespace kvmai::kvmaictl
