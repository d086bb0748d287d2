#include "client/libnl.h"

#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

namespace kvmai::kvmaictl {
namespace {

using SockPtr = std::unique_ptr<nl_sock, decltype(&nl_socket_free)>;
using MsgPtr = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;
using CbPtr = std::unique_ptr<nl_cb, decltype(&nl_cb_put)>;

GenlMessage to_message(nl_msg* msg) {
  nlmsghdr* nlh = nlmsg_hdr(msg);
  auto* gnlh = static_cast<genlmsghdr*>(nlmsg_data(nlh));
  GenlMessage m;
  m.cmd = gnlh->cmd;
  const auto* data = reinterpret_cast<const std::uint8_t*>(genlmsg_attrdata(gnlh, 0));
  m.attrs = AttrSet::parse({data, static_cast<std::size_t>(genlmsg_attrlen(gnlh, 0))});
  return m;
}

// The extended ACK TLVs that follow an NLMSG_ERROR (after the echoed
// request unless it was capped) or an NLMSG_DONE error code.
std::string extack_message(nlmsghdr* nlh, std::size_t fixed_len) {
  if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0) {
    return {};
  }
  const auto datalen = static_cast<std::size_t>(nlmsg_datalen(nlh));
  if (datalen < fixed_len) {
    return {};
  }
  auto* start = static_cast<char*>(nlmsg_data(nlh)) + fixed_len;
  std::array<nlattr*, NLMSGERR_ATTR_MAX + 1> tb{};
  if (nla_parse(tb.data(), NLMSGERR_ATTR_MAX, reinterpret_cast<nlattr*>(start),
                static_cast<int>(datalen - fixed_len), nullptr) < 0 ||
      tb[NLMSGERR_ATTR_MSG] == nullptr) {
    return {};
  }
  std::string s = nla_get_string(tb[NLMSGERR_ATTR_MSG]);
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) {
    s.pop_back();
  }
  return s;
}

// State shared with libnl's callbacks for one exchange.
struct Exchange {
  std::vector<GenlMessage> replies;
  const std::function<bool(const GenlMessage&)>* on_notify = nullptr;
  bool done = false;
  int error = 0;  // positive errno from the kernel
  std::string extack;
};

int on_msg_in(nl_msg* msg, void* arg) {
  auto& x = *static_cast<Exchange*>(arg);
  nlmsghdr* nlh = nlmsg_hdr(msg);
  if (nlh->nlmsg_type == NLMSG_ERROR &&
      static_cast<std::size_t>(nlmsg_datalen(nlh)) >= sizeof(nlmsgerr)) {
    const auto* e = static_cast<const nlmsgerr*>(nlmsg_data(nlh));
    std::size_t fixed = sizeof(nlmsgerr);
    if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0) {
      fixed += e->msg.nlmsg_len - NLMSG_HDRLEN;
    }
    x.extack = extack_message(nlh, fixed);
  } else if (nlh->nlmsg_type == NLMSG_DONE &&
             static_cast<std::size_t>(nlmsg_datalen(nlh)) >= sizeof(int)) {
    int code = 0;
    std::memcpy(&code, nlmsg_data(nlh), sizeof code);
    if (code < 0) {
      x.error = -code;
      x.extack = extack_message(nlh, sizeof code);
    }
  }
  return NL_OK;
}

int on_valid(nl_msg* msg, void* arg) {
  auto& x = *static_cast<Exchange*>(arg);
  if (x.on_notify != nullptr) {
    if (!(*x.on_notify)(to_message(msg))) {
      x.done = true;
      return NL_STOP;
    }
    return NL_OK;
  }
  x.replies.push_back(to_message(msg));
  return NL_OK;
}

int on_finish(nl_msg* /*msg*/, void* arg) {
  static_cast<Exchange*>(arg)->done = true;
  return NL_STOP;
}

int on_error(sockaddr_nl* /*nla*/, nlmsgerr* err, void* arg) {
  auto& x = *static_cast<Exchange*>(arg);
  x.error = -err->error;
  x.done = true;
  return NL_STOP;
}

int any_sequence(nl_msg* /*msg*/, void* /*arg*/) {
  return NL_OK;
}

CbPtr make_callbacks(Exchange& x) {
  CbPtr cb(nl_cb_alloc(NL_CB_DEFAULT), &nl_cb_put);
  if (!cb) {
    throw std::bad_alloc();
  }
  nl_cb_set(cb.get(), NL_CB_MSG_IN, NL_CB_CUSTOM, on_msg_in, &x);
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);
  nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, on_finish, &x);
  nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_finish, &x);
  nl_cb_err(cb.get(), NL_CB_CUSTOM, on_error, &x);
  return cb;
}

class LibnlTransport final : public GenlTransport {
 public:
  LibnlTransport(SockPtr sock, int family_id, std::string family)
      : sock_(std::move(sock)), family_id_(family_id), family_(std::move(family)) {}

  GenlMessage request(std::uint8_t cmd, const AttrSet& attrs) override {
    Exchange x;
    exchange(cmd, attrs, NLM_F_ACK, x);
    if (x.replies.size() > 1) {
      throw GenlError::transport("request",
                                 "expected one reply, got " + std::to_string(x.replies.size()));
    }
    GenlMessage reply = x.replies.empty() ? GenlMessage{} : std::move(x.replies.front());
    reply.warning = std::move(x.extack);
    return reply;
  }

  std::vector<GenlMessage> dump(std::uint8_t cmd, const AttrSet& attrs) override {
    Exchange x;
    exchange(cmd, attrs, NLM_F_DUMP, x);
    return std::move(x.replies);
  }

  void subscribe(std::string_view group) override {
    const std::string g(group);
    const int id = genl_ctrl_resolve_grp(sock_.get(), family_.c_str(), g.c_str());
    if (id < 0) {
      throw GenlError::group_not_found(family_, group);
    }
    if (const int rc = nl_socket_add_membership(sock_.get(), id); rc < 0) {
      throw GenlError::transport("subscribe", nl_geterror(rc));
    }
  }

  void receive(const std::function<bool(const GenlMessage&)>& on_message, int wake_fd) override {
    Exchange x;
    x.on_notify = &on_message;
    const CbPtr cb = make_callbacks(x);
    // Notifications carry no sequence number of ours (the socket's own
    // nl_socket_disable_seq_check() does not reach a callback set of ours).
    nl_cb_set(cb.get(), NL_CB_SEQ_CHECK, NL_CB_CUSTOM, any_sequence, nullptr);
    // poll() ignores negative descriptors.
    std::array<pollfd, 2> fds{
        {{.fd = nl_socket_get_fd(sock_.get()), .events = POLLIN, .revents = 0},
         {.fd = wake_fd, .events = POLLIN, .revents = 0}}};
    while (!x.done) {
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) {
          continue;
        }
        throw GenlError::transport("receive", std::strerror(errno));
      }
      if (fds[1].revents != 0) {
        return;
      }
      if (fds[0].revents == 0) {
        continue;
      }
      if (const int rc = nl_recvmsgs(sock_.get(), cb.get()); rc < 0 && !x.done) {
        throw GenlError::transport("receive", nl_geterror(rc));
      }
    }
  }

 private:
  // Sends one request and collects its replies, and the ACK's text, in `x`.
  void exchange(std::uint8_t cmd, const AttrSet& attrs, int flags, Exchange& x) {
    const MsgPtr msg(nlmsg_alloc(), &nlmsg_free);
    if (!msg) {
      throw std::bad_alloc();
    }
    if (genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family_id_, 0, flags, cmd, 1) ==
        nullptr) {
      throw GenlError::transport("request", "cannot build message header");
    }
    for (const auto& a : attrs.attrs()) {
      const int type = a.type | (a.nested ? NLA_F_NESTED : 0);
      if (nla_put(msg.get(), type, static_cast<int>(a.payload.size()), a.payload.data()) < 0) {
        throw GenlError::transport("request", "attributes do not fit in one message");
      }
    }
    if (const int rc = nl_send_auto(sock_.get(), msg.get()); rc < 0) {
      throw GenlError::transport("send", nl_geterror(rc));
    }
    const CbPtr cb = make_callbacks(x);
    while (!x.done) {
      const int rc = nl_recvmsgs(sock_.get(), cb.get());
      if (x.error != 0) {
        throw GenlError::kernel(x.error, x.extack);
      }
      if (rc < 0) {
        throw GenlError::transport("receive", nl_geterror(rc));
      }
    }
    if (x.error != 0) {
      throw GenlError::kernel(x.error, x.extack);
    }
  }

  SockPtr sock_;
  int family_id_;
  std::string family_;
};

}  // namespace

std::unique_ptr<GenlTransport> connect_libnl(std::string_view family) {
  SockPtr sock(nl_socket_alloc(), &nl_socket_free);
  if (!sock) {
    throw std::bad_alloc();
  }
  if (const int rc = genl_connect(sock.get()); rc < 0) {
    throw GenlError::transport("connect", nl_geterror(rc));
  }
  // Ask for the kernel's error text, and not for our request echoed back.
  const int one = 1;
  setsockopt(nl_socket_get_fd(sock.get()), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
  setsockopt(nl_socket_get_fd(sock.get()), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);

  const std::string name(family);
  const int id = genl_ctrl_resolve(sock.get(), name.c_str());
  if (id == -NLE_OBJ_NOTFOUND) {
    throw GenlError::family_not_found(family);
  }
  if (id < 0) {
    throw GenlError::transport("resolve family \"" + name + "\"", nl_geterror(id));
  }
  return std::make_unique<LibnlTransport>(std::move(sock), id, name);
}

}  // namespace kvmai::kvmaictl
