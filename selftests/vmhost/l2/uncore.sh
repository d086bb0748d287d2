#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host (L2) whose VMM may have attached uncore PMU
# units (nested_uncore_test.c drives it from the host): which uncore PMUs
# the stock kernel registered, then 'perf stat' on the L3 one if there is
# one, then whatever the kernel said about MSR accesses or faults.  Every
# line starts with KVMAI-UNCORE for the host to parse.
for p in amd_l2 amd_l3 amd_nb amd_df; do
	[ -d "/sys/bus/event_source/devices/$p" ] && echo "KVMAI-UNCORE pmu $p"
done
for p in amd_l3 amd_l2; do
	[ -d "/sys/bus/event_source/devices/$p" ] || continue
	# A system-wide count of one L3 event for half a second, as CSV.
	perf stat -a -x, -e "$p/event=0x1/" -- sleep 0.5 >/tmp/perf.out 2>&1
	echo "KVMAI-UNCORE perf-exit $?"
	sed 's/^/KVMAI-UNCORE perf /' /tmp/perf.out
	break
done
dmesg | grep -i -e 'unchecked MSR' -e 'general protection' -e 'Oops' -e 'BUG:' |
	sed 's/^/KVMAI-UNCORE kmsg /'
echo "KVMAI-UNCORE done"
