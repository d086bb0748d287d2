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
# Mean wall ms and peak RSS kB of $runs runs of a command (busybox time -v),
# printed; the mean also left in $ms for ratios (so not in a $(...)).
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
	ms=$(echo "$total" | awk -v n=$runs '{printf "%.1f", $1 / n}')
	echo "$ms $rss" | awk '{printf "%.1f ms/run, peak RSS %d kB", $1, $2}'
}

echo "== topo ($runs runs each)"
fixture=/kvmai/testdata/hgx
n=$(ls $fixture/sys/bus/pci/devices | wc -l)
measure kvmaictl topo --sysfs-root $fixture/sys >/tmp/measure
topo_ms=$ms
echo "kvmaictl topo, hgx fixture ($n functions): $(cat /tmp/measure)"
echo "kvmaictl -j topo, hgx fixture:        $(measure kvmaictl -j topo --sysfs-root $fixture/sys)"
n=$(ls /sys/bus/pci/devices | wc -l)
echo "kvmaictl topo, this host ($n functions): $(measure kvmaictl topo)"
echo "lspci -vvv, this host ($n functions):    $(measure lspci -vvv)"

# vm plan reads the same tree as topo and lays out all 8 GPUs and their 8
# NICs: its whole-process time beside topo's on the same fixture.
echo "== vm plan ($runs runs each, hgx-vm fixture, 8 GPUs + 8 NICs + 4 NVSwitches, ratio to topo)"
vm=/kvmai/testdata/hgx-vm/sys
devs="gpu0 gpu1 gpu2 gpu3 gpu4 gpu5 gpu6 gpu7 nic2 nic3 nic4 nic5 nic6 nic7 nic8 nic9 nvswitch0 nvswitch1 nvswitch2 nvswitch3"
for what in "vm plan" "-j vm plan" "vm nccl-topo"; do
	# shellcheck disable=SC2086 # word lists
	measure kvmaictl $what $devs vcpus 16 memory 65536 --sysfs-root $vm >/tmp/measure
	echo "kvmaictl $what: $(cat /tmp/measure), $(echo "$ms $topo_ms" | awk '{printf "%.2f", $1 / $2}') x topo"
done
