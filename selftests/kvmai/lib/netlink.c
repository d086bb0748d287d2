// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kvmai generic netlink family from the selftests, through libnl so
 * that the tests exercise the module, not a framing library of their own.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <linux/kvmai.h>

#include "netlink.h"

int kt_nl_open(struct kt_nl *nl)
{
	return kt_nl_open_buf(nl, 0);
}

int kt_nl_open_buf(struct kt_nl *nl, size_t buf)
{
	int one = 1;

	memset(nl, 0, sizeof(*nl));
	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		return -ENOMEM;
	/*
	 * The kernel sizes dump messages to the largest receive this socket
	 * ever made: a small reader must be small from its first receive on.
	 */
	if (buf) {
		nl_socket_disable_msg_peek(nl->sk);
		nl_socket_set_msg_buf_size(nl->sk, buf);
	}
	if (genl_connect(nl->sk)) {
		kt_nl_close(nl);
		return -ECONNREFUSED;
	}
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	nl->family = genl_ctrl_resolve(nl->sk, KVMAI_FAMILY_NAME);
	if (nl->family < 0) {
		kt_nl_close(nl);
		return -ENOENT;
	}
	return 0;
}

int kt_nl_open_unprivileged(struct kt_nl *nl)
{
	/* nobody: no capability, so admin-perm operations must be refused. */
	if (setgid(65534) || setuid(65534))
		return -errno;
	return kt_nl_open(nl);
}

void kt_nl_close(struct kt_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

int kt_nl_monitor(struct kt_nl *nl)
{
	int grp = genl_ctrl_resolve_grp(nl->sk, KVMAI_FAMILY_NAME, "monitor");

	if (grp < 0)
		return -ENOENT;
	nl_socket_disable_seq_check(nl->sk);
	return nl_socket_add_membership(nl->sk, grp) ? -EIO : 0;
}

int kt_nl_monitor_open(struct kt_nl *nl)
{
	int ret = kt_nl_open(nl);

	if (!ret)
		ret = kt_nl_monitor(nl);
	if (ret)
		kt_nl_close(nl);
	return ret;
}

struct exchange {
	char *ext;
	size_t ext_len;
	int err;
};

/* An error's code, and its extack message into @x->ext. */
static void take_error(struct exchange *x, struct nlmsgerr *e)
{
	/* libnl hands us the payload of the NLMSG_ERROR message. */
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	int ack_len = sizeof(*nlh) + sizeof(*e);

	x->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += e->msg.nlmsg_len - sizeof(*nlh);
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    !nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + ack_len),
		       nlh->nlmsg_len - ack_len, NULL) && tb[NLMSGERR_ATTR_MSG])
		snprintf(x->ext, x->ext_len, "%s", (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	take_error(arg, e);
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	((struct exchange *)arg)->err = 0;
	return NL_STOP;
}

/* A successful ACK may carry a warning in its extack. */
static int on_ack(struct nl_msg *msg, void *arg)
{
	take_error(arg, nlmsg_data(nlmsg_hdr(msg)));
	((struct exchange *)arg)->err = 0;
	return NL_STOP;
}

int kt_nl_exchange(struct kt_nl *nl, __u8 cmd, bool dump,
		   void (*fill)(struct nl_msg *msg, const void *arg), const void *fill_arg,
		   int (*valid)(struct nl_msg *msg, void *arg), void *valid_arg)
{
	struct exchange x = { .ext = nl->ext, .ext_len = sizeof(nl->ext), .err = 1 };
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret = -ENOMEM;

	nl->ext[0] = '\0';
	if (!msg || !cb)
		goto out;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 dump ? NLM_F_DUMP : NLM_F_ACK, cmd, KVMAI_FAMILY_VERSION))
		goto out;
	if (fill)
		fill(msg, fill_arg);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, &x);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &x);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &x);
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, valid_arg);
	if (nl_send_auto(nl->sk, msg) < 0) {
		ret = -EIO;
		goto out;
	}
	while (x.err > 0) {
		if (nl_recvmsgs(nl->sk, cb) < 0 && x.err > 0) {
			ret = -EIO;
			goto out;
		}
	}
	ret = x.err;
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	return ret;
}

static int no_seq_check(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

int kt_nl_poll(struct kt_nl *nl, int (*valid)(struct nl_msg *msg, void *arg), void *arg,
	       int timeout_ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(nl->sk), .events = POLLIN };
	struct nl_cb *cb;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret <= 0)
		return ret < 0 ? -errno : 0;
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, arg);
	/* Notifications carry no sequence number of ours. */
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	ret = nl_recvmsgs(nl->sk, cb);
	nl_cb_put(cb);
	return ret < 0 ? -EIO : 1;
}

void kt_nla_str(char *dst, size_t len, struct nlattr *a)
{
	if (a)
		snprintf(dst, len, "%s", nla_get_string(a));
}

__u32 kt_nla_u32(struct nlattr *a)
{
	return a ? nla_get_u32(a) : 0;
}

static int on_status(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KVMAI_A_STATUS_MAX + 1];
	struct kt_status *st = arg;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, KVMAI_A_STATUS_MAX, NULL))
		return NL_SKIP;
	kt_nla_str(st->version, sizeof(st->version), tb[KVMAI_A_STATUS_VERSION]);
	st->api_version = kt_nla_u32(tb[KVMAI_A_STATUS_API_VERSION]);
	kt_nla_str(st->kernel, sizeof(st->kernel), tb[KVMAI_A_STATUS_KERNEL]);
	st->features = kt_nla_u32(tb[KVMAI_A_STATUS_FEATURES]);
	st->restore_pending = tb[KVMAI_A_STATUS_RESTORE_PENDING] ?
			      nla_get_u32(tb[KVMAI_A_STATUS_RESTORE_PENDING]) : -1;
	return NL_OK;
}

int _test_cmd_status_get(struct kt_nl *nl, struct kt_status *st)
{
	memset(st, 0, sizeof(*st));
	return kt_nl_exchange(nl, KVMAI_CMD_STATUS_GET, false, NULL, NULL, on_status, st);
}

int _test_cmd_nl_bare(struct kt_nl *nl, __u8 cmd)
{
	return kt_nl_exchange(nl, cmd, false, NULL, NULL, NULL, NULL);
}
