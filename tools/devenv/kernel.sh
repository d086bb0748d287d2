#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The patch series against its mainline base (patches/base):
#   kernel.sh check   apply with git am, checkpatch --strict every patch,
#                     compile the objects the series touches, check that
#                     kmod/compat/from-series.sh takes the series' files
#                     as the applied series has them
#   kernel.sh build   build the small test kernel (patches/kernel.config on
#                     tinyconfig) and the series' KVM selftest, and install
#                     them where vmhost.py boots it;
#                     cached by base + series + config, so an unchanged
#                     series is not rebuilt
#   kernel.sh config  only apply the series and configure the build tree
#   kernel.sh dir     print that install directory (empty if not built)
#   kernel.sh base    build the base without the series, with the same
#                     config less the series' own options, and print where
#                     it is installed: to tell a fault of the series from
#                     one of its base (emulated-host.rst)
#
# Everything lives in $KVMAI_CACHE: a git repository of the base
# (linux-7-git), one tree with the series applied, and its build output.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
JOBS=${JOBS:-2}
src=$CACHE/linux-source-7
repo=$CACHE/linux-7-git
out=$CACHE/kernel-build
series=$top/patches/series
fragment=$top/patches/kernel.config

log() { printf 'kernel: %s\n' "$*"; }
# Holds build tree $1's lock until the script exits: deb.sh's DKMS check
# builds against the tree cmd_check compiles in, and make check runs the
# two in different stages at the same time.
tree_lock() { mkdir -p "$1" && exec 9>"$1/.kvmai-lock" && flock 9; }
die() { printf 'kernel: error: %s\n' "$*" >&2; exit 1; }

[ -f "$src/.complete" ] || die "no mainline source in $src (run 'make deps')"
base_ver=$(sed -n 's/^kernel=//p' "$top/patches/base")
[ "$(cat "$src/.kver")" = "$base_ver" ] ||
	die "source is $(cat "$src/.kver"), patches/base wants $base_ver (run 'make deps')"

patch_files() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$series" | while read -r p; do
		[ -f "$top/patches/$p" ] || die "series names $p, which does not exist"
		echo "$top/patches/$p"
	done
}

key() {
	{ echo "$base_ver"; cat "$fragment"; patch_files | xargs -r cat; } |
		sha256sum | cut -c1-16
}

# A git repository of the pristine base, made once.
ensure_repo() {
	[ -f "$repo/.kvmai-base" ] && [ "$(cat "$repo/.kvmai-base")" = "$base_ver" ] && return
	log "making a git repository of Linux $base_ver (once)"
	rm -rf "$repo"
	mkdir -p "$repo"
	cp -a "$src/." "$repo/"
	rm -f "$repo/.complete" "$repo/.kver" "$repo/.debversion"
	git -C "$repo" init -q -b base
	# Debian's tarball ignores everything in .gitignore: force.
	git -C "$repo" -c core.autocrlf=false add -A -f
	GIT_AUTHOR_DATE="@0 +0000" GIT_COMMITTER_DATE="@0 +0000" \
		git -C "$repo" -c user.name=kvmai -c user.email=kvmai@localhost \
		commit -q -m "Linux $base_ver"
	git -C "$repo" tag -f "v$base_ver" >/dev/null
	echo "$base_ver" >"$repo/.kvmai-base"
}

# The repository's work tree at base + series.  Files the series does not
# touch keep their timestamps, so kbuild rebuilds only what changed.
apply_series() {
	local stamp
	ensure_repo
	stamp=$(patch_files | xargs -r cat | sha256sum | cut -c1-16)
	if [ "$(git -C "$repo" rev-parse --abbrev-ref HEAD)" = series ] &&
		[ "$(cat "$repo/.kvmai-series" 2>/dev/null)" = "$stamp" ] &&
		[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
		return
	fi
	git -C "$repo" am --abort >/dev/null 2>&1 || true
	git -C "$repo" checkout -q -B series "v$base_ver"
	local n=0
	for p in $(patch_files); do
		git -C "$repo" -c user.name=kvmai -c user.email=kvmai@localhost \
			am -q --keep-cr "$p" || die "$(basename "$p") does not apply to $base_ver"
		n=$((n + 1))
	done
	echo "$stamp" >"$repo/.kvmai-series"
	log "applied $n patches to $base_ver"
}

# Configure build tree $1 (default: the test kernel's) from tinyconfig and
# fragment $2 (default: patches/kernel.config).
configure() {
	local dir=${1:-$out} frag=${2:-$fragment}
	mkdir -p "$dir"
	# By content, not timestamp: a fresh clone must not reconfigure a built tree.
	if [ ! -f "$dir/.config" ] || ! cmp -s "$frag" "$dir/.kvmai-fragment"; then
		make -s -C "$repo" O="$dir" tinyconfig >/dev/null
		"$repo/scripts/kconfig/merge_config.sh" -m -O "$dir" "$dir/.config" "$frag" >/dev/null
		make -s -C "$repo" O="$dir" olddefconfig >/dev/null
		cp "$frag" "$dir/.kvmai-fragment"
	fi
	# Every option of the fragment must have survived Kconfig's dependencies.
	local bad=0 opt val got
	while IFS='=' read -r opt val; do
		case $opt in CONFIG_*) ;; *) continue ;; esac
		got=$(grep -E "^$opt=|^# $opt is not set" "$dir/.config" | head -n1)
		if [ "$val" = n ]; then
			case $got in "$opt="*) echo "  $opt=n but set: $got" >&2; bad=1 ;; esac
		elif [ "$got" != "$opt=$val" ]; then
			echo "  $opt=$val but got: ${got:-absent}" >&2
			bad=1
		fi
	done <"$frag"
	[ $bad = 0 ] || die "$frag: options Kconfig did not accept (above)"
}

# Compile objects $3... in build tree $1 with W=1; fails on a warning in
# one of them or one that was not built.  Each is reported as OBJ$2.
compile_objs() {
	local dir=$1 tag=$2 o log rc=0
	shift 2
	make -s -C "$repo" O="$dir" -j"$JOBS" prepare >/dev/null
	# Rebuilt every time; any warning in them fails the check.
	for o in "$@"; do
		rm -f "$dir/$o"
	done
	log=$(make -C "$repo" O="$dir" -j"$JOBS" W=1 "$@" 2>&1 | grep -v "^make\[" || true)
	echo "$log"
	for o in "$@"; do
		if echo "$log" | grep -q "${o%.o}\.[ch]:[0-9]*:[0-9]*: warning:"; then
			echo "compile: $o$tag has W=1 warnings" >&2
			rc=1
		elif [ -f "$dir/$o" ]; then
			echo "compiled: $o$tag"
		else
			echo "compile: $o$tag failed" >&2
			rc=1
		fi
	done
	return $rc
}

# The series' KVM selftests (x86/name), from what it adds or changes.
series_kvm_selftests() {
	git -C "$repo" diff --name-only --diff-filter=AM "v$base_ver" series -- \
		'tools/testing/selftests/kvm/*.c' | sed 's|^tools/testing/selftests/kvm/||; s/\.c$//'
}

# Files of the series that kvmai builds against on kernels without it
# (kmod/compat/from-series.sh takes them out of patches/ for kmod/Makefile):
# what it takes must be what the applied series has.
compat_files=(
	arch/x86/events/uncore_guest.c
	arch/x86/include/asm/uncore_guest.h
)

check_compat() {
	local tree taken rc=0
	taken=$(mktemp)
	for tree in "${compat_files[@]}"; do
		if [ ! -f "$repo/$tree" ]; then
			echo "compat: the series has no $tree" >&2
			rc=1
		elif ! "$top/kmod/compat/from-series.sh" "$top/patches" "$tree" "$taken"; then
			rc=1
		elif ! cmp -s "$repo/$tree" "$taken"; then
			echo "compat: $tree as from-series.sh takes it differs from the applied series'" >&2
			rc=1
		else
			echo "compat: $tree as from-series.sh takes it is the applied series'"
		fi
	done
	rm -f "$taken"
	return $rc
}

cmd_check() {
	local p list rc=0 objs=()
	apply_series
	list=$(patch_files)
	[ -n "$list" ] || die "the series is empty"
	for p in $list; do
		# Debian's python3 first: checkpatch's SPDX check (spdxcheck.py,
		# '#!/usr/bin/env python3') needs python3-ply, which a python
		# earlier on PATH (pyenv) may not have.
		if ! PATH=/usr/bin:$PATH "$repo/scripts/checkpatch.pl" --strict \
			--quiet --no-summary --root="$repo" "$p"; then
			echo "checkpatch: $(basename "$p"): not clean" >&2
			rc=1
		else
			echo "checkpatch: $(basename "$p"): 0 errors, 0 warnings, 0 checks"
		fi
	done
	tree_lock "$out"
	configure
	# The C files the series adds or modifies, as objects to compile
	# (selftests apart: they are programs, built below).
	mapfile -t objs < <(git -C "$repo" diff --name-only --diff-filter=AM "v$base_ver" series -- '*.c' \
		':!tools/' | sed 's/\.c$/.o/')
	if [ ${#objs[@]} -gt 0 ]; then
		log "compiling ${objs[*]}"
		compile_objs "$out" "" "${objs[@]}" || rc=1
		# Again without the uncore registry (a kernel that takes the series
		# but leaves CONFIG_PERF_UNCORE_GUEST off): the header's stubs must
		# do for the drivers and KVM.
		local noreg=$CACHE/kernel-build-noreg frag
		frag=$(mktemp)
		{ grep -v '^CONFIG_PERF_UNCORE_GUEST=' "$fragment"; echo CONFIG_PERF_UNCORE_GUEST=n; } >"$frag"
		configure "$noreg" "$frag"
		rm -f "$frag"
		mapfile -t objs < <(printf '%s\n' "${objs[@]}" | grep -v '^arch/x86/events/uncore_guest\.o$')
		log "compiling them with CONFIG_PERF_UNCORE_GUEST=n"
		compile_objs "$noreg" @PERF_UNCORE_GUEST=n "${objs[@]}" || rc=1
	fi
	# The series' KVM selftests, against its UAPI headers, warnings fatal.
	local t out_log tests=()
	mapfile -t tests < <(series_kvm_selftests)
	for t in "${tests[@]}"; do
		rm -f "$out/kvm-selftests/$t"
		if out_log=$(kvm_selftest "$t" 2>&1) && ! grep -q "warning:" <<<"$out_log"; then
			echo "compiled: tools/testing/selftests/kvm/$t"
		else
			echo "$out_log"
			echo "compile: KVM selftest $t failed or has warnings" >&2
			rc=1
		fi
	done
	check_compat || rc=1
	return $rc
}

# Build KVM selftest $1 (x86/name) of the series' tree in $out/kvm-selftests,
# against the series' UAPI headers.
kvm_selftest() {
	make -s -C "$repo" O="$out" headers &&
		make -s -C "$repo/tools/testing/selftests/kvm" -j"$JOBS" OUTPUT="$out/kvm-selftests" \
			KHDR_INCLUDES="-isystem $out/usr/include" "$out/kvm-selftests/$1"
}

install_dir() {
	echo "$CACHE/kernel/$(key)"
}

# Build tree $1 (bzImage and modules) from $repo and install the kernel,
# its config and its modules in $2, anew; sets kver, the kernel release.
build_install() {
	local dir=$1 dest=$2 st
	# make's own "*** [...] Error N" lines and "Killed" too: a failed
	# build must say where it stopped.  Without pipefail here, so that
	# make's status reaches the check below (set -e would end the script
	# silently on a failed make, or on a grep that matched nothing in an
	# up-to-date tree).
	set +o pipefail
	make -C "$repo" O="$dir" -j"$JOBS" bzImage modules 2>&1 |
		grep -E "error|Error [0-9]|Killed|warning:|^  (CC|LD|AR|AS)" |
		awk '/error|Error [0-9]|Killed|warning:/ {print; next} {n++} n % 500 == 0 {print "kernel: " n " steps"}'
	st=${PIPESTATUS[0]}
	set -o pipefail
	[ "$st" -eq 0 ] || die "build failed in $dir (make exit $st)"
	kver=$(make -s -C "$repo" O="$dir" kernelrelease)
	rm -rf "$dest"
	mkdir -p "$dest/boot"
	cp "$dir/arch/x86/boot/bzImage" "$dest/boot/vmlinuz-$kver"
	cp "$dir/.config" "$dest/boot/config-$kver"
	make -s -C "$repo" O="$dir" INSTALL_MOD_PATH="$dest" modules_install >/dev/null
}

cmd_build() {
	local dest kver t0=$SECONDS
	dest=$(install_dir)
	if [ -f "$dest/.complete" ]; then
		log "up to date: $dest"
		return
	fi
	apply_series
	configure
	log "building in $out (-j$JOBS)"
	build_install "$out" "$dest"
	# kbuild tree for out-of-tree modules (kvmai.ko) against this kernel.
	ln -sfn "$out" "$dest/build"
	# The series' KVM selftests; the emulated host runs them beside kvmai's
	# (make vm-payload-kernel), as kvm_<name>.
	mkdir -p "$dest/selftests"
	local t
	for t in $(series_kvm_selftests); do
		kvm_selftest "$t" >/dev/null || die "the series' KVM selftest $t does not build"
		cp "$out/kvm-selftests/$t" "$dest/selftests/kvm_${t##*/}"
	done
	touch "$dest/.complete"
	log "installed $kver in $dest after $((SECONDS - t0))s"
}

# Options that only the series defines: Kconfig would drop them from the
# base's config, and configure() would rightly refuse that.
series_only_options() {
	patch_files | xargs -r grep -h '^+config ' | sed 's/^+config /CONFIG_/'
}

cmd_base() {
	ensure_repo
	local git_dir=$repo
	# configure() and the make below build what $repo names: here, a work
	# tree of the base beside the series' (bash's locals reach the
	# functions this one calls).
	local repo=$CACHE/linux-7-base bout=$CACHE/kernel-build-base
	local dest=$CACHE/kernel-base frag stamp kver t0=$SECONDS
	frag=$(mktemp)
	grep -v -F -f <(series_only_options | sed 's/$/=/') "$fragment" >"$frag"
	echo 'CONFIG_LOCALVERSION="-base"' >>"$frag"
	stamp=$({ echo "$base_ver"; cat "$frag"; } | sha256sum | cut -c1-16)
	if [ "$(cat "$dest/.complete" 2>/dev/null)" = "$stamp" ]; then
		rm -f "$frag"
		echo "$dest"
		return
	fi
	if [ "$(git -C "$repo" rev-parse -q --verify HEAD 2>/dev/null)" != \
		"$(git -C "$git_dir" rev-parse "v$base_ver^{commit}")" ]; then
		rm -rf "$repo"
		git -C "$git_dir" worktree prune
		git -C "$git_dir" worktree add -q --detach "$repo" "v$base_ver"
	fi
	configure "$bout" "$frag"
	rm -f "$frag"
	log "building $base_ver without the series in $bout (-j$JOBS)" >&2
	# Its progress on stderr: stdout is for the path.
	build_install "$bout" "$dest" >&2
	echo "$stamp" >"$dest/.complete"
	log "installed $kver in $dest after $((SECONDS - t0))s" >&2
	echo "$dest"
}

case ${1:-} in
base) cmd_base ;;
config) apply_series && configure ;;
check) cmd_check ;;
build) cmd_build ;;
dir) d=$(install_dir); [ -f "$d/.complete" ] && echo "$d" || true ;;
*) die "usage: kernel.sh check|build|config|dir|base" ;;
esac
