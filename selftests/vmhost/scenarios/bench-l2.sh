#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Benchmarks that need a guest of the emulated host (vmhost.py --profile nested):
# a counters device read in L2 through its mapping and as configuration
# space through ports 0xcf8/0xcfc, time and L1 exits per read, in one run.
# nested_counters_test measures both; its figures are the lines it prints.
echo "== counters device reads in L2 (nested_counters_test)"
/kvmai/selftests/nested_counters_test 2>&1 | sed -n 's/^# \(no reads\|mapped:\|0xcf8\|per read:\)/\1/p'
