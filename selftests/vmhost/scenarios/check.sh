#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Run every selftest binary in /kvmai/selftests.  Each test's KTAP output is
# framed so the host can count cases per binary and notice a crash:
#   # kvmai-selftest: NAME
#   ...KTAP...
#   # kvmai-selftest-exit: NAME RC
# Exits non-zero if any binary did.  SELFTESTS= on the kernel command line
# (kvmai.selftests=a,b) narrows the set; nested_* run only where the host
# can run guests of its own.

only=
for arg in $(cat /proc/cmdline); do
	case $arg in kvmai.selftests=*) only=$(echo "${arg#kvmai.selftests=}" | tr , ' ') ;; esac
done

rc=0
for t in /kvmai/selftests/*; do
	name=${t##*/}
	if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then
		continue
	fi
	# Guests of the emulated host exist only in a host booted for them
	# (vmhost.py --profile nested), which check.py does in stages of their own.
	# libvirt_* likewise need libvirtd (vmhost.py --profile libvirt).
	case $name in
	nested_*) [ -d /usr/share/kvmai-l2 ] || continue ;;
	libvirt_*) [ -x /usr/sbin/libvirtd ] || continue ;;
	esac
	# The series' KVM selftest (kvm_*, patched kernel only) finds a unit
	# offered to guests but reserved by nobody when the mock provider is
	# in: it then checks that KVM refuses it to a VMM without a reservation.
	mock=
	case $name in
	kvm_*) insmod /kvmai/kvmai_mock_pmu.ko 2>/dev/null && mock=1 ;;
	esac
	echo "# kvmai-selftest: $name"
	"$t"
	r=$?
	[ -z "$mock" ] || rmmod kvmai_mock_pmu
	echo "# kvmai-selftest-exit: $name $r"
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
