// SPDX-License-Identifier: GPL-2.0-only
/* P2P groups through the family: group-* and dev-* requests, their replies. */
#include <string.h>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <linux/kvmai.h>

#include "group.h"

struct groups {
	struct kt_group *out;
	int max, n;
};

static __u64 u64_or_0(struct nlattr *a)
{
	return a ? nla_get_u64(a) : 0;
}

static void parse_member(struct kt_member *m, struct nlattr *nest)
{
	struct nlattr *tb[KVMAI_A_MEMBER_MAX + 1], *bar;
	int rem;

	memset(m, 0, sizeof(*m));
	if (nla_parse_nested(tb, KVMAI_A_MEMBER_MAX, nest, NULL))
		return;
	kt_nla_str(m->addr, sizeof(m->addr), tb[KVMAI_A_MEMBER_PCI_ADDR]);
	kt_nla_str(m->mdev, sizeof(m->mdev), tb[KVMAI_A_MEMBER_MDEV]);
	kt_nla_str(m->driver, sizeof(m->driver), tb[KVMAI_A_MEMBER_DRIVER]);
	m->ats = tb[KVMAI_A_MEMBER_ATS] ? nla_get_u8(tb[KVMAI_A_MEMBER_ATS]) : -1;
	nla_for_each_nested(bar, nest, rem) {
		struct nlattr *bt[KVMAI_A_BAR_MAX + 1];

		if (nla_type(bar) != KVMAI_A_MEMBER_BAR || m->nbars == 6 ||
		    nla_parse_nested(bt, KVMAI_A_BAR_MAX, bar, NULL))
			continue;
		m->bar_addr[m->nbars] = u64_or_0(bt[KVMAI_A_BAR_ADDR]);
		m->bar_size[m->nbars] = u64_or_0(bt[KVMAI_A_BAR_SIZE]);
		m->nbars++;
	}
}

static bool parse_port(struct kt_port *p, struct nlattr *nest)
{
	struct nlattr *tb[KVMAI_A_PORT_MAX + 1];

	if (nla_parse_nested(tb, KVMAI_A_PORT_MAX, nest, NULL))
		return false;
	kt_nla_str(p->addr, sizeof(p->addr), tb[KVMAI_A_PORT_PCI_ADDR]);
	p->cap = kt_nla_u32(tb[KVMAI_A_PORT_ACS_CAP]);
	p->saved = kt_nla_u32(tb[KVMAI_A_PORT_ACS_SAVED]);
	p->target = kt_nla_u32(tb[KVMAI_A_PORT_ACS_TARGET]);
	p->current = kt_nla_u32(tb[KVMAI_A_PORT_ACS_CURRENT]);
	p->users = kt_nla_u32(tb[KVMAI_A_PORT_USERS]);
	return true;
}

static bool parse_pair(struct kt_pair *p, struct nlattr *nest)
{
	struct nlattr *tb[KVMAI_A_PAIR_MAX + 1];

	if (nla_parse_nested(tb, KVMAI_A_PAIR_MAX, nest, NULL))
		return false;
	kt_nla_str(p->a, sizeof(p->a), tb[KVMAI_A_PAIR_A]);
	kt_nla_str(p->b, sizeof(p->b), tb[KVMAI_A_PAIR_B]);
	kt_nla_str(p->via, sizeof(p->via), tb[KVMAI_A_PAIR_VIA]);
	p->type = kt_nla_u32(tb[KVMAI_A_PAIR_TYPE]);
	return true;
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
	kt_nla_str(g->name, sizeof(g->name), tb[KVMAI_A_GROUP_NAME]);
	kt_nla_str(g->vm, sizeof(g->vm), tb[KVMAI_A_GROUP_VM]);
	g->id = kt_nla_u32(tb[KVMAI_A_GROUP_ID]);
	g->mode = kt_nla_u32(tb[KVMAI_A_GROUP_MODE]);
	g->state = kt_nla_u32(tb[KVMAI_A_GROUP_STATE]);
	g->bind_socket = tb[KVMAI_A_GROUP_BIND_SOCKET];

	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0), rem) {
		if (nla_type(a) == KVMAI_A_GROUP_MEMBER && g->nmembers < 16)
			parse_member(&g->members[g->nmembers++], a);
		else if (nla_type(a) == KVMAI_A_GROUP_PORT && g->nports < KT_MAX &&
			 parse_port(&g->ports[g->nports], a))
			g->nports++;
		else if (nla_type(a) == KVMAI_A_GROUP_PAIR && g->npairs < KT_MAX &&
			 parse_pair(&g->pairs[g->npairs], a))
			g->npairs++;
	}
}

static int on_group(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[KVMAI_A_GROUP_MAX + 1];
	struct groups *c = arg;

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
	if (req->mdev)
		nla_put_string(msg, KVMAI_A_GROUP_MDEV, req->mdev);
	if (req->mode)
		nla_put_u32(msg, KVMAI_A_GROUP_MODE, req->mode);
	if (req->state)
		nla_put_u32(msg, KVMAI_A_GROUP_STATE, req->state);
	if (req->bind_socket)
		nla_put_flag(msg, KVMAI_A_GROUP_BIND_SOCKET);
	if (req->extra)
		req->extra(msg);
}

int _test_cmd_group_dump(struct kt_nl *nl, const struct kt_req *req,
			 struct kt_group *out, int max, int *n)
{
	struct groups c = { .out = out, .max = max };
	int ret;

	ret = kt_nl_exchange(nl, req->cmd, req->dump, fill_group_req, req, on_group, &c);
	if (!ret && n)
		*n = c.n;
	return ret;
}

int _test_cmd_group(struct kt_nl *nl, const struct kt_req *req, struct kt_group *out)
{
	return _test_cmd_group_dump(nl, req, out, out ? 1 : 0, NULL);
}

int kt_nl_receive_group(struct kt_nl *nl, struct kt_group *out, int timeout_ms)
{
	struct groups c = { .out = out, .max = 1 };
	int ret = kt_nl_poll(nl, on_group, &c, timeout_ms);

	return ret <= 0 ? ret : c.n > 0;
}
