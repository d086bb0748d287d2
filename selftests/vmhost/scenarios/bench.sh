#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks: figures for the closing notes, never pass/fail.  Absolute
# times are TCG's; compare the ratios printed within one run.

for b in /kvmai/bench/*; do
	[ -x "$b" ] || continue
	echo "== ${b##*/}"
	"$b" || echo "${b##*/}: failed ($?)"
done

# kvmaictl topo against what operators run today, lspci -vvv, in one run.
runs=20
# Mean wall ms and peak RSS kB of $runs runs of a command (busybox time -v).
measure() {
	i=0 total=0 rss=0
	while [ $i -lt $runs ]; do
		t0=$(cut -d' ' -f1 /proc/uptime)
		time -v -o /tmp/time.out "$@" >/dev/null 2>&1
		t1=$(cut -d' ' -f1 /proc/uptime)
		total=$(echo "$total $t0 $t1" | awk '{printf "%.2f", $1 + ($3 - $2) * 1000}')
		r=$(sed -n 's/.*Maximum resident set size (kbytes): //p' /tmp/time.out)
		[ "${r:-0}" -gt $rss ] && rss=$r
		i=$((i + 1))
	done
	echo "$total $rss" | awk -v n=$runs '{printf "%.1f ms/run, peak RSS %d kB", $1 / n, $2}'
}

echo "== topo ($runs runs each)"
fixture=/kvmai/testdata/hgx
n=$(ls $fixture/sys/bus/pci/devices | wc -l)
echo "kvmaictl topo, hgx fixture ($n functions): $(measure kvmaictl topo --sysfs-root $fixture/sys)"
echo "kvmaictl -j topo, hgx fixture:        $(measure kvmaictl -j topo --sysfs-root $fixture/sys)"
n=$(ls /sys/bus/pci/devices | wc -l)
echo "kvmaictl topo, this host ($n functions): $(measure kvmaictl topo)"
echo "lspci -vvv, this host ($n functions):    $(measure lspci -vvv)"
