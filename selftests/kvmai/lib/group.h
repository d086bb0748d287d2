/* SPDX-License-Identifier: GPL-2.0-only */
/* P2P groups through the family: group-* and dev-* requests, their replies. */
#ifndef KT_GROUP_H
#define KT_GROUP_H

#include "netlink.h"

struct kt_port {
	char addr[16];
	__u32 cap, saved, target, current, users;
};

struct kt_member {
	char addr[16];		/* an mdev's: its parent's */
	char mdev[40];		/* the mdev's UUID, or "" */
	char driver[32];
	int ats;
	int nbars;
	__u64 bar_addr[6], bar_size[6];
};

struct kt_pair {
	char a[16], b[16], via[16];
	__u32 type;
};

/* A group as the module reports it (replies, notifications). */
struct kt_group {
	__u8 cmd;		/* of the message it came from */
	char name[32];
	char vm[64];
	__u32 id, mode, state;
	bool bind_socket;
	int parts;		/* messages it came in (a dump may split it) */
	int nmembers, nports, npairs;
	struct kt_member members[16];
	struct kt_port ports[KT_MAX];
	struct kt_pair pairs[KT_MAX];
};

/* One request: unset fields are left out of the message. */
struct kt_req {
	__u8 cmd;
	const char *name;
	const char *vm;
	const char *pci;
	const char *mdev;	/* dev-add/dev-del by mdev UUID */
	__u32 mode;
	__u32 state;
	bool bind_socket;
	bool dump;
	/* Adds raw attributes, for malformed-message tests. */
	void (*extra)(struct nl_msg *msg);
};

/*
 * Sends @req; the groups of the reply (one for a do, all for a dump) go
 * to @out, up to @max, their count to *@n if @n.  0 or -errno.
 */
int _test_cmd_group_dump(struct kt_nl *nl, const struct kt_req *req,
			 struct kt_group *out, int max, int *n);
/* The same for a do request: the reply's group to @out if @out. */
int _test_cmd_group(struct kt_nl *nl, const struct kt_req *req, struct kt_group *out);
#define test_cmd_group(req, out) __kt_cmd(_test_cmd_group(&self->nl, req, out))
#define test_err_group(err, req, out) __kt_err(err, _test_cmd_group(&self->nl, req, out))

/* The next group notification within @timeout_ms: 1, 0 none, -errno. */
int kt_nl_receive_group(struct kt_nl *nl, struct kt_group *out, int timeout_ms);

#endif /* KT_GROUP_H */
