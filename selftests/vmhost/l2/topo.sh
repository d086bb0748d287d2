#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kvmaictl's view of a guest of the emulated host: its GPUs, NICs, their
# NUMA nodes and the path class of every pair, as JSON on one line; then
# kvmaictl check's verdict on the guest, as JSON on one line; then what
# probe.sh prints (each PCI device's bus id, NUMA node and sysfs path).
/kvmai/bin/kvmaictl -j topo
echo
/kvmai/bin/kvmaictl -j check
echo
exec /kvmai/l2/probe.sh
