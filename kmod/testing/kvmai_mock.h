/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What test builds of kvmai take from kvmai_mock_pmu while it is loaded
 * (test.c, through symbol_get(), so that kvmai does not depend on it).
 */
#ifndef _KVMAI_MOCK_H
#define _KVMAI_MOCK_H

/* The fence sets *@held, and clears it when dropped (drop_fences too). */
int kvmai_mock_core_fence(bool *held);
void kvmai_mock_core_unfence(bool *held);

#endif /* _KVMAI_MOCK_H */
