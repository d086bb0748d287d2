#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kvmaictl's view of a guest of the emulated host: its GPUs, NICs, their
# NUMA nodes and the path class of every pair, as JSON.
exec /kvmai/bin/kvmaictl -j topo
