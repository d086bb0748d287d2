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

enum {
	KVMAI_A_STATUS_VERSION = 1,
	KVMAI_A_STATUS_API_VERSION,
	KVMAI_A_STATUS_KERNEL,

	__KVMAI_A_STATUS_MAX,
	KVMAI_A_STATUS_MAX = (__KVMAI_A_STATUS_MAX - 1)
};

enum {
	KVMAI_CMD_STATUS_GET = 1,

	__KVMAI_CMD_MAX,
	KVMAI_CMD_MAX = (__KVMAI_CMD_MAX - 1)
};

#endif /* _UAPI_LINUX_KVMAI_H */
