#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host given a kvmai counters device (nested_counters_test.c
# drives it from the host): kvmaistat's rates; then read loops whose exits
# the host counts from its KVM statistics, each announced by a line the
# host waits for and started a second later (none: the same loop without
# reads, for the exits L2 takes anyway); then sampling until the host
# revokes the device, which kvmaistat must report (exit 3).
#
# The none and mapped loops run 6 s; the host counts 3 s from 1.5 s after
# it sees the announcement, so it may see it up to 2.5 s late (a loaded
# build machine slows the emulated host) and still count inside the loop.
# The port I/O loop's exits are counted whole, against its exact number of
# reads: the host samples from the announcement to "end pio" and takes the
# rise between the quiet stretches around the loop (kt_l2_io_rise()), so
# the loop has 4 s of quiet before it (the announcement seen up to 2.5 s
# late, then 1.5 s of quiet) and 3 s after, and prints its figures only
# after "end pio": console output is port I/O too.
/kvmai/bin/kvmaistat -j -i 1000 -c 3
echo "kvmaistat-exit $?"
for mode in none mapped; do
	echo "KVMAI-CTR begin $mode"
	sleep 1
	/kvmai/l2/ctr_reads $mode 6
	sleep 1
done
echo "KVMAI-CTR begin pio"
sleep 4
/kvmai/l2/ctr_reads pio 4 >/tmp/ctr_reads.pio
sleep 3
echo "KVMAI-CTR end pio"
cat /tmp/ctr_reads.pio
echo "KVMAI-CTR revoke-now"
/kvmai/bin/kvmaistat -j -i 200 -c 150
echo "kvmaistat-exit $?"
