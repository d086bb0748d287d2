// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - the generic netlink family: its registration, who may use it,
 * status-get, and what every handler file shares (attribute checks,
 * messages, notifications to the monitor group).
 *
 * The family, its policies and its op table are generated from
 * Documentation/netlink/specs/kvmai.yaml into kvmai_nl.c (do not edit);
 * the handlers are hand-written, one file per object: group_netlink.c
 * (group-* and dev-*), pmu_netlink.c (pmu-*).
 */
#include <linux/ctype.h>
#include <linux/string.h>
#include <linux/utsname.h>
#include <net/genetlink.h>

#include "kvmai.h"
#include "acs.h"
#include "kvmai_nl.h"
#include "netlink.h"
#include "netlink_priv.h"

int kvmai_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	unsigned int pending;
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto err_free;

	if (nla_put_string(msg, KVMAI_A_STATUS_VERSION, KVMAI_VERSION) ||
	    nla_put_u32(msg, KVMAI_A_STATUS_API_VERSION, KVMAI_API_VERSION) ||
	    nla_put_string(msg, KVMAI_A_STATUS_KERNEL, init_utsname()->release) ||
	    nla_put_u32(msg, KVMAI_A_STATUS_FEATURES, KVMAI_FEATURES))
		goto err_cancel;
	scoped_guard(mutex, &kvmai_lock)
		pending = kvmai_ports_restore_pending();
	if (nla_put_u32(msg, KVMAI_A_STATUS_RESTORE_PENDING, pending))
		goto err_cancel;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_cancel:
	genlmsg_cancel(msg, hdr);
err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/*
 * One message of @cmd holding an object: groups and PMU records go out as
 * replies and as monitor notifications alike.
 */
struct sk_buff *kvmai_msg(size_t size, u32 portid, u32 seq, u8 cmd,
			  int (*fill)(struct sk_buff *msg, void *obj), void *obj)
{
	struct sk_buff *msg = genlmsg_new(size, GFP_KERNEL);
	void *hdr;

	if (!msg)
		return NULL;
	hdr = genlmsg_put(msg, portid, seq, &kvmai_nl_family, 0, cmd);
	if (!hdr || fill(msg, obj)) {
		nlmsg_free(msg);
		return NULL;
	}
	genlmsg_end(msg, hdr);
	return msg;
}

/*
 * Whether the family is registered.  Every notification is sent under
 * kvmai_lock, and unload clears this under it before unregistering, so
 * none goes out through a family that is gone (monitors see the family
 * disappear instead).
 */
static bool kvmai_nl_registered;

/* Notifications stay in the initial namespace, the only one served. */
void kvmai_multicast(struct sk_buff *msg)
{
	lockdep_assert_held(&kvmai_lock);
	if (!msg)
		return;
	if (!kvmai_nl_registered) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&kvmai_nl_family, msg, 0, KVMAI_NLGRP_MONITOR, GFP_KERNEL);
}

/* Like GENL_REQ_ATTR_CHECK, with a message naming what is missing. */
bool kvmai_missing(struct genl_info *info, int type, const char *what)
{
	if (!GENL_REQ_ATTR_CHECK(info, type))
		return false;
	NL_SET_ERR_MSG_FMT(info->extack, "missing %s", what);
	return true;
}

/*
 * Group and VM names reach the kernel log, monitors, operators' terminals,
 * shell completion and libvirt's messages, and may come from a tenant (a
 * libvirt domain's name or metadata).  So they take only characters that
 * mean nothing to a terminal or a shell: ASCII letters and digits and
 * "._:@+-" (a PCI address is such a name too); the policy bounds the
 * length.  Lookups check names the same way before an error message
 * quotes them.  True, with extack naming @what and the first character
 * that is not allowed, if the name of attribute @type is not such a name.
 */
static bool kvmai_name_char(unsigned char c)
{
	/* The kernel's isalnum() takes Latin-1 letters too. */
	return isascii(c) && (isalnum(c) || (c && strchr("._:@+-", c)));
}

bool kvmai_bad_name(struct genl_info *info, int type, const char *what)
{
	struct nlattr *attr = info->attrs[type];
	const unsigned char *s = nla_data(attr);
	const unsigned char *c;

	if (!*s) {
		NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr, "%s is empty", what);
		return true;
	}
	for (c = s; *c; c++) {
		if (kvmai_name_char(*c))
			continue;
		if (isgraph(*c) && isascii(*c))
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr,
						"%s: '%c' at offset %td is not allowed (%s)",
						what, *c, c - s, KVMAI_NAME_CHARS_DOC);
		else
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, attr,
						"%s: byte %#04x at offset %td is not allowed (%s)",
						what, *c, c - s, KVMAI_NAME_CHARS_DOC);
		return true;
	}
	return false;
}

/*
 * Relaxing ACS is a config-space write with host-wide effect, and replies
 * carry BAR physical addresses, VMM pids and other tenants' names: every
 * operation but status-get needs CAP_SYS_ADMIN in the initial user
 * namespace, of the socket's opener and of the sender (netlink_capable()).
 * CAP_NET_ADMIN, which containers are commonly given, is not enough.
 */
static int kvmai_nl_check_perm(struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(extack, "kvmai needs CAP_SYS_ADMIN in the initial user namespace");
	return -EPERM;
}

int kvmai_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		      struct genl_info *info)
{
	return kvmai_nl_check_perm(skb, info->extack);
}

int kvmai_nl_dump_start(struct netlink_callback *cb)
{
	return kvmai_nl_check_perm(cb->skb, cb->extack);
}

/*
 * The YNL generator (Linux 7.3) makes every family serve all network
 * namespaces and writes multicast groups without flags.  kvmai serves the
 * initial namespace only (other namespaces do not even see the family) and
 * its monitor group, whose notifications name devices and tenants, needs
 * CAP_SYS_ADMIN.  The generated family is __ro_after_init, so both can be
 * set here, from module init, before it is registered.
 */
static const struct genl_multicast_group kvmai_mcgrps[] = {
	[KVMAI_NLGRP_MONITOR] = { .name = "monitor", .flags = GENL_MCAST_CAP_SYS_ADMIN },
};

int kvmai_nl_register(void)
{
	int ret;

	kvmai_nl_family.netnsok = false;
	kvmai_nl_family.mcgrps = kvmai_mcgrps;
	kvmai_nl_family.n_mcgrps = ARRAY_SIZE(kvmai_mcgrps);
	ret = genl_register_family(&kvmai_nl_family);
	if (ret)
		return ret;
	scoped_guard(mutex, &kvmai_lock)
		kvmai_nl_registered = true;
	return 0;
}

/*
 * First step of unload: once genl_unregister_family() returns, no request
 * is running (they hold genl's lock for reading) and none can start.
 */
void kvmai_nl_unregister(void)
{
	scoped_guard(mutex, &kvmai_lock)
		kvmai_nl_registered = false;
	genl_unregister_family(&kvmai_nl_family);
}
