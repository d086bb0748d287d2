/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - what the netlink layer's files share (netlink.c): checks of a
 * request's attributes, and the messages replies and notifications carry.
 * For netlink.c, group_netlink.c and pmu_netlink.c only; the rest of the
 * module calls netlink.h.
 */
#ifndef _KVMAI_NETLINK_PRIV_H
#define _KVMAI_NETLINK_PRIV_H

#include <linux/types.h>

struct genl_info;
struct sk_buff;

/* Like GENL_REQ_ATTR_CHECK, with a message naming what is missing. */
bool kvmai_missing(struct genl_info *info, int type, const char *what);
/* What kvmai_bad_name() allows, in its message. */
#define KVMAI_NAME_CHARS_DOC "letters, digits and ._:@+- only"
bool kvmai_bad_name(struct genl_info *info, int type, const char *what);

struct sk_buff *kvmai_msg(size_t size, u32 portid, u32 seq, u8 cmd,
			  int (*fill)(struct sk_buff *msg, void *obj), void *obj);
void kvmai_multicast(struct sk_buff *msg);

#endif /* _KVMAI_NETLINK_PRIV_H */
