#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host given a kvmai counters device stores to its
# read-only BAR0 (nested_counters_test.c drives it from the host, which
# counts L1's exits between the two announcements).  The guest stays up a
# while after the second, so that its VM's KVM statistics are still there.
echo "KVMAI-CTR begin write"
sleep 1
/kvmai/l2/ctr_reads write 4
echo "ctr_reads-exit $?"
echo "KVMAI-CTR end write"
sleep 3
