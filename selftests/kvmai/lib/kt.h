/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every header of the selftests' library shares, and its naming.
 *
 * Everything the library offers is named by area: kt_<area>_<what>() for
 * what looks or helps (kt: kvmai test), struct kt_<what>, KT_<WHAT>.  What
 * a test asserts on, an action that succeeds or fails with an errno,
 * comes in three forms, as in the kernel's iommufd_utils.h:
 *
 *   _test_cmd_<area>_<op>(...)          does it: 0 or -errno, never asserts
 *   test_cmd_<area>_<op>(...)           asserts that it succeeds
 *   test_err_<area>_<op>(errno, ...)    expects that it fails with errno
 *
 * The two macros work in a TEST_F() or FIXTURE_SETUP(), where the netlink
 * commands use the fixture's connection, self->nl; the first form works
 * anywhere (a child, a teardown, a benchmark).  Like the harness's own
 * ASSERT_*() and EXPECT_*(), the macros take a TH_LOG() after them.
 */
#ifndef KT_H
#define KT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#ifndef BIT
#define BIT(nr) (1UL << (nr))
#endif
#ifndef BIT_ULL
#define BIT_ULL(nr) (1ULL << (nr))
#endif

/* Lists in replies (ports, pairs: a 16-member group has 120 pairs). */
#define KT_MAX 128

/*
 * A load or a store the compiler may neither drop nor merge: a mapped
 * device register, a flag another thread sets.
 */
#define kt_read_once(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define kt_write_once(x, val) __atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

#define __kt_cmd(cmd) ASSERT_EQ(0, cmd)
#define __kt_err(err, cmd) EXPECT_EQ(-(err), cmd)

#endif /* KT_H */
