#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kvm-ai's QEMU patches (patches/qemu/series) on the QEMU Debian ships
# (patches/qemu/base):
#   qemu.sh check   apply the series to the base; QEMU's own checkpatch.pl
#                   on every patch
#   qemu.sh build   build qemu-system-x86_64 with the series (KVM and TCG,
#                   the devices of patches/qemu/devices.mak) and install it
#                   as $KVMAI_CACHE/qemu/KEY/bin/qemu-system-x86_64; cached
#                   by base + series + devices + this script's FORMAT, so an
#                   unchanged series is not rebuilt
#   qemu.sh dir     print that directory (empty if not built)
#
# The emulated host runs this QEMU for the guests whose tests need the
# series (l2-run -q); the host profiles with emulator = "kvmai"
# (aihost.toml) run the emulated host itself on it, under TCG, for the
# series' TCG fix.  Everything else keeps Debian's.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
JOBS=${JOBS:-2}
qdir=$top/patches/qemu
# Bump when the configure options below change.
FORMAT=2

log() { printf 'qemu: %s\n' "$*"; }
die() { printf 'qemu: error: %s\n' "$*" >&2; exit 1; }

tarball=$CACHE/qemu-source/$(sed -n 's/^tarball=//p' "$qdir/base")
qver=$(sed -n 's/^qemu=//p' "$qdir/base")

patch_files() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$qdir/series" | while read -r p; do
		[ -f "$qdir/$p" ] || die "series names $p, which does not exist"
		echo "$qdir/$p"
	done
}

key() {
	{ echo "$FORMAT"; cat "$qdir/base" "$qdir/devices.mak"; patch_files | xargs -r cat; } |
		sha256sum | cut -c1-16
}

out=$CACHE/qemu/$(key)

# The base unpacked into $1, then the series applied with no fuzz;
# one 'applied: NAME' line per patch.
unpack() {
	[ -f "$tarball" ] || die "no QEMU source at $tarball (run 'make deps')"
	rm -rf "$1"
	mkdir -p "$1"
	tar -xf "$tarball" -C "$1" --strip-components=1
}

apply_series() {
	local p
	for p in $(patch_files); do
		patch -d "$1" -p1 -s -F0 -N --no-backup-if-mismatch <"$p" >/dev/null ||
			die "$(basename "$p") does not apply to QEMU $qver"
		echo "applied: qemu/$(basename "$p")"
	done
}

build() {
	if [ -f "$out/.complete" ]; then
		log "up to date: $out"
		return
	fi
	local work=$CACHE/qemu-build
	unpack "$work/src"
	apply_series "$work/src" >/dev/null
	# The +ds tarball has no prebuilt firmware, but meson still unpacks
	# the EDK2 images for x86 targets whenever bzip2 exists.  Empty
	# stand-ins satisfy it; nothing from pc-bios is installed, and guests
	# boot the firmware of Debian's QEMU (aihost.toml [nested]).
	local f
	for f in $(sed -n "s/^ *'\(edk2-[a-z0-9_-]*\.fd\)',\$/\1/p" "$work/src/pc-bios/meson.build"); do
		[ -e "$work/src/pc-bios/$f.bz2" ] || bzip2 -c </dev/null >"$work/src/pc-bios/$f.bz2"
	done
	cp "$qdir/devices.mak" "$work/src/configs/devices/x86_64-softmmu/kvmai.mak"
	mkdir -p "$work/build"
	log "configuring QEMU $qver with $(patch_files | wc -l) patches"
	# The system python: meson and pycotap come from Debian (make deps),
	# and nothing is downloaded.
	(cd "$work/build" && ../src/configure --python=/usr/bin/python3 \
		--target-list=x86_64-softmmu --enable-kvm --enable-tcg \
		--without-default-features --without-default-devices \
		--with-devices-x86_64=kvmai --disable-download --disable-fdt \
		--disable-install-blobs --disable-docs --disable-user \
		--disable-tools --disable-guest-agent \
		--with-pkgversion="kvm-ai $(key)") >"$work/configure.log" 2>&1 ||
		{ tail -n 20 "$work/configure.log" >&2; die "configure failed ($work/configure.log)"; }
	log "building qemu-system-x86_64 (about three minutes on two cores)"
	ninja -C "$work/build" -j "$JOBS" qemu-system-x86_64 >"$work/build.log" 2>&1 ||
		{ grep -A20 FAILED "$work/build.log" | head -n 40 >&2; die "build failed ($work/build.log)"; }
	rm -rf "$CACHE/qemu"
	mkdir -p "$out/bin"
	cp "$work/build/qemu-system-x86_64" "$out/bin/"
	rm -rf "$work"
	touch "$out/.complete"
	log "built $out/bin/qemu-system-x86_64"
}

check() {
	local rc=0 p res ok
	checkdir=$(mktemp -d)
	trap 'rm -rf "$checkdir"' EXIT
	unpack "$checkdir/base"
	for p in $(patch_files); do
		# QEMU's checkpatch, from the base the series applies to.
		ok=1
		res=$(cd "$checkdir/base" && perl scripts/checkpatch.pl "$p" 2>&1) || ok=0
		echo "checkpatch: qemu/$(basename "$p"): $(printf '%s\n' "$res" |
			sed -n 's/^total: \([0-9]* errors, [0-9]* warnings\).*/\1/p')"
		[ $ok = 1 ] || { printf '%s\n' "$res" >&2; rc=1; }
	done
	apply_series "$checkdir/base"
	return $rc
}

case ${1:-} in
check) check ;;
build) build ;;
dir) if [ -f "$out/.complete" ]; then echo "$out"; fi ;;
*) echo "usage: $0 {check|build|dir}" >&2; exit 2 ;;
esac
