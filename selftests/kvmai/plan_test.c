// SPDX-License-Identifier: GPL-2.0-only
/*
 * The P2P planner (kmod/plan.c, built here from the same source) on
 * topologies QEMU cannot build: two levels of switches with ACS on their
 * downstream ports, multi-function endpoints, ports without ACS or without
 * direct translated P2P, several host bridges.  Runs on the build host.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "../../kmod/plan.c"

#define ACS_ALL (PCI_ACS_SV | PCI_ACS_TB | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF | \
		 PCI_ACS_EC | PCI_ACS_DT)
#define ACS_LINUX (PCI_ACS_SV | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF)

/*
 * Stack garbage must not decide anything: tests declare their topology on
 * the stack, so poison what the planner should never read.
 */

/* Tiny topology builder: nodes appended in order, parents by index. */
struct topo {
	int n;
	struct kvmai_node nodes[64];
	struct kvmai_plan plan;
};

static void poison(struct topo *t)
{
	memset(t, 0xa5, sizeof(*t));
	t->n = 0;
}

static int add(struct topo *t, int parent, enum kvmai_node_type type, bool acs)
{
	struct kvmai_node *node = &t->nodes[t->n];

	*node = (struct kvmai_node){ .parent = parent, .type = type };
	if (acs && type != KVMAI_NODE_ENDPOINT && type != KVMAI_NODE_HOST_BRIDGE) {
		node->has_acs = true;
		node->acs_cap = ACS_ALL;
		node->acs_ctl = ACS_LINUX;
	}
	return t->n++;
}

/* A switch below @parent with @ports ACS downstream ports; returns the USP. */
static int add_switch(struct topo *t, int parent, int ports, bool acs, int *dsp)
{
	int usp = add(t, parent, KVMAI_NODE_SWITCH_UP, false);

	for (int i = 0; i < ports; i++)
		dsp[i] = add(t, usp, KVMAI_NODE_SWITCH_DOWN, acs);
	return usp;
}

/* An endpoint with ATS enabled, as GPUs and RDMA NICs have it under an IOMMU. */
static int ep(struct topo *t, int parent, bool member)
{
	int i = add(t, parent, KVMAI_NODE_ENDPOINT, false);

	t->nodes[i].member = member;
	t->nodes[i].ats = true;
	return i;
}

static bool planned(const struct topo *t, int node, u16 *want)
{
	for (int i = 0; i < t->plan.nports; i++)
		if (t->plan.ports[i].node == node) {
			*want = t->plan.ports[i].want;
			return true;
		}
	return false;
}

/*
 * HGX-like: host bridge -> root port -> level-1 switch (2 DSPs) -> two
 * level-2 switches (4 DSPs each) -> GPUs and NICs.
 */
FIXTURE(hgx) {
	struct topo t;
	int hb, rp, l1[2], l2a[4], l2b[4];
	int gpu0, nic0, gpu1, gpu2, nic1, nvme;
};

FIXTURE_SETUP(hgx)
{
	struct topo *t = &self->t;

	memset(t, 0xa5, sizeof(*t));
	t->n = 0;
	self->hb = add(t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	self->rp = add(t, self->hb, KVMAI_NODE_ROOT_PORT, true);
	add_switch(t, self->rp, 2, true, self->l1);
	add_switch(t, self->l1[0], 4, true, self->l2a);
	add_switch(t, self->l1[1], 4, true, self->l2b);
	self->gpu0 = ep(t, self->l2a[0], false);
	self->nic0 = ep(t, self->l2a[1], false);
	self->gpu1 = ep(t, self->l2a[2], false);
	self->nvme = ep(t, self->l2a[3], false);
	self->gpu2 = ep(t, self->l2b[0], false);
	self->nic1 = ep(t, self->l2b[1], false);
}

FIXTURE_TEARDOWN(hgx)
{
}

TEST_F(hgx, same_switch_programs_its_two_downstream_ports)
{
	struct topo *t = &self->t;
	u16 want;

	t->nodes[self->gpu0].member = t->nodes[self->nic0].member = true;
	ASSERT_EQ(0, kvmai_plan(t->nodes, t->n, KVMAI_MODE_TRANSLATED, &t->plan));
	ASSERT_EQ(2, t->plan.nports);
	ASSERT_TRUE(planned(t, self->l2a[0], &want));
	EXPECT_EQ(ACS_LINUX | PCI_ACS_DT, want);
	EXPECT_TRUE(planned(t, self->l2a[1], &want));
	EXPECT_FALSE(planned(t, self->l1[0], &want));
	EXPECT_FALSE(planned(t, self->rp, &want));
	ASSERT_EQ(1, t->plan.npairs);
	EXPECT_EQ(KVMAI_PATH_TYPE_SWITCH, t->plan.pairs[0].type);
}

/*
 * DT on a level-1 port lets every function below it send translated
 * requests to the other side: with the other endpoints of that subtree
 * outside the VM, translated mode must refuse, naming the first of them.
 */
TEST_F(hgx, translated_refused_for_foreign_endpoint_below_dt_port)
{
	struct topo *t = &self->t;

	t->nodes[self->gpu0].member = t->nodes[self->gpu2].member = true;
	ASSERT_EQ(-1, kvmai_plan(t->nodes, t->n, KVMAI_MODE_TRANSLATED, &t->plan));
	EXPECT_EQ(KVMAI_PLAN_FOREIGN, t->plan.err);
	EXPECT_EQ(self->l1[0], t->plan.err_port);
	EXPECT_EQ(self->nic0, t->plan.err_dev);
}

TEST_F(hgx, across_level2_switches_programs_level1_ports_only)
{
	struct topo *t = &self->t;
	u16 want;

	/* The whole HGX board in the VM: every endpoint below is a member. */
	t->nodes[self->gpu0].member = t->nodes[self->gpu2].member = true;
	t->nodes[self->nic0].member = t->nodes[self->gpu1].member = true;
	t->nodes[self->nvme].member = t->nodes[self->nic1].member = true;
	ASSERT_EQ(0, kvmai_plan(t->nodes, t->n, KVMAI_MODE_TRANSLATED, &t->plan));
	EXPECT_TRUE(planned(t, self->l1[0], &want));
	EXPECT_TRUE(planned(t, self->l1[1], &want));
	/* Only the children of turning points: never the root port above. */
	EXPECT_FALSE(planned(t, self->rp, &want));
}

/*
 * A member whose ATS is off below a DT port could forge translated
 * requests that the IOMMU refuses today: refused, naming it.
 */
TEST_F(hgx, translated_refused_for_member_without_ats)
{
	struct topo *t = &self->t;

	t->nodes[self->gpu0].member = t->nodes[self->nic0].member = true;
	t->nodes[self->nic0].ats = false;
	ASSERT_EQ(-1, kvmai_plan(t->nodes, t->n, KVMAI_MODE_TRANSLATED, &t->plan));
	EXPECT_EQ(KVMAI_PLAN_NO_ATS, t->plan.err);
	EXPECT_EQ(self->nic0, t->plan.err_dev);
	EXPECT_EQ(self->l2a[1], t->plan.err_port);
	/* Direct mode does not depend on ATS (it needs the whole switch). */
	t->nodes[self->gpu1].member = t->nodes[self->nvme].member = true;
	EXPECT_EQ(0, kvmai_plan(t->nodes, t->n, KVMAI_MODE_DIRECT, &t->plan));
}

/* Translation Blocking on a port stops what DT would let through. */
TEST_F(hgx, translated_refused_on_port_with_translation_blocking)
{
	struct topo *t = &self->t;

	t->nodes[self->gpu0].member = t->nodes[self->nic0].member = true;
	t->nodes[self->l2a[1]].acs_ctl |= PCI_ACS_TB;
	ASSERT_EQ(-1, kvmai_plan(t->nodes, t->n, KVMAI_MODE_TRANSLATED, &t->plan));
	EXPECT_EQ(KVMAI_PLAN_TB, t->plan.err);
	EXPECT_EQ(self->l2a[1], t->plan.err_port);
}

TEST_F(hgx, direct_refused_for_foreign_endpoint_below_turning_point)
{
	struct topo *t = &self->t;

	t->nodes[self->gpu0].member = t->nodes[self->nic0].member = true;
	t->nodes[self->gpu1].member = true;
	ASSERT_EQ(-1, kvmai_plan(t->nodes, t->n, KVMAI_MODE_DIRECT, &t->plan));
	EXPECT_EQ(KVMAI_PLAN_FOREIGN, t->plan.err);
	EXPECT_EQ(self->nvme, t->plan.err_dev);

	/* With the NVMe in the VM too, every endpoint below is a member. */
	t->nodes[self->nvme].member = true;
	ASSERT_EQ(0, kvmai_plan(t->nodes, t->n, KVMAI_MODE_DIRECT, &t->plan));
	EXPECT_EQ(4, t->plan.nports);
	for (int i = 0; i < t->plan.nports; i++)
		EXPECT_EQ(PCI_ACS_SV | PCI_ACS_UF, t->plan.ports[i].want);
}

TEST_F(hgx, direct_across_level1_needs_both_subtrees)
{
	struct topo *t = &self->t;

	t->nodes[self->gpu0].member = t->nodes[self->gpu2].member = true;
	ASSERT_EQ(-1, kvmai_plan(t->nodes, t->n, KVMAI_MODE_DIRECT, &t->plan));
	EXPECT_EQ(KVMAI_PLAN_FOREIGN, t->plan.err);
	EXPECT_EQ(self->l1[0] - 1, t->plan.err_port);	/* the level-1 USP */
}

TEST_F(hgx, shared_port_wants_the_same_word_from_saved)
{
	struct topo *t = &self->t;

	/* A port already programmed plans from its saved word, not from DT. */
	t->nodes[self->l2a[0]].acs_ctl = ACS_LINUX;
	EXPECT_EQ(ACS_LINUX | PCI_ACS_DT, kvmai_plan_acs_want(ACS_LINUX, KVMAI_MODE_TRANSLATED));
	EXPECT_EQ(PCI_ACS_SV | PCI_ACS_UF, kvmai_plan_acs_want(ACS_LINUX, KVMAI_MODE_DIRECT));
	EXPECT_EQ(PCI_ACS_SV | PCI_ACS_TB | PCI_ACS_UF | PCI_ACS_DT,
		  kvmai_plan_acs_want(ACS_ALL, KVMAI_MODE_DIRECT));
}

TEST(multifunction_endpoints_route_inside_the_device)
{
	struct topo t;

	poison(&t);
	int hb = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int rp = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);
	int f0 = ep(&t, rp, true), f1 = ep(&t, rp, true);

	ASSERT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_DIRECT, &t.plan));
	EXPECT_EQ(0, t.plan.nports);
	ASSERT_EQ(1, t.plan.npairs);
	EXPECT_EQ(KVMAI_PATH_TYPE_DEVICE, t.plan.pairs[0].type);
	EXPECT_EQ(f0, t.plan.pairs[0].a);
	EXPECT_EQ(f1, t.plan.pairs[0].b);
}

TEST(ports_without_acs_need_nothing)
{
	struct topo t;

	poison(&t);
	int dsp[3];
	int hb = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int rp = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);

	add_switch(&t, rp, 3, false, dsp);
	ep(&t, dsp[0], true);
	ep(&t, dsp[1], true);
	ep(&t, dsp[2], false);		/* foreign, but nothing gets opened */
	ASSERT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_DIRECT, &t.plan));
	EXPECT_EQ(0, t.plan.nports);
	EXPECT_EQ(KVMAI_PATH_TYPE_SWITCH, t.plan.pairs[0].type);
}

TEST(translated_needs_dt_in_the_capability)
{
	struct topo t;

	poison(&t);
	int dsp[2];
	int hb = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int rp = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);

	add_switch(&t, rp, 2, true, dsp);
	t.nodes[dsp[1]].acs_cap &= ~PCI_ACS_DT;
	ep(&t, dsp[0], true);
	ep(&t, dsp[1], true);
	ASSERT_EQ(-1, kvmai_plan(t.nodes, t.n, KVMAI_MODE_TRANSLATED, &t.plan));
	EXPECT_EQ(KVMAI_PLAN_NO_DT, t.plan.err);
	EXPECT_EQ(dsp[1], t.plan.err_port);
	/* Direct mode does not need DT. */
	EXPECT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_DIRECT, &t.plan));
}

TEST(root_ports_of_one_host_bridge)
{
	struct topo t;

	poison(&t);
	int hb = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int rp0 = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);
	int rp1 = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);
	u16 want;

	ep(&t, rp0, true);
	ep(&t, rp1, true);
	ASSERT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_TRANSLATED, &t.plan));
	EXPECT_EQ(KVMAI_PATH_TYPE_HOST_BRIDGE, t.plan.pairs[0].type);
	EXPECT_EQ(hb, t.plan.pairs[0].via);
	EXPECT_TRUE(planned(&t, rp0, &want));
	EXPECT_TRUE(planned(&t, rp1, &want));
}

TEST(different_host_bridges_share_nothing)
{
	struct topo t;

	poison(&t);
	int hb0 = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int hb1 = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);

	ep(&t, add(&t, hb0, KVMAI_NODE_ROOT_PORT, true), true);
	ep(&t, add(&t, hb1, KVMAI_NODE_ROOT_PORT, true), true);
	ASSERT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_DIRECT, &t.plan));
	EXPECT_EQ(0, t.plan.nports);
	EXPECT_EQ(KVMAI_PATH_TYPE_NONE, t.plan.pairs[0].type);
	EXPECT_EQ(-1, t.plan.pairs[0].via);
}

TEST(too_many_pairs_is_an_error_not_an_overflow)
{
	struct topo t;

	poison(&t);
	int dsp[17];
	int hb = add(&t, -1, KVMAI_NODE_HOST_BRIDGE, false);
	int rp = add(&t, hb, KVMAI_NODE_ROOT_PORT, true);

	add_switch(&t, rp, 17, true, dsp);
	for (int i = 0; i < 16; i++)
		ep(&t, dsp[i], true);	/* the largest group: 120 pairs */
	ASSERT_EQ(0, kvmai_plan(t.nodes, t.n, KVMAI_MODE_TRANSLATED, &t.plan));
	EXPECT_EQ(120, t.plan.npairs);
	EXPECT_EQ(16, t.plan.nports);
	ep(&t, dsp[16], true);		/* one more: 136 pairs */
	ASSERT_EQ(-1, kvmai_plan(t.nodes, t.n, KVMAI_MODE_TRANSLATED, &t.plan));
	EXPECT_EQ(KVMAI_PLAN_TOO_BIG, t.plan.err);
	EXPECT_LE(t.plan.npairs, KVMAI_PLAN_MAX_PAIRS);
}

TEST_HARNESS_MAIN
