// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - generic netlink handlers for P2P groups (group-* and dev-*
 * operations), and the group messages that replies and monitor
 * notifications carry.
 */
#include <linux/pci.h>
#include <net/genetlink.h>

#include "kvmai.h"
#include "acs.h"
#include "ats.h"
#include "counters.h"
#include "group.h"
#include "kvmai_nl.h"
#include "netlink.h"
#include "netlink_priv.h"

/* Room for a full group: 16 members with 6 BARs each, ports and pairs. */
#define KVMAI_GROUP_MSG_SIZE (32 * 1024)

/* A PCI function with its BARs, or an mdev (@mdev) of parent @pdev, without. */
static int kvmai_fill_member(struct sk_buff *msg, struct pci_dev *pdev, struct device *mdev)
{
	struct device *dev = mdev ?: &pdev->dev;
	const struct device_driver *drv = READ_ONCE(dev->driver);
	struct nlattr *nest, *bar;
	int i;

	nest = nla_nest_start(msg, KVMAI_A_GROUP_MEMBER);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(msg, KVMAI_A_MEMBER_PCI_ADDR, pci_name(pdev)) ||
	    (mdev && nla_put_string(msg, KVMAI_A_MEMBER_MDEV, dev_name(mdev))) ||
	    nla_put_string(msg, KVMAI_A_MEMBER_DRIVER, drv ? drv->name : "") ||
#ifdef CONFIG_PCI_ATS
	    nla_put_u8(msg, KVMAI_A_MEMBER_ATS, kvmai_ats_on(pdev)))
#else
	    nla_put_u8(msg, KVMAI_A_MEMBER_ATS, 0))
#endif
		goto err;
	for (i = 0; !mdev && i < PCI_STD_NUM_BARS; i++) {
		if (!(pci_resource_flags(pdev, i) & IORESOURCE_MEM) || !pci_resource_len(pdev, i))
			continue;
		bar = nla_nest_start(msg, KVMAI_A_MEMBER_BAR);
		if (!bar ||
		    nla_put_u32(msg, KVMAI_A_BAR_INDEX, i) ||
		    nla_put_u64_64bit(msg, KVMAI_A_BAR_ADDR, pci_resource_start(pdev, i),
				      KVMAI_A_BAR_PAD) ||
		    nla_put_u64_64bit(msg, KVMAI_A_BAR_SIZE, pci_resource_len(pdev, i),
				      KVMAI_A_BAR_PAD))
			goto err;
		nla_nest_end(msg, bar);
	}
	nla_nest_end(msg, nest);
	return 0;
err:
	nla_nest_cancel(msg, nest);
	return -EMSGSIZE;
}

static int kvmai_fill_port(struct sk_buff *msg, struct kvmai_port *port)
{
	struct nlattr *nest = nla_nest_start(msg, KVMAI_A_GROUP_PORT);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(msg, KVMAI_A_PORT_PCI_ADDR, pci_name(port->pdev)) ||
	    nla_put_u32(msg, KVMAI_A_PORT_ACS_CAP, port->cap) ||
	    nla_put_u32(msg, KVMAI_A_PORT_ACS_SAVED, port->saved) ||
	    nla_put_u32(msg, KVMAI_A_PORT_ACS_TARGET, port->target) ||
	    nla_put_u32(msg, KVMAI_A_PORT_ACS_CURRENT, kvmai_port_read(port->pdev)) ||
	    nla_put_u32(msg, KVMAI_A_PORT_USERS, port->users)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static int kvmai_fill_pair(struct sk_buff *msg, const struct kvmai_pair *pair)
{
	struct nlattr *nest = nla_nest_start(msg, KVMAI_A_GROUP_PAIR);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(msg, KVMAI_A_PAIR_A, pair->a) ||
	    nla_put_string(msg, KVMAI_A_PAIR_B, pair->b) ||
	    nla_put_u32(msg, KVMAI_A_PAIR_TYPE, pair->type) ||
	    nla_put_string(msg, KVMAI_A_PAIR_VIA, pair->via)) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* What every message about a group carries, every part of a dump too. */
static int kvmai_fill_group_head(struct sk_buff *msg, struct kvmai_group *grp)
{
	if (nla_put_string(msg, KVMAI_A_GROUP_NAME, grp->name) ||
	    nla_put_u32(msg, KVMAI_A_GROUP_ID, grp->id) ||
	    nla_put_string(msg, KVMAI_A_GROUP_VM, grp->vm) ||
	    nla_put_u32(msg, KVMAI_A_GROUP_MODE, grp->mode) ||
	    nla_put_u32(msg, KVMAI_A_GROUP_STATE, grp->enabled ? KVMAI_STATE_ENABLED :
							      KVMAI_STATE_DISABLED) ||
	    (grp->owner_portid && nla_put_flag(msg, KVMAI_A_GROUP_BIND_SOCKET)))
		return -EMSGSIZE;
	return 0;
}

/*
 * A group's lists (members, then ports, then pairs) as one sequence of
 * items, so that a dump can stop between any two and go on in the next
 * message.
 */
static unsigned long kvmai_group_nitems(const struct kvmai_group *grp)
{
	return grp->nmembers + grp->nports + grp->npairs;
}

static int kvmai_fill_group_item(struct sk_buff *msg, struct kvmai_group *grp, unsigned long i)
{
	struct kvmai_member *m;

	if (i < grp->nmembers) {
		list_for_each_entry(m, &grp->members, node)
			if (!i--)
				return kvmai_fill_member(msg, m->pdev, m->mdev);
	}
	i -= grp->nmembers;
	if (i < grp->nports)
		return kvmai_fill_port(msg, grp->ports[i]);
	return kvmai_fill_pair(msg, &grp->pairs[i - grp->nports]);
}

static int kvmai_fill_group(struct sk_buff *msg, struct kvmai_group *grp)
{
	unsigned long i;

	if (kvmai_fill_group_head(msg, grp))
		return -EMSGSIZE;
	for (i = 0; i < kvmai_group_nitems(grp); i++)
		if (kvmai_fill_group_item(msg, grp, i))
			return -EMSGSIZE;
	return 0;
}

static int kvmai_fill_group_obj(struct sk_buff *msg, void *grp)
{
	return kvmai_fill_group(msg, grp);
}

/* Monitor notifications, sent under kvmai_lock by group.c and the handlers. */
static void kvmai_group_ntf(struct kvmai_group *grp, u8 cmd)
{
	lockdep_assert_held(&kvmai_lock);
	kvmai_multicast(kvmai_msg(KVMAI_GROUP_MSG_SIZE, 0, 0, cmd, kvmai_fill_group_obj, grp));
}

void kvmai_group_create_ntf(struct kvmai_group *grp)
{
	kvmai_group_ntf(grp, KVMAI_CMD_GROUP_CREATE_NTF);
}

void kvmai_group_delete_ntf(struct kvmai_group *grp)
{
	kvmai_group_ntf(grp, KVMAI_CMD_GROUP_DELETE_NTF);
}

void kvmai_group_change_ntf(struct kvmai_group *grp)
{
	kvmai_group_ntf(grp, KVMAI_CMD_GROUP_CHANGE_NTF);
}

static int kvmai_reply_group(struct kvmai_group *grp, struct genl_info *info)
{
	struct sk_buff *msg = kvmai_msg(KVMAI_GROUP_MSG_SIZE, info->snd_portid, info->snd_seq,
					info->genlhdr->cmd, kvmai_fill_group_obj, grp);

	return msg ? genlmsg_reply(msg, info) : -ENOMEM;
}

/* The group named by the request, or an error with extack set. */
static struct kvmai_group *kvmai_group_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[KVMAI_A_GROUP_NAME];
	struct kvmai_group *grp;

	if (kvmai_missing(info, KVMAI_A_GROUP_NAME, "group name") ||
	    kvmai_bad_name(info, KVMAI_A_GROUP_NAME, "group name"))
		return ERR_PTR(-EINVAL);
	grp = kvmai_group_find(nla_data(attr));
	if (!grp) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "no group %s",
					(char *)nla_data(attr));
		return ERR_PTR(-ENOENT);
	}
	return grp;
}

/* The device named by KVMAI_A_GROUP_PCI_ADDR, referenced, or an error. */
static struct pci_dev *kvmai_pci_lookup(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[KVMAI_A_GROUP_PCI_ADDR];
	unsigned int dom = 0, bus, slot, fn;
	struct pci_dev *pdev;
	const char *s;
	char extra;

	/* Not echoed in extack unless printable. */
	if (kvmai_missing(info, KVMAI_A_GROUP_PCI_ADDR, "PCI address or mdev UUID") ||
	    kvmai_bad_name(info, KVMAI_A_GROUP_PCI_ADDR, "PCI address"))
		return ERR_PTR(-EINVAL);
	s = nla_data(attr);
	/* DDDD:BB:DD.F, or BB:DD.F in domain 0 */
	if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &slot, &fn, &extra) != 4) {
		dom = 0;
		if (sscanf(s, "%x:%x.%x%c", &bus, &slot, &fn, &extra) != 3)
			bus = 0x100;
	}
	if (bus == 0x100) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr,
					"bad PCI address %s (want DDDD:BB:DD.F)", s);
		return ERR_PTR(-EINVAL);
	}
	if (dom > 0xffff || bus > 0xff || slot > 0x1f || fn > 7) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "PCI address %s out of range", s);
		return ERR_PTR(-EINVAL);
	}
	pdev = pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(slot, fn));
	if (!pdev) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "no PCI device %s", s);
		return ERR_PTR(-ENOENT);
	}
	return pdev;
}

int kvmai_nl_group_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	enum kvmai_mode mode = KVMAI_MODE_TRANSLATED;
	struct kvmai_group *grp;
	const char *name;

	if (kvmai_missing(info, KVMAI_A_GROUP_NAME, "group name") ||
	    kvmai_missing(info, KVMAI_A_GROUP_VM, "VM identifier") ||
	    kvmai_bad_name(info, KVMAI_A_GROUP_NAME, "group name") ||
	    kvmai_bad_name(info, KVMAI_A_GROUP_VM, "vm"))
		return -EINVAL;
	name = nla_data(info->attrs[KVMAI_A_GROUP_NAME]);
	if (info->attrs[KVMAI_A_GROUP_MODE])
		mode = nla_get_u32(info->attrs[KVMAI_A_GROUP_MODE]);

	guard(mutex)(&kvmai_lock);
	grp = kvmai_group_new(name, nla_data(info->attrs[KVMAI_A_GROUP_VM]), mode,
			      info->extack);
	if (IS_ERR(grp))
		return PTR_ERR(grp);
	if (info->attrs[KVMAI_A_GROUP_BIND_SOCKET]) {
		grp->owner_portid = info->snd_portid;
		write_pnet(&grp->owner_net, genl_info_net(info));
	}
	kvmai_group_create_ntf(grp);
	return kvmai_reply_group(grp, info);
}

int kvmai_nl_group_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kvmai_group *grp;

	guard(mutex)(&kvmai_lock);
	grp = kvmai_group_lookup(info);
	if (IS_ERR(grp))
		return PTR_ERR(grp);
	kvmai_group_disable(grp);
	kvmai_group_delete_ntf(grp);
	kvmai_group_del(grp);
	return 0;
}

int kvmai_nl_group_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct kvmai_group *grp;

	guard(mutex)(&kvmai_lock);
	grp = kvmai_group_lookup(info);
	if (IS_ERR(grp))
		return PTR_ERR(grp);
	return kvmai_reply_group(grp, info);
}

/*
 * Every group, in order of id.  A group whose lists do not fit what room
 * is left is split: the message takes the items that fit, and the next one
 * carries on from there, flagged 'continued'.  So a reader with a small
 * buffer (dump messages are sized to it) still gets a 16-member group whole.
 * cb->args: [0] the id to go on with, [1] its first item not yet sent.
 */
int kvmai_nl_group_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long index = cb->args[0], item = cb->args[1];
	struct kvmai_group *grp;
	void *hdr;

	guard(mutex)(&kvmai_lock);
	for (; (grp = kvmai_group_next(&index)); index++, item = 0) {
		unsigned long n = kvmai_group_nitems(grp), first;

		/* The group being split went away: start the next one afresh. */
		if (index != cb->args[0] || item > n)
			item = 0;
		first = item;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
				  &kvmai_nl_family, NLM_F_MULTI, KVMAI_CMD_GROUP_GET);
		if (!hdr)
			break;
		if (kvmai_fill_group_head(skb, grp) ||
		    (first && nla_put_flag(skb, KVMAI_A_GROUP_CONTINUED))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		while (item < n && !kvmai_fill_group_item(skb, grp, item))
			item++;
		if (item == first && n) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = index;
		cb->args[1] = item;
		if (item < n)
			break;
		cb->args[0] = index + 1;
		cb->args[1] = 0;
	}
	/* Not even the head and one item fit an empty message: give up. */
	return grp && !skb->len ? -EMSGSIZE : skb->len;
}

int kvmai_nl_group_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *mode = info->attrs[KVMAI_A_GROUP_MODE];
	struct nlattr *state = info->attrs[KVMAI_A_GROUP_STATE];
	struct kvmai_group *grp;
	bool was_enabled;
	int ret = 0;

	guard(mutex)(&kvmai_lock);
	grp = kvmai_group_lookup(info);
	if (IS_ERR(grp))
		return PTR_ERR(grp);
	if (!mode && !state) {
		NL_SET_ERR_MSG_FMT(info->extack, "group %s: nothing to set (give mode or state)",
				   grp->name);
		return -EINVAL;
	}
	was_enabled = grp->enabled;
	if (mode && nla_get_u32(mode) != grp->mode) {
		if (kvmai_group_busy(grp, info->extack)) {
			NL_SET_BAD_ATTR(info->extack, mode);
			return -EBUSY;
		}
		grp->mode = nla_get_u32(mode);
		kvmai_group_change_ntf(grp);
	}
	if (state) {
		if (nla_get_u32(state) == KVMAI_STATE_ENABLED)
			ret = kvmai_group_enable(grp, info->extack);
		else
			kvmai_group_disable(grp);
		if (grp->enabled != was_enabled)
			kvmai_group_change_ntf(grp);
	}
	return ret;
}

/*
 * The mdev named by KVMAI_A_GROUP_MDEV, referenced, with its PCI parent
 * in @parent, referenced too; or an error.  A member of @grp is found by
 * name even when the bus no longer has it.
 */
static struct device *kvmai_mdev_lookup(struct genl_info *info, struct kvmai_group *grp,
					struct pci_dev **parent)
{
	struct nlattr *attr = info->attrs[KVMAI_A_GROUP_MDEV];
	const struct bus_type *bus = kvmai_mdev_bus();
	struct device *dev;
	const char *uuid;

	if (kvmai_bad_name(info, KVMAI_A_GROUP_MDEV, "mdev UUID"))
		return ERR_PTR(-EINVAL);
	uuid = nla_data(attr);
	dev = get_device(kvmai_group_mdev_member(grp, uuid));
	if (!dev && bus)
		dev = bus_find_device_by_name(bus, NULL, uuid);
	if (!dev && !bus) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr,
					"no mdev %s: kvmai has no mdev support here", uuid);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!dev) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "no mdev %s", uuid);
		return ERR_PTR(-ENOENT);
	}
	if (!dev->parent || !dev_is_pci(dev->parent)) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr,
					"mdev %s: its parent %s is not a PCI device", uuid,
					dev->parent ? dev_name(dev->parent) : "(none)");
		put_device(dev);
		return ERR_PTR(-EINVAL);
	}
	*parent = pci_dev_get(to_pci_dev(dev->parent));
	return dev;
}

/* dev-add and dev-del: the same lookups around a different group change. */
static int kvmai_nl_dev_op(struct genl_info *info,
			   int (*op)(struct kvmai_group *grp, struct pci_dev *pdev,
				     struct device *mdev, struct netlink_ext_ack *extack))
{
	struct device *mdev = NULL;
	struct kvmai_group *grp;
	struct pci_dev *pdev;
	int ret;

	guard(mutex)(&kvmai_lock);
	grp = kvmai_group_lookup(info);
	if (IS_ERR(grp))
		return PTR_ERR(grp);
	if (info->attrs[KVMAI_A_GROUP_MDEV] && info->attrs[KVMAI_A_GROUP_PCI_ADDR]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[KVMAI_A_GROUP_MDEV],
				    "give a PCI address or an mdev UUID, not both");
		return -EINVAL;
	}
	if (info->attrs[KVMAI_A_GROUP_MDEV]) {
		mdev = kvmai_mdev_lookup(info, grp, &pdev);
		if (IS_ERR(mdev))
			return PTR_ERR(mdev);
	} else {
		pdev = kvmai_pci_lookup(info);
		if (IS_ERR(pdev))
			return PTR_ERR(pdev);
	}
	ret = op(grp, pdev, mdev, info->extack);
	put_device(mdev);
	pci_dev_put(pdev);
	if (!ret)
		kvmai_group_change_ntf(grp);
	return ret;
}

int kvmai_nl_dev_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	return kvmai_nl_dev_op(info, kvmai_group_add_dev);
}

int kvmai_nl_dev_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	return kvmai_nl_dev_op(info, kvmai_group_del_dev);
}
