#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# What a guest of the emulated host sees of its PCI devices, one line each:
# "BDF VENDOR:DEVICE NUMA-NODE SYSFS-PATH LINK BARS", the path showing the
# bridges above the device, LINK its maximum link as "SPEED,xWIDTH" with
# the spaces of sysfs's speed left out ("32.0GT/sPCIe,x16"; "-" without
# one), BARS its memory BARs that the firmware or the kernel gave an
# address, as "INDEX:SIZE" in hex, comma-separated ("0:1000,4:800000000";
# "-" for none): a BAR left unassigned is missing from it.  For tests to
# compare with the host.
for d in /sys/bus/pci/devices/*; do
	path=$(readlink -f "$d")
	link=-
	[ ! -r "$d/max_link_speed" ] || [ ! -r "$d/max_link_width" ] ||
		link="$(tr -d ' \n' <"$d/max_link_speed"),x$(cat "$d/max_link_width")"
	# resource: "START END FLAGS" for BARs 0-5, then the ROM and bridge
	# windows; 0x200 is IORESOURCE_MEM.
	bars=''
	i=0
	while [ $i -lt 6 ] && read -r start end flags; do
		[ $((start)) -eq 0 ] || [ $((flags & 0x200)) -eq 0 ] ||
			bars="$bars${bars:+,}$i:$(printf %x $((end - start + 1)))"
		i=$((i + 1))
	done <"$d/resource"
	echo "${d##*/} $(cut -c3- "$d/vendor"):$(cut -c3- "$d/device") $(cat "$d/numa_node") ${path#/sys/devices/} $link ${bars:--}"
done
