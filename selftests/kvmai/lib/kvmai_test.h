/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the kvmai selftests: the emulated host's device map,
 * PCI config space read independently of the module, driver binding, the
 * module's load state, and the kvmai generic netlink family via libnl.
 */
#ifndef KVMAI_TEST_H
#define KVMAI_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nl_msg;

/* Written by the emulated host's init from aihost.toml. */
#define KVMAI_DEVICES_FILE "/run/kvmai/devices"
#define KVMAI_MODULE_PATH "/kvmai/kvmai.ko"

struct kvmai_dev {
	char name[32];
	char bdf[16];
	char role[8];
	char sw[16];
	int numa;
	bool ats;	/* offers ATS; the kernel should have enabled it */
	bool sriov;
	bool acs_port;	/* the port above it is expected to carry ACS */
	char port[16];	/* BDF of the bridge directly above */
};

/* Device map; NULL if the name is unknown (or there is no map). */
const struct kvmai_dev *kvmai_dev(const char *name);
/* Fills up to @max entries, returns how many (0 without a map). */
int kvmai_devs(const struct kvmai_dev **out, int max);

/* PCI config space through sysfs; returns bytes read or -errno. */
int pci_cfg_read(const char *bdf, unsigned int off, void *buf, size_t len);
int pci_cfg_read16(const char *bdf, unsigned int off, uint16_t *val);
/* Offset of extended capability @id, 0 if absent, -errno on error. */
int pci_ext_cap(const char *bdf, uint16_t id);
/* Name of the bound driver into @buf ("" when unbound). */
int pci_driver(const char *bdf, char *buf, size_t len);
/* Rebind to @driver via driver_override ("" restores default matching). */
int pci_bind(const char *bdf, const char *driver);
/* IOMMU group number, -errno if none. */
int pci_iommu_group(const char *bdf);
/* Run a shell command, capture up to @len bytes of stdout; returns status. */
int run_capture(const char *cmd, char *buf, size_t len);

bool kvmai_module_loaded(void);
int kvmai_module_load(void);
int kvmai_module_unload(void);

struct kvmai_status {
	char version[64];
	uint32_t api_version;
	char kernel[128];
	uint32_t features;	/* enum kvmai_feature */
};

/* Whether the running kernel exports @symbol (from /proc/kallsyms). */
bool kernel_has_symbol(const char *symbol);

struct nl_sock;
/* Connected generic netlink socket and the family id, or NULL/-errno. */
struct nl_sock *kvmai_genl_open(int *family);
void kvmai_genl_close(struct nl_sock *sk);
/* Send a bare command; returns 0 or -errno, extack text into @ext. */
int kvmai_genl_cmd(struct nl_sock *sk, int family, uint8_t cmd,
		   char *ext, size_t ext_len);
int kvmai_status_get(struct nl_sock *sk, int family, struct kvmai_status *st);

/* A group as the kernel reports it (group-new/get replies, notifications). */
#define KT_MAX 64
struct kt_port {
	char addr[16];
	uint32_t cap, saved, target, current, users;
};

struct kt_member {
	char addr[16];
	char driver[32];
	int ats;
	int nbars;
	uint64_t bar_addr[6], bar_size[6];
};

struct kt_pair {
	char a[16], b[16], via[16];
	uint32_t type;
};

struct kt_group {
	uint8_t cmd;		/* of the message it came from */
	char name[32];
	char vm[64];
	uint32_t id, mode, state;
	bool bind_socket;
	int nmembers, nports, npairs;
	struct kt_member members[16];
	struct kt_port ports[KT_MAX];
	struct kt_pair pairs[KT_MAX];
};

/* One request: unset fields are left out of the message. */
struct kt_req {
	uint8_t cmd;
	const char *name;
	const char *vm;
	const char *pci;
	uint32_t mode;
	uint32_t state;
	bool bind_socket;
	bool dump;
	/* Adds raw attributes, for malformed-message tests. */
	void (*extra)(struct nl_msg *msg);
};

/*
 * Send @req; the reply's groups (one for do, all for dump) go to @out (up
 * to @max, count in *@n if @n).  Returns 0 or -errno; extack text in @ext.
 */
int kt_request(struct nl_sock *sk, int family, const struct kt_req *req,
	       struct kt_group *out, int max, int *n, char *ext, size_t ext_len);
/* Join the monitor multicast group; messages then come from kt_receive. */
int kt_monitor(struct nl_sock *sk);
/* Next notification within @timeout_ms: 1 received, 0 none, -errno. */
int kt_receive(struct nl_sock *sk, struct kt_group *out, int timeout_ms);

#endif /* KVMAI_TEST_H */
