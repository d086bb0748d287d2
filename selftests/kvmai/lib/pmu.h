/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PMU ownership through the family (pmu-* requests, their replies and
 * notifications), perf events on the host, and the test-only mock
 * provider's units (kmod/testing/kvmai_mock_pmu.c).
 */
#ifndef KT_PMU_H
#define KT_PMU_H

#include "netlink.h"

struct kt_unit {
	char name[64];
	__u32 type, ranges, host_events;
	char vm[64];		/* owner, host view only */
	int nmsr;		/* MSR ranges listed (pmu-get) */
	__u32 counter_msr;	/* first readable one: drivers pass reads of counters only */
	__u32 offline_pkgs;	/* bit N: reserved package N has no online CPU (pmu-get) */
	bool core_select;	/* its controls choose the cores it counts */
	__u32 scope;		/* enum kvmai_scope, 0 when not reported */
	__s64 hotplug_scrubs;	/* -1 when not reported */
};

/* A VM's PMU record as the module reports it. */
struct kt_pmu {
	__u8 cmd;
	char vm[64];
	bool core, shared, bind_socket;
	__u32 pid;
	char cpus[256];
	int npkgs, nunits;
	__u32 pkgs[8];
	struct kt_unit units[32];
};

struct kt_conflict {
	char pmu[32], comm[16];
	__u32 cpu, pid;
	__u64 config;
};

/* pmu-host-get's reply. */
struct kt_pmu_host {
	bool core_capable, has_core_info;
	__u32 fences, include_guest;
	int nconflicts, nunits;
	struct kt_conflict conflicts[8];
	struct kt_unit units[48];
};

/* One request: unset fields are left out of the message. */
struct kt_pmu_req {
	__u8 cmd;		/* KVMAI_CMD_PMU_{GET,ASSIGN,RELEASE} */
	const char *vm;
	bool core;
	const char *units[32];
	const char *cpus;
	bool shared;
	__u32 pid;		/* 0: left out */
	bool bind_socket;
	bool dump;
};

/*
 * Sends @req; the records of the reply go to @out, up to @max, their count
 * to *@n if @n.  0 or -errno.
 */
int _test_cmd_pmu_dump(struct kt_nl *nl, const struct kt_pmu_req *req,
		       struct kt_pmu *out, int max, int *n);
/* The same for a do request: the reply's record to @out if @out. */
int _test_cmd_pmu(struct kt_nl *nl, const struct kt_pmu_req *req, struct kt_pmu *out);
#define test_cmd_pmu(req, out) __kt_cmd(_test_cmd_pmu(&self->nl, req, out))
#define test_err_pmu(err, req, out) __kt_err(err, _test_cmd_pmu(&self->nl, req, out))
int _test_cmd_pmu_host(struct kt_nl *nl, struct kt_pmu_host *out);
#define test_cmd_pmu_host(out) __kt_cmd(_test_cmd_pmu_host(&self->nl, out))

/* The next pmu-change notification within @timeout_ms: 1, 0 none, -errno. */
int kt_nl_receive_pmu(struct kt_nl *nl, struct kt_pmu *out, int timeout_ms);

/* The perf type of @pmu (by sysfs name), or -errno. */
int kt_perf_type(const char *pmu);
/* A system-wide counting event on @pmu (by sysfs name): fd or -errno. */
int kt_perf_open(const char *pmu, int cpu, bool exclude_guest);
/* Whether such an event can be opened now: 0 or -errno (closed again). */
int kt_perf_try(const char *pmu, int cpu, bool exclude_guest);

/* The mock provider's L3 unit, where AMD's L3 PMU has its registers. */
#define KT_MOCK_L3 "mock_uncore_l3"
#define KT_MOCK_L3_CTL0 0xc0010230
#define KT_MOCK_L3_CTR0 0xc0010231
#define KT_MOCK_L3_RDPMC0 10	/* AMD's RDPMC index of the first L3 counter */
#define KT_MOCK_DF "mock_uncore_df"
#define KT_MOCK_DF_CTL0 0xc0010240
/* Its Intel-style unit: Skylake-SP's CHA box 0, counters read-only for guests. */
#define KT_MOCK_CHA "mock_uncore_cha"
#define KT_MOCK_CHA_CTL0 0xe01
#define KT_MOCK_CHA_CTR0 0xe08
/* The enable bit of the mock's controls (AMD's), set by a started host event. */
#define KT_MOCK_CTL_EN 0x400000ULL
/* What the mock's bring-up of a package writes to pair 0's control (enable). */
#define KT_MOCK_INIT_CTL KT_MOCK_CTL_EN

/*
 * The mock's register @msr of @unit on package @pkg, and its count of
 * registry writes, from debugfs: 0 or -errno.
 */
int kt_mock_pmu_reg(const char *unit, unsigned int pkg, __u32 msr, __u64 *val, long *writes);

/*
 * The mock's scrub probe: armed, each registry write of a mock unit asks
 * the registry whether it would take a host event on that package now.
 * kt_mock_scrub_probe() arms it with its counts cleared, or disarms it;
 * kt_mock_scrub_probed() reads the answers so far.  0 or -errno.
 */
int kt_mock_scrub_probe(bool on);
/* Drops the mock's core fences as KVM drops its own when kvm_amd goes. */
int kt_mock_drop_fences(void);
int kt_mock_scrub_probed(int *opened, int *refused);

#endif /* KT_PMU_H */
