// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kvmai generic netlink family from the selftests, through libnl so
 * that the tests exercise the module, not a framing library of their own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <linux/kvmai.h>

#include "kvmai_test.h"

struct nl_sock *kvmai_genl_open(int *family)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk) {
		*family = -ENOMEM;
		return NULL;
	}
	if (genl_connect(sk)) {
		nl_socket_free(sk);
		*family = -ECONNREFUSED;
		return NULL;
	}
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	*family = genl_ctrl_resolve(sk, KVMAI_FAMILY_NAME);
	if (*family < 0) {
		nl_socket_free(sk);
		*family = -ENOENT;
		return NULL;
	}
	return sk;
}

void kvmai_genl_close(struct nl_sock *sk)
{
	nl_socket_free(sk);
}

struct reply {
	struct kvmai_status *st;
	char *ext;
	size_t ext_len;
	int err;
};

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)e - 1;
	struct reply *r = arg;
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1] = {};
	int ack_len = sizeof(*nlh) + sizeof(*e);

	r->err = e->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		ack_len += e->msg.nlmsg_len - sizeof(*nlh);
	if (r->ext && (nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    !nla_parse(tb, NLMSGERR_ATTR_MAX, (struct nlattr *)((char *)nlh + ack_len),
		       nlh->nlmsg_len - ack_len, NULL) && tb[NLMSGERR_ATTR_MSG])
		snprintf(r->ext, r->ext_len, "%s", (char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	((struct reply *)arg)->err = 0;
	return NL_STOP;
}

static int on_status(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KVMAI_A_STATUS_MAX + 1];
	struct kvmai_status *st = ((struct reply *)arg)->st;

	if (!st || genlmsg_parse(nlmsg_hdr(msg), 0, tb, KVMAI_A_STATUS_MAX, NULL))
		return NL_SKIP;
	if (tb[KVMAI_A_STATUS_VERSION])
		snprintf(st->version, sizeof(st->version), "%s",
			 nla_get_string(tb[KVMAI_A_STATUS_VERSION]));
	if (tb[KVMAI_A_STATUS_API_VERSION])
		st->api_version = nla_get_u32(tb[KVMAI_A_STATUS_API_VERSION]);
	if (tb[KVMAI_A_STATUS_KERNEL])
		snprintf(st->kernel, sizeof(st->kernel), "%s",
			 nla_get_string(tb[KVMAI_A_STATUS_KERNEL]));
	return NL_OK;
}

static int request(struct nl_sock *sk, int family, uint8_t cmd, struct reply *r)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret = -ENOMEM;

	if (!msg || !cb)
		goto out;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_ACK, cmd,
			 KVMAI_FAMILY_VERSION))
		goto out;
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_status, r);
	r->err = 1;
	ret = nl_send_auto(sk, msg);
	if (ret < 0) {
		ret = -EIO;
		goto out;
	}
	while (r->err > 0) {
		ret = nl_recvmsgs(sk, cb);
		if (ret < 0 && r->err > 0) {
			ret = -EIO;
			goto out;
		}
	}
	ret = r->err;
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	return ret;
}

int kvmai_genl_cmd(struct nl_sock *sk, int family, uint8_t cmd, char *ext, size_t ext_len)
{
	struct reply r = { .ext = ext, .ext_len = ext_len };

	if (ext && ext_len)
		ext[0] = '\0';
	return request(sk, family, cmd, &r);
}

int kvmai_status_get(struct nl_sock *sk, int family, struct kvmai_status *st)
{
	struct reply r = { .st = st };

	memset(st, 0, sizeof(*st));
	return request(sk, family, KVMAI_CMD_STATUS_GET, &r);
}
