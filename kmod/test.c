// SPDX-License-Identifier: GPL-2.0-only
/*
 * kvmai - fault injection for the selftests.  Built only with
 * 'make KVMAI_TEST=y' (the project's own build); packages never have it,
 * as upstream compiles iommufd's selftest.c only with CONFIG_IOMMUFD_TEST.
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>

#include "kvmai.h"

static unsigned int unload_delay_ms;
module_param(unload_delay_ms, uint, 0600);
MODULE_PARM_DESC(unload_delay_ms,
		 "test only: pause module unload after its first step, to widen races");

void kvmai_test_unload_delay(void)
{
	if (unload_delay_ms)
		msleep(unload_delay_ms);
}
