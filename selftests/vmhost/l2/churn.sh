#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Load for an L2 guest, to count the faults TCG's nested SVM lets through
# (scenarios/l2-soak.sh): on each vCPU, for kvmai.churn=SECONDS (default
# 60), processes started and ended (page faults, copy-on-write, exec) and
# 16 MiB written to tmpfs and freed (memory the host's KVM maps anew).
# Prints the rounds done; a fault ends the guest before it reports.
secs=60
read -r cmdline </proc/cmdline
for arg in $cmdline; do
	case $arg in kvmai.churn=*) secs=${arg#kvmai.churn=} ;; esac
done

uptime_s() { cut -d. -f1 /proc/uptime; }

churn() {
	end=$(($(uptime_s) + secs))
	n=0
	while [ "$(uptime_s)" -lt $end ]; do
		dd if=/dev/zero of="/tmp/churn$1" bs=1M count=16 2>/dev/null
		rm -f "/tmp/churn$1"
		for _ in 1 2 3 4; do
			/bin/sh -c : </dev/null
		done
		n=$((n + 1))
	done
	echo "churn $1: $n rounds in ${secs}s"
}

cpus=$(grep -c '^processor' /proc/cpuinfo)
i=1
while [ $i -lt "$cpus" ]; do
	churn $i &
	i=$((i + 1))
done
churn 0
wait
