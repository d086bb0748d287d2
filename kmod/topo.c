// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the live PCI topology around a group, as input for the planner:
 * every function below each host bridge that holds a member, so that the
 * planner sees every endpoint below the ports it would open.
 *
 * "Below" follows bus numbers, not the bridges' device lists: SR-IOV VFs
 * beyond the PF's bus sit on a virtual bus that no bridge leads to and
 * that pci_walk_bus() never visits, but whose number lies in the range of
 * the port above the PF.  So every PCI device is looked at (the driver
 * core's device list, without pci_bus_sem: no PCI topology lock is taken
 * under kvmai_lock, see the lock order in kvmai.h), and its parent is the
 * bridge of the nearest bus above it that has one.
 */
#include <linux/pci.h>
#include <linux/slab.h>

#include "kvmai.h"
#include "acs.h"
#include "ats.h"
#include "topo.h"

/* Far more than an 8-GPU host has below its host bridges. */
#define KVMAI_TOPO_MAX 512

static u8 kvmai_node_type(struct pci_dev *pdev)
{
	if (pci_is_pcie(pdev)) {
		switch (pci_pcie_type(pdev)) {
		case PCI_EXP_TYPE_ROOT_PORT:
			return KVMAI_NODE_ROOT_PORT;
		case PCI_EXP_TYPE_UPSTREAM:
			return KVMAI_NODE_SWITCH_UP;
		case PCI_EXP_TYPE_DOWNSTREAM:
			return KVMAI_NODE_SWITCH_DOWN;
		}
	}
	return pdev->subordinate ? KVMAI_NODE_BRIDGE : KVMAI_NODE_ENDPOINT;
}

static int kvmai_topo_index(const struct kvmai_topo *topo, struct pci_dev *pdev)
{
	for (int i = topo->n - 1; i >= 0; i--)
		if (topo->pdevs[i] == pdev)
			return i;
	return -1;
}

static int kvmai_topo_root_index(const struct kvmai_topo *topo, struct pci_bus *bus)
{
	for (int i = 0; i < topo->n; i++)
		if (!topo->pdevs[i] && topo->buses[i] == bus)
			return i;
	return -1;
}

static struct pci_bus *kvmai_root_bus(struct pci_bus *bus)
{
	while (!pci_is_root_bus(bus))
		bus = bus->parent;
	return bus;
}

/* The bridge whose bus range holds @bus, NULL for a root bus. */
static struct pci_dev *kvmai_bus_bridge(struct pci_bus *bus)
{
	while (!bus->self && !pci_is_root_bus(bus))
		bus = bus->parent;
	return bus->self;
}

static bool kvmai_topo_member(struct pci_dev *const *members, unsigned int nmembers,
			      struct pci_dev *pdev)
{
	for (unsigned int i = 0; i < nmembers; i++)
		if (members[i] == pdev)
			return true;
	return false;
}

/* Every function below host bridge @root (node @hb), parents first. */
static int kvmai_topo_add_root(struct kvmai_topo *topo, struct pci_dev *const *members,
			       unsigned int nmembers, int hb)
{
	struct pci_bus *root = topo->buses[hb];
	struct pci_dev *pdev = NULL, *bridge;
	int first = topo->n, i;

	for_each_pci_dev(pdev) {
		if (kvmai_root_bus(pdev->bus) != root)
			continue;
		if (topo->n == KVMAI_TOPO_MAX) {
			pci_dev_put(pdev);
			return -E2BIG;
		}
		topo->pdevs[topo->n] = pci_dev_get(pdev);
		topo->buses[topo->n] = pdev->bus;
		topo->n++;
	}
	/* Parents by lookup once all are in: hot-added bridges come late. */
	for (i = first; i < topo->n; i++) {
		struct kvmai_node *node = &topo->nodes[i];
		struct kvmai_port *port;

		pdev = topo->pdevs[i];
		bridge = kvmai_bus_bridge(pdev->bus);
		node->parent = bridge ? kvmai_topo_index(topo, bridge) : hb;
		node->type = kvmai_node_type(pdev);
		node->member = kvmai_topo_member(members, nmembers, pdev);
		node->ats = kvmai_ats_on(pdev);
		node->has_acs = pdev->acs_cap && node->type != KVMAI_NODE_ENDPOINT;
		if (!node->has_acs)
			continue;
		pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CAP, &node->acs_cap);
		/* Plan from what the port had before kvmai, if kvmai changed it. */
		port = kvmai_port_find(pdev);
		node->acs_ctl = port ? port->saved : kvmai_port_read(pdev);
	}
	return 0;
}

/*
 * The topology around @members: every function below the host bridges
 * that hold one of them, each marked as member or not.
 */
int kvmai_topo_build(struct pci_dev *const *members, unsigned int nmembers,
		     struct kvmai_topo *topo)
{
	int ret = 0;

	lockdep_assert_held(&kvmai_lock);
	topo->n = 0;
	topo->nodes = kcalloc(KVMAI_TOPO_MAX, sizeof(*topo->nodes), GFP_KERNEL);
	topo->pdevs = kcalloc(KVMAI_TOPO_MAX, sizeof(*topo->pdevs), GFP_KERNEL);
	topo->buses = kcalloc(KVMAI_TOPO_MAX, sizeof(*topo->buses), GFP_KERNEL);
	if (!topo->nodes || !topo->pdevs || !topo->buses) {
		kvmai_topo_free(topo);
		return -ENOMEM;
	}

	for (unsigned int i = 0; i < nmembers; i++) {
		struct pci_bus *root = kvmai_root_bus(members[i]->bus);

		if (kvmai_topo_root_index(topo, root) >= 0)
			continue;
		if (topo->n == KVMAI_TOPO_MAX) {
			ret = -E2BIG;
			break;
		}
		/* The host bridge itself: a node without config space. */
		topo->nodes[topo->n] = (struct kvmai_node){ .parent = -1,
							    .type = KVMAI_NODE_HOST_BRIDGE };
		topo->buses[topo->n] = root;
		ret = kvmai_topo_add_root(topo, members, nmembers, topo->n++);
		if (ret)
			break;
	}
	if (ret)
		kvmai_topo_free(topo);
	return ret;
}

void kvmai_topo_free(struct kvmai_topo *topo)
{
	for (int i = 0; topo->pdevs && i < topo->n; i++)
		pci_dev_put(topo->pdevs[i]);
	kfree(topo->nodes);
	kfree(topo->pdevs);
	kfree(topo->buses);
	topo->nodes = NULL;
	topo->pdevs = NULL;
	topo->buses = NULL;
	topo->n = 0;
}

const char *kvmai_topo_name(const struct kvmai_topo *topo, int i, char *buf, size_t len)
{
	if (i < 0 || i >= topo->n)
		snprintf(buf, len, "none");
	else if (topo->pdevs[i])
		snprintf(buf, len, "%s", pci_name(topo->pdevs[i]));
	else
		snprintf(buf, len, "pci%04x:%02x", pci_domain_nr(topo->buses[i]),
			 topo->buses[i]->number);
	return buf;
}
