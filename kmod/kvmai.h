/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kvmai - internal interfaces shared by the module's files.
 */
#ifndef _KVMAI_H
#define _KVMAI_H

#define KVMAI_NAME "kvmai"

#endif /* _KVMAI_H */
