#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kvmaictl vm nccl-map in a guest of the emulated host: the host's NCCL
# file for this guest's plan (/kvmai/map/topo.xml, from vm nccl-topo) with
# the bus ids this guest's firmware gave, found by the paths of the plan
# (/kvmai/map/plan.json, from -j vm plan); then what probe.sh prints.
/kvmai/bin/kvmaictl vm nccl-map /kvmai/map/plan.json /kvmai/map/topo.xml || exit 1
echo
exec /kvmai/l2/probe.sh
