/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What makes compat/uncore_guest.c a module of its own on kernels without
 * the series.  In the series the file is built in and carries no module
 * information; the copy here stays byte for byte the same, so kbuild adds
 * this header to that one object only (Kbuild).
 */
#ifndef _KVMAI_UNCORE_GUEST_MODULE_H
#define _KVMAI_UNCORE_GUEST_MODULE_H

#include <linux/module.h>

MODULE_DESCRIPTION("Uncore PMU units reserved for guests (kvmai's backport)");
MODULE_LICENSE("GPL");

#endif
