#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host counts on the uncore L3 unit its VMM
# attached while the host takes the unit back (nested_uncore_test.c drives
# it from the host, at "revoke-now"): perf must end normally and the
# guest's kernel must log no fault.  Every line starts with KVMAI-UNCORE.
for p in amd_l3 amd_l2; do
	[ -d "/sys/bus/event_source/devices/$p" ] && break
	p=
done
[ -n "$p" ] || { echo "KVMAI-UNCORE no uncore pmu"; echo "KVMAI-UNCORE done"; exit 0; }
# -I reads the counter every 500 ms, before, across and after the revocation.
perf stat -a -x, -I 500 -e "$p/event=0x1/" -- sleep 6 >/tmp/perf.out 2>&1 &
perf=$!
sleep 2
echo "KVMAI-UNCORE revoke-now"
wait $perf
echo "KVMAI-UNCORE perf-exit $?"
sed 's/^/KVMAI-UNCORE perf /' /tmp/perf.out
dmesg | grep -i -e 'unchecked MSR' -e 'general protection' -e 'Oops' -e 'BUG:' |
	sed 's/^/KVMAI-UNCORE kmsg /'
echo "KVMAI-UNCORE done"
