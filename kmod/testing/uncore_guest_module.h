/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What makes testing/uncore_guest.c a module of its own on kernels without
 * the series.  In the series the file is built in and carries no module
 * information; the copy here stays byte for byte the same, so kbuild adds
 * this header to that one object only (Kbuild).
 */
#ifndef _KVMAI_UNCORE_GUEST_MODULE_H
#define _KVMAI_UNCORE_GUEST_MODULE_H

#include <linux/module.h>

MODULE_DESCRIPTION("Uncore PMU units reserved for guests (kvmai's backport)");
MODULE_LICENSE("GPL");

/*
 * The file's device_initcall() is this module's init; its exit removes the
 * CPU hotplug state that init set up, which the file keeps in a variable
 * of this name.  Both are tentative definitions of one static object.
 */
#include <linux/cpuhotplug.h>

static enum cpuhp_state uncore_guest_cpuhp;

static void __exit uncore_guest_module_exit(void)
{
	cpuhp_remove_state_nocalls(uncore_guest_cpuhp);
}
module_exit(uncore_guest_module_exit);

#endif
