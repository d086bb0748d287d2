/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * P2P path planning: which ports a group must program, and how.
 *
 * A pure function over a topology description, so that the same source is
 * built into the module and into userspace unit tests that feed it
 * topologies QEMU cannot build (switch hierarchies with ACS on downstream
 * ports, multi-function endpoints, ports without ACS).
 */
#ifndef _KVMAI_PLAN_H
#define _KVMAI_PLAN_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <uapi/linux/pci_regs.h>
#else
#include <stdbool.h>
#include <linux/pci_regs.h>
#include <linux/types.h>
typedef __u16 u16;
typedef __u8 u8;
#endif

#include <uapi/linux/kvmai.h>

/* The ACS control bits kvmai ever changes. */
#define KVMAI_ACS_REDIR (PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_EC)

enum kvmai_node_type {
	KVMAI_NODE_HOST_BRIDGE,	/* a root bus: no config space of its own */
	KVMAI_NODE_ROOT_PORT,
	KVMAI_NODE_SWITCH_UP,
	KVMAI_NODE_SWITCH_DOWN,
	KVMAI_NODE_BRIDGE,	/* PCIe-to-PCI and other bridges: no ACS routing */
	KVMAI_NODE_ENDPOINT,
};

/*
 * One PCI function or host bridge.  @parent is the index of the node whose
 * secondary bus it sits on (-1 for a host bridge).  @acs_ctl is the word to
 * plan from: the port's control as it was before kvmai touched it.
 */
struct kvmai_node {
	int parent;
	u8 type;
	bool member;
	bool ats;	/* an endpoint whose ATS is enabled */
	bool has_acs;
	u16 acs_cap;
	u16 acs_ctl;
};

/* The largest group, and room for all of its pairs and their two ports. */
#define KVMAI_PLAN_MAX_MEMBERS 16
#define KVMAI_PLAN_MAX_PAIRS (KVMAI_PLAN_MAX_MEMBERS * (KVMAI_PLAN_MAX_MEMBERS - 1) / 2)
#define KVMAI_PLAN_MAX_PORTS (2 * KVMAI_PLAN_MAX_PAIRS)

enum kvmai_plan_err {
	KVMAI_PLAN_OK,
	KVMAI_PLAN_TOO_BIG,		/* more ports or pairs than a plan holds */
	KVMAI_PLAN_NO_DT,		/* @port lacks ACS direct translated P2P */
	KVMAI_PLAN_FOREIGN,		/* @dev below @port is no member */
	KVMAI_PLAN_NO_ATS,		/* member @dev below DT port @port lacks ATS */
	KVMAI_PLAN_TB,			/* @port blocks translated requests (ACS TB) */
};

struct kvmai_plan_port {
	int node;
	u16 want;	/* ACS control the port must get */
};

struct kvmai_plan_pair {
	int a, b;	/* member nodes */
	int via;	/* node where the traffic turns around, -1 for none */
	u8 type;	/* enum kvmai_path_type */
};

struct kvmai_plan {
	int nports;
	struct kvmai_plan_port ports[KVMAI_PLAN_MAX_PORTS];
	int npairs;
	struct kvmai_plan_pair pairs[KVMAI_PLAN_MAX_PAIRS];
	enum kvmai_plan_err err;
	int err_port;	/* node of the offending port, -1 if none */
	int err_dev;	/* node of the offending device, -1 if none */
};

/* ACS control a port needs in @mode, starting from its saved word. */
u16 kvmai_plan_acs_want(u16 saved, enum kvmai_mode mode);

/*
 * Plan @mode for the members of @nodes (those with .member set).  @nodes
 * must hold every function below the bridges where members' traffic turns
 * around: in direct mode each must be a member, in translated mode each
 * below a port that gets DT must be a member with ATS enabled.
 * Returns 0, or -1 with @plan->err set.
 */
int kvmai_plan(const struct kvmai_node *nodes, int n, enum kvmai_mode mode,
	       struct kvmai_plan *plan);

#endif /* _KVMAI_PLAN_H */
