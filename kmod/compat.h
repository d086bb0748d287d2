/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - kernel interfaces that differ between the kernels kvmai builds
 * for (Debian's 6.12 through mainline 7.x), probed by what they define
 * rather than by version number.
 */
#ifndef _KVMAI_COMPAT_H
#define _KVMAI_COMPAT_H

#include <linux/slab.h>

/* Typed allocation helpers arrived in 7.0; kvmai only allocates GFP_KERNEL. */
#ifndef kzalloc_obj
#define kzalloc_obj(P, ...) kzalloc(sizeof(P), GFP_KERNEL)
#endif
#ifndef kmalloc_obj
#define kmalloc_obj(P, ...) kmalloc(sizeof(P), GFP_KERNEL)
#endif

#endif /* _KVMAI_COMPAT_H */
