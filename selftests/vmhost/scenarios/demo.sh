#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo: a narrated kvmaictl session on the emulated AI host, printing
# what an operator would see on a real one.  Fails if any step that should
# work does not.

set -u
step() { printf '\n### %s\n' "$*"; }
run() {
	printf '$ %s\n' "$*"
	"$@"
}
# A step whose failure is the point: show it, carry on.
refused() {
	printf '$ %s\n' "$*"
	if "$@"; then
		echo "demo: expected this to be refused" >&2
		exit 1
	else
		echo "(exit code $?)"
	fi
}
dev() { awk -v n="$1" '$1 == n { print $2 }' /run/kvmai/devices; }
port() { awk -v n="$1" '$1 == n { print $7 }' /run/kvmai/devices; }
acs() { lspci -vvv -s "$1" | sed -n 's/^[[:space:]]*ACSCtl:[[:space:]]*/ACSCtl: /p'; }

set -e
step "The emulated AI host: GPUs and NICs by name (selftests/vmhost/aihost.toml)"
printf '%-9s %-13s %-5s %-4s %-5s %s\n' name address role sw numa flags
while read -r name bdf role sw numa flags portbdf; do
	printf '%-9s %-13s %-5s %-4s %-5s %s\n' "$name" "$bdf" "$role" "$sw" "$numa" "$flags"
done </run/kvmai/devices

step "kvmaictl needs the module for groups; it says so"
refused kvmaictl version
# Kernels without the series' uncore registry use kvmai's copy of it.
[ ! -e /kvmai/uncore_guest.ko ] || run insmod /kvmai/uncore_guest.ko
run insmod /kvmai/kvmai.ko
run kvmaictl version

step "Where GPU<->NIC traffic goes today: ACS redirect sends it to the root complex"
run kvmaictl topo

GPU0=$(dev gpu0) NIC0=$(dev nic0)
step "Hand gpu0 ($GPU0) and nic0 ($NIC0) to a VM: bind them to vfio-pci"
for d in "$GPU0" "$NIC0"; do
	echo "$d" >"/sys/bus/pci/devices/$d/driver/unbind"
	echo vfio-pci >"/sys/bus/pci/devices/$d/driver_override"
	echo "$d" >/sys/bus/pci/drivers_probe
	echo "$d -> $(basename "$(readlink "/sys/bus/pci/devices/$d/driver")")"
done

step "A translated P2P group for the VM: ACS DT on the ports between them only"
echo "before: $(port gpu0) $(acs "$(port gpu0)")"
run kvmaictl group add vm1-p2p vm vm1
run kvmaictl dev add vm1-p2p "$GPU0"
run kvmaictl dev add vm1-p2p "$NIC0"
run kvmaictl group enable vm1-p2p
run kvmaictl group show vm1-p2p
echo "after:  $(port gpu0) $(acs "$(port gpu0)")"
echo "other:  $(port gpu1) $(acs "$(port gpu1)")  (not in the group: untouched)"
run kvmaictl topo

step "Direct mode would let the VM reach the host's NVMe (foreign0) on the same switch"
run kvmaictl group disable vm1-p2p
refused kvmaictl group set vm1-p2p mode direct state enabled

step "Disable and delete: every ACS word back as it was"
run kvmaictl group del vm1-p2p
echo "after:  $(port gpu0) $(acs "$(port gpu0)")"
run kvmaictl -j group show

# The emulated host has no PMU (TCG): the test-only mock provider plays an
# uncore driver so that ownership can be shown; on a real host these are
# the uncore_* / amd_* units of its own drivers.
step "PMU readiness of this host"
run kvmaictl check | grep -i -e pmu -e watchdog
run insmod /kvmai/kvmai_mock_pmu.ko
run kvmaictl pmu show

PKG0=$(cat /sys/devices/system/cpu/cpu0/topology/package_cpus_list)
step "Give vm1 the L3 unit of package 0 (CPUs $PKG0): the host is fenced off it there"
refused kvmaictl pmu assign vm1 mock_uncore_l3 cpus 0
run kvmaictl pmu assign vm1 mock_uncore_l3 cpus "$PKG0"
run kvmaictl pmu show vm1

step "Release: the host counts on the unit again"
run kvmaictl pmu release vm1
run kvmaictl pmu show
run rmmod kvmai_mock_pmu
