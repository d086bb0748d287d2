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
