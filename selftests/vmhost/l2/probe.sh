#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# What a guest of the emulated host sees of its PCI devices, one line each:
# "BDF VENDOR:DEVICE NUMA-NODE SYSFS-PATH LINK", the path showing the
# bridges above the device, LINK its maximum link as "SPEED,xWIDTH" with
# the spaces of sysfs's speed left out ("32.0GT/sPCIe,x16"; "-" without
# one), for tests to compare with the host.
for d in /sys/bus/pci/devices/*; do
	path=$(readlink -f "$d")
	link=-
	[ ! -r "$d/max_link_speed" ] || [ ! -r "$d/max_link_width" ] ||
		link="$(tr -d ' \n' <"$d/max_link_speed"),x$(cat "$d/max_link_width")"
	echo "${d##*/} $(cut -c3- "$d/vendor"):$(cut -c3- "$d/device") $(cat "$d/numa_node") ${path#/sys/devices/} $link"
done
