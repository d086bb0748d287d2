#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Run the selftests of this boot: the binaries of /kvmai/selftests that
# selftests/boots.toml gives to the host profile the emulated host was
# booted with (vmhost.py writes the table to /etc/kvmai/selftests, the
# profile to /etc/kvmai/profile), in glob order, then kernel_health.  Each
# test's KTAP output is framed so the host can count cases per binary and
# notice a crash:
#   # kvmai-selftest: NAME
#   ...KTAP...
#   # kvmai-selftest-exit: NAME RC
#   # kvmai-selftest-time: NAME SECONDS
# (the last for the stage's time line: which binaries a boot's minutes go
# to).  Exits non-zero if any binary did.  kvmai.selftests=a,b on the kernel
# command line runs those instead, whatever their profile; kernel_health
# then only runs if it is named.  kvmai.except=a,b leaves those of the
# profile's out (another boot runs them).  kvmai.only-cases=c+d runs only
# those cases of each binary (the harness's -t).

only=
except=
cases=
for arg in $(cat /proc/cmdline); do
	case $arg in
	kvmai.selftests=*) only=$(echo "${arg#kvmai.selftests=}" | tr , ' ') ;;
	kvmai.except=*) except=$(echo "${arg#kvmai.except=}" | tr , ' ') ;;
	kvmai.only-cases=*)
		for c in $(echo "${arg#kvmai.only-cases=}" | tr + ' '); do
			cases="$cases -t $c"
		done
		;;
	esac
done
profile=$(cat /etc/kvmai/profile)

# The table's line for binary $1: "PROFILE [MODULE...]", or nothing.
entry() {
	while read -r pattern where modules; do
		# shellcheck disable=SC2254 # the table's names are patterns
		case $1 in $pattern)
			echo "$where $modules"
			return
			;;
		esac
	done </etc/kvmai/selftests
}

rc=0
for t in /kvmai/selftests/*; do
	name=${t##*/}
	# shellcheck disable=SC2046 # a list of words
	set -- $(entry "$name")
	if [ -n "$only" ]; then
		echo " $only " | grep -q " $name " || continue
	elif [ "${1:-}" != "$profile" ]; then
		continue
	elif echo " $except " | grep -q " $name "; then
		continue
	fi
	[ $# -eq 0 ] || shift
	loaded=
	for m in "$@"; do
		insmod "/kvmai/$m.ko" 2>/dev/null && loaded="$m $loaded"
	done
	echo "# kvmai-selftest: $name"
	t0=$(cut -d' ' -f1 /proc/uptime)
	# shellcheck disable=SC2086 # a list of options
	"$t" $cases
	r=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	for m in $loaded; do
		rmmod "$m"
	done
	echo "# kvmai-selftest-exit: $name $r"
	echo "$name $t0 $t1" | awk '{ printf "# kvmai-selftest-time: %s %.1f\n", $1, $3 - $2 }'
	# 4 is KSFT_SKIP: a binary whose every case skipped.
	[ $r -eq 0 ] || [ $r -eq 4 ] || rc=1
done

# Last, over everything the tests did: what the kernel reported.
if [ -z "$only" ] || echo " $only " | grep -q " kernel_health "; then
	echo "# kvmai-selftest: kernel_health"
	/kvmai/vmhost/kernel-health
	r=$?
	echo "# kvmai-selftest-exit: kernel_health $r"
	[ $r -eq 0 ] || rc=1
fi
# Boots of guests repeated because the emulator, not a test, failed
# (guest/l2-run): check.py lists them beside its own.
[ -f /tmp/kvmai-retries ] && sed 's/^/# kvmai-retry: /' /tmp/kvmai-retries
exit $rc
