#include "client/genl.h"

#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cstring>
#include <memory>

namespace kvmai::kvmaictl {
namespace {

template <typename T>
std::optional<T> fixed(const Attr* a) {
  if (a == nullptr || a->payload.size() != sizeof(T)) {
    return std::nullopt;
  }
  T v{};
  std::memcpy(&v, a->payload.data(), sizeof v);
  return v;
}

using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

}  // namespace

AttrSet AttrSet::parse(std::span<const std::uint8_t> stream) {
  AttrSet set;
  // libnl's walk takes a mutable pointer but does not write through it.
  auto* head = const_cast<nlattr*>(reinterpret_cast<const nlattr*>(stream.data()));
  nlattr* pos = nullptr;
  int rem = 0;
  nla_for_each_attr(pos, head, static_cast<int>(stream.size()), rem) {
    const auto* data = static_cast<const std::uint8_t*>(nla_data(pos));
    Attr a;
    a.type = static_cast<std::uint16_t>(nla_type(pos));
    a.nested = (pos->nla_type & NLA_F_NESTED) != 0;
    a.payload.assign(data, data + nla_len(pos));
    set.attrs_.push_back(std::move(a));
  }
  return set;
}

std::vector<std::uint8_t> AttrSet::serialize() const {
  const MsgPtr msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg) {
    throw std::bad_alloc();
  }
  for (const auto& a : attrs_) {
    const int type = a.type | (a.nested ? NLA_F_NESTED : 0);
    if (nla_put(msg.get(), type, static_cast<int>(a.payload.size()), a.payload.data()) < 0) {
      throw std::length_error("netlink attribute set too large");
    }
  }
  const auto* data = static_cast<const std::uint8_t*>(nlmsg_data(nlmsg_hdr(msg.get())));
  return {data, data + nlmsg_datalen(nlmsg_hdr(msg.get()))};
}

AttrSet& AttrSet::put_raw(std::uint16_t type, const void* data, std::size_t size) {
  Attr a;
  a.type = type;
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  a.payload.assign(bytes, bytes + size);
  attrs_.push_back(std::move(a));
  return *this;
}

AttrSet& AttrSet::add(const Attr& attr) {
  attrs_.push_back(attr);
  return *this;
}

AttrSet& AttrSet::put_u8(std::uint16_t type, std::uint8_t value) {
  return put_raw(type, &value, sizeof value);
}
AttrSet& AttrSet::put_u16(std::uint16_t type, std::uint16_t value) {
  return put_raw(type, &value, sizeof value);
}
AttrSet& AttrSet::put_u32(std::uint16_t type, std::uint32_t value) {
  return put_raw(type, &value, sizeof value);
}
AttrSet& AttrSet::put_u64(std::uint16_t type, std::uint64_t value) {
  return put_raw(type, &value, sizeof value);
}
AttrSet& AttrSet::put_string(std::uint16_t type, std::string_view value) {
  std::string s(value);  // with its terminating NUL, as NLA_NUL_STRING wants
  return put_raw(type, s.c_str(), s.size() + 1);
}
AttrSet& AttrSet::put_flag(std::uint16_t type) {
  return put_raw(type, nullptr, 0);
}
AttrSet& AttrSet::put_nested(std::uint16_t type, const AttrSet& inner) {
  const auto bytes = inner.serialize();
  put_raw(type, bytes.data(), bytes.size());
  attrs_.back().nested = true;
  return *this;
}

const Attr* AttrSet::find(std::uint16_t type) const {
  for (const auto& a : attrs_) {
    if (a.type == type) {
      return &a;
    }
  }
  return nullptr;
}

std::optional<std::uint8_t> AttrSet::u8(std::uint16_t type) const {
  return fixed<std::uint8_t>(find(type));
}
std::optional<std::uint16_t> AttrSet::u16(std::uint16_t type) const {
  return fixed<std::uint16_t>(find(type));
}
std::optional<std::uint32_t> AttrSet::u32(std::uint16_t type) const {
  return fixed<std::uint32_t>(find(type));
}
std::optional<std::uint64_t> AttrSet::u64(std::uint16_t type) const {
  return fixed<std::uint64_t>(find(type));
}

std::optional<std::string> AttrSet::str(std::uint16_t type) const {
  const Attr* a = find(type);
  if (a == nullptr) {
    return std::nullopt;
  }
  std::string s(a->payload.begin(), a->payload.end());
  while (!s.empty() && s.back() == '\0') {
    s.pop_back();
  }
  return s;
}

std::optional<AttrSet> AttrSet::nested(std::uint16_t type) const {
  const Attr* a = find(type);
  if (a == nullptr) {
    return std::nullopt;
  }
  return parse(a->payload);
}

std::vector<const Attr*> AttrSet::all(std::uint16_t type) const {
  std::vector<const Attr*> out;
  for (const auto& a : attrs_) {
    if (a.type == type) {
      out.push_back(&a);
    }
  }
  return out;
}

GenlError::GenlError(Kind kind, int error, std::string extack, const std::string& message)
    : std::runtime_error(message), kind_(kind), error_(error), extack_(std::move(extack)) {}

GenlError GenlError::family_not_found(std::string_view family) {
  const std::string f(family);
  return {Kind::family_not_found, ENOENT, "",
          f + " module not loaded (generic netlink family \"" + f + "\" not found)"};
}

GenlError GenlError::group_not_found(std::string_view family, std::string_view group) {
  return {Kind::group_not_found, ENOENT, "",
          "generic netlink family \"" + std::string(family) + "\" has no multicast group \"" +
              std::string(group) + "\""};
}

GenlError GenlError::kernel(int error, std::string extack) {
  // The kernel's own words first and verbatim; errno after.
  const std::string errstr = std::strerror(error);
  std::string message = extack.empty() ? errstr : extack + " (" + errstr + ")";
  return {Kind::kernel, error, std::move(extack), message};
}

GenlError GenlError::with_hint(std::string_view hint) const {
  return {kind_, error_, extack_, std::string(what()) + " (" + std::string(hint) + ")"};
}

GenlError GenlError::transport(std::string_view what, std::string_view detail) {
  return {Kind::transport, 0, "", "netlink " + std::string(what) + ": " + std::string(detail)};
}

}  // namespace kvmai::kvmaictl
