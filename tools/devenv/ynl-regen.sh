#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Regenerate the netlink code that follows Documentation/netlink/specs/kvmai.yaml,
# with the kernel's own YNL generator from the unpacked mainline source.
#   ynl-regen.sh KSRC          rewrite the generated files in place
#   ynl-regen.sh KSRC --check  exit 1 (and show the diff) if they are stale
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ksrc=${1:?usage: ynl-regen.sh KSRC [--check]}
check=${2:-}
gen=$ksrc/tools/net/ynl/pyynl/ynl_gen_c.py
[ -f "$gen" ] || { echo "ynl-regen: no YNL generator at $gen (run make deps)" >&2; exit 1; }
PYTHON=${PYTHON:-/usr/bin/python3}

# The generator validates a spec against <spec dir>/../<protocol>.yaml, so
# stage our spec next to the kernel's schema.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
spec=Documentation/netlink/specs/kvmai.yaml
mkdir -p "$work/$(dirname "$spec")"
cp "$top/$spec" "$work/$spec"
ln -s "$ksrc/Documentation/netlink/genetlink.yaml" "$work/Documentation/netlink/"
# ...and it finds the tree root by its MAINTAINERS file.
touch "$work/MAINTAINERS"

# Generated files and how each is made: path, mode, kind.
outputs=(
	"kmod/include/uapi/linux/kvmai.h uapi header"
	"kmod/kvmai_nl.h kernel header"
	"kmod/kvmai_nl.c kernel source"
)
for o in "${outputs[@]}"; do
	set -- $o
	mkdir -p "$work/out/$(dirname "$1")"
	(cd "$work" && "$PYTHON" "$gen" --mode "$2" --"$3" --spec "$spec" \
		-o "out/$1")
done

rc=0
for o in "${outputs[@]}"; do
	set -- $o
	if [ "$check" = --check ]; then
		if ! diff -u "$top/$1" "$work/out/$1"; then
			echo "ynl-regen: $1 is stale: run 'make regen'" >&2
			rc=1
		fi
	elif ! cmp -s "$top/$1" "$work/out/$1"; then
		cp "$work/out/$1" "$top/$1"
		echo "	GEN	$1"
	fi
done
exit $rc
