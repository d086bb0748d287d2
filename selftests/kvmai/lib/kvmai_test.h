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
/* kvmai's uncore registry, only for kernels without the series' one. */
#define KVMAI_COMPAT_PATH "/kvmai/uncore_guest.ko"
/* Test-only fake PMUs (kmod/mock). */
#define KVMAI_MOCK_PATH "/kvmai/kvmai_mock_pmu.ko"
/* Test-only counter pages (kmod/mock), on kernels with mediated devices. */
#define KVMAI_MOCK_COUNTERS_PATH "/kvmai/kvmai_mock_counters.ko"
/* Test-only: an SR-IOV PF whose VFs sit on the next bus (kmod/mock). */
#define KVMAI_MOCK_VFBUS_PATH "/kvmai/kvmai_mock_vfbus.ko"

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
/* A named device's BDF, and the port directly above it; "none" if unknown. */
const char *kt_bdf(const char *name);
const char *kt_port(const char *name);
/*
 * Bind the @n named devices to vfio-pci, each one's driver saved first in
 * @saved[i]; returns how many were bound, so names[ret] failed if ret < n.
 */
size_t kt_bind_vfio(const char *const *names, size_t n, char (*saved)[64]);
/* Fills up to @max entries, returns how many (0 without a map). */
int kvmai_devs(const struct kvmai_dev **out, int max);

/* PCI config space through sysfs; returns bytes read or -errno. */
int pci_cfg_read(const char *bdf, unsigned int off, void *buf, size_t len);
int pci_cfg_read16(const char *bdf, unsigned int off, uint16_t *val);
/* As root, behind the kernel's back: 0 or -errno. */
int pci_cfg_write16(const char *bdf, unsigned int off, uint16_t val);
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
/* Exit status of a command (-1 if it did not exit), its stdout and stderr into @out. */
int kt_sh(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * Runs @body(@arg) in a forked child, which exits with what it returns:
 * that exit code, or -errno if there is no child, -ECHILD if it did not
 * exit.
 */
int kt_child(int (*body)(void *arg), void *arg);
/* Writes @val to sysfs file @path: 0 or -errno (the write's own error). */
int sysfs_write_ret(const char *path, const char *val);
/* The number in sysfs file @path, or -errno (-EINVAL: not a number). */
long sysfs_read_long(const char *path);

bool kvmai_module_loaded(void);
int kvmai_module_load(void);
/* insmod kvmai.ko with module parameters; -EBUSY if it is loaded. */
int kvmai_module_load_with(const char *params);
int kvmai_module_unload(void);
bool kvmai_mock_loaded(void);
int kvmai_mock_load(void);
int kvmai_mock_unload(void);
/* kvmai_mock_vfbus for the PF at BDF @pf: 0 or -EIO. */
bool kvmai_mock_vfbus_loaded(void);
int kvmai_mock_vfbus_load(const char *pf);
int kvmai_mock_vfbus_unload(void);

struct kvmai_status {
	char version[64];
	uint32_t api_version;
	char kernel[128];
	uint32_t features;	/* enum kvmai_feature */
	int64_t restore_pending;	/* -1: the module does not say */
};

/* Whether the running kernel exports @symbol (from /proc/kallsyms). */
bool kernel_has_symbol(const char *symbol);
/* The same, with the module that provides it into @module ("" built in). */
bool kernel_symbol(const char *symbol, char *module, size_t len);

struct nl_sock;
/* Connected generic netlink socket and the family id, or NULL/-errno. */
struct nl_sock *kvmai_genl_open(int *family);
/* The same, receiving into a buffer of @buf bytes only (0: libnl's default). */
struct nl_sock *kvmai_genl_open_buf(int *family, size_t buf);
void kvmai_genl_close(struct nl_sock *sk);
/* Send a bare command; returns 0 or -errno, extack text into @ext. */
int kvmai_genl_cmd(struct nl_sock *sk, int family, uint8_t cmd,
		   char *ext, size_t ext_len);
int kvmai_status_get(struct nl_sock *sk, int family, struct kvmai_status *st);

/* A group as the kernel reports it (group-new/get replies, notifications). */
#define KT_MAX 128	/* ports and pairs: a 16-member group has 120 pairs */

/*
 * ACS control of every port that has ACS, read from config space: what a
 * test compares before and after the module (or libvirt's hook) acted.
 */
struct acs_snap {
	int n;
	char bdf[KT_MAX][16];
	uint16_t ctl[KT_MAX];
};

void snap_take(struct acs_snap *s);
/* The word of port @bdf in @s, 0xdead if it has none. */
uint16_t snap_get(const struct acs_snap *s, const char *bdf);
/* The word of port @bdf now, 0xdead if it has no ACS. */
uint16_t acs_now(const char *bdf);
/* How many ports' words differ between @a and @b, listed in @diff. */
int snap_diff(const struct acs_snap *a, const struct acs_snap *b, char *diff, size_t len);
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
	int parts;		/* messages it came in (a dump may split it) */
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
/*
 * One request of @cmd: @fill adds its attributes, @valid sees each reply
 * message.  Returns 0 or -errno; extack text (error or warning) in @ext.
 */
int kt_exchange(struct nl_sock *sk, int family, uint8_t cmd, bool dump,
		void (*fill)(struct nl_msg *msg, const void *arg), const void *fill_arg,
		int (*valid)(struct nl_msg *msg, void *arg), void *valid_arg,
		char *ext, size_t ext_len);
/* Attribute values, or "" / 0 for an absent attribute. */
struct nlattr;
void kt_get_str(char *dst, size_t len, struct nlattr *a);
uint32_t kt_get_u32(struct nlattr *a);
/* A new socket already in the monitor group, or NULL. */
struct nl_sock *kt_monitor_open(void);
/* Become nobody (for good: call in a child) and open a socket, or NULL. */
struct nl_sock *kt_open_unprivileged(int *family);
/* Join the monitor multicast group; messages then come from kt_receive. */
int kt_monitor(struct nl_sock *sk);
/* Messages that arrive within @timeout_ms go to @valid: 1, 0 none, -errno. */
int kt_poll(struct nl_sock *sk, int (*valid)(struct nl_msg *msg, void *arg), void *arg,
	    int timeout_ms);
/* Next notification within @timeout_ms: 1 received, 0 none, -errno. */
int kt_receive(struct nl_sock *sk, struct kt_group *out, int timeout_ms);

/* PMU ownership (lib/pmu.c). */
struct kt_unit {
	char name[64];
	uint32_t type, ranges, host_events;
	char vm[64];		/* owner, host view only */
	int nmsr;		/* MSR ranges listed (pmu-get) */
	uint32_t counter_msr;	/* first readable one: drivers pass reads of counters only */
	uint32_t offline_pkgs;	/* bit N: reserved package N has no online CPU (pmu-get) */
	bool core_select;	/* its controls choose the cores it counts */
	uint32_t scope;		/* enum kvmai_scope, 0 when not reported */
	int64_t hotplug_scrubs;	/* -1 when not reported */
};

struct kt_pmu {
	uint8_t cmd;
	char vm[64];
	bool core, shared, bind_socket;
	uint32_t pid;
	char cpus[256];
	int npkgs, nunits;
	uint32_t pkgs[8];
	struct kt_unit units[16];
};

struct kt_conflict {
	char pmu[32], comm[16];
	uint32_t cpu, pid;
	uint64_t config;
};

struct kt_pmu_host {
	bool core_capable, has_core_info;
	uint32_t fences, include_guest;
	int nconflicts, nunits;
	struct kt_conflict conflicts[8];
	struct kt_unit units[16];
};

struct kt_pmu_req {
	uint8_t cmd;		/* KVMAI_CMD_PMU_{GET,ASSIGN,RELEASE} */
	const char *vm;
	bool core;
	const char *units[8];
	const char *cpus;
	bool shared;
	uint32_t pid;		/* 0: left out */
	bool bind_socket;
	bool dump;
};

int kt_pmu_request(struct nl_sock *sk, int family, const struct kt_pmu_req *req,
		   struct kt_pmu *out, int max, int *n, char *ext, size_t ext_len);
int kt_pmu_host(struct nl_sock *sk, int family, struct kt_pmu_host *out,
		char *ext, size_t ext_len);
/* Next pmu-change notification within @timeout_ms: 1, 0 none, -errno. */
int kt_pmu_receive(struct nl_sock *sk, struct kt_pmu *out, int timeout_ms);
/* The perf type of @pmu (by sysfs name), or -errno. */
int kt_perf_type(const char *pmu);
/* A system-wide counting event on @pmu (by sysfs name): fd or -errno. */
int kt_perf_open(const char *pmu, int cpu, bool exclude_guest);
/* Whether such an event can be opened now: 0 or -errno (closed again). */
int kt_perf_try(const char *pmu, int cpu, bool exclude_guest);
/* The CPUs of @cpu's package as a cpulist, and how many; -errno. */
int kt_package_cpus(int cpu, char *list, size_t len);
/*
 * The mock provider's register @msr of @unit on package @pkg, and its count
 * of registry writes, from debugfs (kmod/mock/kvmai_mock_pmu.c): 0 or -errno.
 */
int kt_mock_reg(const char *unit, unsigned int pkg, uint32_t msr,
		uint64_t *val, long *writes);

/* Guests of the emulated host (lib/l2.c). */

/* L1's KVM statistics of the VM running L2, at one moment. */
struct kt_exits {
	double t;		/* CLOCK_MONOTONIC, seconds */
	long io, mmio, all;	/* io_exits, mmio_exits, exits; -1 if unknown */
};

/* Statistic @name of the one VM L1's KVM runs (debugfs), or -1. */
long kt_kvm_vm_stat(const char *name);
void kt_exits_now(struct kt_exits *e);
/* Waits @start_us, then samples @from and, @len_us later, @to; true. */
bool kt_exits_window(struct kt_exits *from, struct kt_exits *to, unsigned int start_us,
		     unsigned int len_us);
/* The whole of @path, NUL-terminated, in @buf; its length or -1. */
long kt_slurp(const char *path, char *buf, size_t len);
/* Whether file @path contains @line. */
bool kt_file_has(const char *path, const char *line);

/* Counters devices (lib/ctrdev.c). */
struct vfio_region_info;

struct kt_vfio {
	int container, group, device;
};

int kvmai_mock_counters_load(const char *params);
bool kvmai_mock_counters_loaded(void);
int kvmai_mock_counters_unload(void);
/* A module parameter of the mock, or -errno. */
long kt_mock_counters_param(const char *name);
/* Creates the counters device of @unit on package 0; its UUID in @uuid.  0 or -errno. */
int kt_ctrdev_create(const char *unit, char *uuid, size_t len);
int kt_ctrdev_remove(const char *uuid);
void kt_ctrdev_remove_all(void);
/* The device's kvmai/ sysfs attribute @attr (unit, vm, state). */
int kt_ctrdev_attr(const char *uuid, const char *attr, char *buf, size_t len);
/* Opens the device as QEMU does: its group in a type1 container. */
int kt_vfio_open(const char *uuid, struct kt_vfio *v);
void kt_vfio_close(struct kt_vfio *v);
int kt_vfio_region(const struct kt_vfio *v, unsigned int index, struct vfio_region_info *info);
/* Whether the kernel's last lines of log contain @needle. */
bool kt_kmsg_has(const char *needle);

/* The test-only mock provider's L3 unit (kmod/mock): a control and counter. */
#define KT_MOCK_L3 "mock_uncore_l3"
#define KT_MOCK_L3_CTL0 0xc0010230
#define KT_MOCK_L3_CTR0 0xc0010231
#define KT_MOCK_L3_RDPMC0 10	/* AMD's RDPMC index of the first L3 counter */
#define KT_MOCK_DF "mock_uncore_df"
#define KT_MOCK_DF_CTL0 0xc0010240
/* What the mock's bring-up of a package writes to pair 0's control (enable). */
#define KT_MOCK_INIT_CTL (1ULL << 22)

/* A KVM guest accessing one MSR in a loop (lib/kvm_guest.c). */
#ifndef KVM_CAP_X86_UNCORE_PASSTHROUGH
#define KVM_CAP_X86_UNCORE_PASSTHROUGH 1000	/* kvm-ai series, out of tree */
#endif
#ifndef KVM_X86_UNCORE_DETACH
#define KVM_X86_UNCORE_DETACH (1ULL << 0)
#endif

struct kvm_run;

struct kt_vm {
	int kvm, fd, vcpu, stats;
	struct kvm_run *run;
	size_t run_size;
	void *mem;
	long exits_off;
};

struct kt_counts {
	uint64_t exits;		/* VM exits between the two port writes */
	unsigned int to_user;	/* of which MSR exits to userspace */
	uint64_t ns;		/* wall time between them */
	uint64_t last;		/* edx:eax after the last access */
	bool gp;		/* the guest took a #GP instead */
};

/* What the guest does with its MSR (or, for RDPMC, counter index). */
enum kt_op { KT_RDMSR, KT_WRMSR, KT_RDPMC };

/* A VM with one vCPU and MSR exits to userspace for unknown MSRs. */
int kt_vm_create(struct kt_vm *v);
/* The same, with KVM_CAP_PMU_CAPABILITY @pmu_caps (if not 0) set first. */
int kt_vm_create_pmu(struct kt_vm *v, uint64_t pmu_caps);
void kt_vm_destroy(struct kt_vm *v);
/* Runs @loops reads (or writes of 0) of @msr once: 0 or -errno. */
int kt_vm_measure(struct kt_vm *v, uint32_t msr, uint16_t loops, bool write,
		  struct kt_counts *c);
/* The same for any @op; WRMSR writes @value (high half 0). */
int kt_vm_run(struct kt_vm *v, uint32_t msr, uint16_t loops, enum kt_op op,
	      uint32_t value, struct kt_counts *c);
/* /dev/kvmai: a handle on unit @unit of PMU record @vm, or -errno. */
int kt_unit_fd(const char *vm, const char *unit);
/* KVM_CAP_X86_UNCORE_PASSTHROUGH with handle @fd: attach (or detach). */
int kt_vm_uncore_fd(struct kt_vm *v, int fd, bool detach);
/* Both: takes the handle of @unit of @vm, attaches (detaches), closes it. */
int kt_vm_uncore(struct kt_vm *v, const char *vm, const char *unit, bool detach);
bool kt_kvm_has_cap(int cap);
/* Runs this process (and so its vCPU) on the CPUs of cpulist @list only. */
int kt_pin(const char *list);

#endif /* KVMAI_TEST_H */
