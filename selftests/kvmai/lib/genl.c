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

#include "kvmai_test.h"

struct nl_sock *kvmai_genl_open(int *family)
{
	return kvmai_genl_open_buf(family, 0);
}

struct nl_sock *kvmai_genl_open_buf(int *family, size_t buf)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1;

	if (!sk) {
		*family = -ENOMEM;
		return NULL;
	}
	/*
	 * The kernel sizes dump messages to the largest receive this socket
	 * ever made: a small reader must be small from its first receive on.
	 */
	if (buf) {
		nl_socket_disable_msg_peek(sk);
		nl_socket_set_msg_buf_size(sk, buf);
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
	/* libnl hands us the payload of the NLMSG_ERROR message. */
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
	if (tb[KVMAI_A_STATUS_FEATURES])
		st->features = nla_get_u32(tb[KVMAI_A_STATUS_FEATURES]);
	st->restore_pending = tb[KVMAI_A_STATUS_RESTORE_PENDING] ?
			      nla_get_u32(tb[KVMAI_A_STATUS_RESTORE_PENDING]) : -1;
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

struct dump_ctx {
	struct kt_group *out;
	int max, n;
	char *ext;
	size_t ext_len;
	int err;
};

void kt_get_str(char *dst, size_t len, struct nlattr *a)
{
	if (a)
		snprintf(dst, len, "%s", nla_get_string(a));
}

uint32_t kt_get_u32(struct nlattr *a)
{
	return a ? nla_get_u32(a) : 0;
}

static void parse_member(struct kt_member *m, struct nlattr *nest)
{
	struct nlattr *tb[KVMAI_A_MEMBER_MAX + 1], *bar;
	int rem;

	memset(m, 0, sizeof(*m));
	if (nla_parse_nested(tb, KVMAI_A_MEMBER_MAX, nest, NULL))
		return;
	kt_get_str(m->addr, sizeof(m->addr), tb[KVMAI_A_MEMBER_PCI_ADDR]);
	kt_get_str(m->driver, sizeof(m->driver), tb[KVMAI_A_MEMBER_DRIVER]);
	m->ats = tb[KVMAI_A_MEMBER_ATS] ? nla_get_u8(tb[KVMAI_A_MEMBER_ATS]) : -1;
	nla_for_each_nested(bar, nest, rem) {
		struct nlattr *bt[KVMAI_A_BAR_MAX + 1];

		if (nla_type(bar) != KVMAI_A_MEMBER_BAR || m->nbars == 6 ||
		    nla_parse_nested(bt, KVMAI_A_BAR_MAX, bar, NULL))
			continue;
		m->bar_addr[m->nbars] = bt[KVMAI_A_BAR_ADDR] ? nla_get_u64(bt[KVMAI_A_BAR_ADDR]) : 0;
		m->bar_size[m->nbars] = bt[KVMAI_A_BAR_SIZE] ? nla_get_u64(bt[KVMAI_A_BAR_SIZE]) : 0;
		m->nbars++;
	}
}

/*
 * A group from one message into @g; with @more, the message is a further
 * part of @g (a dump split it, KVMAI_A_GROUP_CONTINUED) and its lists are
 * appended to what @g has.
 */
static void parse_group(struct nl_msg *msg, struct kt_group *g, bool more)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *tb[KVMAI_A_GROUP_MAX + 1], *a;
	int rem;

	if (!more)
		memset(g, 0, sizeof(*g));
	g->cmd = gh->cmd;
	if (genlmsg_parse(nlh, 0, tb, KVMAI_A_GROUP_MAX, NULL))
		return;
	g->parts++;
	kt_get_str(g->name, sizeof(g->name), tb[KVMAI_A_GROUP_NAME]);
	kt_get_str(g->vm, sizeof(g->vm), tb[KVMAI_A_GROUP_VM]);
	g->id = kt_get_u32(tb[KVMAI_A_GROUP_ID]);
	g->mode = kt_get_u32(tb[KVMAI_A_GROUP_MODE]);
	g->state = kt_get_u32(tb[KVMAI_A_GROUP_STATE]);
	g->bind_socket = tb[KVMAI_A_GROUP_BIND_SOCKET];

	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		struct nlattr *sub[KVMAI_A_PORT_MAX + KVMAI_A_PAIR_MAX + 1];

		if (nla_type(a) == KVMAI_A_GROUP_MEMBER && g->nmembers < 16) {
			parse_member(&g->members[g->nmembers++], a);
		} else if (nla_type(a) == KVMAI_A_GROUP_PORT && g->nports < KT_MAX &&
			   !nla_parse_nested(sub, KVMAI_A_PORT_MAX, a, NULL)) {
			struct kt_port *p = &g->ports[g->nports++];

			kt_get_str(p->addr, sizeof(p->addr), sub[KVMAI_A_PORT_PCI_ADDR]);
			p->cap = kt_get_u32(sub[KVMAI_A_PORT_ACS_CAP]);
			p->saved = kt_get_u32(sub[KVMAI_A_PORT_ACS_SAVED]);
			p->target = kt_get_u32(sub[KVMAI_A_PORT_ACS_TARGET]);
			p->current = kt_get_u32(sub[KVMAI_A_PORT_ACS_CURRENT]);
			p->users = kt_get_u32(sub[KVMAI_A_PORT_USERS]);
		} else if (nla_type(a) == KVMAI_A_GROUP_PAIR && g->npairs < KT_MAX &&
			   !nla_parse_nested(sub, KVMAI_A_PAIR_MAX, a, NULL)) {
			struct kt_pair *p = &g->pairs[g->npairs++];

			kt_get_str(p->a, sizeof(p->a), sub[KVMAI_A_PAIR_A]);
			kt_get_str(p->b, sizeof(p->b), sub[KVMAI_A_PAIR_B]);
			kt_get_str(p->via, sizeof(p->via), sub[KVMAI_A_PAIR_VIA]);
			p->type = kt_get_u32(sub[KVMAI_A_PAIR_TYPE]);
		}
	}
}

static int on_group(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *c = arg;

	struct nlattr *tb[KVMAI_A_GROUP_MAX + 1];

	/* A part that continues the group before it adds to that group. */
	if (c->n && !genlmsg_parse(nlmsg_hdr(msg), 0, tb, KVMAI_A_GROUP_MAX, NULL) &&
	    tb[KVMAI_A_GROUP_CONTINUED]) {
		if (c->out && c->n <= c->max)
			parse_group(msg, &c->out[c->n - 1], true);
		return NL_OK;
	}
	if (c->out && c->n < c->max)
		parse_group(msg, &c->out[c->n], false);
	c->n++;
	return NL_OK;
}

static int on_dump_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct dump_ctx *c = arg;
	struct reply r = { .ext = c->ext, .ext_len = c->ext_len };

	on_error(nla, e, &r);
	c->err = r.err;
	return NL_STOP;
}

static int on_done(struct nl_msg *msg, void *arg)
{
	((struct dump_ctx *)arg)->err = 0;
	return NL_STOP;
}

/* A successful ACK may carry a warning in its extack. */
static int on_ack_warning(struct nl_msg *msg, void *arg)
{
	struct dump_ctx *c = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlmsgerr *e = nlmsg_data(nlh);
	struct reply r = { .ext = c->ext, .ext_len = c->ext_len };

	if (c->ext)
		on_error(NULL, e, &r);
	c->err = 0;
	return NL_STOP;
}

int kt_exchange(struct nl_sock *sk, int family, uint8_t cmd, bool dump,
		void (*fill)(struct nl_msg *msg, const void *arg), const void *fill_arg,
		int (*valid)(struct nl_msg *msg, void *arg), void *valid_arg,
		char *ext, size_t ext_len)
{
	struct dump_ctx c = { .ext = ext, .ext_len = ext_len, .err = 1 };
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret = -ENOMEM;

	if (ext && ext_len)
		ext[0] = '\0';
	if (!msg || !cb)
		goto out;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
			 dump ? NLM_F_DUMP : NLM_F_ACK, cmd, KVMAI_FAMILY_VERSION))
		goto out;
	if (fill)
		fill(msg, fill_arg);
	nl_cb_err(cb, NL_CB_CUSTOM, on_dump_error, &c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack_warning, &c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_done, &c);
	if (valid)
		nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid, valid_arg);
	if (nl_send_auto(sk, msg) < 0) {
		ret = -EIO;
		goto out;
	}
	while (c.err > 0) {
		if (nl_recvmsgs(sk, cb) < 0 && c.err > 0) {
			ret = -EIO;
			goto out;
		}
	}
	ret = c.err;
out:
	nl_cb_put(cb);
	nlmsg_free(msg);
	return ret;
}

static void fill_group_req(struct nl_msg *msg, const void *arg)
{
	const struct kt_req *req = arg;

	/* Far below a page: nla_put cannot run out of room here. */
	if (req->name)
		nla_put_string(msg, KVMAI_A_GROUP_NAME, req->name);
	if (req->vm)
		nla_put_string(msg, KVMAI_A_GROUP_VM, req->vm);
	if (req->pci)
		nla_put_string(msg, KVMAI_A_GROUP_PCI_ADDR, req->pci);
	if (req->mode)
		nla_put_u32(msg, KVMAI_A_GROUP_MODE, req->mode);
	if (req->state)
		nla_put_u32(msg, KVMAI_A_GROUP_STATE, req->state);
	if (req->bind_socket)
		nla_put_flag(msg, KVMAI_A_GROUP_BIND_SOCKET);
	if (req->extra)
		req->extra(msg);
}

int kt_request(struct nl_sock *sk, int family, const struct kt_req *req,
	       struct kt_group *out, int max, int *n, char *ext, size_t ext_len)
{
	struct dump_ctx c = { .out = out, .max = max };
	int ret;

	ret = kt_exchange(sk, family, req->cmd, req->dump, fill_group_req, req,
			  on_group, &c, ext, ext_len);
	if (!ret && n)
		*n = c.n;
	return ret;
}

int kt_monitor(struct nl_sock *sk)
{
	int grp = genl_ctrl_resolve_grp(sk, KVMAI_FAMILY_NAME, "monitor");

	if (grp < 0)
		return -ENOENT;
	nl_socket_disable_seq_check(sk);
	return nl_socket_add_membership(sk, grp) ? -EIO : 0;
}

struct nl_sock *kt_monitor_open(void)
{
	struct nl_sock *sk;
	int family;

	sk = kvmai_genl_open(&family);
	if (sk && kt_monitor(sk)) {
		kvmai_genl_close(sk);
		return NULL;
	}
	return sk;
}

struct nl_sock *kt_open_unprivileged(int *family)
{
	/* nobody: no capability, so admin-perm operations must be refused. */
	if (setgid(65534) || setuid(65534))
		return NULL;
	return kvmai_genl_open(family);
}

static int no_seq_check(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

int kt_poll(struct nl_sock *sk, int (*valid)(struct nl_msg *msg, void *arg), void *arg,
	    int timeout_ms)
{
	struct pollfd pfd = { .fd = nl_socket_get_fd(sk), .events = POLLIN };
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
	ret = nl_recvmsgs(sk, cb);
	nl_cb_put(cb);
	return ret < 0 ? -EIO : 1;
}

int kt_receive(struct nl_sock *sk, struct kt_group *out, int timeout_ms)
{
	struct dump_ctx c = { .out = out, .max = 1 };
	int ret = kt_poll(sk, on_group, &c, timeout_ms);

	return ret <= 0 ? ret : c.n > 0;
}
