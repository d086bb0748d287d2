#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Emulator diagnostic: which clock and timer devices the host kernel uses,
# then timer_probe on every vCPU (kvmai.probe=SECONDS[,PERIOD_US] on the
# kernel command line, default 60 s).  Figures, never pass/fail; see
# Documentation/dev/emulated-host.rst, "Timer stalls".

secs=60 period=2000
for arg in $(cat /proc/cmdline); do
	case $arg in kvmai.probe=*)
		v=${arg#kvmai.probe=}
		secs=${v%%,*}
		case $v in *,*) period=${v#*,} ;; esac
		;;
	esac
done

echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
for c in /sys/devices/system/clockevents/clockevent*; do
	echo "${c##*/}: $(cat "$c/current_device")"
done
grep -m1 -o 'tsc_deadline_timer' /proc/cpuinfo || echo "no tsc_deadline_timer"
timer_probe "$secs" "$period"
