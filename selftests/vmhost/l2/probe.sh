#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# What a guest of the emulated host sees of its PCI devices, one line each:
# "BDF VENDOR:DEVICE NUMA-NODE SYSFS-PATH", the path showing the bridges
# above the device, for tests to compare with the host.
for d in /sys/bus/pci/devices/*; do
	path=$(readlink -f "$d")
	echo "${d##*/} $(cut -c3- "$d/vendor"):$(cut -c3- "$d/device") $(cat "$d/numa_node") ${path#/sys/devices/}"
done
