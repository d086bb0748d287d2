#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What an operator builds is the product: checks of the module 'make'
# leaves in kmod/ (README's "On a real host" loads it from there), and of
# the module built for arm64 hosts (Grace), which pass GPUs and NICs to
# VMs too: there kvmai is its P2P half, PMU ownership being x86's.
#
#   product.sh     one line per check, "product: NAME: ok" or "product:
#                  NAME: FAILED (why)"; exit status 1 if any failed
#
# Besides what the product holds, its shape: the module's files call each
# other in no cycle but the two kmod/main.c describes (kmod-graph.py, on
# the objects of both builds).
#
# The arm64 module is cross-built (gcc-aarch64-linux-gnu, 'make deps')
# against the cache's mainline source configured for arm64 with VFIO, in
# $CACHE/linux-arm64 (made once: defconfig and modules_prepare, under a
# minute).  That tree has no vmlinux, so modpost cannot check the
# module's unresolved symbols against arm64's exports: it is a compile
# and a link of the module, not a load.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
KSRC=${KSRC:-$CACHE/linux-source-7}
A64=$CACHE/linux-arm64
CROSS=aarch64-linux-gnu-

failed=0
ok() { printf 'product: %s: ok\n' "$1"; }
fail() {
	printf 'product: %s: FAILED (%s)\n' "$1" "$2"
	failed=1
}

# The module parameters testing/test.c defines, by name.
test_params() {
	sed -n 's/^module_param[a-z_]*(\([a-z_0-9]*\),.*/\1/p' "$top/kmod/testing/test.c"
}

# check_module NAME KO: no test-only parameter, symbol or dependency.
check_module() {
	local name=$1 ko=$2 parms p leaked=() syms
	# Every parameter, described or not (modinfo lists described ones).
	parms=$(nm "$ko" | sed -n 's/^[0-9a-f]* [a-zA-Z] __param_\([a-z_0-9]*\)$/\1/p' |
		grep -v '^str_\|^string_\|^arr_' || true)
	for p in $(test_params); do
		grep -qxF "$p" <<<"$parms" && leaked+=("$p")
	done
	if [ ${#leaked[@]} -gt 0 ]; then
		fail "$name-params" "test-only parameters: ${leaked[*]}"
	elif grep -qi 'test only' <(modinfo -F parm "$ko"); then
		fail "$name-params" "a parameter described as test only"
	else
		ok "$name-params"
	fi
	# test.c's functions are kvmai_test_*; the mocks' are kvmai_mock_*.
	syms=$(nm "$ko" | awk '$3 ~ /^kvmai_(test|mock)_/ { print $3 }' | sort -u | tr '\n' ' ')
	if [ -n "$syms" ]; then
		fail "$name-symbols" "test-only code: $syms"
	else
		ok "$name-symbols"
	fi
	if modinfo -F depends "$ko" | tr ',' '\n' | grep -qx uncore_guest; then
		fail "$name-depends" "needs uncore_guest, the test-only registry copy"
	else
		ok "$name-depends"
	fi
}

# ---- x86: what 'make' built ---------------------------------------------------

ko=$top/kmod/kvmai.ko
if [ ! -f "$ko" ]; then
	fail x86-built "no $ko: run 'make'"
else
	ok x86-built
	check_module x86 "$ko"
	# Nothing else an insmod could pick up: no mock, no registry copy.
	others=$(cd "$top" && find kmod -name '*.ko' ! -path kmod/kvmai.ko | tr '\n' ' ')
	if [ -n "$others" ]; then
		fail x86-only-kvmai "other modules in kmod/: $others"
	else
		ok x86-only-kvmai
	fi
	"$top/tools/devenv/kmod-graph.py" --name kmod-cycles "$top/kmod" || failed=1
fi

# git holds one copy of the series' registry: the patch.
copies=$(cd "$top" && git ls-files 'kmod/*uncore_guest.[ch]' 'kmod/compat/asm/*')
if [ -n "$copies" ]; then
	fail registry-one-copy "copies of the series' files in git: $copies"
else
	ok registry-one-copy
fi

# ---- arm64 ------------------------------------------------------------------

arm64_tree() {
	local ver
	ver=$(make -s -C "$KSRC" kernelversion)
	[ -f "$A64/.kvmai-$ver" ] && return 0
	rm -rf "$A64"
	make -s -C "$KSRC" O="$A64" ARCH=arm64 CROSS_COMPILE=$CROSS defconfig &&
		"$KSRC/scripts/config" --file "$A64/.config" -e PCI -e VFIO -e VFIO_PCI &&
		make -s -C "$KSRC" O="$A64" ARCH=arm64 CROSS_COMPILE=$CROSS olddefconfig &&
		make -s -C "$KSRC" O="$A64" ARCH=arm64 CROSS_COMPILE=$CROSS -j2 modules_prepare &&
		touch "$A64/.kvmai-$ver"
}

if ! command -v ${CROSS}gcc >/dev/null; then
	fail arm64-toolchain "no ${CROSS}gcc (make deps)"
elif ! arm64_tree >"$CACHE/linux-arm64.log" 2>&1; then
	fail arm64-tree "configuring $KSRC for arm64 failed: $(tail -n 1 "$CACHE/linux-arm64.log")"
else
	scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/kvmai-arm64.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	(cd "$top" && git ls-files --cached --others --exclude-standard kmod | sed 's|^kmod/||' |
		tar -C kmod -cf - -T - | tar -C "$scratch" -xf -)
	# As DKMS builds it: the product's flavour, the series' header beside.
	if make -C "$scratch" KVMAI_SERIES="$top/patches" compat >"$scratch.log" 2>&1 &&
		make -C "$scratch" KDIR="$A64" ARCH=arm64 CROSS_COMPILE=$CROSS KVMAI_TEST= \
			KBUILD_MODPOST_WARN=1 >>"$scratch.log" 2>&1; then
		if file "$scratch/kvmai.ko" | grep -q 'ARM aarch64'; then
			ok arm64-build
			check_module arm64 "$scratch/kvmai.ko"
			NM=${CROSS}nm "$top/tools/devenv/kmod-graph.py" --name arm64-kmod-cycles \
				"$scratch" || failed=1
		else
			fail arm64-build "$(file "$scratch/kvmai.ko")"
		fi
	else
		fail arm64-build "$(grep -m 1 -E 'error|Error' "$scratch.log" || tail -n 1 "$scratch.log")"
	fi
	rm -f "$scratch.log"
fi

exit $failed
