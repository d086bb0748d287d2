// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - P2P groups: members, enabling (plan, check, program), the ATS
 * watch and every way a group ends.  Each function here runs under
 * kvmai_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netlink.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#ifdef KVMAI_HAVE_VFIO_NOTIFY
#include <linux/vfio_pci_core.h>
#endif

#include "kvmai.h"
#include "acs.h"
#include "ats.h"
#include "counters.h"
#include "group.h"
#include "netlink.h"
#include "topo.h"

static DEFINE_XARRAY_ALLOC1(kvmai_groups);
/* Set at module unload: no group may be created after the final sweep. */
static bool kvmai_closing;

/*
 * The ATS watch.  A translated-mode group sets DT on ports, safe only while
 * every member below them has ATS enabled (ats.c); ATS can go off while
 * the group is enabled and the kernel says nothing when it does, so while
 * a translated group is enabled a work item plans it again each
 * KVMAI_ATS_WATCH_MS (kvmai_groups_check_ats()) and disables it as soon as
 * one member has ATS off.
 */
#define KVMAI_ATS_WATCH_MS 100

static void kvmai_ats_watch(struct work_struct *work);
static DECLARE_DELAYED_WORK(kvmai_ats_work, kvmai_ats_watch);

/* A translated group was enabled: watch until none is. */
static void kvmai_ats_watch_start(void)
{
	schedule_delayed_work(&kvmai_ats_work, msecs_to_jiffies(KVMAI_ATS_WATCH_MS));
}

struct kvmai_group *kvmai_group_find(const char *name)
{
	struct kvmai_group *grp;
	unsigned long id;

	lockdep_assert_held(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp)
		if (!strcmp(grp->name, name))
			return grp;
	return NULL;
}

struct kvmai_group *kvmai_group_next(unsigned long *index)
{
	lockdep_assert_held(&kvmai_lock);
	return xa_find(&kvmai_groups, index, ULONG_MAX, XA_PRESENT);
}

/* What a member is: the PCI function, or the mdev. */
static struct device *kvmai_member_dev(const struct kvmai_member *m)
{
	return m->mdev ?: &m->pdev->dev;
}

static struct kvmai_member *kvmai_group_member(struct kvmai_group *grp, struct device *dev)
{
	struct kvmai_member *m;

	list_for_each_entry(m, &grp->members, node)
		if (kvmai_member_dev(m) == dev)
			return m;
	return NULL;
}

/* @dev is a member, or the parent whose traffic an mdev member's is. */
static bool kvmai_member_uses(const struct kvmai_member *m, struct device *dev)
{
	return kvmai_member_dev(m) == dev || &m->pdev->dev == dev;
}

static bool kvmai_group_uses_dev(struct kvmai_group *grp, struct device *dev)
{
	struct kvmai_member *m;

	list_for_each_entry(m, &grp->members, node)
		if (kvmai_member_uses(m, dev))
			return true;
	return false;
}

/*
 * @dev is an mdev of the parent of one of @grp's mdev members: its traffic
 * goes where theirs does, with the parent's requester ID.
 */
static bool kvmai_group_shares_parent(struct kvmai_group *grp, struct device *dev)
{
	struct kvmai_member *m;

	if (!kvmai_is_mdev(dev))
		return false;
	list_for_each_entry(m, &grp->members, node)
		if (m->mdev && &m->pdev->dev == dev->parent)
			return true;
	return false;
}

struct device *kvmai_group_mdev_member(struct kvmai_group *grp, const char *uuid)
{
	struct kvmai_member *m;

	lockdep_assert_held(&kvmai_lock);
	list_for_each_entry(m, &grp->members, node)
		if (m->mdev && !strcmp(dev_name(m->mdev), uuid))
			return m->mdev;
	return NULL;
}

static bool kvmai_group_uses_port(struct kvmai_group *grp, struct pci_dev *pdev)
{
	for (unsigned int i = 0; i < grp->nports; i++)
		if (grp->ports[i]->pdev == pdev)
			return true;
	return false;
}

static struct kvmai_group *kvmai_group_of(struct device *dev)
{
	struct kvmai_group *grp;
	unsigned long id;

	xa_for_each(&kvmai_groups, id, grp)
		if (kvmai_group_member(grp, dev))
			return grp;
	return NULL;
}

/*
 * vfio-pci and the upstream vfio-pci variant drivers, by exact name: a
 * driver that merely ends in "vfio-pci" is not one of them.
 */
static const char *const kvmai_vfio_drivers[] = {
	"vfio-pci", "mlx5_vfio_pci", "nvgrace_gpu_vfio_pci", "hisi_acc_vfio_pci",
	"virtio_vfio_pci", "pds_vfio_pci", "qat_vfio_pci", "xe_vfio_pci", "ism_vfio_pci",
};

static bool kvmai_bound_to_vfio(struct pci_dev *pdev)
{
	/* Reads the driver pointer once, whatever binds or unbinds meanwhile. */
	return match_string(kvmai_vfio_drivers, ARRAY_SIZE(kvmai_vfio_drivers),
			    dev_driver_string(&pdev->dev)) >= 0;
}

/* An mdev on the bus and bound to its vendor driver, which makes it a VFIO device. */
static bool kvmai_mdev_bound(struct device *mdev)
{
	return device_is_registered(mdev) && READ_ONCE(mdev->driver);
}

struct kvmai_group *kvmai_group_new(const char *name, const char *vm,
				    enum kvmai_mode mode, struct netlink_ext_ack *extack)
{
	struct kvmai_group *grp;
	int ret;

	lockdep_assert_held(&kvmai_lock);
	if (kvmai_closing)
		return ERR_PTR(-ESHUTDOWN);
	if (kvmai_group_find(name)) {
		NL_SET_ERR_MSG_FMT(extack, "group %s already exists", name);
		return ERR_PTR(-EEXIST);
	}
	grp = kzalloc_obj(*grp);
	if (!grp)
		return ERR_PTR(-ENOMEM);
	strscpy(grp->name, name);
	strscpy(grp->vm, vm);
	grp->mode = mode;
	INIT_LIST_HEAD(&grp->members);
	/* Ids 1..KVMAI_MAX_GROUPS: the xarray itself enforces the cap. */
	ret = xa_alloc(&kvmai_groups, &grp->id, grp, XA_LIMIT(1, KVMAI_MAX_GROUPS), GFP_KERNEL);
	if (ret) {
		kfree(grp);
		if (ret == -EBUSY) {
			NL_SET_ERR_MSG_FMT(extack,
					   "group %s: %d groups exist, the most there can be",
					   name, KVMAI_MAX_GROUPS);
			ret = -ENOSPC;
		}
		return ERR_PTR(ret);
	}
	return grp;
}

static void kvmai_member_free(struct kvmai_group *grp, struct kvmai_member *m)
{
	list_del(&m->node);
	grp->nmembers--;
	put_device(m->mdev);
	pci_dev_put(m->pdev);
	kfree(m);
}

void kvmai_group_del(struct kvmai_group *grp)
{
	struct kvmai_member *m, *tmp;

	lockdep_assert_held(&kvmai_lock);
	kvmai_group_disable(grp);
	list_for_each_entry_safe(m, tmp, &grp->members, node)
		kvmai_member_free(grp, m);
	xa_erase(&kvmai_groups, grp->id);
	kfree(grp);
}

/*
 * The live PCI topology around @grp's members: each PCI function once, an
 * mdev's parent standing for the mdevs of it that are members.
 */
static int kvmai_group_topo(struct kvmai_group *grp, struct kvmai_topo *topo)
{
	struct pci_dev *members[KVMAI_PLAN_MAX_MEMBERS];
	struct kvmai_member *m;
	unsigned int n = 0, i;

	list_for_each_entry(m, &grp->members, node) {
		for (i = 0; i < n && members[i] != m->pdev; i++)
			;
		if (i == n)
			members[n++] = m->pdev;
	}
	return kvmai_topo_build(members, n, topo);
}

/* Record how members reach each other, from a plan over @topo. */
static void kvmai_group_set_pairs(struct kvmai_group *grp, const struct kvmai_topo *topo,
				  const struct kvmai_plan *plan)
{
	grp->npairs = plan->npairs;
	for (int i = 0; i < plan->npairs; i++) {
		const struct kvmai_plan_pair *p = &plan->pairs[i];
		struct kvmai_pair *out = &grp->pairs[i];

		kvmai_topo_name(topo, p->a, out->a, sizeof(out->a));
		kvmai_topo_name(topo, p->b, out->b, sizeof(out->b));
		kvmai_topo_name(topo, p->via, out->via, sizeof(out->via));
		out->type = p->type;
	}
}

/* Plan the group over the live topology; extack names what stands in the way. */
static int kvmai_group_plan(struct kvmai_group *grp, struct kvmai_topo *topo,
			    struct kvmai_plan *plan, struct netlink_ext_ack *extack)
{
	char port[KVMAI_PCI_NAME_LEN], dev[KVMAI_PCI_NAME_LEN];
	int ret;

	ret = kvmai_group_topo(grp, topo);
	if (ret) {
		NL_SET_ERR_MSG_FMT(extack, "group %s: cannot read the PCI topology (%d)",
				   grp->name, ret);
		return ret;
	}
	if (!kvmai_plan(topo->nodes, topo->n, grp->mode, plan)) {
		kvmai_group_set_pairs(grp, topo, plan);
		return 0;
	}

	kvmai_topo_name(topo, plan->err_port, port, sizeof(port));
	kvmai_topo_name(topo, plan->err_dev, dev, sizeof(dev));
	switch (plan->err) {
	case KVMAI_PLAN_NO_DT:
		NL_SET_ERR_MSG_FMT(extack,
				   "port %s has no ACS direct translated P2P: translated mode impossible",
				   port);
		ret = -EOPNOTSUPP;
		break;
	case KVMAI_PLAN_TB:
		NL_SET_ERR_MSG_FMT(extack,
				   "port %s has ACS translation blocking: translated mode impossible",
				   port);
		ret = -EOPNOTSUPP;
		break;
	case KVMAI_PLAN_FOREIGN:
		NL_SET_ERR_MSG_FMT(extack, "%s mode: %s below %s is not a member",
				   grp->mode == KVMAI_MODE_DIRECT ? "direct" : "translated",
				   dev, port);
		ret = -EPERM;
		break;
	case KVMAI_PLAN_NO_ATS:
		NL_SET_ERR_MSG_FMT(extack, "translated mode: member %s below %s has no ATS enabled",
				   dev, port);
		ret = -EPERM;
		break;
	default:
		NL_SET_ERR_MSG_FMT(extack, "group %s spans too many ports", grp->name);
		ret = -E2BIG;
		break;
	}
	kvmai_topo_free(topo);
	return ret;
}

/* Recompute the pairs after a membership change; planning errors wait for enable. */
static void kvmai_group_replan(struct kvmai_group *grp)
{
	struct kvmai_topo topo;
	struct kvmai_plan *plan;

	grp->npairs = 0;
	plan = kmalloc_obj(*plan);
	if (!plan)
		return;
	if (!kvmai_group_topo(grp, &topo)) {
		kvmai_plan(topo.nodes, topo.n, grp->mode, plan);
		kvmai_group_set_pairs(grp, &topo, plan);
		kvmai_topo_free(&topo);
	}
	kfree(plan);
}

bool kvmai_group_busy(struct kvmai_group *grp, struct netlink_ext_ack *extack)
{
	if (grp->enabled)
		NL_SET_ERR_MSG_FMT(extack, "group %s is enabled: disable it first", grp->name);
	return grp->enabled;
}

int kvmai_group_add_dev(struct kvmai_group *grp, struct pci_dev *pdev, struct device *mdev,
			struct netlink_ext_ack *extack)
{
	struct device *dev = mdev ?: &pdev->dev;
	struct kvmai_group *other;
	struct kvmai_member *m;

	lockdep_assert_held(&kvmai_lock);
	if (kvmai_group_busy(grp, extack))
		return -EBUSY;
	if (mdev && !kvmai_mdev_bound(mdev)) {
		NL_SET_ERR_MSG_FMT(extack, "mdev %s is bound to no driver", dev_name(mdev));
		return -EINVAL;
	}
	if (!mdev && pci_is_bridge(pdev)) {
		NL_SET_ERR_MSG_FMT(extack, "%s is a bridge or port, not an endpoint",
				   pci_name(pdev));
		return -EINVAL;
	}
	if (!mdev && !kvmai_bound_to_vfio(pdev)) {
		NL_SET_ERR_MSG_FMT(extack, "%s is bound to %s, not to vfio-pci", pci_name(pdev),
				   pdev->dev.driver ? dev_driver_string(&pdev->dev) : "no driver");
		return -EINVAL;
	}
	other = kvmai_group_of(dev);
	if (other == grp) {
		NL_SET_ERR_MSG_FMT(extack, "%s is already in group %s", dev_name(dev), grp->name);
		return -EEXIST;
	}
	if (other) {
		NL_SET_ERR_MSG_FMT(extack, "%s belongs to group %s", dev_name(dev), other->name);
		return -EBUSY;
	}
	if (grp->nmembers == KVMAI_PLAN_MAX_MEMBERS) {
		NL_SET_ERR_MSG_FMT(extack, "group %s is full (%d members)", grp->name,
				   KVMAI_PLAN_MAX_MEMBERS);
		return -ENOSPC;
	}

	m = kzalloc_obj(*m);
	if (!m)
		return -ENOMEM;
	m->pdev = pci_dev_get(pdev);
	m->mdev = get_device(mdev);
	list_add_tail(&m->node, &grp->members);
	grp->nmembers++;
	kvmai_group_replan(grp);
	return 0;
}

int kvmai_group_del_dev(struct kvmai_group *grp, struct pci_dev *pdev, struct device *mdev,
			struct netlink_ext_ack *extack)
{
	struct device *dev = mdev ?: &pdev->dev;
	struct kvmai_member *m;

	lockdep_assert_held(&kvmai_lock);
	if (kvmai_group_busy(grp, extack))
		return -EBUSY;
	m = kvmai_group_member(grp, dev);
	if (!m) {
		NL_SET_ERR_MSG_FMT(extack, "%s is not in group %s", dev_name(dev), grp->name);
		return -ENOENT;
	}
	kvmai_member_free(grp, m);
	kvmai_group_replan(grp);
	return 0;
}

#ifdef KVMAI_HAVE_VFIO_NOTIFY
/*
 * Who holds @pdev open: an opaque cookie (the KVM it was opened for, else
 * iommufd context or container), NULL if nobody.  @pdev must be bound to a
 * vfio-pci driver, checked under kvmai_lock: its unbind then waits for
 * kvmai_lock in the bus notifier, so the vfio_pci_core_device, which every
 * such driver keeps as its drvdata, stays valid while the caller holds the
 * lock.
 */
static const void *kvmai_vfio_user(struct pci_dev *pdev)
{
	struct vfio_pci_core_device *core = dev_get_drvdata(&pdev->dev);

	lockdep_assert_held(&kvmai_lock);
	return core ? vfio_device_user(&core->vdev) : NULL;
}

/* The vfio device of mdev @dev is its child of class "vfio-dev". */
static int kvmai_vfio_child_user(struct device *child, void *data)
{
	const void **user = data;

	if (!child->class || strcmp(child->class->name, "vfio-dev"))
		return 0;
	*user = vfio_device_user(container_of(child, struct vfio_device, device));
	return 1;
}

/*
 * Who holds mdev @dev open, as kvmai_vfio_user().  The walk holds a
 * reference to the child, which keeps its vfio_device.
 */
static const void *kvmai_mdev_user(struct device *dev)
{
	const void *user = NULL;

	device_for_each_child(dev, &user, kvmai_vfio_child_user);
	return user;
}

struct kvmai_users {
	const void *user;		/* the first user seen */
	struct device *first;		/* what it holds */
	struct device *other;		/* held by another user, if any */
};

/* False if @dev, held by @user, makes two users. */
static bool kvmai_users_add(struct kvmai_users *u, struct device *dev, const void *user)
{
	if (!user)
		return true;
	if (!u->user) {
		u->user = user;
		u->first = dev;
		return true;
	}
	if (user == u->user)
		return true;
	u->other = dev;
	return false;
}

static int kvmai_sibling_user(struct device *child, void *data)
{
	if (!kvmai_is_mdev(child))
		return 0;
	return kvmai_users_add(data, child, kvmai_mdev_user(child)) ? 0 : -EBUSY;
}
#endif

/*
 * One VM per group: the members that are open must all be held by one VFIO
 * user (the KVM they were opened for, else iommufd context or container).
 * Returns 0, or -EBUSY with extack naming two members held by different
 * users; without vfio's open notifications (kernels without the kvm-ai
 * series) kvmai cannot know who holds a member, and direct mode, which
 * lets members reach each other's BARs with no IOMMU check at all, is
 * refused.  Translated mode keeps the IOMMU in charge of every translation
 * and may stay.
 */
static int kvmai_group_one_user(struct kvmai_group *grp, struct netlink_ext_ack *extack)
{
#ifdef KVMAI_HAVE_VFIO_NOTIFY
	struct kvmai_users u = {};
	struct kvmai_member *m;
	const void *user;

	list_for_each_entry(m, &grp->members, node) {
		user = m->mdev ? kvmai_mdev_user(m->mdev) : kvmai_vfio_user(m->pdev);
		if (!kvmai_users_add(&u, kvmai_member_dev(m), user))
			goto two;
	}
	/*
	 * An mdev member's parent sends the traffic of all its mdevs: the
	 * others must be unopened, or held by the same user.
	 */
	list_for_each_entry(m, &grp->members, node)
		if (m->mdev && device_for_each_child(&m->pdev->dev, &u, kvmai_sibling_user))
			goto sibling;
	return 0;
	/* Within extack's 80 bytes: an mdev's UUID takes 36 of them. */
two:
	if (kvmai_is_mdev(u.other) || kvmai_is_mdev(u.first))
		NL_SET_ERR_MSG_FMT(extack, "%s is held by a second VFIO user",
				   dev_name(u.other));
	else
		NL_SET_ERR_MSG_FMT(extack, "%s and %s are held by different VFIO users",
				   dev_name(u.first), dev_name(u.other));
	return -EBUSY;
sibling:
	NL_SET_ERR_MSG_FMT(extack, "sibling mdev %s has a second VFIO user",
			   dev_name(u.other));
	return -EBUSY;
#else
	if (grp->mode != KVMAI_MODE_DIRECT)
		return 0;
	NL_SET_ERR_MSG(extack,
		       "direct mode: this kernel cannot tell kvmai who opens members (no vfio open notifications): refused");
	return -EOPNOTSUPP;
#endif
}

/* Warnings that do not stop enabling; extack carries the first one. */
static void kvmai_group_warn(struct kvmai_group *grp, struct netlink_ext_ack *extack)
{
	struct kvmai_member *m;

	for (unsigned int i = 0; i < grp->npairs; i++) {
		if (grp->pairs[i].type != KVMAI_PATH_TYPE_NONE)
			continue;
		NL_SET_ERR_MSG_FMT(extack, "%s and %s share no host bridge: P2P goes via the IOMMU",
				   grp->pairs[i].a, grp->pairs[i].b);
		return;
	}
	if (grp->mode != KVMAI_MODE_TRANSLATED)
		return;
	list_for_each_entry(m, &grp->members, node) {
		if (kvmai_ats_on(m->pdev))
			continue;
		NL_SET_ERR_MSG_FMT(extack,
				   "%s has no ATS enabled: its peer traffic still goes through the IOMMU",
				   pci_name(m->pdev));
		return;
	}
}

int kvmai_group_enable(struct kvmai_group *grp, struct netlink_ext_ack *extack)
{
	struct kvmai_member *m;
	struct kvmai_topo topo;
	struct kvmai_plan *plan;
	int i, ret;

	lockdep_assert_held(&kvmai_lock);
	if (grp->enabled)
		return 0;
	if (grp->nmembers < 2) {
		NL_SET_ERR_MSG_FMT(extack, "group %s needs at least two members", grp->name);
		return -EINVAL;
	}
	list_for_each_entry(m, &grp->members, node) {
		if (m->mdev ? kvmai_mdev_bound(m->mdev) : kvmai_bound_to_vfio(m->pdev))
			continue;
		NL_SET_ERR_MSG_FMT(extack, "member %s is no longer bound to %s",
				   dev_name(kvmai_member_dev(m)),
				   m->mdev ? "a driver" : "vfio-pci");
		return -EINVAL;
	}

	plan = kmalloc_obj(*plan);
	if (!plan)
		return -ENOMEM;
	ret = kvmai_group_plan(grp, &topo, plan, extack);
	if (ret)
		goto out_plan;
	ret = kvmai_group_one_user(grp, extack);
	if (ret)
		goto out_topo;

	/* Every check before the first write, so a refusal changes nothing. */
	for (i = 0; i < plan->nports; i++) {
		ret = kvmai_port_check(topo.pdevs[plan->ports[i].node], plan->ports[i].want,
				       extack);
		if (ret)
			goto out_topo;
	}
	for (i = 0; i < plan->nports; i++) {
		struct kvmai_port *port;

		port = kvmai_port_get(topo.pdevs[plan->ports[i].node], plan->ports[i].want,
				      grp->name, extack);
		if (IS_ERR(port)) {
			ret = PTR_ERR(port);
			while (i--)
				kvmai_port_put(grp->ports[i], grp->name);
			goto out_topo;
		}
		grp->ports[i] = port;
	}
	grp->nports = plan->nports;
	grp->enabled = true;
	if (grp->mode == KVMAI_MODE_TRANSLATED)
		kvmai_ats_watch_start();
	kvmai_group_warn(grp, extack);
out_topo:
	kvmai_topo_free(&topo);
out_plan:
	kfree(plan);
	return ret;
}

void kvmai_group_disable(struct kvmai_group *grp)
{
	lockdep_assert_held(&kvmai_lock);
	if (!grp->enabled)
		return;
	/* Reverse order: a port shared along the way is released last. */
	while (grp->nports)
		kvmai_port_put(grp->ports[--grp->nports], grp->name);
	grp->enabled = false;
}

void kvmai_groups_release_owner(struct net *net, u32 portid)
{
	struct kvmai_group *grp;
	unsigned long id;

	guard(mutex)(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp) {
		if (grp->owner_portid != portid || !net_eq(read_pnet(&grp->owner_net), net))
			continue;
		pr_info("group %s: owner socket closed, deleting\n", grp->name);
		kvmai_group_disable(grp);
		kvmai_group_delete_ntf(grp);
		kvmai_group_del(grp);
	}
}

/* Disable every enabled group @dev is a member (or an mdev member's parent) of. */
static void kvmai_groups_member_gone(struct device *dev, const char *why)
{
	struct kvmai_group *grp;
	unsigned long id;

	guard(mutex)(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp) {
		if (!grp->enabled || !kvmai_group_uses_dev(grp, dev))
			continue;
		dev_info(dev, "kvmai: %s, disabling group %s\n", why, grp->name);
		kvmai_group_disable(grp);
		kvmai_group_change_ntf(grp);
	}
}

/*
 * A device is leaving its driver: a member leaving vfio-pci (or an mdev its
 * vendor driver, or an mdev's parent its own) ends P2P.
 */
void kvmai_groups_device_unbind(struct device *dev)
{
	kvmai_groups_member_gone(dev, "left its driver");
}

/* The VMM closed a member: the VM no longer uses it. */
void kvmai_groups_device_closed(struct device *dev)
{
	kvmai_groups_member_gone(dev, "closed by its user");
}

/*
 * A user opened a member, or another mdev of an mdev member's parent,
 * before the open returns to it: if another user holds other members of
 * its enabled group, two VMs would share the relaxed ports, so the group
 * closes first.
 */
void kvmai_groups_device_opened(struct device *dev)
{
	struct kvmai_group *grp;
	unsigned long id;

	guard(mutex)(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp) {
		if (!grp->enabled ||
		    (!kvmai_group_member(grp, dev) && !kvmai_group_shares_parent(grp, dev)) ||
		    !kvmai_group_one_user(grp, NULL))
			continue;
		dev_info(dev, "kvmai: opened by a second VFIO user, disabling group %s\n",
			 grp->name);
		kvmai_group_disable(grp);
		kvmai_group_change_ntf(grp);
	}
}

/* Re-plan an enabled group over today's topology: does its plan still hold? */
static bool kvmai_group_holds(struct kvmai_group *grp, struct kvmai_plan *plan)
{
	struct kvmai_topo topo;

	if (kvmai_group_plan(grp, &topo, plan, NULL))
		return false;
	kvmai_topo_free(&topo);
	return true;
}

/*
 * The ATS watch's pass: a translated group whose member below a DT port
 * has ATS off no longer holds, as if a stranger had appeared there.
 * Returns true while a translated group stays enabled.
 */
static bool kvmai_groups_check_ats(void)
{
	struct kvmai_group *grp;
	struct kvmai_plan *plan;
	bool watch = false;
	unsigned long id;

	plan = kmalloc_obj(*plan);
	if (!plan)
		return true;	/* try again next time */
	guard(mutex)(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp) {
		if (!grp->enabled || grp->mode != KVMAI_MODE_TRANSLATED)
			continue;
		if (kvmai_group_holds(grp, plan)) {
			watch = true;
			continue;
		}
		pr_warn("group %s: a member below a DT port has ATS off, disabling it\n",
			grp->name);
		kvmai_group_disable(grp);
		kvmai_group_change_ntf(grp);
	}
	kfree(plan);
	return watch;
}

static void kvmai_ats_watch(struct work_struct *work)
{
	if (kvmai_groups_check_ats())
		kvmai_ats_watch_start();
}

/*
 * A device appeared (hot-plug, rescan, new VFs): an enabled group whose plan
 * no longer holds must close again: in direct mode a newcomer below a
 * bridge where its members' traffic turns around, in translated mode one
 * below a port with DT.
 */
void kvmai_groups_device_added(struct pci_dev *pdev)
{
	struct kvmai_group *grp;
	struct kvmai_plan *plan;
	unsigned long id;

	plan = kmalloc_obj(*plan);
	if (!plan)
		return;
	guard(mutex)(&kvmai_lock);
	xa_for_each(&kvmai_groups, id, grp) {
		if (!grp->enabled || kvmai_group_holds(grp, plan))
			continue;
		pci_info(pdev, "kvmai: appeared below group %s, disabling it\n", grp->name);
		kvmai_group_disable(grp);
		kvmai_group_change_ntf(grp);
	}
	kfree(plan);
}

/*
 * A device is going away: disable what uses it, forget it as a member (a
 * PCI parent takes its mdev members along).  The mdev core frees an mdev
 * through its parent's driver, which may be gone after this: no reference
 * to a removed mdev is kept.
 */
void kvmai_groups_device_removed(struct device *dev)
{
	struct pci_dev *pdev = dev_is_pci(dev) ? to_pci_dev(dev) : NULL;
	struct kvmai_member *m, *tmp;
	struct kvmai_group *grp;
	unsigned long id;

	guard(mutex)(&kvmai_lock);
	if (pdev)
		kvmai_ports_device_removed(pdev);
	xa_for_each(&kvmai_groups, id, grp) {
		bool member = kvmai_group_uses_dev(grp, dev);

		if (!member && !(pdev && kvmai_group_uses_port(grp, pdev)))
			continue;
		dev_info(dev, "kvmai: removed, disabling group %s\n", grp->name);
		kvmai_group_disable(grp);
		if (member) {
			list_for_each_entry_safe(m, tmp, &grp->members, node)
				if (kvmai_member_uses(m, dev))
					kvmai_member_free(grp, m);
			kvmai_group_replan(grp);
		}
		kvmai_group_change_ntf(grp);
	}
}

/*
 * Module unload, after the family is gone: every group goes, and with the
 * last translated one the ATS watch, which no group can start again.
 */
void kvmai_groups_destroy(void)
{
	struct kvmai_group *grp;
	unsigned long id;

	scoped_guard(mutex, &kvmai_lock) {
		kvmai_closing = true;
		xa_for_each(&kvmai_groups, id, grp) {
			kvmai_group_disable(grp);
			kvmai_group_delete_ntf(grp);
			kvmai_group_del(grp);
		}
	}
	cancel_delayed_work_sync(&kvmai_ats_work);
}
