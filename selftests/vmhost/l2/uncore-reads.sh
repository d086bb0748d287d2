#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host whose VMM attached the mock L3 unit
# (nested_uncore_test.c drives it from the host) reads the unit's first
# counter MSR as a monitoring agent would, through /dev/cpu/0/msr: read
# loops whose exits the host counts from its KVM statistics, each announced
# by a line the host waits for and started a second later (none: the same
# loop without reads, for the exits L2 takes anyway).  Then the host
# releases the unit, which revokes it, and the same reads again.
#
# Each loop runs 6 s; the host counts 3 s from 1.5 s after it sees the
# announcement, so it may see it up to 2.5 s late (a loaded build machine
# slows the emulated host) and still count inside the loop.
ctr=0xc0010231
for mode in none msr; do
	echo "KVMAI-UNCORE begin $mode"
	sleep 1
	/kvmai/l2/msr_reads $mode 6 $ctr | sed 's/^/KVMAI-UNCORE /'
	sleep 1
done
echo "KVMAI-UNCORE revoke-now"
sleep 3
echo "KVMAI-UNCORE begin revoked"
sleep 1
/kvmai/l2/msr_reads msr 6 $ctr | sed 's/^/KVMAI-UNCORE revoked /'
sleep 1
echo "KVMAI-UNCORE done"
