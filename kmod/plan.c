// SPDX-License-Identifier: GPL-2.0-only
/*
 * P2P path planning (see plan.h).
 *
 * Which ports matter: ACS P2P redirect, egress control and direct
 * translated P2P act where a TLP enters a switch (or a root complex) and is
 * about to be routed to a peer port of that same switch.  Between members
 * A and B whose lowest common ancestor is L, requests from A enter L at the
 * child of L on A's side, and completions from B at the child on B's side.
 * Ports further down only send the TLP upstream, which ACS redirect does not
 * change.  So for every pair the plan programs exactly the two children of
 * L, and nothing else: every bit kvmai writes is one that changes routing.
 *
 * Who else can then be reached: a port whose redirect is cleared lets its
 * requests go by address to any peer port of L, not only to members.  So
 * direct mode requires every endpoint below L to be a member.  Translated
 * mode lets requests marked as translated (AT=10b) that enter a port with
 * DT go straight to a peer.  A function whose device-TLB the IOMMU enabled
 * may already send such requests to any host address, so DT trusts it no
 * more than enabling ATS did; but any other function below that port
 * (another tenant's, the host's, or a member whose ATS is off) could forge
 * them and would get past the IOMMU that refuses its translated requests
 * today.  So every endpoint below a port that gets DT must be a member with
 * ATS enabled, and a port with ACS Translation Blocking on would block the
 * very requests DT is for: translated mode refuses it.
 */
#include "plan.h"

#define MAX_DEPTH 32

u16 kvmai_plan_acs_want(u16 saved, enum kvmai_mode mode)
{
	if (mode == KVMAI_MODE_DIRECT)
		return saved & ~KVMAI_ACS_REDIR;
	return saved | PCI_ACS_DT;
}

/* Nodes from @i up to its host bridge; returns the count. */
static int chain(const struct kvmai_node *nodes, int n, int i, int *out)
{
	int len = 0;

	while (i >= 0 && i < n && len < MAX_DEPTH) {
		out[len++] = i;
		i = nodes[i].parent;
	}
	return len;
}

static bool below(const struct kvmai_node *nodes, int n, int dev, int port)
{
	int up[MAX_DEPTH], len = chain(nodes, n, dev, up);

	for (int i = 1; i < len; i++)
		if (up[i] == port)
			return true;
	return false;
}

static int fail(struct kvmai_plan *plan, enum kvmai_plan_err err, int port, int dev)
{
	plan->err = err;
	plan->err_port = port;
	plan->err_dev = dev;
	return -1;
}

/* Add @port to the plan once; false when the plan is full. */
static bool add_port(const struct kvmai_node *nodes, struct kvmai_plan *plan,
		     int port, enum kvmai_mode mode)
{
	for (int i = 0; i < plan->nports; i++)
		if (plan->ports[i].node == port)
			return true;
	if (plan->nports == KVMAI_PLAN_MAX_PORTS)
		return false;
	plan->ports[plan->nports].node = port;
	plan->ports[plan->nports].want = kvmai_plan_acs_want(nodes[port].acs_ctl, mode);
	plan->nports++;
	return true;
}

/*
 * Where the traffic between @a and @b turns around, and the child of that
 * point on each side (the ports to program).
 */
static void classify(const struct kvmai_node *nodes, int n, int a, int b,
		     struct kvmai_plan_pair *pair, int *port_a, int *port_b)
{
	int ua[MAX_DEPTH], ub[MAX_DEPTH];
	int la = chain(nodes, n, a, ua), lb = chain(nodes, n, b, ub);
	int lca;

	pair->a = a;
	pair->b = b;
	pair->via = -1;
	pair->type = KVMAI_PATH_TYPE_NONE;
	*port_a = *port_b = -1;

	/* Different host bridges, or a chain too short to hold a port. */
	if (la < 2 || lb < 2 || ua[la - 1] != ub[lb - 1])
		return;
	/* Walk down from the host bridge while the chains agree. */
	while (la > 2 && lb > 2 && ua[la - 2] == ub[lb - 2]) {
		la--;
		lb--;
	}
	lca = ua[la - 1];
	pair->via = lca;
	*port_a = ua[la - 2];
	*port_b = ub[lb - 2];

	switch (nodes[lca].type) {
	case KVMAI_NODE_HOST_BRIDGE:
		pair->type = KVMAI_PATH_TYPE_HOST_BRIDGE;
		break;
	case KVMAI_NODE_SWITCH_UP:
		pair->type = KVMAI_PATH_TYPE_SWITCH;
		break;
	default:
		/* Functions on one port's bus: the device routes it internally. */
		pair->type = KVMAI_PATH_TYPE_DEVICE;
		*port_a = *port_b = -1;
		break;
	}
}

/*
 * Every endpoint below @port must be a member (direct mode: @port is the
 * turning point), and with @need_ats have ATS enabled (translated mode:
 * @port gets DT).
 */
static int check_below(const struct kvmai_node *nodes, int n, int port, bool need_ats,
		       struct kvmai_plan *plan)
{
	for (int i = 0; i < n; i++) {
		if (nodes[i].type != KVMAI_NODE_ENDPOINT || !below(nodes, n, i, port))
			continue;
		if (!nodes[i].member)
			return fail(plan, KVMAI_PLAN_FOREIGN, port, i);
		if (need_ats && !nodes[i].ats)
			return fail(plan, KVMAI_PLAN_NO_ATS, port, i);
	}
	return 0;
}

int kvmai_plan(const struct kvmai_node *nodes, int n, enum kvmai_mode mode,
	       struct kvmai_plan *plan)
{
	plan->nports = 0;
	plan->npairs = 0;
	plan->err = KVMAI_PLAN_OK;
	plan->err_port = -1;
	plan->err_dev = -1;

	for (int a = 0; a < n; a++) {
		if (!nodes[a].member)
			continue;
		for (int b = a + 1; b < n; b++) {
			struct kvmai_plan_pair *pair;
			int ends[2];

			if (!nodes[b].member)
				continue;
			if (plan->npairs == KVMAI_PLAN_MAX_PAIRS)
				return fail(plan, KVMAI_PLAN_TOO_BIG, -1, -1);
			pair = &plan->pairs[plan->npairs++];
			classify(nodes, n, a, b, pair, &ends[0], &ends[1]);

			for (int e = 0; e < 2; e++) {
				int port = ends[e];

				/* No ACS: nothing redirects, nothing to change. */
				if (port < 0 || !nodes[port].has_acs)
					continue;
				if (mode == KVMAI_MODE_TRANSLATED &&
				    !(nodes[port].acs_cap & PCI_ACS_DT))
					return fail(plan, KVMAI_PLAN_NO_DT, port, -1);
				if (mode == KVMAI_MODE_TRANSLATED &&
				    (nodes[port].acs_ctl & PCI_ACS_TB))
					return fail(plan, KVMAI_PLAN_TB, port, -1);
				if (mode == KVMAI_MODE_TRANSLATED &&
				    check_below(nodes, n, port, true, plan))
					return -1;
				if (mode == KVMAI_MODE_DIRECT &&
				    check_below(nodes, n, pair->via, false, plan))
					return -1;
				if (!add_port(nodes, plan, port, mode))
					return fail(plan, KVMAI_PLAN_TOO_BIG, port, -1);
			}
		}
	}
	return 0;
}
