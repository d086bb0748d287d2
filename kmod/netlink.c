// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - generic netlink request handlers.
 *
 * The family, its policies and its op table are generated from
 * Documentation/netlink/specs/kvmai.yaml into kvmai_nl.c; this file holds
 * only what the generator cannot write: the handlers.
 */
#include <linux/utsname.h>
#include <net/genetlink.h>

#include "kvmai.h"
#include "kvmai_nl.h"

int kvmai_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info)
{
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
	    nla_put_string(msg, KVMAI_A_STATUS_KERNEL, init_utsname()->release))
		goto err_cancel;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_cancel:
	genlmsg_cancel(msg, hdr);
err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}
