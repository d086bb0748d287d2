#!/bin/sh
# Show what the emulated host looks like (a debugging aid).
cat /run/kvmai/devices
lspci -tv
for g in /sys/kernel/iommu_groups/*; do echo "group ${g##*/}: $(ls $g/devices)"; done
