#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A guest of the emulated host whose VMM attached the mock L3 unit
# (nested_uncore_test.c drives it from the host) reads the unit's first
# counter MSR as a monitoring agent would, through /dev/cpu/0/msr.  Then
# the host releases the unit, which revokes it, and the same reads again.
# The host counts L1's KVM's exits on reads of that MSR exactly, from
# before L2 boots to "revoke-now" and from there to "done": nothing else
# in L2 reads it.  The 5 s after "revoke-now" let the host see the line
# and release the unit before the second loop starts under a loaded
# build machine.
ctr=0xc0010231
/kvmai/l2/msr_reads 4 $ctr | sed 's/^/KVMAI-UNCORE attached /'
echo "KVMAI-UNCORE revoke-now"
sleep 5
/kvmai/l2/msr_reads 4 $ctr | sed 's/^/KVMAI-UNCORE revoked /'
echo "KVMAI-UNCORE done"
