#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# A developer's shortcut: run chosen cases of one selftest binary, then
# kernel_health.  kvmai.cases=BINARY:CASE+CASE on the kernel command line,
# e.g. kvmai.cases=p2p_test:quirk_port_is_refused_by_name
cases=
for arg in $(cat /proc/cmdline); do
	case $arg in kvmai.cases=*) cases=${arg#kvmai.cases=} ;; esac
done
bin=${cases%%:*}
args=
for c in $(echo "${cases#*:}" | tr + ' '); do
	args="$args -t $c"
done
echo "# kvmai-selftest: $bin"
/kvmai/selftests/$bin $args
rc=$?
echo "# kvmai-selftest-exit: $bin $rc"
echo "# kvmai-selftest: kernel_health"
/kvmai/vmhost/kernel-health || rc=1
exit $rc
