/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kvmai generic netlink family through libnl, so that the tests
 * exercise the module, not a framing library of their own: a connection,
 * requests and their replies, notifications, and status-get.
 */
#ifndef KT_NETLINK_H
#define KT_NETLINK_H

#include "kt.h"

struct nl_msg;
struct nl_sock;
struct nlattr;

/* A connection to the family. */
struct kt_nl {
	struct nl_sock *sk;
	int family;
	char ext[512];	/* the extack message of the last request, or "" */
};

/* Connects @nl: 0, -ENOENT (no family: the module is not loaded), -errno. */
int kt_nl_open(struct kt_nl *nl);
/* The same, receiving into a buffer of @buf bytes only (0: libnl's default). */
int kt_nl_open_buf(struct kt_nl *nl, size_t buf);
/* Becomes user nobody, for good (call it in a child), then connects. */
int kt_nl_open_unprivileged(struct kt_nl *nl);
void kt_nl_close(struct kt_nl *nl);
/* Joins the monitor multicast group: notifications come to kt_nl_poll(). */
int kt_nl_monitor(struct kt_nl *nl);
/* A connection of its own in the monitor group: 0 or -errno. */
int kt_nl_monitor_open(struct kt_nl *nl);

/*
 * One request of @cmd (a dump with @dump): @fill adds its attributes,
 * @valid sees each reply message.  0 or -errno; the extack message, an
 * error's or a success's warning, in nl->ext.
 */
int kt_nl_exchange(struct kt_nl *nl, __u8 cmd, bool dump,
		   void (*fill)(struct nl_msg *msg, const void *arg), const void *fill_arg,
		   int (*valid)(struct nl_msg *msg, void *arg), void *valid_arg);
/* Messages that arrive within @timeout_ms go to @valid: 1, 0 none, -errno. */
int kt_nl_poll(struct kt_nl *nl, int (*valid)(struct nl_msg *msg, void *arg), void *arg,
	       int timeout_ms);
/* Attribute values, or "" / 0 for an absent attribute. */
void kt_nla_str(char *dst, size_t len, struct nlattr *a);
__u32 kt_nla_u32(struct nlattr *a);

/* Expects the extack message of the fixture's last request to hold @text. */
#define test_ext_has(text) ({							\
	EXPECT_NE(NULL, strstr(self->nl.ext, text)) TH_LOG("extack: %s", self->nl.ext);	\
})

/* status-get */
struct kt_status {
	char version[64];
	__u32 api_version;
	char kernel[128];
	__u32 features;			/* enum kvmai_feature */
	__s64 restore_pending;		/* -1: the module does not say */
};

int _test_cmd_status_get(struct kt_nl *nl, struct kt_status *st);
#define test_cmd_status_get(st) __kt_cmd(_test_cmd_status_get(&self->nl, st))
/* @cmd without attributes, whatever it is: 0 or -errno. */
int _test_cmd_nl_bare(struct kt_nl *nl, __u8 cmd);
#define test_err_nl_bare(err, cmd) __kt_err(err, _test_cmd_nl_bare(&self->nl, cmd))

#endif /* KT_NETLINK_H */
