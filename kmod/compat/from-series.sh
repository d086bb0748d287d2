#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# from-series.sh SERIES PATH OUT: writes to OUT the file PATH of the
# kernel tree as the kvm-ai patch series (the directory SERIES, patches/)
# creates it.  kvmai builds against the series' uncore registry header on
# kernels without the series, and its tests load the registry itself:
# this keeps git holding one copy of them, the patch's.  The file must be
# created by exactly one patch and changed by no other.
set -eu

series=$1 path=$2 out=$3
touching=$(grep -l -e "^+++ b/$path\$" -e "^--- a/$path\$" "$series"/[0-9]*.patch || true)
case $touching in
"")
	echo "from-series: no patch in $series creates $path" >&2
	exit 1
	;;
*"
"*)
	echo "from-series: more than one patch in $series touches $path:" $touching >&2
	exit 1
	;;
esac
mkdir -p "$(dirname "$out")"
# A new file's diff is one hunk, "@@ -0,0 +1,N @@", of N added lines.
awk -v path="$path" '
	$0 == "--- /dev/null" { fresh = 1; next }
	$0 == "+++ b/" path { found = fresh; next }
	/^\+\+\+ / { fresh = 0; next }
	found && /^@@ -0,0 \+1(,[0-9]+)? @@/ {
		n = $3; sub(/^\+1,?/, "", n); left = n == "" ? 1 : n; found = 0; next
	}
	left > 0 { if (substr($0, 1, 1) != "+") { bad = 1; exit }
		   print substr($0, 2); if (--left == 0) done = 1 }
	END { if (bad || !done) exit 1 }
' "$(echo $touching)" >"$out.tmp" || {
	rm -f "$out.tmp"
	echo "from-series: $touching does not create $path as one new-file hunk" >&2
	exit 1
}
mv "$out.tmp" "$out"
