/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/kvmai.yaml */
/* YNL-GEN uapi header */
/* To regenerate run: tools/net/ynl/ynl-regen.sh */

#ifndef _UAPI_LINUX_KVMAI_H
#define _UAPI_LINUX_KVMAI_H

#define KVMAI_FAMILY_NAME	"kvmai"
#define KVMAI_FAMILY_VERSION	1

#define KVMAI_API_VERSION	1
#define KVMAI_NAME_LEN		32
#define KVMAI_VM_LEN		64
#define KVMAI_CPUS_LEN		256
#define KVMAI_MAX_GROUPS	256
#define KVMAI_MAX_PMU_VMS	256
#define KVMAI_UNIT_LEN		64

/**
 * enum kvmai_feature - Kernel interfaces the module found when it was built.
 * @KVMAI_FEATURE_ACS_OVERRIDE: pci_acs_override() (kvm-ai patch series): ACS
 *   changes go through the PCI core, survive port resets and are refused
 *   during them.
 * @KVMAI_FEATURE_VFIO_NOTIFY: vfio device open/close notifications (kvm-ai
 *   patch series): a group is disabled when the VMM closes a member, even if
 *   killed.
 * @KVMAI_FEATURE_CORE_FENCE: KVM's core PMU fence and perf's report on it
 *   (kvm-ai patch series): the module fences the host off the core PMU for its
 *   owners through KVM, where KVM gives VMs a mediated vPMU, sees whether a
 *   PMU supports the mediated vPMU and lists host events that block the fence.
 * @KVMAI_FEATURE_UNCORE_RESERVE: The kernel's uncore reservation registry
 *   (kvm-ai patch series): real uncore drivers offer their units and KVM
 *   passes reserved counters through. Without it the module's own copy of the
 *   registry serves only providers built against it (the test mock).
 */
enum kvmai_feature {
	KVMAI_FEATURE_ACS_OVERRIDE = 1,
	KVMAI_FEATURE_VFIO_NOTIFY = 2,
	KVMAI_FEATURE_CORE_FENCE = 4,
	KVMAI_FEATURE_UNCORE_RESERVE = 8,
};

/**
 * enum kvmai_mode - How members of a group reach each other.
 * @KVMAI_MODE_TRANSLATED: ATS-translated requests are routed directly by the
 *   switch (ACS direct translated P2P set on the ports between members);
 *   requests with untranslated addresses still go through the IOMMU.
 * @KVMAI_MODE_DIRECT: ACS P2P request/completion redirect and egress control
 *   are cleared on the ports between members, so untranslated requests route
 *   by address in the switch. Needs guest BARs at GPA == HPA and every
 *   endpoint below those ports in the group.
 */
enum kvmai_mode {
	KVMAI_MODE_TRANSLATED = 1,
	KVMAI_MODE_DIRECT,
};

enum kvmai_state {
	KVMAI_STATE_DISABLED = 1,
	KVMAI_STATE_ENABLED,
};

/**
 * enum kvmai_scope - The CPUs one instance of an uncore unit counts for.
 *   Assignments cover whole packages, so a VM owns every instance in its
 *   packages.
 * @KVMAI_SCOPE_PACKAGE: A package (socket).
 * @KVMAI_SCOPE_DIE: A die; on AMD, a node (a die of multi-die packages).
 * @KVMAI_SCOPE_LLC: The CPUs of one last-level cache (AMD's L3 complex).
 */
enum kvmai_scope {
	KVMAI_SCOPE_PACKAGE = 1,
	KVMAI_SCOPE_DIE,
	KVMAI_SCOPE_LLC,
};

/**
 * enum kvmai_path_type - Where the traffic between two members turns around.
 * @KVMAI_PATH_TYPE_SWITCH: In a PCIe switch below the root complex.
 * @KVMAI_PATH_TYPE_HOST_BRIDGE: Between root ports of one host bridge: the
 *   root complex routes it; whether it does so peer to peer depends on the
 *   platform.
 * @KVMAI_PATH_TYPE_DEVICE: Between functions of one device, below a single
 *   port.
 * @KVMAI_PATH_TYPE_NONE: No common host bridge: traffic goes through the CPU
 *   interconnect and the IOMMU whatever ACS says; nothing is programmed for
 *   it.
 */
enum kvmai_path_type {
	KVMAI_PATH_TYPE_SWITCH = 1,
	KVMAI_PATH_TYPE_HOST_BRIDGE,
	KVMAI_PATH_TYPE_DEVICE,
	KVMAI_PATH_TYPE_NONE,
};

enum {
	KVMAI_A_STATUS_VERSION = 1,
	KVMAI_A_STATUS_API_VERSION,
	KVMAI_A_STATUS_KERNEL,
	KVMAI_A_STATUS_FEATURES,
	KVMAI_A_STATUS_RESTORE_PENDING,

	__KVMAI_A_STATUS_MAX,
	KVMAI_A_STATUS_MAX = (__KVMAI_A_STATUS_MAX - 1)
};

enum {
	KVMAI_A_GROUP_NAME = 1,
	KVMAI_A_GROUP_ID,
	KVMAI_A_GROUP_VM,
	KVMAI_A_GROUP_MODE,
	KVMAI_A_GROUP_STATE,
	KVMAI_A_GROUP_BIND_SOCKET,
	KVMAI_A_GROUP_MEMBER,
	KVMAI_A_GROUP_PORT,
	KVMAI_A_GROUP_PAIR,
	KVMAI_A_GROUP_PCI_ADDR,
	KVMAI_A_GROUP_CONTINUED,
	KVMAI_A_GROUP_MDEV,

	__KVMAI_A_GROUP_MAX,
	KVMAI_A_GROUP_MAX = (__KVMAI_A_GROUP_MAX - 1)
};

enum {
	KVMAI_A_MEMBER_PCI_ADDR = 1,
	KVMAI_A_MEMBER_DRIVER,
	KVMAI_A_MEMBER_ATS,
	KVMAI_A_MEMBER_BAR,
	KVMAI_A_MEMBER_MDEV,

	__KVMAI_A_MEMBER_MAX,
	KVMAI_A_MEMBER_MAX = (__KVMAI_A_MEMBER_MAX - 1)
};

enum {
	KVMAI_A_BAR_INDEX = 1,
	KVMAI_A_BAR_ADDR,
	KVMAI_A_BAR_SIZE,
	KVMAI_A_BAR_PAD,

	__KVMAI_A_BAR_MAX,
	KVMAI_A_BAR_MAX = (__KVMAI_A_BAR_MAX - 1)
};

enum {
	KVMAI_A_PORT_PCI_ADDR = 1,
	KVMAI_A_PORT_ACS_CAP,
	KVMAI_A_PORT_ACS_SAVED,
	KVMAI_A_PORT_ACS_TARGET,
	KVMAI_A_PORT_ACS_CURRENT,
	KVMAI_A_PORT_USERS,

	__KVMAI_A_PORT_MAX,
	KVMAI_A_PORT_MAX = (__KVMAI_A_PORT_MAX - 1)
};

enum {
	KVMAI_A_PAIR_A = 1,
	KVMAI_A_PAIR_B,
	KVMAI_A_PAIR_TYPE,
	KVMAI_A_PAIR_VIA,

	__KVMAI_A_PAIR_MAX,
	KVMAI_A_PAIR_MAX = (__KVMAI_A_PAIR_MAX - 1)
};

enum {
	KVMAI_A_PMU_VM = 1,
	KVMAI_A_PMU_CORE,
	KVMAI_A_PMU_UNIT,
	KVMAI_A_PMU_CPUS,
	KVMAI_A_PMU_SHARED,
	KVMAI_A_PMU_PID,
	KVMAI_A_PMU_BIND_SOCKET,
	KVMAI_A_PMU_PACKAGE,

	__KVMAI_A_PMU_MAX,
	KVMAI_A_PMU_MAX = (__KVMAI_A_PMU_MAX - 1)
};

enum {
	KVMAI_A_UNIT_NAME = 1,
	KVMAI_A_UNIT_TYPE,
	KVMAI_A_UNIT_MSR_RANGES,
	KVMAI_A_UNIT_HOST_EVENTS,
	KVMAI_A_UNIT_VM,
	KVMAI_A_UNIT_MSR,
	KVMAI_A_UNIT_OFFLINE_PACKAGE,
	KVMAI_A_UNIT_HOTPLUG_SCRUBS,
	KVMAI_A_UNIT_CORE_SELECT,
	KVMAI_A_UNIT_SCOPE,

	__KVMAI_A_UNIT_MAX,
	KVMAI_A_UNIT_MAX = (__KVMAI_A_UNIT_MAX - 1)
};

enum {
	KVMAI_A_MSR_RANGE_BASE = 1,
	KVMAI_A_MSR_RANGE_COUNT,
	KVMAI_A_MSR_RANGE_READ,
	KVMAI_A_MSR_RANGE_WRITE,
	KVMAI_A_MSR_RANGE_WRITE_MASK,
	KVMAI_A_MSR_RANGE_PAD,

	__KVMAI_A_MSR_RANGE_MAX,
	KVMAI_A_MSR_RANGE_MAX = (__KVMAI_A_MSR_RANGE_MAX - 1)
};

enum {
	KVMAI_A_PMU_HOST_CORE_CAPABLE = 1,
	KVMAI_A_PMU_HOST_CORE_FENCES,
	KVMAI_A_PMU_HOST_CORE_INCLUDE_GUEST_EVENTS,
	KVMAI_A_PMU_HOST_CONFLICT,
	KVMAI_A_PMU_HOST_UNIT,

	__KVMAI_A_PMU_HOST_MAX,
	KVMAI_A_PMU_HOST_MAX = (__KVMAI_A_PMU_HOST_MAX - 1)
};

enum {
	KVMAI_A_CONFLICT_PMU = 1,
	KVMAI_A_CONFLICT_CPU,
	KVMAI_A_CONFLICT_PID,
	KVMAI_A_CONFLICT_COMM,
	KVMAI_A_CONFLICT_CONFIG,
	KVMAI_A_CONFLICT_PAD,

	__KVMAI_A_CONFLICT_MAX,
	KVMAI_A_CONFLICT_MAX = (__KVMAI_A_CONFLICT_MAX - 1)
};

enum {
	KVMAI_CMD_STATUS_GET = 1,
	KVMAI_CMD_GROUP_NEW,
	KVMAI_CMD_GROUP_DEL,
	KVMAI_CMD_GROUP_GET,
	KVMAI_CMD_GROUP_SET,
	KVMAI_CMD_DEV_ADD,
	KVMAI_CMD_DEV_DEL,
	KVMAI_CMD_GROUP_CREATE_NTF,
	KVMAI_CMD_GROUP_DELETE_NTF,
	KVMAI_CMD_GROUP_CHANGE_NTF,
	KVMAI_CMD_PMU_HOST_GET,
	KVMAI_CMD_PMU_GET,
	KVMAI_CMD_PMU_ASSIGN,
	KVMAI_CMD_PMU_RELEASE,
	KVMAI_CMD_PMU_CHANGE_NTF,

	__KVMAI_CMD_MAX,
	KVMAI_CMD_MAX = (__KVMAI_CMD_MAX - 1)
};

#define KVMAI_MCGRP_MONITOR	"monitor"

#endif /* _UAPI_LINUX_KVMAI_H */
