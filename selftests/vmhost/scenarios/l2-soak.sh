#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Emulator diagnostic: boot L2 guests one after another (profile nested),
# each under load (l2/churn.sh), and say how each ended: "ok", "double
# fault", "died" (another oops, BUG or panic on L2's console) or "no
# report"; l2-run's boots again after a silent reset are counted beside,
# and the boot that followed decides the ending.  Figures, never
# pass/fail (exit 0 unless nothing could boot):
# Documentation/dev/emulated-host.rst, "Which kernel the L2 double fault
# follows".
#
#   kvmai.soak=N            L2 boots (default 6)
#   kvmai.churn=SECONDS     each L2's load (default 60)
#   kvmai.soak-l2=A,B,...   added to L2's command line (e.g. no-kvmapf)
boots=6 churn=60 l2args=
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in
	kvmai.soak=*) boots=${arg#kvmai.soak=} ;;
	kvmai.churn=*) churn=${arg#kvmai.churn=} ;;
	kvmai.soak-l2=*) l2args=$(echo "${arg#kvmai.soak-l2=}" | tr , ' ') ;;
	esac
done

echo "l2-soak: host $(uname -r), L2 $boots boots of ${churn}s load, L2 args '${l2args}'"
ok=0 df=0 died=0 none=0 resets=0
i=1
while [ $i -le "$boots" ]; do
	w=/tmp/soak$i
	t0=$(cut -d. -f1 /proc/uptime)
	l2-run -s churn -w $w -a "kvmai.churn=$churn $l2args" >$w.out 2>$w.err
	rc=$?
	t=$(($(cut -d. -f1 /proc/uptime) - t0))
	r=$(grep -c 'booting it again' $w.err)
	resets=$((resets + r))
	death=$(grep -m1 -E 'double fault|Oops|BUG:|Kernel panic|general protection' \
		$w/console.log 2>/dev/null | tr -d '\r')
	case $death in
	*"double fault"*) what="double fault"; df=$((df + 1)) ;;
	?*) what=died; died=$((died + 1)) ;;
	*) if [ $rc = 0 ]; then what=ok; ok=$((ok + 1)); else what="no report"; none=$((none + 1)); fi ;;
	esac
	echo "l2-soak: boot $i: $what after ${t}s, l2-run exit $rc, $r silent resets" \
	     "$(tr '\n' ';' <$w.out)${death:+ | $death}"
	# The whole console of a guest that died, for the record.
	[ "$what" = ok ] || sed "s/^/l2-soak: boot $i console: /" $w/console.log
	i=$((i + 1))
done
echo "l2-soak: $boots boots: ok $ok, double fault $df, died $died, no report $none;" \
     "silent resets $resets"
[ $ok -gt 0 ] || [ $df -gt 0 ] || [ $died -gt 0 ]
