// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policy-driven fuzzing of the kvmai generic netlink family.
 *
 * The requests are built without knowing kvmai's attributes: the test
 * asks the generic netlink controller which operations the family has and
 * what policy each one validates against (CTRL_CMD_GETFAMILY,
 * CTRL_CMD_GETPOLICY), and generates from that.  Three quarters are valid
 * per policy, so that they get past validation into kvmai's handlers; the
 * rest carry one mutation of the kind a policy exists to catch.  Strings
 * come from a pool of what makes the handlers act: the emulated host's
 * device names, BDFs and CPU packages, and the group, VM and unit names
 * the replies have shown so far.  A policy does not say which of those an
 * attribute wants, so the generator learns it per attribute from the
 * outcomes: successes, and the attribute extack blames for a refusal.
 * Only kvmai's replies are read with its uapi header, for those names.
 *
 * A kernel splat is caught by the kernel_health step after the tests; what
 * this test checks itself is what it can observe: every request is
 * answered (an ack, an error or the end of a dump), every operation gets
 * past validation sometimes, and afterwards the host is as it was: no
 * group, no PMU owner, every ACS control word and every driver binding as
 * before.  KVMAI_FUZZ_SEED replays a run (the seed is printed), and
 * KVMAI_FUZZ_MESSAGES shortens it; KVMAI_FUZZ_VERBOSE=1 adds an extack
 * example per errno, 2 counts the EINVAL/ERANGE reasons, 3 shows what the
 * generator learnt.  All can be given on the emulated host's kernel
 * command line, which passes them on to the tests.
 *
 * Messages go out over a raw netlink socket, not libnl: dozens of them in
 * one sendmsg() (each syscall is slow under TCG) with framing libnl would
 * not produce (truncated attribute headers, wrong NLA_F_NESTED, lengths
 * that do not match the type).  Cleanup and the final checks use the
 * libnl helpers of lib/, so they do not depend on the fuzzer's framing.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/pci_regs.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/kvmai.h>

#include "kselftest_harness.h"
#include "lib/dev.h"
#include "lib/pci.h"
#include "lib/module.h"
#include "lib/netlink.h"
#include "lib/group.h"
#include "lib/pmu.h"

/* Newer than the installed uapi headers (Linux 6.8). */
#define FZ_TYPE_SINT (NL_ATTR_TYPE_BITFIELD32 + 1)
#define FZ_TYPE_UINT (NL_ATTR_TYPE_BITFIELD32 + 2)

#ifndef fallthrough
#define fallthrough __attribute__((__fallthrough__))
#endif

#define FZ_MESSAGES	100000	/* default number of fuzz messages */
#define FZ_CLEAN_EVERY	2000	/* delete every group this often (cap: 256) */
#define FZ_BATCH	64	/* messages per sendmsg() */
#define FZ_TIMEOUT_S	5	/* a request unanswered this long fails the test */
#define FZ_OUT_SIZE	BIT(20)
#define FZ_SENT_FMT "fuzz: %ld messages in %ld batches, %.1f s (%.0f/s); %d groups and %d PMU owners deleted on the way\n"
#define FZ_OUT_FILL	(256 << 10)	/* a batch ends once it is this big */
#define FZ_MSG_ROOM	(64 << 10)	/* no message gets near this */
#define FZ_RX_SLOTS	32
#define FZ_RX_SIZE	(72 << 10)	/* above the largest kvmai reply (64 KiB) */
#define FZ_MAX_POL	32
#define FZ_MAX_TYPE	64
#define FZ_MAX_OPS	32
#define FZ_MAX_ERRNO	160
#define FZ_DEPTH	3
#define FZ_RING		48
#define FZ_STR		64

/* Endpoints bound to vfio-pci for the run, so that groups can be enabled. */
static const char *const fz_vfio_names[] = { "gpu0", "nic0", "gpu1" };
#define FZ_NVFIO (ARRAY_SIZE(fz_vfio_names))

/* Labels for the summary; the operations themselves come from the kernel. */
static const char *const fz_cmd_names[] = {
	[KVMAI_CMD_STATUS_GET] = "status-get",
	[KVMAI_CMD_GROUP_NEW] = "group-new",
	[KVMAI_CMD_GROUP_DEL] = "group-del",
	[KVMAI_CMD_GROUP_GET] = "group-get",
	[KVMAI_CMD_GROUP_SET] = "group-set",
	[KVMAI_CMD_DEV_ADD] = "dev-add",
	[KVMAI_CMD_DEV_DEL] = "dev-del",
	[KVMAI_CMD_PMU_HOST_GET] = "pmu-host-get",
	[KVMAI_CMD_PMU_GET] = "pmu-get",
	[KVMAI_CMD_PMU_ASSIGN] = "pmu-assign",
	[KVMAI_CMD_PMU_RELEASE] = "pmu-release",
};

static const char *const fz_type_names[] = {
	[NL_ATTR_TYPE_FLAG] = "flag", [NL_ATTR_TYPE_U8] = "u8", [NL_ATTR_TYPE_U16] = "u16",
	[NL_ATTR_TYPE_U32] = "u32", [NL_ATTR_TYPE_U64] = "u64", [NL_ATTR_TYPE_S8] = "s8",
	[NL_ATTR_TYPE_S16] = "s16", [NL_ATTR_TYPE_S32] = "s32", [NL_ATTR_TYPE_S64] = "s64",
	[NL_ATTR_TYPE_BINARY] = "binary", [NL_ATTR_TYPE_STRING] = "string",
	[NL_ATTR_TYPE_NUL_STRING] = "nul-string", [NL_ATTR_TYPE_NESTED] = "nest",
	[NL_ATTR_TYPE_NESTED_ARRAY] = "nest-array", [NL_ATTR_TYPE_BITFIELD32] = "bitfield32",
	[FZ_TYPE_SINT] = "sint", [FZ_TYPE_UINT] = "uint",
};

/* Where a string comes from. */
enum {
	CAT_GROUP,	/* group names the replies showed */
	CAT_BDF,	/* the host's PCI addresses, sometimes respelled */
	CAT_VM,		/* VM names the replies showed */
	CAT_UNIT,	/* PMU unit names the replies showed */
	CAT_CPUS,	/* CPU lists, some of them whole packages */
	CAT_DEVNAME,	/* device names of the emulated host's map */
	CAT_FIXED,	/* a few names of our own */
	CAT_PRINTABLE,	/* random printable bytes */
	CAT_BYTES,	/* random bytes, control characters and all */
	CAT_EMPTY,
	NCAT,
};

static const __u8 fz_cat_weight[NCAT] = {
	[CAT_GROUP] = 5, [CAT_BDF] = 3, [CAT_VM] = 2, [CAT_UNIT] = 2, [CAT_CPUS] = 1,
	[CAT_DEVNAME] = 1, [CAT_FIXED] = 1, [CAT_PRINTABLE] = 2, [CAT_BYTES] = 2, [CAT_EMPTY] = 1,
};

/*
 * Each attribute's weights start at 4x the base, go up when a request
 * succeeds and down by an eighth when the kernel blames the attribute,
 * but never below 1: every category stays in play.
 */
#define FZ_W_START	4
#define FZ_W_MAX	200
/* How likely an attribute is in a request, in percent: start and bounds. */
#define FZ_INCL		75
#define FZ_INCL_MIN	30
#define FZ_INCL_MAX	95

/* One attribute type of a policy, as the controller described it. */
struct fz_attr {
	__u32 kind;		/* NL_ATTR_TYPE_*; 0: not in the policy */
	bool has_u, has_s, has_mask;
	__u64 min_u, max_u, mask;
	__s64 min_s, max_s;
	__u32 min_len, max_len;	/* max_len 0: no limit given */
	int nested;			/* policy index of a nest, -1: none */
	__u32 bf32_mask;
	/*
	 * Learnt from the replies: which string categories, and whether to
	 * give the attribute at all.  A policy says "string of at most 15
	 * bytes", not "PCI address", nor which attributes a handler wants;
	 * the fuzzer finds out what gets somewhere.
	 */
	__u8 w[NCAT];
	__u8 incl;
};

struct fz_policy {
	bool listed;		/* the dump described at least one attribute */
	__u32 maxtype;	/* highest type described */
	struct fz_attr a[FZ_MAX_TYPE];
};

struct fz_op {
	__u8 cmd;
	__u32 flags;		/* GENL_CMD_CAP_*, GENL_ADMIN_PERM */
	int pol[2];		/* policy index for do and dump, -1: none */
};

#define FZ_REASONS	16
#define FZ_REASON_LEN	28	/* extack text up to the first name in it, about */

/* What one (operation, do or dump) got back. */
struct fz_slot {
	char name[40];
	__u64 sent, ok, other, err[FZ_MAX_ERRNO];
	char example[FZ_MAX_ERRNO][112];	/* first extack per errno */
	/* KVMAI_FUZZ_VERBOSE=2: EINVAL/ERANGE counted by the start of their extack */
	int nreasons;
	struct {
		int err;
		__u64 n;
		char text[FZ_REASON_LEN + 1];
	} reasons[FZ_REASONS];
};

/* Strings the replies showed, for the next requests. */
struct fz_ring {
	int n, next;
	char s[FZ_RING][FZ_STR];
};

/* A choice a request made, rewarded if it succeeds, blamed if refused. */
struct fz_use {
	struct fz_attr *at;
	/* Of the attribute in the request; for IN and OUT, of the nest it is (or was not) in. */
	__u16 off;
	__u8 cat;		/* string category, or one of: */
#define FZ_USE_IN	0xfe	/* the attribute was given */
#define FZ_USE_OUT	0xff	/* it was left out */
	char val[24];		/* the string's start */
};

#define FZ_USES 48

struct fz_pending {
	__u32 seq;
	int slot;		/* -1: not a fuzz message */
	bool dump, final;
	int err;		/* outcome: 0 or a positive errno */
	size_t off, len;	/* the request in the batch buffer */
	char ext[112];
	bool mutated;
	__u32 bad_off;	/* extack: offset of the attribute refused, 0: none */
	int miss_type;		/* extack: type of a missing attribute, -1: none */
	bool miss_nested;	/* ... missing inside a nest */
	int nuse;
	struct fz_use use[FZ_USES];
};

/* One device as found in sysfs: its driver, and ACS control if it has ACS. */
struct fz_pcidev {
	char bdf[16];
	char driver[64];
	int acs;		/* ACS capability offset, 0: none */
	__u16 acs_ctl;
};

struct fz {
	int fd;
	__u16 family;
	__u8 version;
	__u32 seq;
	__u64 rng;
	__u64 seed;

	int nops;
	struct fz_op ops[FZ_MAX_OPS];
	struct fz_policy pol[FZ_MAX_POL];
	int npol;			/* highest index seen + 1 */
	int op_policies;		/* CTRL_ATTR_OP_POLICY entries */
	char parse_err[160];		/* first inconsistency in the dumps */

	struct fz_slot slots[2 * FZ_MAX_OPS];

	/* The batch being sent and what is still to come back for it. */
	__u8 *out;
	size_t out_len;
	int npend;
	struct fz_pending pend[FZ_BATCH + 1];
	__u8 *rx;
	struct mmsghdr rxm[FZ_RX_SLOTS];
	struct iovec rxv[FZ_RX_SLOTS];
	void (*on_data)(struct fz *fz, struct fz_pending *p, const struct nlmsghdr *nlh);
	__u64 stray, odd, enabled_seen, ports_seen;
	char odd_what[160];		/* the first of either */

	/* Generation of one message: the mutation and where it goes. */
	bool mutate;		/* this message gets one */
	int victim;		/* attributes to go before the mutated one */
	int kind;
	bool mutated;		/* it got it */
	__u16 attr_off;	/* of the attribute being generated */
	__u16 nest_off;	/* of the nest being generated, 0: top level */
	bool unheard;		/* an attribute the kernel will not read (a duplicate) */

	/* The string and number pools. */
	struct fz_ring groups, vms, units;
	int nbdf, nvfio, ncpu;
	char bdf[64][16];
	char vfio[FZ_NVFIO][16];
	char dev_names[64][32];
	int ndev_names;
	char pkg[8][64];		/* CPU lists of whole packages */
	int npkg;
	__u32 ids[FZ_RING];
	int nids;

	/* The host before the test, restored and compared after it. */
	int npci_before, npci;
	struct fz_pcidev pci_before[128];	/* drivers before binding */
	struct fz_pcidev pci[128];		/* ACS once bound, as the fuzz starts */
	bool bound;
};

/* ---------------------------------------------------------------------------
 * Small things: randomness, raw attribute walking, sysfs.
 */

/* splitmix64: tiny, and the same sequence from the same seed everywhere. */
static __u64 rnd64(struct fz *fz)
{
	__u64 z = (fz->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static __u32 rnd(struct fz *fz, __u32 n)
{
	return n ? rnd64(fz) % n : 0;
}

static bool chance(struct fz *fz, unsigned int pct)
{
	return rnd(fz, 100) < pct;
}

/* The attribute at @p if it is whole within the @rem bytes left, or NULL. */
static const struct nlattr *fz_attr_at(const void *p, int rem)
{
	const struct nlattr *a = p;

	if (rem < NLA_HDRLEN || a->nla_len < NLA_HDRLEN || a->nla_len > rem)
		return NULL;
	return a;
}

/* The first attribute of the @len bytes at @head, @rem what is left. */
static const struct nlattr *fz_attr_first(const void *head, int len, int *rem)
{
	*rem = len;
	return fz_attr_at(head, *rem);
}

/* The first attribute inside @nest. */
static const struct nlattr *fz_nested_first(const struct nlattr *nest, int *rem)
{
	return fz_attr_first((const char *)nest + NLA_HDRLEN, nest->nla_len - NLA_HDRLEN, rem);
}

/* The first attribute of generic netlink message @nlh. */
static const struct nlattr *fz_genl_first(const struct nlmsghdr *nlh, int *rem)
{
	return fz_attr_first((const char *)NLMSG_DATA(nlh) + GENL_HDRLEN,
			     nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, rem);
}

/* The attribute after @a, NULL at the end. */
static const struct nlattr *fz_attr_next(const struct nlattr *a, int *rem)
{
	*rem -= NLA_ALIGN(a->nla_len);
	return fz_attr_at((const char *)a + NLA_ALIGN(a->nla_len), *rem);
}

static int attr_type(const struct nlattr *a)
{
	return a->nla_type & NLA_TYPE_MASK;
}

static const void *attr_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

static int attr_len(const struct nlattr *a)
{
	return a->nla_len - NLA_HDRLEN;
}

static __u64 attr_u(const struct nlattr *a)
{
	__u64 v64 = 0;
	__u32 v32 = 0;
	__u16 v16 = 0;

	switch (attr_len(a)) {
	case 1:
		return *(const __u8 *)attr_data(a);
	case 2:
		memcpy(&v16, attr_data(a), 2);
		return v16;
	case 4:
		memcpy(&v32, attr_data(a), 4);
		return v32;
	case 8:
		memcpy(&v64, attr_data(a), 8);
		return v64;
	}
	return 0;
}

static __s64 attr_s(const struct nlattr *a)
{
	switch (attr_len(a)) {
	case 1:
		return (__s8)attr_u(a);
	case 2:
		return (__s16)attr_u(a);
	case 4:
		return (__s32)attr_u(a);
	}
	return (__s64)attr_u(a);
}

/* A string attribute's text, if it is NUL-terminated and fits @len. */
static bool attr_str(const struct nlattr *a, char *buf, size_t len)
{
	int n = attr_len(a);

	if (n < 1 || n > (int)len || ((const char *)attr_data(a))[n - 1])
		return false;
	memcpy(buf, attr_data(a), n);
	return true;
}

static const char *type_name(__u32 kind)
{
	if (kind < ARRAY_SIZE(fz_type_names) && fz_type_names[kind])
		return fz_type_names[kind];
	return "?";
}

static const char *errno_name(int err, char *buf, size_t len)
{
	const char *s = strerrorname_np(err);

	if (s)
		return s;
	snprintf(buf, len, "E%d", err);
	return buf;
}

static void ring_add(struct fz_ring *r, const char *s)
{
	if (!*s || strlen(s) >= FZ_STR)
		return;
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->s[i], s))
			return;
	snprintf(r->s[r->next], FZ_STR, "%s", s);
	r->next = (r->next + 1) % FZ_RING;
	if (r->n < FZ_RING)
		r->n++;
}

static void id_add(struct fz *fz, __u32 id)
{
	for (int i = 0; i < fz->nids; i++)
		if (fz->ids[i] == id)
			return;
	if (fz->nids < FZ_RING)
		fz->ids[fz->nids++] = id;
	else
		fz->ids[rnd(fz, FZ_RING)] = id;
}

/* Every PCI device: driver, and ACS control where there is ACS. */
static int pci_snapshot(struct fz_pcidev *devs, int max)
{
	struct dirent *de;
	DIR *d = opendir("/sys/bus/pci/devices");
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		struct fz_pcidev *p = &devs[n];

		if (de->d_name[0] == '.')
			continue;
		memset(p, 0, sizeof(*p));
		snprintf(p->bdf, sizeof(p->bdf), "%.15s", de->d_name);
		kt_pci_driver(p->bdf, p->driver, sizeof(p->driver));
		p->acs = kt_pci_ext_cap(p->bdf, PCI_EXT_CAP_ID_ACS);
		if (p->acs > 0 && kt_pci_read16(p->bdf, p->acs + PCI_ACS_CTRL, &p->acs_ctl)) {
			closedir(d);
			return -EIO;
		}
		if (p->acs < 0)
			p->acs = 0;
		n++;
	}
	closedir(d);
	return n;
}

/* ---------------------------------------------------------------------------
 * The socket and the exchange of one batch.
 */

static int fz_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = FZ_TIMEOUT_S };
	int one = 1, rcv = 16 << 20, snd = 4 << 20;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		return -errno;
	/*
	 * A batch's replies are queued while it is sent: the receive buffer
	 * must hold them all, or the kernel drops replies and acks (it never
	 * blocks for a full socket).  Root may go past rmem_max.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
	/* Extack text for the summary; error acks without the request echoed. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Appends @len bytes (zeros if @data is NULL), padded to 4 bytes. */
static void out_put(struct fz *fz, const void *data, size_t len)
{
	size_t pad = NLA_ALIGN(len) - len;

	if (data)
		memcpy(fz->out + fz->out_len, data, len);
	else
		memset(fz->out + fz->out_len, 0, len);
	memset(fz->out + fz->out_len + len, 0, pad);
	fz->out_len += len + pad;
}

/* Starts a request of @cmd; returns its pending entry. */
static struct fz_pending *msg_begin(struct fz *fz, __u16 type, __u8 cmd, bool dump,
				    int slot)
{
	struct fz_pending *p = &fz->pend[fz->npend++];
	struct nlmsghdr nlh = {
		.nlmsg_type = type,
		.nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK),
		.nlmsg_seq = ++fz->seq,
	};
	struct genlmsghdr gh = { .cmd = cmd, .version = fz->version };

	memset(p, 0, sizeof(*p));
	p->miss_type = -1;
	p->seq = nlh.nlmsg_seq;
	p->slot = slot;
	p->dump = dump;
	p->off = fz->out_len;
	out_put(fz, &nlh, sizeof(nlh));
	out_put(fz, &gh, sizeof(gh));
	return p;
}

/* Ends the request; @tail bytes past the last aligned attribute belong to it. */
static void msg_end(struct fz *fz, struct fz_pending *p, size_t tail)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(fz->out + p->off);

	p->len = fz->out_len - p->off - (NLA_ALIGN(tail) - tail);
	nlh->nlmsg_len = p->len;
}

static void put_attr(struct fz *fz, __u16 type, const void *data, size_t len)
{
	struct nlattr h = { .nla_len = NLA_HDRLEN + len, .nla_type = type };

	out_put(fz, &h, sizeof(h));
	out_put(fz, data, len);
}

static size_t nest_begin(struct fz *fz, __u16 type)
{
	size_t off = fz->out_len;

	put_attr(fz, type, NULL, 0);
	return off;
}

static void nest_end(struct fz *fz, size_t off)
{
	((struct nlattr *)(fz->out + off))->nla_len = fz->out_len - off;
}

static void hexdump(struct __test_metadata *_metadata, const __u8 *p, size_t len)
{
	char line[3 * 32 + 1];

	for (size_t i = 0; i < len; i += 32) {
		size_t j, n = 0;

		for (j = i; j < len && j < i + 32; j++)
			n += snprintf(line + n, sizeof(line) - n, "%02x ", p[j]);
		TH_LOG("  %04zx: %s", i, line);
	}
}

static struct fz_pending *pend_find(struct fz *fz, __u32 seq)
{
	for (int i = 0; i < fz->npend; i++)
		if (fz->pend[i].seq == seq)
			return &fz->pend[i];
	return NULL;
}

/* Counts an unexpected reply into @count; the first one is described. */
static void note(struct fz *fz, __u64 *count, const char *fmt, ...)
{
	va_list ap;

	if (!fz->stray && !fz->odd) {
		va_start(ap, fmt);
		vsnprintf(fz->odd_what, sizeof(fz->odd_what), fmt, ap);
		va_end(ap);
	}
	(*count)++;
}

/* The extack message in the TLVs after an error or done payload. */
static void read_ext(struct fz_pending *p, const struct nlmsghdr *nlh, size_t off)
{
	const struct nlattr *a;
	int rem;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || off > nlh->nlmsg_len)
		return;
	for (a = fz_attr_first((const char *)nlh + off, nlh->nlmsg_len - off, &rem); a;
	     a = fz_attr_next(a, &rem)) {
		if (attr_type(a) == NLMSGERR_ATTR_MSG)
			attr_str(a, p->ext, sizeof(p->ext));
		else if (attr_type(a) == NLMSGERR_ATTR_OFFS)
			p->bad_off = attr_u(a);
		else if (attr_type(a) == NLMSGERR_ATTR_MISS_TYPE)
			p->miss_type = attr_u(a);
		else if (attr_type(a) == NLMSGERR_ATTR_MISS_NEST)
			p->miss_nested = true;
	}
}

static void rx_one(struct fz *fz, const struct nlmsghdr *nlh)
{
	struct fz_pending *p = pend_find(fz, nlh->nlmsg_seq);

	if (!p || p->final) {
		note(fz, &fz->stray, "message type %u for seq %u, which %s", nlh->nlmsg_type,
		     nlh->nlmsg_seq, p ? "was already answered" : "was never sent");
		return;
	}
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(nlh);
		size_t off = NLMSG_HDRLEN + sizeof(*e);

		if (nlh->nlmsg_len < off) {
			note(fz, &fz->odd, "short error message for seq %u", p->seq);
			p->err = EPROTO;
		} else {
			p->err = -e->error;
			if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
				off += e->msg.nlmsg_len - NLMSG_HDRLEN;
			read_ext(p, nlh, off);
		}
		if (p->err < 0) {
			note(fz, &fz->odd, "error ack %d (positive) for seq %u", -p->err, p->seq);
			p->err = EPROTO;
		}
		p->final = true;
	} else if (nlh->nlmsg_type == NLMSG_DONE) {
		int err = 0;

		if (!p->dump)
			note(fz, &fz->odd, "NLMSG_DONE for seq %u, not a dump", p->seq);
		if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(err))
			memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
		p->err = -err;
		read_ext(p, nlh, NLMSG_HDRLEN + sizeof(err));
		p->final = true;
	} else {
		const struct genlmsghdr *gh = NLMSG_DATA(nlh);
		const struct genlmsghdr *req = (const void *)(fz->out + p->off + NLMSG_HDRLEN);

		if (nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
			note(fz, &fz->odd, "reply of %u bytes for seq %u", nlh->nlmsg_len, p->seq);
		else if (p->dump && !(nlh->nlmsg_flags & NLM_F_MULTI))
			note(fz, &fz->odd, "dump part without NLM_F_MULTI for seq %u", p->seq);
		else if (p->slot >= 0 && gh->cmd != req->cmd)
			note(fz, &fz->odd, "reply cmd %u to a request of cmd %u", gh->cmd,
			     req->cmd);
		else if (fz->on_data)
			fz->on_data(fz, p, nlh);
	}
}

/*
 * Sends the batch and reads until every request in it is answered.
 * Returns 0, or -errno with what went wrong in @why.
 */
static int fz_exchange(struct fz *fz, char *why, size_t why_len)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	int left = fz->npend;
	ssize_t n;

	n = sendto(fz->fd, fz->out, fz->out_len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	if (n != (ssize_t)fz->out_len) {
		snprintf(why, why_len, "sendto of %zu bytes: %zd (%s)", fz->out_len, n,
			 strerror(errno));
		return n < 0 ? -errno : -EIO;
	}
	while (left) {
		int got;

		for (int i = 0; i < FZ_RX_SLOTS; i++) {
			fz->rxv[i] = (struct iovec){ fz->rx + (size_t)i * FZ_RX_SIZE, FZ_RX_SIZE };
			memset(&fz->rxm[i], 0, sizeof(fz->rxm[i]));
			fz->rxm[i].msg_hdr.msg_iov = &fz->rxv[i];
			fz->rxm[i].msg_hdr.msg_iovlen = 1;
		}
		got = recvmmsg(fz->fd, fz->rxm, FZ_RX_SLOTS, MSG_WAITFORONE, NULL);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = errno;

			if (err == EAGAIN)
				snprintf(why, why_len, "no reply within %d s", FZ_TIMEOUT_S);
			else
				snprintf(why, why_len, "recvmmsg: %s", strerror(err));
			return err == EAGAIN ? -ETIMEDOUT : -err;
		}
		for (int i = 0; i < got; i++) {
			const struct nlmsghdr *nlh = fz->rxv[i].iov_base;
			int len = fz->rxm[i].msg_len;

			if (fz->rxm[i].msg_hdr.msg_flags & MSG_TRUNC) {
				snprintf(why, why_len, "reply larger than %d bytes", FZ_RX_SIZE);
				return -EMSGSIZE;
			}
			for (; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
				struct fz_pending *p = pend_find(fz, nlh->nlmsg_seq);
				bool was = p && p->final;

				rx_one(fz, nlh);
				if (p && !was && p->final)
					left--;
			}
			if (len)
				note(fz, &fz->odd, "%d bytes of a partial netlink message", len);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Discovery: the family's operations and policies from the controller.
 */

static void on_family(struct fz *fz, struct fz_pending *p, const struct nlmsghdr *nlh)
{
	const struct nlattr *a, *op, *f;
	int rem, rem2, rem3;

	for (a = fz_genl_first(nlh, &rem); a; a = fz_attr_next(a, &rem)) {
		if (attr_type(a) == CTRL_ATTR_FAMILY_ID)
			fz->family = attr_u(a);
		else if (attr_type(a) == CTRL_ATTR_VERSION)
			fz->version = attr_u(a);
		if (attr_type(a) != CTRL_ATTR_OPS)
			continue;
		for (op = fz_nested_first(a, &rem2); op; op = fz_attr_next(op, &rem2)) {
			struct fz_op *o = &fz->ops[fz->nops];

			if (fz->nops == FZ_MAX_OPS)
				break;
			memset(o, 0, sizeof(*o));
			o->pol[0] = -1;
			o->pol[1] = -1;
			for (f = fz_nested_first(op, &rem3); f; f = fz_attr_next(f, &rem3)) {
				if (attr_type(f) == CTRL_ATTR_OP_ID)
					o->cmd = attr_u(f);
				else if (attr_type(f) == CTRL_ATTR_OP_FLAGS)
					o->flags = attr_u(f);
			}
			fz->nops++;
		}
	}
}

static struct fz_op *op_find(struct fz *fz, __u32 cmd)
{
	for (int i = 0; i < fz->nops; i++)
		if (fz->ops[i].cmd == cmd)
			return &fz->ops[i];
	return NULL;
}

static void parse_err(struct fz *fz, const char *fmt, ...)
{
	va_list ap;

	if (fz->parse_err[0])
		return;
	va_start(ap, fmt);
	vsnprintf(fz->parse_err, sizeof(fz->parse_err), fmt, ap);
	va_end(ap);
}

/* One attribute type of one policy: NL_POLICY_TYPE_ATTR_* into @at. */
static void parse_policy_attr(struct fz *fz, int idx, int type, const struct nlattr *nest)
{
	struct fz_attr *at = &fz->pol[idx].a[type];
	const struct nlattr *a;
	int rem;

	memset(at, 0, sizeof(*at));
	at->nested = -1;
	at->incl = FZ_INCL;
	for (int c = 0; c < NCAT; c++)
		at->w[c] = FZ_W_START * fz_cat_weight[c];
	for (a = fz_nested_first(nest, &rem); a; a = fz_attr_next(a, &rem)) {
		switch (attr_type(a)) {
		case NL_POLICY_TYPE_ATTR_TYPE:
			at->kind = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_MIN_VALUE_U:
			at->has_u = true;
			at->min_u = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_MAX_VALUE_U:
			at->has_u = true;
			at->max_u = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_MIN_VALUE_S:
			at->has_s = true;
			at->min_s = attr_s(a);
			break;
		case NL_POLICY_TYPE_ATTR_MAX_VALUE_S:
			at->has_s = true;
			at->max_s = attr_s(a);
			break;
		case NL_POLICY_TYPE_ATTR_MIN_LENGTH:
			at->min_len = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_MAX_LENGTH:
			at->max_len = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_POLICY_IDX:
			at->nested = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_BITFIELD32_MASK:
			at->bf32_mask = attr_u(a);
			break;
		case NL_POLICY_TYPE_ATTR_MASK:
			at->has_mask = true;
			at->mask = attr_u(a);
			break;
		}
	}
	if (!at->kind || at->kind > FZ_TYPE_UINT)
		parse_err(fz, "policy %d attr %d: unknown type %u", idx, type, at->kind);
	if (at->nested >= FZ_MAX_POL)
		parse_err(fz, "policy %d attr %d: nested policy %d past %d", idx, type,
			  at->nested, FZ_MAX_POL);
	if ((at->has_u && at->min_u > at->max_u) || (at->has_s && at->min_s > at->max_s))
		parse_err(fz, "policy %d attr %d: empty range", idx, type);
	if (at->max_len && at->min_len > at->max_len)
		parse_err(fz, "policy %d attr %d: length %u..%u", idx, type, at->min_len,
			  at->max_len);
	if (idx + 1 > fz->npol)
		fz->npol = idx + 1;
	fz->pol[idx].listed = true;
	if ((__u32)type > fz->pol[idx].maxtype)
		fz->pol[idx].maxtype = type;
}

static void on_policy(struct fz *fz, struct fz_pending *p, const struct nlmsghdr *nlh)
{
	const struct nlattr *a, *x, *y;
	int rem, rem2, rem3;

	for (a = fz_genl_first(nlh, &rem); a; a = fz_attr_next(a, &rem)) {
		if (attr_type(a) == CTRL_ATTR_OP_POLICY) {
			/* op -> { do: policy index, dump: policy index } */
			for (x = fz_nested_first(a, &rem2); x; x = fz_attr_next(x, &rem2)) {
				struct fz_op *o = op_find(fz, attr_type(x));

				if (!o) {
					parse_err(fz, "policy for op %d, which GETFAMILY did not list",
						  attr_type(x));
					continue;
				}
				for (y = fz_nested_first(x, &rem3); y; y = fz_attr_next(y, &rem3)) {
					int which = attr_type(y) == CTRL_ATTR_POLICY_DO ? 0 :
						    attr_type(y) == CTRL_ATTR_POLICY_DUMP ? 1 : -1;

					if (which < 0)
						continue;
					o->pol[which] = attr_u(y);
					fz->op_policies++;
					if (o->pol[which] >= FZ_MAX_POL)
						parse_err(fz, "op %u: policy index %d past %d",
							  o->cmd, o->pol[which], FZ_MAX_POL);
				}
			}
		} else if (attr_type(a) == CTRL_ATTR_POLICY) {
			/* policy index -> attribute type -> its description */
			for (x = fz_nested_first(a, &rem2); x; x = fz_attr_next(x, &rem2)) {
				if (attr_type(x) >= FZ_MAX_POL) {
					parse_err(fz, "policy index %d past %d", attr_type(x),
						  FZ_MAX_POL);
					continue;
				}
				for (y = fz_nested_first(x, &rem3); y; y = fz_attr_next(y, &rem3)) {
					if (attr_type(y) >= FZ_MAX_TYPE) {
						parse_err(fz, "policy %d: attr type %d past %d",
							  attr_type(x), attr_type(y), FZ_MAX_TYPE);
						continue;
					}
					parse_policy_attr(fz, attr_type(x), attr_type(y), y);
				}
			}
		}
	}
}

static const char *op_name(__u8 cmd, char *buf, size_t len)
{
	if (cmd < ARRAY_SIZE(fz_cmd_names) && fz_cmd_names[cmd])
		return fz_cmd_names[cmd];
	snprintf(buf, len, "cmd-%u", cmd);
	return buf;
}

/*
 * Family, operations and policies.  Returns 0, or -errno with the reason
 * in @why: among the reasons, an operation the kernel reports no policy
 * for (a split-ops family gets a reject-all policy for any op without one,
 * so every op has one).
 */
static int fz_discover(struct fz *fz, char *why, size_t len)
{
	struct fz_pending *p;
	char nb[16];
	int ret;

	fz->npend = 0;
	fz->out_len = 0;
	p = msg_begin(fz, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, false, -1);
	put_attr(fz, CTRL_ATTR_FAMILY_NAME, KVMAI_FAMILY_NAME, sizeof(KVMAI_FAMILY_NAME));
	msg_end(fz, p, 0);
	fz->on_data = on_family;
	ret = fz_exchange(fz, why, len);
	if (ret)
		return ret;
	if (p->err) {
		snprintf(why, len, "CTRL_CMD_GETFAMILY %s: %s", KVMAI_FAMILY_NAME,
			 strerror(p->err));
		return -p->err;
	}
	if (!fz->family || !fz->nops) {
		snprintf(why, len, "CTRL_CMD_GETFAMILY: family id %u, %d ops", fz->family,
			 fz->nops);
		return -ENOENT;
	}

	fz->npend = 0;
	fz->out_len = 0;
	p = msg_begin(fz, GENL_ID_CTRL, CTRL_CMD_GETPOLICY, true, -1);
	put_attr(fz, CTRL_ATTR_FAMILY_ID, &fz->family, sizeof(fz->family));
	msg_end(fz, p, 0);
	fz->on_data = on_policy;
	ret = fz_exchange(fz, why, len);
	fz->on_data = NULL;
	if (ret)
		return ret;
	if (p->err) {
		snprintf(why, len, "CTRL_CMD_GETPOLICY: %s (%s)", strerror(p->err), p->ext);
		return -p->err;
	}
	if (fz->parse_err[0]) {
		snprintf(why, len, "policy dump: %s", fz->parse_err);
		return -EPROTO;
	}
	for (int i = 0; i < fz->nops; i++) {
		struct fz_op *o = &fz->ops[i];

		if (!(o->flags & (GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP))) {
			snprintf(why, len, "op %s: neither do nor dump",
				 op_name(o->cmd, nb, sizeof(nb)));
			return -EPROTO;
		}
		if (((o->flags & GENL_CMD_CAP_DO) && o->pol[0] < 0) ||
		    ((o->flags & GENL_CMD_CAP_DUMP) && o->pol[1] < 0)) {
			snprintf(why, len, "the kernel reports no policy for %s%s",
				 op_name(o->cmd, nb, sizeof(nb)), o->pol[0] < 0 ? "" : " dump");
			return -ENODATA;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Generation.
 */

enum {
	MUT_WRONG_LEN,
	MUT_RANGE,
	MUT_UNKNOWN,
	MUT_TRUNCATED,
	MUT_GARBAGE,
	MUT_DUPLICATE,
	MUT_NESTED_FLAG,
	MUT_OVERSIZE,
	MUT_ZERO_LEN,
	MUT_NO_NUL,
	MUT_BYTEORDER,
	MUT_KINDS,
};

static int int_width(__u32 kind)
{
	switch (kind) {
	case NL_ATTR_TYPE_U8:
	case NL_ATTR_TYPE_S8:
		return 1;
	case NL_ATTR_TYPE_U16:
	case NL_ATTR_TYPE_S16:
		return 2;
	case NL_ATTR_TYPE_U32:
	case NL_ATTR_TYPE_S32:
		return 4;
	case NL_ATTR_TYPE_U64:
	case NL_ATTR_TYPE_S64:
		return 8;
	case FZ_TYPE_SINT:
	case FZ_TYPE_UINT:
		return 4;	/* or 8: the generator picks */
	}
	return 0;
}

static bool is_signed(__u32 kind)
{
	return kind == NL_ATTR_TYPE_S8 || kind == NL_ATTR_TYPE_S16 ||
	       kind == NL_ATTR_TYPE_S32 || kind == NL_ATTR_TYPE_S64 || kind == FZ_TYPE_SINT;
}

/* The variable-width integers, 4 or 8 bytes. */
static bool is_int(__u32 kind)
{
	return kind == FZ_TYPE_UINT || kind == FZ_TYPE_SINT;
}

static bool is_string(__u32 kind)
{
	return kind == NL_ATTR_TYPE_STRING || kind == NL_ATTR_TYPE_NUL_STRING ||
	       kind == NL_ATTR_TYPE_BINARY;
}

static bool is_nest(__u32 kind)
{
	return kind == NL_ATTR_TYPE_NESTED || kind == NL_ATTR_TYPE_NESTED_ARRAY;
}

/*
 * A number from what the host and the replies have shown.  Not small
 * random ones: they would be PIDs of processes that exist in one boot and
 * not in the next, and a replay would take another path.
 */
static __u64 pool_u(struct fz *fz)
{
	switch (rnd(fz, 6)) {
	case 0:
		return getpid();
	case 1:
		return fz->nids ? fz->ids[rnd(fz, fz->nids)] : 1;
	case 2:
		return rnd(fz, 4);
	case 3:
		return rnd(fz, fz->ncpu + 2);
	case 4:
		return 0x100000 + rnd(fz, 0x100000);
	}
	return rnd64(fz);
}

static __u64 gen_u(struct fz *fz, const struct fz_attr *at, int width)
{
	__u64 tmax = width == 8 ? UINT64_MAX : (1ull << (8 * width)) - 1;
	__u64 lo = at->has_u ? at->min_u : 0, hi = at->has_u ? at->max_u : tmax;
	__u64 v;

	if (hi > tmax)
		hi = tmax;
	if (at->has_mask)
		return (chance(fz, 50) ? pool_u(fz) : rnd64(fz)) & at->mask & tmax;
	switch (rnd(fz, 10)) {
	case 0:
	case 1:
		return lo;
	case 2:
	case 3:
		return hi;
	case 4:
		return lo < hi ? lo + 1 : lo;
	case 5:
	case 6:
	case 7:
		v = pool_u(fz);
		if (v >= lo && v <= hi)
			return v;
		break;
	}
	if (hi - lo == UINT64_MAX)
		return rnd64(fz);
	return lo + rnd64(fz) % (hi - lo + 1);
}

static __s64 gen_s(struct fz *fz, const struct fz_attr *at, int width)
{
	__s64 tmin = width == 8 ? INT64_MIN : -(1ll << (8 * width - 1));
	__s64 tmax = width == 8 ? INT64_MAX : (1ll << (8 * width - 1)) - 1;
	__s64 lo = at->has_s ? at->min_s : tmin, hi = at->has_s ? at->max_s : tmax;
	__u64 span = (__u64)hi - (__u64)lo;

	switch (rnd(fz, 8)) {
	case 0:
		return lo;
	case 1:
		return hi;
	case 2:
		if (lo <= 0 && hi >= 0)
			return 0;
		break;
	case 3:
		if ((__s64)fz->ncpu >= lo && (__s64)fz->ncpu <= hi)
			return fz->ncpu;
		break;
	}
	if (span == UINT64_MAX)
		return (__s64)rnd64(fz);
	return (__s64)((__u64)lo + rnd64(fz) % (span + 1));
}

/* A value just outside the policy's range, if the type can hold one. */
static bool gen_out_of_range(struct fz *fz, const struct fz_attr *at, int width, __u64 *v)
{
	if (is_signed(at->kind)) {
		__s64 tmin = width == 8 ? INT64_MIN : -(1ll << (8 * width - 1));
		__s64 tmax = width == 8 ? INT64_MAX : (1ll << (8 * width - 1)) - 1;
		bool below = at->has_s && at->min_s > tmin, above = at->has_s && at->max_s < tmax;

		/* Room on either side, in unsigned arithmetic (no overflow). */
		__u64 room_lo = (__u64)at->min_s - (__u64)tmin;
		__u64 room_hi = (__u64)tmax - (__u64)at->max_s;

		if (!below && !above)
			return false;
		if (below && (!above || chance(fz, 50)))
			*v = (__u64)at->min_s - 1 - rnd(fz, room_lo < 16 ? room_lo : 16);
		else
			*v = (__u64)at->max_s + 1 + rnd(fz, room_hi < 16 ? room_hi : 16);
		return true;
	}
	{
		__u64 tmax = width == 8 ? UINT64_MAX : (1ull << (8 * width)) - 1;
		bool below = at->has_u && at->min_u > 0, above = at->has_u && at->max_u < tmax;

		if (at->has_mask && (~at->mask & tmax)) {
			*v = (rnd64(fz) | (~at->mask & tmax & -(~at->mask & tmax))) & tmax;
			return true;
		}
		if (!below && !above)
			return false;
		if (below && (!above || chance(fz, 50)))
			*v = at->min_u - 1 - rnd(fz, at->min_u < 16 ? at->min_u : 16);
		else if (tmax - at->max_u > 1 && chance(fz, 30))
			*v = at->max_u + 1 + rnd64(fz) % (tmax - at->max_u);
		else
			*v = at->max_u + 1;
		return true;
	}
}

/* CPU lists beside the host's packages: parts, offline CPUs, bad syntax. */
static const char *const fz_cpu_fmts[] = {
	"0", "1", "0,2", "0-%d", "%d", "%d-%d", "0-", "1-0", "0-4095", "-1",
};

/* A BDF from the host, sometimes in another spelling the kernel may parse. */
static int gen_bdf(struct fz *fz, char *buf, size_t len)
{
	const char *b = fz->nvfio && chance(fz, 60) ? fz->vfio[rnd(fz, fz->nvfio)] :
			fz->nbdf ? fz->bdf[rnd(fz, fz->nbdf)] : "0000:00:00.0";
	unsigned int dom, bus, dev, fn;

	if (chance(fz, 85) || sscanf(b, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return snprintf(buf, len, "%s", b);
	switch (rnd(fz, 6)) {
	case 0:
		return snprintf(buf, len, "%02x:%02x.%x", bus, dev, fn);
	case 1:
		return snprintf(buf, len, "%04X:%02X:%02X.%X", dom, bus, dev, fn);
	case 2:
		return snprintf(buf, len, "%s%c", b, "x \x0a.:"[rnd(fz, 5)]);
	case 3:
		return snprintf(buf, len, "%04x:%02x:%02x.%x", dom, bus, dev, 8 + rnd(fz, 8));
	case 4:
		return snprintf(buf, len, "%04x:%03x:%02x.%x", dom, 0x100 + bus, dev, fn);
	}
	return snprintf(buf, len, "%x:%x:%x.%x", dom + 1, bus, 0x20 + dev, fn);
}

static int gen_random_bytes(struct fz *fz, char *buf, int n, bool printable)
{
	for (int i = 0; i < n; i++)
		buf[i] = printable ? '!' + rnd(fz, '~' - '!' + 1) : 1 + rnd(fz, 255);
	return n;
}

/* @n random non-zero bytes into @buf: @buf, or NULL for none. */
static const void *random_bytes(struct fz *fz, void *buf, int n)
{
	return gen_random_bytes(fz, buf, n, false) ? buf : NULL;
}

/*
 * A string for an attribute of at most @max bytes (0: no limit): mostly
 * names the handlers know, so that requests get somewhere.  Not
 * NUL-terminated; returns its length.
 */
static int gen_string(struct fz *fz, struct fz_attr *at, char *buf, int cap, __u32 max)
{
	int lim = max && (int)max < cap ? (int)max : cap;
	struct fz_pending *p = &fz->pend[fz->npend - 1];
	const struct fz_ring *r = NULL;
	unsigned int total = 0, pick, cat;
	int n;

	for (cat = 0; cat < NCAT; cat++)
		total += at->w[cat];
	pick = rnd(fz, total);
	for (cat = 0; cat < NCAT - 1; cat++) {
		if (pick < at->w[cat])
			break;
		pick -= at->w[cat];
	}
	if (p->nuse < FZ_USES && !fz->unheard)
		p->use[p->nuse++] = (struct fz_use){ .at = at, .off = fz->attr_off, .cat = cat };
	else
		p = NULL;

	switch (cat) {
	case CAT_GROUP:
		r = &fz->groups;
		break;
	case CAT_BDF:
		n = gen_bdf(fz, buf, cap);
		goto out;
	case CAT_VM:
		r = &fz->vms;
		break;
	case CAT_UNIT:
		r = &fz->units;
		break;
	case CAT_CPUS: {
		const char *f = fz_cpu_fmts[rnd(fz, ARRAY_SIZE(fz_cpu_fmts))];
		int a = fz->ncpu - 1, b = fz->ncpu + rnd(fz, 3);

		/* Mostly whole packages, as uncore units want them. */
		if (fz->npkg && chance(fz, 60)) {
			n = snprintf(buf, cap, "%s", fz->pkg[rnd(fz, fz->npkg)]);
			goto out;
		}
		n = snprintf(buf, cap, f, strstr(f, "%d-%d") ? b - 2 : a, b);
		goto out;
	}
	case CAT_DEVNAME:
		n = snprintf(buf, cap, "%s", fz->ndev_names ?
			     fz->dev_names[rnd(fz, fz->ndev_names)] : "gpu0");
		goto out;
	case CAT_FIXED:
		n = snprintf(buf, cap, "fuzz%u", rnd(fz, 4));
		goto out;
	case CAT_PRINTABLE:
		n = gen_random_bytes(fz, buf, 1 + rnd(fz, lim < 24 ? lim : 24), true);
		goto out;
	case CAT_BYTES:
		n = gen_random_bytes(fz, buf, 1 + rnd(fz, lim < 24 ? lim : 24), false);
		goto out;
	default:
		return 0;
	}
	if (!r->n)
		n = snprintf(buf, cap, "fuzz%u", rnd(fz, 4));
	else
		n = snprintf(buf, cap, "%s", r->s[rnd(fz, r->n)]);
out:
	if (n > cap - 1)
		n = cap - 1;	/* snprintf() cut it */
	/* Cut to the policy's limit: the shorter name is still a valid one. */
	if (n > lim)
		n = lim;
	if (p) {
		struct fz_use *u = &p->use[p->nuse - 1];
		int k = n < (int)sizeof(u->val) - 1 ? n : (int)sizeof(u->val) - 1;

		memcpy(u->val, buf, k);
		u->val[k] = '\0';
	}
	return n;
}

static void gen_policy(struct fz *fz, int pol, int depth);

/* The payload of a valid attribute of @at into @buf; returns its length. */
static int gen_payload(struct fz *fz, struct fz_attr *at, __u8 *buf, int cap)
{
	int w = int_width(at->kind), n;
	__u64 v;

	switch (at->kind) {
	case NL_ATTR_TYPE_FLAG:
		return 0;
	case NL_ATTR_TYPE_STRING:
	case NL_ATTR_TYPE_NUL_STRING:
		n = gen_string(fz, at, (char *)buf, cap - 1, at->max_len);
		while (n < (int)at->min_len && n < cap - 1)
			buf[n++] = 'a';
		/* The kernel counts a string's length without a final NUL. */
		if (at->kind == NL_ATTR_TYPE_NUL_STRING || chance(fz, 50))
			buf[n++] = '\0';
		return n;
	case NL_ATTR_TYPE_BINARY: {
		__u32 max = at->max_len ? at->max_len : 64;

		if (max < at->min_len)
			max = at->min_len;

		n = at->min_len + rnd(fz, max - at->min_len + 1);
		if (n > cap)
			n = cap;
		for (int i = 0; i < n; i++)
			buf[i] = rnd(fz, 256);
		return n;
	}
	case NL_ATTR_TYPE_BITFIELD32: {
		__u32 bf[2];

		bf[1] = (__u32)rnd64(fz) & at->bf32_mask;
		bf[0] = (__u32)rnd64(fz) & bf[1];
		memcpy(buf, bf, sizeof(bf));
		return sizeof(bf);
	}
	}
	if (!w)
		return 0;
	if (is_int(at->kind) && chance(fz, 50))
		w = 8;
	v = is_signed(at->kind) ? (__u64)gen_s(fz, at, w) : gen_u(fz, at, w);
	/* Little endian host: the low @w bytes are the value. */
	memcpy(buf, &v, w);
	return w;
}

static void put_valid(struct fz *fz, int type, struct fz_attr *at, int depth,
		      __u16 flags)
{
	__u8 buf[512];
	size_t nest;
	int n;

	if (is_nest(at->kind)) {
		__u16 outer = fz->nest_off;

		nest = nest_begin(fz, type | (flags ^ NLA_F_NESTED));
		if (at->kind == NL_ATTR_TYPE_NESTED_ARRAY) {
			for (int i = 1, k = 1 + rnd(fz, 3); i <= k; i++) {
				size_t inner = nest_begin(fz, i | NLA_F_NESTED);

				fz->nest_off = inner - fz->pend[fz->npend - 1].off;
				gen_policy(fz, at->nested, depth + 1);
				nest_end(fz, inner);
			}
		} else {
			fz->nest_off = nest - fz->pend[fz->npend - 1].off;
			gen_policy(fz, at->nested, depth + 1);
		}
		fz->nest_off = outer;
		nest_end(fz, nest);
		return;
	}
	fz->attr_off = fz->out_len - fz->pend[fz->npend - 1].off;
	n = gen_payload(fz, at, buf, sizeof(buf));
	put_attr(fz, type | flags, buf, n);
}

/* An attribute type the policy does not have. */
static int unknown_type(struct fz *fz, int pol)
{
	const struct fz_policy *p = pol >= 0 ? &fz->pol[pol] : NULL;
	__u32 max = p ? p->maxtype : 0;

	switch (rnd(fz, 5)) {
	case 0:
		return 0;
	case 1:
		for (int i = 0, t; p && i < 8; i++) {
			t = 1 + rnd(fz, max ? max : 1);
			if (t < FZ_MAX_TYPE && !p->a[t].kind)
				return t;
		}
		break;
	case 2:
		return NLA_TYPE_MASK;
	case 3:
		return max + 1 + rnd(fz, 0x3ffe - max);
	}
	return max + 1 + rnd(fz, 4);
}

/* Random bytes under an attribute header, as if they were a nest. */
static void put_garbage(struct fz *fz, int type)
{
	__u8 buf[64];
	int n = rnd(fz, sizeof(buf));

	for (int i = 0; i < n; i++)
		buf[i] = rnd(fz, 256);
	/* Sometimes plausible: headers with random lengths and types. */
	for (int i = 0; i + 4 <= n && chance(fz, 50); i += 4 + rnd(fz, 8)) {
		__u16 h[2] = { rnd(fz, 24), rnd(fz, 12) };

		memcpy(buf + i, h, sizeof(h));
	}
	put_attr(fz, type | NLA_F_NESTED, buf, n);
}

/* The attribute of type @type of policy @pol, with the message's mutation. */
static void put_mutated(struct fz *fz, int pol, int type, struct fz_attr *at, int depth)
{
	int w = int_width(at->kind);
	__u8 buf[4096 + 64];
	__u64 v;
	int n;

	fz->mutated = true;
	switch (fz->kind) {
	case MUT_RANGE:
		if (w && gen_out_of_range(fz, at, w, &v)) {
			if (is_int(at->kind) && chance(fz, 50))
				w = 8;
			put_attr(fz, type, &v, w);
			return;
		}
		/* No room outside the range: a wrong length or size instead. */
		fallthrough;
	case MUT_WRONG_LEN:
		if (at->kind == NL_ATTR_TYPE_FLAG || w || at->kind == NL_ATTR_TYPE_BITFIELD32) {
			static const int lens[] = { 0, 1, 2, 3, 5, 6, 7, 8, 9, 12, 16 };

			do {
				n = lens[rnd(fz, ARRAY_SIZE(lens))];
			} while (n == (at->kind == NL_ATTR_TYPE_BITFIELD32 ? 8 : w) ||
				 (n == 8 && is_int(at->kind)));
			put_attr(fz, type, random_bytes(fz, buf, n), n);
			return;
		}
		if (is_nest(at->kind)) {
			put_garbage(fz, type);
			return;
		}
		fallthrough;
	case MUT_OVERSIZE:
		if (is_string(at->kind)) {
			n = at->max_len && chance(fz, 60) ? at->max_len + 1 + rnd(fz, 8) :
			    256 + rnd(fz, 3800);
			if (n > 4096)
				n = 4096;
			gen_random_bytes(fz, (char *)buf, n, chance(fz, 70));
			buf[n] = '\0';
			put_attr(fz, type, buf, n + (at->kind == NL_ATTR_TYPE_NUL_STRING));
			return;
		}
		put_attr(fz, type, random_bytes(fz, buf, 64), 16 + rnd(fz, 48));
		return;
	case MUT_NO_NUL:
		if (is_string(at->kind)) {
			n = gen_string(fz, at, (char *)buf, 256, at->max_len);
			if (chance(fz, 50) && n + 4 < 256) {
				/* NUL inside, then more bytes: what does the handler read? */
				buf[n++] = '\0';
				n += gen_random_bytes(fz, (char *)buf + n, 3, true);
				if (at->max_len && n > (int)at->max_len + 1)
					n = at->max_len + 1;
			}
			put_attr(fz, type, buf, n);
			return;
		}
		fallthrough;
	case MUT_ZERO_LEN:
		put_attr(fz, type | (is_nest(at->kind) ? NLA_F_NESTED : 0), NULL, 0);
		return;
	case MUT_DUPLICATE:
		put_valid(fz, type, at, depth, 0);
		put_valid(fz, type, at, depth, 0);
		return;
	case MUT_NESTED_FLAG:
		/* put_valid() flips NLA_F_NESTED for nests: set turns it off. */
		put_valid(fz, type, at, depth, NLA_F_NESTED);
		return;
	case MUT_BYTEORDER:
		put_valid(fz, type, at, depth, NLA_F_NET_BYTEORDER);
		return;
	case MUT_GARBAGE:
		put_garbage(fz, type);
		return;
	case MUT_UNKNOWN:
		n = rnd(fz, 9);
		put_attr(fz, unknown_type(fz, pol), gen_random_bytes(fz, (char *)buf, n, false) ?
			 buf : NULL, n);
		put_valid(fz, type, at, depth, 0);
		return;
	}
	put_valid(fz, type, at, depth, 0);
}

/* Attributes of policy @pol: each type maybe, once or (rarely) twice. */
static void gen_policy(struct fz *fz, int pol, int depth)
{
	struct fz_policy *p;

	if (pol < 0 || pol >= FZ_MAX_POL || depth > FZ_DEPTH)
		return;
	p = &fz->pol[pol];
	for (__u32 t = 1; p->listed && t <= p->maxtype && t < FZ_MAX_TYPE; t++) {
		struct fz_attr *at = &p->a[t];
		struct fz_pending *pd = &fz->pend[fz->npend - 1];
		int reps = chance(fz, at->incl) ? (chance(fz, 10) ? 2 : 1) : 0;

		if (!at->kind)
			continue;
		if (pd->nuse < FZ_USES && !fz->unheard)
			pd->use[pd->nuse++] = (struct fz_use){
				.at = at, .off = fz->nest_off, .cat = reps ? FZ_USE_IN : FZ_USE_OUT,
			};
		while (reps-- && fz->out_len < FZ_OUT_SIZE - FZ_MSG_ROOM) {
			/*
			 * Of a duplicate the kernel reads the last one only,
			 * unless it walks them all (nests: PMU units).
			 */
			bool unheard = fz->unheard;

			fz->unheard |= reps > 0 && !is_nest(at->kind);
			if (fz->mutate && !fz->mutated && fz->kind != MUT_TRUNCATED &&
			    fz->victim-- == 0)
				put_mutated(fz, pol, t, at, depth);
			else
				put_valid(fz, t, at, depth, 0);
			fz->unheard = unheard;
		}
	}
}

/*
 * The mutations that need no attribute of the policy, at the end of the
 * message; returns how many bytes past the last aligned attribute belong
 * to the message (a header cut short).
 */
static size_t mutate_tail(struct fz *fz, int pol)
{
	struct nlattr h;
	__u8 buf[16];
	int n;

	fz->mutated = true;
	switch (fz->kind) {
	case MUT_TRUNCATED:
		switch (rnd(fz, 3)) {
		case 0:
			/* Part of a header only. */
			n = 1 + rnd(fz, NLA_HDRLEN - 1);
			h = (struct nlattr){ .nla_len = 8, .nla_type = 1 + rnd(fz, 4) };
			out_put(fz, &h, n);
			return n;
		case 1:
			/* A header claiming more than the message holds. */
			h = (struct nlattr){ .nla_len = 8 + rnd(fz, 64),
					     .nla_type = 1 + rnd(fz, 4) };
			out_put(fz, &h, sizeof(h));
			n = rnd(fz, 4);
			if (n) {
				out_put(fz, random_bytes(fz, buf, n), n);
				return n;
			}
			return 0;
		}
		/* A length shorter than the header itself. */
		h = (struct nlattr){ .nla_len = rnd(fz, NLA_HDRLEN), .nla_type = 1 + rnd(fz, 4) };
		out_put(fz, &h, sizeof(h));
		return 0;
	case MUT_GARBAGE:
		put_garbage(fz, chance(fz, 50) ? unknown_type(fz, pol) : 1 + rnd(fz, 8));
		return 0;
	}
	n = rnd(fz, 9);
	put_attr(fz, unknown_type(fz, pol) | (chance(fz, 20) ? NLA_F_NESTED : 0),
		 gen_random_bytes(fz, (char *)buf, n, false) ? buf : NULL, n);
	return 0;
}

/* Attribute types of policy @pol (its top level). */
static int pol_attrs(const struct fz *fz, int pol)
{
	int n = 0;

	for (int t = 0; pol >= 0 && t < FZ_MAX_TYPE; t++)
		n += !!fz->pol[pol].a[t].kind;
	return n;
}

/*
 * One fuzz message into the batch; returns whether it was a dump.  Each
 * message draws from a stream of its own, from the seed and its index: a
 * replay that takes another path somewhere (a kernel thread with that PID
 * in one boot only) soon makes the same messages again.
 */
static bool gen_message(struct fz *fz, long index)
{
	const struct fz_op *o;
	struct fz_pending *p;
	bool dump;
	int slot, pol;

	fz->rng = fz->seed ^ ((__u64)index * 0xd1342543de82ef95ull);
	o = &fz->ops[rnd(fz, fz->nops)];
	dump = (o->flags & GENL_CMD_CAP_DUMP) &&
	       (!(o->flags & GENL_CMD_CAP_DO) || chance(fz, 30));
	slot = 2 * (o - fz->ops) + dump;
	pol = o->pol[dump];
	p = msg_begin(fz, fz->family, o->cmd, dump, slot);
	size_t tail = 0;

	/* A quarter of the messages carry a mutation, on one of their first attributes. */
	fz->mutated = false;
	fz->mutate = chance(fz, 25);
	fz->kind = rnd(fz, MUT_KINDS);
	fz->victim = rnd(fz, pol_attrs(fz, pol) + 1);
	fz->nest_off = 0;
	fz->unheard = false;
	gen_policy(fz, pol, 0);
	if (fz->mutate && !fz->mutated)
		tail = mutate_tail(fz, pol);
	msg_end(fz, p, tail);
	p->mutated = fz->mutate;
	fz->slots[slot].sent++;
	return dump;
}

/* ---------------------------------------------------------------------------
 * Replies: names and ids for the pools.
 */

static void harvest_unit(struct fz *fz, const struct nlattr *nest)
{
	const struct nlattr *a;
	char s[FZ_STR];
	int rem;

	for (a = fz_nested_first(nest, &rem); a; a = fz_attr_next(a, &rem))
		if (attr_type(a) == KVMAI_A_UNIT_NAME && attr_str(a, s, sizeof(s)))
			ring_add(&fz->units, s);
}

static void on_reply(struct fz *fz, struct fz_pending *p, const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *gh = NLMSG_DATA(nlh);
	const struct nlattr *a;
	char s[FZ_STR];
	int rem;

	for (a = fz_genl_first(nlh, &rem); a; a = fz_attr_next(a, &rem)) {
		switch (gh->cmd) {
		case KVMAI_CMD_GROUP_NEW:
		case KVMAI_CMD_GROUP_GET:
			if (attr_type(a) == KVMAI_A_GROUP_NAME && attr_str(a, s, sizeof(s)))
				ring_add(&fz->groups, s);
			else if (attr_type(a) == KVMAI_A_GROUP_VM && attr_str(a, s, sizeof(s)))
				ring_add(&fz->vms, s);
			else if (attr_type(a) == KVMAI_A_GROUP_ID && attr_len(a) == 4)
				id_add(fz, attr_u(a));
			else if (attr_type(a) == KVMAI_A_GROUP_STATE &&
				 attr_u(a) == KVMAI_STATE_ENABLED)
				fz->enabled_seen++;
			else if (attr_type(a) == KVMAI_A_GROUP_PORT)
				fz->ports_seen++;
			break;
		case KVMAI_CMD_PMU_GET:
		case KVMAI_CMD_PMU_ASSIGN:
			if (attr_type(a) == KVMAI_A_PMU_VM && attr_str(a, s, sizeof(s)))
				ring_add(&fz->vms, s);
			else if (attr_type(a) == KVMAI_A_PMU_UNIT)
				harvest_unit(fz, a);
			break;
		case KVMAI_CMD_PMU_HOST_GET:
			if (attr_type(a) == KVMAI_A_PMU_HOST_UNIT)
				harvest_unit(fz, a);
			break;
		}
	}
}

/*
 * Whether the refusal of @p points at string use @u: extack's offset, or
 * for ENODEV ("no such thing") its text quoting the string.  Other errors
 * quote names in passing ("group X needs two members").
 */
static bool blames(const struct fz_pending *p, const struct fz_use *u)
{
	return (p->bad_off && p->bad_off == u->off) ||
	       (p->err == ENODEV && strlen(u->val) >= 3 && strstr(p->ext, u->val));
}

static void weigh(__u8 *w, int delta)
{
	int v = *w + delta;

	*w = v < 1 ? 1 : v > FZ_W_MAX ? FZ_W_MAX : v;
}

static void include_more(struct fz_attr *at, int delta)
{
	int v = at->incl + delta;

	at->incl = v < FZ_INCL_MIN ? FZ_INCL_MIN : v > FZ_INCL_MAX ? FZ_INCL_MAX : v;
}

/*
 * The generator learns from the outcome.  What a successful request did
 * is worth doing again for the same attribute.  A string the kernel found
 * bad (EINVAL, ERANGE, ENODEV with extack pointing at its attribute or
 * quoting it) makes its category less likely there.  A refusal other than
 * EINVAL or ERANGE (a missing object, a busy device, no such process)
 * means the strings it does not blame passed the handler's checks: a
 * little reward.  ENOENT, EEXIST or EBUSY say nothing against the name
 * they blame: they depend on what exists at the time.  An attribute the
 * kernel missed is given more often.  Mutated requests teach nothing.
 */
static void learn(struct fz *fz, const struct fz_pending *p)
{
	const struct fz_op *o = &fz->ops[p->slot / 2];
	int pol = o->pol[p->slot % 2];
	bool invalid = p->err == EINVAL || p->err == ERANGE;
	bool bad_value = invalid || p->err == ENODEV;

	if (p->mutated)
		return;
	for (int i = 0; i < p->nuse; i++) {
		const struct fz_use *u = &p->use[i];
		struct fz_attr *at = u->at;

		if (!p->err) {
			if (u->cat == FZ_USE_IN)
				include_more(at, 2);
			else if (u->cat == FZ_USE_OUT)
				include_more(at, -1);
			else
				weigh(&at->w[u->cat], 6);
		} else if (u->cat < NCAT) {
			if (blames(p, u)) {
				if (bad_value)
					weigh(&at->w[u->cat], -(at->w[u->cat] / 8 ?: 1));
			} else if (!invalid) {
				weigh(&at->w[u->cat], 1);
			}
		} else if (u->cat == FZ_USE_OUT && bad_value && p->bad_off &&
			   p->bad_off == u->off) {
			/* A nest refused: maybe for what it lacked. */
			include_more(at, 2);
		}
	}
	if (p->err && p->miss_type > 0 && !p->miss_nested && pol >= 0 &&
	    p->miss_type < FZ_MAX_TYPE)
		include_more(&fz->pol[pol].a[p->miss_type], 3);
}

static void tally_reason(struct fz_slot *s, const struct fz_pending *p)
{
	char text[FZ_REASON_LEN + 1];
	int i;

	if (p->err != EINVAL && p->err != ERANGE)
		return;
	snprintf(text, sizeof(text), "%s", p->ext[0] ? p->ext : "(no extack)");
	text[strcspn(text, "\"")] = '\0';
	for (i = 0; i < s->nreasons; i++)
		if (s->reasons[i].err == p->err && !strcmp(s->reasons[i].text, text))
			break;
	if (i == s->nreasons) {
		if (i == FZ_REASONS)
			return;
		s->nreasons++;
		s->reasons[i].err = p->err;
		memcpy(s->reasons[i].text, text, sizeof(text));
	}
	s->reasons[i].n++;
}

static void record(struct fz *fz, const struct fz_pending *p)
{
	struct fz_slot *s = &fz->slots[p->slot];

	learn(fz, p);
	if (p->err)
		tally_reason(s, p);
	if (!p->err) {
		s->ok++;
	} else if (p->err >= FZ_MAX_ERRNO) {
		s->other++;
	} else {
		if (!s->err[p->err]++)
			snprintf(s->example[p->err], sizeof(s->example[0]), "%s", p->ext);
	}
}

/* ---------------------------------------------------------------------------
 * Cleanup through lib/ (libnl), independent of the fuzzer's own framing.
 */

/* Deletes every group and releases every PMU owner; counts into @ng, @np. */
static int fz_clean(struct kt_nl *nl, int *ng, int *np)
{
	struct kt_req gd = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };
	struct kt_pmu_req pd = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };
	struct kt_group *g = calloc(KVMAI_MAX_GROUPS, sizeof(*g));
	struct kt_pmu *v = calloc(KVMAI_MAX_PMU_VMS, sizeof(*v));
	int n = 0, ret;

	*ng = *np = 0;
	if (!g || !v) {
		ret = -ENOMEM;
		goto out;
	}
	ret = _test_cmd_group_dump(nl, &gd, g, KVMAI_MAX_GROUPS, &n);
	for (int i = 0; !ret && i < n && i < KVMAI_MAX_GROUPS; i++) {
		struct kt_req del = { .cmd = KVMAI_CMD_GROUP_DEL, .name = g[i].name };

		ret = _test_cmd_group(nl, &del, NULL);
		/* A bind-socket group may go with its socket meanwhile. */
		if (ret == -ENOENT)
			ret = 0;
		*ng += !ret;
	}
	if (ret)
		goto out;
	n = 0;
	ret = _test_cmd_pmu_dump(nl, &pd, v, KVMAI_MAX_PMU_VMS, &n);
	for (int i = 0; !ret && i < n && i < KVMAI_MAX_PMU_VMS; i++) {
		struct kt_pmu_req rel = { .cmd = KVMAI_CMD_PMU_RELEASE, .vm = v[i].vm };

		ret = _test_cmd_pmu(nl, &rel, NULL);
		if (ret == -ENOENT)
			ret = 0;
		*np += !ret;
	}
out:
	free(g);
	free(v);
	return ret;
}

static int count_groups(struct kt_nl *nl, int *n)
{
	struct kt_req gd = { .cmd = KVMAI_CMD_GROUP_GET, .dump = true };

	*n = -1;
	return _test_cmd_group_dump(nl, &gd, NULL, 0, n);
}

static int count_pmu_vms(struct kt_nl *nl, int *n)
{
	struct kt_pmu_req pd = { .cmd = KVMAI_CMD_PMU_GET, .dump = true };

	*n = -1;
	return _test_cmd_pmu_dump(nl, &pd, NULL, 0, n);
}

/* ---------------------------------------------------------------------------
 * Setup shared by the tests.
 */

static struct fz *fz_alloc(void)
{
	struct fz *fz = calloc(1, sizeof(*fz));

	if (!fz)
		return NULL;
	fz->fd = -1;
	fz->out = malloc(FZ_OUT_SIZE);
	fz->rx = malloc((size_t)FZ_RX_SLOTS * FZ_RX_SIZE);
	if (!fz->out || !fz->rx) {
		free(fz->out);
		free(fz->rx);
		free(fz);
		return NULL;
	}
	return fz;
}

static void fz_free(struct fz *fz)
{
	if (!fz)
		return;
	if (fz->fd >= 0)
		close(fz->fd);
	free(fz->out);
	free(fz->rx);
	free(fz);
}

static void describe_policy(struct __test_metadata *_metadata, struct fz *fz, const char *what,
			    int pol)
{
	char line[1024];
	int n = 0;

	n += snprintf(line, sizeof(line), "%s: policy %d:", what, pol);
	if (!fz->pol[pol].listed)
		n += snprintf(line + n, sizeof(line) - n, " no attributes");
	for (__u32 t = 1; t <= fz->pol[pol].maxtype && n < (int)sizeof(line); t++) {
		const struct fz_attr *at = &fz->pol[pol].a[t];

		if (!at->kind)
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %u:%s", t, type_name(at->kind));
		if (n < (int)sizeof(line) && at->max_len)
			n += snprintf(line + n, sizeof(line) - n, "<=%u", at->max_len);
		if (n < (int)sizeof(line) && at->has_u && (at->min_u || at->max_u < UINT32_MAX))
			n += snprintf(line + n, sizeof(line) - n, "[%llu,%llu]",
				      (unsigned long long)at->min_u, (unsigned long long)at->max_u);
		if (n < (int)sizeof(line) && at->nested >= 0)
			n += snprintf(line + n, sizeof(line) - n, "->%d", at->nested);
	}
	ksft_print_msg("%s\n", line);
}

/* Policies first: nothing else happens if the kernel does not describe them. */
TEST(policies_are_exported)
{
	struct fz *fz = fz_alloc();
	char why[256] = "", nb[16], what[64];
	int attrs = 0, ret;

	ASSERT_NE(NULL, fz);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL) TH_LOG("cannot insmod %s", KT_KVMAI_PATH);
	fz->fd = fz_socket();
	ASSERT_LE(0, fz->fd) TH_LOG("netlink socket: %s", strerror(-fz->fd));
	ret = fz_discover(fz, why, sizeof(why));
	ASSERT_EQ(0, ret) TH_LOG("%s", why);
	EXPECT_EQ(0, fz->stray + fz->odd) TH_LOG("controller replies: %s", fz->odd_what);

	for (int i = 0; i < fz->nops; i++) {
		const struct fz_op *o = &fz->ops[i];

		for (int d = 0; d < 2; d++) {
			if (o->pol[d] < 0)
				continue;
			snprintf(what, sizeof(what), "%s %s", op_name(o->cmd, nb, sizeof(nb)),
				 d ? "dump" : "do");
			describe_policy(_metadata, fz, what, o->pol[d]);
		}
	}
	for (int p = 0; p < fz->npol; p++) {
		bool of_op = false;

		for (int i = 0; i < fz->nops; i++)
			of_op |= fz->ops[i].pol[0] == p || fz->ops[i].pol[1] == p;
		if (!of_op && fz->pol[p].listed)
			describe_policy(_metadata, fz, "nested", p);
	}
	/* Every nest points at a policy the dump described. */
	for (int p = 0; p < fz->npol; p++) {
		for (__u32 t = 0; t < FZ_MAX_TYPE; t++) {
			const struct fz_attr *at = &fz->pol[p].a[t];

			attrs += !!at->kind;
			if (!is_nest(at->kind) || at->nested < 0)
				continue;
			EXPECT_TRUE(fz->pol[at->nested].listed)
				TH_LOG("policy %d attr %u: nested policy %d has no attributes",
				       p, t, at->nested);
		}
	}
	/* With no attribute anywhere the fuzzer could only send empty requests. */
	EXPECT_LT(0, attrs) TH_LOG("%d ops, %d policies, no attribute in any", fz->nops,
				   fz->npol);
	TH_LOG("%d ops, %d op policies, %d policies, %d attribute types", fz->nops,
	       fz->op_policies, fz->npol, attrs);
	fz_free(fz);
}

FIXTURE(fuzz) {
	struct fz *fz;
	struct kt_nl nl;
	bool loaded_mock;
};

/*
 * Nothing here changes the host but loading modules, last: a failed
 * setup gets no teardown.  The test binds the endpoints itself.
 */
FIXTURE_SETUP(fuzz)
{
	char why[256] = "";
	struct fz *fz;

	if (!kt_dev("gpu0"))
		SKIP(return, "no device map at %s: not in the emulated host", KT_DEVICES_FILE);
	test_cmd_mod_load(KT_MOD_KVMAI, NULL) TH_LOG("cannot insmod %s", KT_KVMAI_PATH);
	ASSERT_EQ(0, kt_nl_open(&self->nl));
	fz = fz_alloc();
	self->fz = fz;
	ASSERT_NE(NULL, fz);
	fz->fd = fz_socket();
	ASSERT_LE(0, fz->fd) TH_LOG("netlink socket: %s", strerror(-fz->fd));
	ASSERT_EQ(0, fz_discover(fz, why, sizeof(why))) TH_LOG("%s", why);
	/*
	 * The mock PMU provider offers uncore units and a core PMU, so that
	 * pmu-assign can succeed; it goes again if this test loaded it.
	 */
	if (!access(KT_MOCK_PMU_PATH, F_OK) && !kt_mod_loaded(KT_MOD_MOCK_PMU)) {
		test_cmd_mod_load(KT_MOD_MOCK_PMU, NULL)
			TH_LOG("cannot insmod %s", KT_MOCK_PMU_PATH);
		self->loaded_mock = true;
	}
}

static const struct fz_pcidev *pci_find(const struct fz_pcidev *devs, int n, const char *bdf)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(devs[i].bdf, bdf))
			return &devs[i];
	return NULL;
}

FIXTURE_TEARDOWN(fuzz)
{
	struct fz *fz = self->fz;
	struct fz_pcidev now[128];
	int ng, np, n;

	/* Whatever the test left: groups first, so ports are restored. */
	if (self->nl.sk) {
		fz_clean(&self->nl, &ng, &np);
		kt_nl_close(&self->nl);
	}
	if (fz && fz->bound) {
		for (int i = 0; i < fz->nvfio; i++) {
			const struct fz_pcidev *was = pci_find(fz->pci_before, fz->npci_before,
							       fz->vfio[i]);
			char drv[64] = "";

			_test_cmd_pci_bind(fz->vfio[i], "");
			kt_pci_driver(fz->vfio[i], drv, sizeof(drv));
			if (was && was->driver[0] && strcmp(drv, was->driver))
				_test_cmd_pci_bind(fz->vfio[i], was->driver);
		}
		/* Every device on the driver it had. */
		n = pci_snapshot(now, 128);
		EXPECT_EQ(fz->npci_before, n);
		for (int i = 0; i < fz->npci_before; i++) {
			const struct fz_pcidev *was = &fz->pci_before[i];
			const struct fz_pcidev *is = pci_find(now, n, was->bdf);

			EXPECT_NE(NULL, is) TH_LOG("%s is gone", was->bdf);
			if (is)
				EXPECT_STREQ(was->driver, is->driver)
					TH_LOG("%s: driver '%s', was '%s'", was->bdf, is->driver,
					       was->driver);
		}
	}
	if (self->loaded_mock)
		EXPECT_EQ(0, _test_cmd_mod_unload(KT_MOD_MOCK_PMU))
			TH_LOG("rmmod kvmai_mock_pmu refused");
	fz_free(fz);
}

static long env_long(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 0);
	return *end ? def : v;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Extack text as the kernel echoes it: names of ours may be unprintable. */
static const char *printable(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++)
		out[i] = in[i] > ' ' - 1 && in[i] < 127 ? in[i] : '?';
	out[i] = '\0';
	return out;
}

static void print_slot(struct fz *fz, int i, int verbose)
{
	bool examples = verbose > 0;
	char pb[128];
	const struct fz_slot *s = &fz->slots[i];
	char line[1024], eb[16];
	int n;

	n = snprintf(line, sizeof(line), "fuzz: %s ok=%llu", s->name, (unsigned long long)s->ok);
	for (int e = 1; e < FZ_MAX_ERRNO && n < (int)sizeof(line); e++)
		if (s->err[e])
			n += snprintf(line + n, sizeof(line) - n, " %s=%llu",
				      errno_name(e, eb, sizeof(eb)), (unsigned long long)s->err[e]);
	if (s->other && n < (int)sizeof(line))
		snprintf(line + n, sizeof(line) - n, " other=%llu", (unsigned long long)s->other);
	ksft_print_msg("%s\n", line);
	for (int e = 1; examples && e < FZ_MAX_ERRNO; e++)
		if (s->err[e])
			ksft_print_msg("fuzz:   %s %s\n", errno_name(e, eb, sizeof(eb)),
				       s->example[e][0] ? printable(s->example[e], pb, sizeof(pb)) :
				       "(no extack)");
	for (int r = 0; verbose > 1 && r < s->nreasons; r++)
		ksft_print_msg("fuzz:     %6llu %s %s\n", (unsigned long long)s->reasons[r].n,
			       errno_name(s->reasons[r].err, eb, sizeof(eb)),
			       printable(s->reasons[r].text, pb, sizeof(pb)));
}

/* Ports whose ACS control differs from the snapshot, listed into @diff. */
static int acs_diff(const struct fz *fz, char *diff, size_t len)
{
	size_t used = 0;
	int n = 0;

	diff[0] = '\0';
	for (int i = 0; i < fz->npci; i++) {
		const struct fz_pcidev *p = &fz->pci[i];
		__u16 now = 0xdead;

		if (!p->acs)
			continue;
		kt_pci_read16(p->bdf, p->acs + PCI_ACS_CTRL, &now);
		if (now == p->acs_ctl)
			continue;
		n++;
		if (used < len)
			used += snprintf(diff + used, len - used, " %s:%#06x->%#06x", p->bdf,
					 p->acs_ctl, now);
	}
	return n;
}

/*
 * Binds the endpoints to vfio-pci (the teardown restores them) and takes
 * the pools' device names and BDFs and the ACS words to compare with.
 */
static void fz_host_setup(struct __test_metadata *_metadata, struct fz *fz)
{
	const struct kt_dev *devs[64];
	int n;

	fz->npci_before = pci_snapshot(fz->pci_before, 128);
	ASSERT_LT(0, fz->npci_before) TH_LOG("cannot read /sys/bus/pci/devices");
	fz->bound = true;
	for (size_t i = 0; i < FZ_NVFIO; i++) {
		const struct kt_dev *d = kt_dev(fz_vfio_names[i]);

		if (!d)
			continue;
		snprintf(fz->vfio[fz->nvfio++], sizeof(fz->vfio[0]), "%s", d->bdf);
		test_cmd_pci_bind(d->bdf, "vfio-pci")
			TH_LOG("cannot bind %s (%s) to vfio-pci", d->name, d->bdf);
	}
	ASSERT_LE(2, fz->nvfio) TH_LOG("fewer than two endpoints to group");

	/* ACS with the endpoints on vfio-pci, as the fuzz starts. */
	fz->npci = pci_snapshot(fz->pci, 128);
	ASSERT_EQ(fz->npci_before, fz->npci);
	for (int i = 0; i < fz->npci && fz->nbdf < 64; i++)
		snprintf(fz->bdf[fz->nbdf++], sizeof(fz->bdf[0]), "%s", fz->pci[i].bdf);
	n = kt_devs(devs, 64);
	for (int i = 0; i < n && fz->ndev_names < 64; i++)
		snprintf(fz->dev_names[fz->ndev_names++], sizeof(fz->dev_names[0]), "%s",
			 devs[i]->name);
	fz->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (int cpu = 0; cpu < fz->ncpu && fz->npkg < 7; cpu++) {
		char path[96], list[64] = "";
		FILE *f;
		int i;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list", cpu);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", list) != 1)
			list[0] = '\0';
		fclose(f);
		for (i = 0; i < fz->npkg && strcmp(fz->pkg[i], list); i++)
			;
		if (list[0] && i == fz->npkg)
			snprintf(fz->pkg[fz->npkg++], sizeof(fz->pkg[0]), "%s", list);
	}
	/* And every CPU: whole packages too. */
	snprintf(fz->pkg[fz->npkg++], sizeof(fz->pkg[0]), "0-%d", fz->ncpu - 1);
	ring_add(&fz->vms, "vm-fuzz");
}

/*
 * 100,000 requests built from the policies, batched; every one answered;
 * every operation reached past validation; nothing left behind.
 */
TEST_F_TIMEOUT(fuzz, random_messages_leave_no_trace, 600)
{
	struct fz *fz = self->fz;
	long total = env_long("KVMAI_FUZZ_MESSAGES", FZ_MESSAGES);
	int verbose = env_long("KVMAI_FUZZ_VERBOSE", 0);
	long sent = 0, next_clean = FZ_CLEAN_EVERY, batches = 0;
	int ng = 0, np = 0, cleaned_g = 0, cleaned_p = 0, n;
	const char *seed = getenv("KVMAI_FUZZ_SEED");
	struct kt_status st;
	char why[256], nb[16], diff[512];
	__u64 ok = 0;
	double t0, t1;

	ASSERT_LT(0, total);
	fz_host_setup(_metadata, fz);
	fz->seed = seed && *seed ? strtoull(seed, NULL, 0) :
		   (__u64)time(NULL) ^ ((__u64)getpid() << 32);
	ksft_print_msg("fuzz: seed %#llx (KVMAI_FUZZ_SEED=%#llx replays it), %ld messages\n",
		       (unsigned long long)fz->seed, (unsigned long long)fz->seed, total);
	for (int i = 0; i < fz->nops; i++)
		for (int d = 0; d < 2; d++)
			snprintf(fz->slots[2 * i + d].name, sizeof(fz->slots[0].name), "%s%s",
				 op_name(fz->ops[i].cmd, nb, sizeof(nb)), d ? "-dump" : "");

	t0 = now_s();
	while (sent < total) {
		long room = total - sent;
		int ret;

		if (room > FZ_BATCH)
			room = FZ_BATCH;
		if (room > next_clean - sent)
			room = next_clean - sent;
		fz->npend = 0;
		fz->out_len = 0;
		/*
		 * One dump per batch, last: a second one would find the first
		 * still running (EBUSY), and the first one's later parts come
		 * only as the replies are read.
		 */
		while (fz->npend < room && fz->out_len < FZ_OUT_FILL)
			if (gen_message(fz, sent + fz->npend))
				break;
		fz->on_data = on_reply;
		ret = fz_exchange(fz, why, sizeof(why));
		if (ret) {
			int shown = 0;

			TH_LOG("batch %ld (messages %ld..%ld, seed %#llx): %s", batches, sent,
			       sent + fz->npend - 1, (unsigned long long)fz->seed, why);
			for (int i = 0; i < fz->npend && shown < 4; i++) {
				const struct fz_pending *p = &fz->pend[i];

				if (p->final)
					continue;
				TH_LOG("unanswered: message %ld, %s, %zu bytes:", sent + i,
				       fz->slots[p->slot].name, p->len);
				hexdump(_metadata, fz->out + p->off, p->len < 512 ? p->len : 512);
				shown++;
			}
			ASSERT_EQ(0, ret);
		}
		for (int i = 0; i < fz->npend; i++)
			record(fz, &fz->pend[i]);
		sent += fz->npend;
		batches++;
		if (sent < next_clean || sent == total)
			continue;
		/*
		 * A new socket: the old one's bind-socket groups and PMU
		 * owners go with it, enabled or not.  Then the rest by name,
		 * and every port must be as it was.
		 */
		close(fz->fd);
		fz->fd = fz_socket();
		ASSERT_LE(0, fz->fd) TH_LOG("netlink socket: %s", strerror(-fz->fd));
		ret = fz_clean(&self->nl, &ng, &np);
		ASSERT_EQ(0, ret) TH_LOG("cleanup after %ld messages: %s", sent, strerror(-ret));
		cleaned_g += ng;
		cleaned_p += np;
		ASSERT_EQ(0, acs_diff(fz, diff, sizeof(diff)))
			TH_LOG("ACS not restored after messages %ld..%ld (seed %#llx):%s",
			       next_clean - FZ_CLEAN_EVERY, sent - 1,
			       (unsigned long long)fz->seed, diff);
		next_clean += FZ_CLEAN_EVERY;
	}
	t1 = now_s();
	ksft_print_msg(FZ_SENT_FMT, sent, batches, t1 - t0, sent / (t1 - t0), cleaned_g,
		       cleaned_p);
	ksft_print_msg("fuzz: replies showed an enabled group %llu times, %llu programmed ports\n",
		       (unsigned long long)fz->enabled_seen, (unsigned long long)fz->ports_seen);

	for (int i = 0; i < 2 * fz->nops; i++) {
		struct fz_slot *s = &fz->slots[i];
		__u64 refused = s->err[EINVAL] + s->err[ERANGE];

		if (!s->sent)
			continue;
		ok += s->ok;
		print_slot(fz, i, refused == s->sent && !verbose ? 1 : verbose);
		EXPECT_LT(refused, s->sent)
			TH_LOG("%s: all %llu messages refused with EINVAL/ERANGE: %s",
			       s->name, (unsigned long long)s->sent,
			       "the generator does not get past validation");
	}
	EXPECT_LT(0, ok) TH_LOG("no request succeeded");
	/* KVMAI_FUZZ_VERBOSE=3: what the generator learnt, for tuning it. */
	for (int p = 0; verbose > 2 && p < fz->npol; p++) {
		for (int t = 0; t < FZ_MAX_TYPE; t++) {
			const struct fz_attr *at = &fz->pol[p].a[t];
			char line[160];
			int k = 0;

			if (!at->kind)
				continue;
			for (int c = 0; c < NCAT && is_string(at->kind); c++)
				k += snprintf(line + k, sizeof(line) - k, " %u", at->w[c]);
			line[k] = '\0';
			ksft_print_msg("fuzz: learnt: policy %d attr %d: incl %u%%%s%s\n", p, t,
				       at->incl, k ? ", weights" : "", line);
		}
	}
	/* Short runs may miss an operation; the full one must reach them all. */
	for (int i = 0; total >= 10000 && i < fz->nops; i++) {
		const struct fz_op *o = &fz->ops[i];

		EXPECT_TRUE(!(o->flags & GENL_CMD_CAP_DO) || fz->slots[2 * i].sent)
			TH_LOG("%s never sent", fz->slots[2 * i].name);
		EXPECT_TRUE(!(o->flags & GENL_CMD_CAP_DUMP) || fz->slots[2 * i + 1].sent)
			TH_LOG("%s never sent", fz->slots[2 * i + 1].name);
	}
	EXPECT_EQ(0, fz->stray + fz->odd)
		TH_LOG("%llu stray and %llu odd replies, first: %s",
		       (unsigned long long)fz->stray, (unsigned long long)fz->odd, fz->odd_what);

	/* Now nothing may be left: no group, no owner, ACS as it was. */
	close(fz->fd);
	fz->fd = -1;
	ASSERT_EQ(0, fz_clean(&self->nl, &ng, &np));
	TH_LOG("final cleanup: %d groups deleted, %d PMU owners released", ng, np);
	EXPECT_EQ(0, count_groups(&self->nl, &n));
	EXPECT_EQ(0, n) TH_LOG("groups left after deleting every one");
	EXPECT_EQ(0, count_pmu_vms(&self->nl, &n));
	EXPECT_EQ(0, n) TH_LOG("PMU owners left after releasing every one");
	EXPECT_EQ(0, acs_diff(fz, diff, sizeof(diff))) TH_LOG("ACS not restored:%s", diff);
	EXPECT_EQ(0, _test_cmd_status_get(&self->nl, &st))
		TH_LOG("status-get after the fuzz");
	TH_LOG("seed %#llx", (unsigned long long)fz->seed);
}

TEST_HARNESS_MAIN
