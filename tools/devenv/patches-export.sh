#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The patch series as a distribution kernel package consumes it: a quilt
# directory (a series file and the patches, without the cover letter).
#
#   patches-export.sh DEST     write DEST/series and DEST/*.patch
#   patches-export.sh --check  export to a scratch directory and apply it
#                              with 'quilt push -a' to the files it touches,
#                              copied from the cached linux-source-7.x tree
#                              (patches/base), then 'quilt pop -a'; prints
#                              "quilt: NAME: applied" per patch
#
# Debian's linux package keeps its own quilt queue in debian/patches; the
# exported files go in a directory of it (e.g. debian/patches/kvmai/) and
# its series lines into debian/patches/series, prefixed with that
# directory (README.md, "Carrying the series in a distribution kernel").
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
K7=$CACHE/linux-source-7

die() { printf 'patches-export: error: %s\n' "$*" >&2; exit 1; }

# The patches in order, from patches/series (comments and blanks dropped).
patches() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/patches/series"; }

export_to() {
	local dest=$1 base
	mkdir -p "$dest"
	base=$(sed -n 's/^version=//p' "$top/patches/base")
	{
		echo "# kvm-ai patch series for Linux $base (linux-source-7.x),"
		echo "# exported from patches/ by tools/devenv/patches-export.sh."
		patches
	} >"$dest/series"
	patches | while read -r p; do
		[ -f "$top/patches/$p" ] || die "patches/series names $p, which does not exist"
		cp "$top/patches/$p" "$dest/$p"
	done
}

check() {
	command -v quilt >/dev/null || die "quilt not installed (make deps)"
	[ -f "$K7/.complete" ] || die "no $K7 (make deps)"
	local tree
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch"' EXIT
	export_to "$scratch/patches"
	tree=$scratch/tree
	mkdir -p "$tree"
	# Only the files the series touches: the tree is large, quilt needs
	# just these (files the series creates do not exist yet, even when a
	# later patch of it changes them).
	sed -n 's|^--- a/||p' "$scratch"/patches/*.patch | sort -u | while read -r f; do
		[ -f "$K7/$f" ] || continue
		mkdir -p "$tree/$(dirname "$f")"
		cp "$K7/$f" "$tree/$f"
	done
	patches | while read -r p; do
		if (cd "$tree" && QUILT_PATCHES=../patches quilt push -q "$p" >"$scratch/log" 2>&1); then
			echo "quilt: $p: applied"
		else
			echo "quilt: $p: does not apply"
			sed 's/^/  /' "$scratch/log"
			exit 1
		fi
	done
	(cd "$tree" && QUILT_PATCHES=../patches quilt pop -a -q >/dev/null) ||
		die "quilt pop -a failed"
	echo "quilt: pop -a: clean"
}

case "${1:-}" in
--check) check ;;
"" | -*) die "usage: patches-export.sh DEST | --check" ;;
*) export_to "$1" ;;
esac
