#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kvmai's selftests in a guest of the emulated host whose CPU topology the
# test that boots it chose (l2-run -- -smp ...), for what the emulated host's own
# topology cannot show: a package with more than one CPU, for one.  The
# host's boot modules go in first, as /init loads them in the emulated host
# (those that need hardware L2 lacks fail quietly); then check.sh runs the
# binaries kvmai.selftests= names, framed as in the emulated host.
while read -r m; do
	insmod "/lib/modules/boot/$m" 2>/dev/null
done </etc/kvmai/modules
exec /kvmai/scenarios/check.sh
