#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Debian packages from debian/: kvmai-dkms (the module's sources, which
# DKMS builds on the target for each kernel), kvmaictl and kvmaistat (the
# guest's reader of counters devices).
#
#   deb.sh build   dpkg-buildpackage -us -uc -b in a scratch copy of the
#                  tree (the files 'git ls-files' lists, tracked or new, as
#                  they are in the work tree); the .debs, the .changes, the
#                  .buildinfo and build.log go to build/deb/, nothing else
#                  is written in the tree
#   deb.sh lint    lintian on build/deb's .changes: no error (E:), and no
#                  warning (W:) but the ones kept in LINTIAN_KEPT below
#   deb.sh check   both packages into a clean Debian 12 (a debootstrap
#                  minbase chroot, its tarball cached in $CACHE/deb): apt
#                  installs them with their dependencies, DKMS builds and
#                  installs kvmai against the cached Linux 6.12 headers
#                  (kvmai alone, no registry copy), and against the patched test
#                  kernel when 'make kernel' has built one (without);
#                  kvmaictl runs; libvirt's hook runs the packaged
#                  kvmaictl, not one on PATH; removing kvmaictl leaves no
#                  hook that would stop domains from starting; purging
#                  takes everything away again
#   deb.sh build lint check   several, in this order; stops after the first
#                  one with a failed check (the next ones need its output)
#
# Each check prints one line, "deb: NAME: ok" or "deb: NAME: FAILED
# (reason)", and the exit status is 1 if any failed.  Lines starting with
# "deb: ==" are timings, "deb: note:" remarks; neither is a check.
#
# build needs the Build-Depends of debian/control, lint needs lintian,
# check needs root (chroot, mounts), debootstrap and the Debian archive
# (the mirror the host uses): tools/devenv/deps.sh installs the packages.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
OUT=$top/build/deb
K612=$CACHE/linux-6.12
SUITE=bookworm

# Lintian warnings that stay, each with its reason (the same list is in
# Documentation/dev/packaging.rst).  Tags only; lint fails on
# any other warning and on every error.
#
#   initial-upload-closes-no-bugs  (both packages) The first changelog entry
#       closes no ITP bug: kvm-ai is not being uploaded to Debian, the
#       packages are built from this tree for its users.
LINTIAN_KEPT=(
	initial-upload-closes-no-bugs
)

failed=0
ok() { printf 'deb: %s: ok\n' "$1"; }
fail() {
	printf 'deb: %s: FAILED (%s)\n' "$1" "$2"
	failed=1
}
note() { printf 'deb: note: %s\n' "$*"; }
die() {
	printf 'deb: error: %s\n' "$*" >&2
	exit 2
}

version() { sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/kmod/dkms.conf"; }

# The first file matching a glob, or nothing.
first() { if [ -e "$1" ]; then echo "$1"; fi; }
# The last build's .changes, and its .debs.
changes_file() { first "$(compgen -G "$OUT/kvmai_*.changes" | head -n 1)"; }
deb_of() { first "$(compgen -G "$OUT/$1_*.deb" | head -n 1)"; }

# Scratch directories, removed on exit whatever happens (mounts are in a
# namespace of their own, gone by then: --one-file-system is a safeguard).
# new_scratch NAME sets SCRATCH (not a $(): the list must be this shell's).
scratch_dirs=()
# KVMAI_DEB_KEEP=1 keeps them (the chroot, to look into after a failure).
cleanup() {
	[ ${#scratch_dirs[@]} -gt 0 ] || return 0
	if [ -n "${KVMAI_DEB_KEEP:-}" ]; then
		note "kept ${scratch_dirs[*]}"
	else
		rm -rf --one-file-system "${scratch_dirs[@]}"
	fi
}
trap cleanup EXIT
new_scratch() {
	SCRATCH=$(mktemp -d "${TMPDIR:-/var/tmp}/kvmai-$1.XXXXXX")
	scratch_dirs+=("$SCRATCH")
}

# ---- build ------------------------------------------------------------------

build() {
	local ver scratch src rc=0
	ver=$(version)
	[ -n "$ver" ] || die "no PACKAGE_VERSION in kmod/dkms.conf"
	new_scratch deb
	scratch=$SCRATCH
	src=$scratch/kvmai-$ver

	# Tracked and new files, not ignored ones (build output): the tree as
	# it is being worked on, debian/ included before it is committed.
	# Files deleted in the work tree are left out.
	mkdir -p "$src"
	if (cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
		done | tar --null -T - -cf - | tar -C "$src" -xf -); then
		ok export
	else
		fail export "git ls-files | tar into $src"
		return
	fi

	rm -rf "$OUT"
	mkdir -p "$OUT"
	# -J2: parallel=2 in DEB_BUILD_OPTIONS (make and ctest), not forced.
	if (cd "$src" && dpkg-buildpackage -us -uc -b -J2) >"$OUT/build.log" 2>&1; then
		ok dpkg-buildpackage
	else
		rc=$?
		fail dpkg-buildpackage "exit $rc, see build/deb/build.log"
		tail -n 20 "$OUT/build.log" | sed 's/^/  /'
		return
	fi
	find "$scratch" -maxdepth 1 -type f \( -name '*.deb' -o -name '*.changes' \
		-o -name '*.buildinfo' \) -exec mv -t "$OUT" {} +
	grep -E '^(Test project|[0-9]+% tests passed|The following tests)' \
		"$OUT/build.log" | sed 's/^/deb: note: ctest: /' || true

	check_contents "$ver"
}

# What each package must and must not hold.
check_contents() {
	local ver=$1 dkms tool list missing=() extra
	dkms=$(deb_of kvmai-dkms)
	tool=$(deb_of kvmaictl)
	if [ -z "$dkms" ] || [ -z "$tool" ]; then
		fail contents "no kvmai-dkms or kvmaictl .deb in build/deb"
		return
	fi
	list=$(dpkg-deb -c "$dkms" | awk '{print $6}' | sed 's|^\./|/|')
	for f in dkms.conf Kbuild Makefile main.c compat/asm/uncore_guest.h \
		include/uapi/linux/kvmai.h; do
		grep -qxF "/usr/src/kvmai-$ver/$f" <<<"$list" || missing+=("$f")
	done
	extra=$(grep -E "^/usr/src/kvmai-$ver/(testing/|.*uncore_guest(\.c|_module\.h)$|.*\.(o|ko|mod|mod\.c|cmd)$)" <<<"$list" || true)
	if [ ${#missing[@]} -gt 0 ]; then
		fail contents-kvmai-dkms "missing ${missing[*]}"
	elif [ -n "$extra" ]; then
		fail contents-kvmai-dkms "test-only or built files: $(echo "$extra" | tr '\n' ' ')"
	elif ! dpkg-deb -I "$dkms" postinst 2>/dev/null | grep -q 'common.postinst'; then
		fail contents-kvmai-dkms "no dkms postinst (dh_dkms did not run)"
	else
		ok contents-kvmai-dkms
	fi

	list=$(dpkg-deb -c "$tool" | awk '{print $6}' | sed 's|^\./|/|')
	missing=()
	for f in /usr/bin/kvmaictl /usr/share/man/man8/kvmaictl.8.gz \
		/usr/share/bash-completion/completions/kvmaictl \
		/usr/share/doc/kvmaictl/copyright; do
		grep -qxF "$f" <<<"$list" || missing+=("$f")
	done
	for f in "$top"/Documentation/admin-guide/kvmai/*.rst; do
		f=/usr/share/doc/kvmaictl/$(basename "$f")
		grep -qxE "$f(\.gz)?" <<<"$list" || missing+=("$f")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		fail contents-kvmaictl "missing ${missing[*]}"
	else
		ok contents-kvmaictl
	fi

	# The guest's reader, a package of its own: guests need nothing else.
	tool=$(deb_of kvmaistat)
	list=$([ -z "$tool" ] || dpkg-deb -c "$tool" | awk '{print $6}' | sed 's|^\./|/|')
	missing=()
	for f in /usr/bin/kvmaistat /usr/share/man/man1/kvmaistat.1.gz \
		/usr/share/doc/kvmaistat/copyright; do
		grep -qxF "$f" <<<"$list" || missing+=("$f")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		fail contents-kvmaistat "missing ${missing[*]}"
	else
		ok contents-kvmaistat
	fi
}

# ---- lint -------------------------------------------------------------------

lint() {
	local changes log errors warnings unexpected tag
	changes=$(changes_file)
	if [ -z "$changes" ]; then
		fail lintian "no build/deb/*.changes: run 'deb.sh build' first"
		return
	fi
	command -v lintian >/dev/null || die "lintian not installed (make deps)"
	log=$OUT/lintian.log
	# Exit status 1 means "tags were emitted"; the log is what counts.
	lintian --no-cfg --display-level '>=warning' --tag-display-limit 0 \
		"$changes" >"$log" 2>&1 || true
	if grep -q '^internal error\|^error:' "$log"; then
		fail lintian "lintian itself failed, see build/deb/lintian.log"
		return
	fi
	errors=$(grep -c '^E: ' "$log" || true)
	if [ "$errors" -eq 0 ]; then
		ok lintian-errors
	else
		fail lintian-errors "$errors, see build/deb/lintian.log"
		grep '^E: ' "$log" | sed 's/^/  /'
	fi
	warnings=$(grep '^W: ' "$log" | awk '{print $3}' | sort -u)
	unexpected=()
	for tag in $warnings; do
		printf '%s\n' "${LINTIAN_KEPT[@]}" | grep -qxF "$tag" || unexpected+=("$tag")
	done
	if [ ${#unexpected[@]} -eq 0 ]; then
		ok lintian-warnings
		for tag in $warnings; do note "lintian warning kept: $tag"; done
	else
		fail lintian-warnings "not kept in deb.sh: ${unexpected[*]}"
		grep '^W: ' "$log" | sed 's/^/  /'
	fi
}

# ---- check ------------------------------------------------------------------

# The mirrors the host installs from (as deps.sh finds them).
mirror() {
	local m=${KVMAI_MIRROR:-}
	if [ -z "$m" ]; then
		m=$(grep -hoE '^(URIs:|deb) +[a-z]+://[^ ]+debian/?' \
			/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
			grep -v security | awk 'NR == 1 {print $2}' || true)
	fi
	m=${m:-http://deb.debian.org/debian}
	echo "${m%/}"
}
security_mirror() {
	grep -rhE '^(URIs:|deb) ' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		grep -oE '[a-z]+://[^ ]+/debian-security' | head -n 1 || true
}

# A minbase bookworm, made once with debootstrap and kept as a tarball;
# made again when older than 30 days (apt brings it up to date anyway).
TARBALL=$CACHE/deb/$SUITE-minbase.tar.zst
base_tarball() {
	[ -n "$(find "$TARBALL" -mtime -30 2>/dev/null)" ] && return 0
	command -v debootstrap >/dev/null || die "debootstrap not installed (make deps)"
	note "debootstrap --variant=minbase $SUITE, once (cached in $TARBALL)"
	mkdir -p "$CACHE/deb"
	new_scratch debootstrap
	debootstrap --variant=minbase "$SUITE" "$SCRATCH/root" "$(mirror)" \
		>"$CACHE/deb/debootstrap.log" 2>&1 || return 1
	tar -C "$SCRATCH/root" --zstd -cf "$TARBALL.tmp" . || return 1
	mv "$TARBALL.tmp" "$TARBALL"
	rm -rf --one-file-system "$SCRATCH"
}

check() {
	local rc=0
	[ "$(id -u)" -eq 0 ] || die "check needs root (chroot and mounts)"
	if [ -z "$(deb_of kvmai-dkms)" ] || [ -z "$(deb_of kvmaictl)" ]; then
		fail chroot "no .debs in build/deb: run 'deb.sh build' first"
		return
	fi
	[ -f "$K612/.complete" ] || die "no Linux 6.12 headers in $K612 (make deps)"
	if ! base_tarball; then
		fail chroot "debootstrap failed, see $CACHE/deb/debootstrap.log"
		return
	fi
	new_scratch chroot
	mkdir "$SCRATCH/root"
	if ! tar -C "$SCRATCH/root" --zstd -xf "$TARBALL"; then
		fail chroot "cannot unpack $TARBALL"
		return
	fi
	ok chroot
	# The mounts live in a mount namespace of their own: they go away with
	# it, whatever happens to the session, before the tree is removed.
	unshare --mount --propagation private -- "$0" _session "$SCRATCH/root" || rc=$?
	case $rc in
	0) ;;
	10) failed=1 ;;
	*) fail session "aborted (exit $rc), see build/deb/check.log" ;;
	esac
}

# A host directory, read-only at the same path in the chroot.
bind_ro() {
	mkdir -p "$ROOT$1"
	mount --bind "$1" "$ROOT$1"
	mount -o remount,bind,ro "$ROOT$1"
}

# A command in the chroot, with a clean environment.
ch() {
	chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# The checks proper, in the mount namespace, on the chroot at $ROOT.
session() {
	local ver kver m sec out kdir kbuild srctree
	ver=$(version)
	kver=$(cat "$K612/.kver")
	LOG=$OUT/check.log
	: >"$LOG"

	mount -t proc proc "$ROOT/proc"
	bind_ro "$K612"
	bind_ro "$OUT"
	# Downloaded packages are kept between runs.
	mkdir -p "$CACHE/deb/apt-archives/partial"
	mount --bind "$CACHE/deb/apt-archives" "$ROOT/var/cache/apt/archives"
	cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
	m=$(mirror)
	sec=$(security_mirror)
	{
		echo "deb $m $SUITE main"
		echo "deb $m $SUITE-updates main"
		[ -z "$sec" ] || echo "deb $sec $SUITE-security main"
	} >"$ROOT/etc/apt/sources.list"

	# apt brings both packages' dependencies (dkms, a compiler, libnl...)
	# from the archive, as on a user's machine.  The postinst adds kvmai to
	# DKMS and builds it for no kernel: the chroot has no headers of the
	# running one.
	if ch apt-get update -q >>"$LOG" 2>&1 &&
		ch apt-get install -y -q --no-install-recommends \
			"$(deb_of kvmai-dkms)" "$(deb_of kvmaictl)" >>"$LOG" 2>&1; then
		ok install
	else
		fail install "apt-get install of both .debs, see build/deb/check.log"
		tail -n 15 "$LOG" | sed 's/^/  /'
		return 10
	fi
	# The cached headers are unpacked, not installed: what installing them
	# would bring, the kbuild binaries' libraries (objtool needs libelf),
	# comes from the Depends of their linux-kbuild package (Debian's 6.12
	# is in bookworm-security).
	local kbuild_pkg deps
	kbuild_pkg=$(basename "$(compgen -G "$K612/usr/lib/linux-kbuild-*" | head -n 1)")
	deps=$(ch apt-cache show "$kbuild_pkg" 2>>"$LOG" | sed -n 's/^Depends: //p' | head -n 1)
	if [ -z "$deps" ]; then
		fail kbuild-deps "no $kbuild_pkg in the archive"
	elif ch apt-get satisfy -y -q --no-install-recommends "$deps" >>"$LOG" 2>&1; then
		ok kbuild-deps
	else
		fail kbuild-deps "apt-get satisfy '$deps', see build/deb/check.log"
	fi

	if ch dkms status -m kvmai -v "$ver" 2>>"$LOG" | grep -q "^kvmai/$ver"; then
		ok dkms-added
	else
		fail dkms-added "dkms status knows no kvmai/$ver"
	fi

	# Debian's 6.12 has no series: kvmai.ko alone (no registry copy, the
	# header's stubs), on mdev.ko and vfio.ko for its counters devices.
	dkms_kernel 6.12 "$kver" "$K612/usr/src/linux-headers-$kver" "$K612/lib/modules/$kver" \
		kvmai "mdev,vfio"

	# The patched test kernel, if 'make kernel' built it (an O= build: the
	# series' header is in the source tree its Makefile includes).
	kdir=$(KVMAI_CACHE=$CACHE "$top/tools/devenv/kernel.sh" dir 2>/dev/null || true)
	if [ -n "$kdir" ] && [ -d "$kdir/build" ] && [ -d "$kdir/lib/modules" ]; then
		kbuild=$(readlink -f "$kdir/build")
		bind_ro "$kbuild"
		srctree=$(sed -n 's|^include \(/.*\)/Makefile$|\1|p' "$kbuild/Makefile" | head -n 1)
		[ -z "$srctree" ] || bind_ro "$srctree"
		kver=$(find "$kdir/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n 1)
		# Its VFIO is built in, mdev a module (patches/kernel.config).
		# kernel.sh check compiles in the same tree: one at a time.
		exec 9>"$kbuild/.kvmai-lock"
		flock 9
		dkms_kernel series "$kver" "$kbuild" "$kdir/lib/modules/$kver" kvmai mdev
		exec 9>&-
	else
		note "no patched kernel ('make kernel'): DKMS checked on 6.12 only"
	fi

	# No module can be loaded here: the first line (the tool's version) is
	# what counts, the second says the module is missing.
	out=$(ch kvmaictl version 2>>"$LOG" || true)
	if [ "$(head -n 1 <<<"$out")" = "kvmaictl $ver" ]; then
		ok kvmaictl-version
	else
		fail kvmaictl-version "printed '$(head -n 1 <<<"$out")', not 'kvmaictl $ver'"
	fi
	if ch kvmaictl help >>"$LOG" 2>&1 && ch test -s /usr/share/man/man8/kvmaictl.8.gz &&
		ch bash -n /usr/share/bash-completion/completions/kvmaictl 2>>"$LOG"; then
		ok kvmaictl-files
	else
		fail kvmaictl-files "kvmaictl help, the man page or the completion, see build/deb/check.log"
	fi

	hook_checks

	# Purging runs the prerm's 'dkms remove --all'.
	local left
	if ! ch apt-get purge -y -q kvmai-dkms kvmaictl >>"$LOG" 2>&1; then
		fail purge "apt-get purge failed, see build/deb/check.log"
	else
		left=$(
			cd "$ROOT"
			for f in usr/src/kvmai-"$ver" var/lib/dkms/kvmai usr/bin/kvmaictl \
				usr/libexec/kvmai etc/libvirt/hooks/qemu.d/kvmai; do
				if [ -e "$f" ]; then echo "$f"; fi
			done
			find lib/modules \( -name 'kvmai.ko*' -o -name 'uncore_guest.ko*' \) 2>/dev/null
		) || true
		left=$(xargs <<<"$left")
		if [ -z "$left" ]; then
			ok purge
		else
			fail purge "left behind: $left"
		fi
	fi
	[ "$failed" -eq 0 ] || return 10
}

# The libvirt hook as libvirt runs it: with libvirt's PATH (/usr/local
# first) and a domain's XML on standard input; prints the exit status.
HOOK=/etc/libvirt/hooks/qemu.d/kvmai
run_hook() {
	ch sh -c "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		$HOOK vm1 prepare begin - </tmp/domain.xml >/dev/null 2>>/tmp/hook.err; echo \$?"
}

# kvmaictl's libvirt hook: a link to the packaged script, which runs the
# packaged kvmaictl whatever PATH holds; after 'apt-get remove kvmaictl'
# (no purge) no hook is left that would stop every domain from starting.
hook_checks() {
	local rc target
	printf '%s\n' "<domain type='kvm'><name>vm1</name><memory>65536</memory></domain>" \
		>"$ROOT/tmp/domain.xml"
	# A stale 'make install' copy where libvirt's PATH looks first.
	mkdir -p "$ROOT/usr/local/bin"
	printf '#!/bin/sh\ntouch /tmp/stale-kvmaictl-ran\nexit 3\n' >"$ROOT/usr/local/bin/kvmaictl"
	chmod 755 "$ROOT/usr/local/bin/kvmaictl"
	target=$(readlink "$ROOT$HOOK" || true)
	rc=$(run_hook)
	if [ -e "$ROOT/tmp/stale-kvmaictl-ran" ]; then
		fail hook-installed "the hook ran /usr/local/bin/kvmaictl, not /usr/bin/kvmaictl"
	elif [ "$rc" != 0 ]; then
		fail hook-installed "the hook exited $rc on a domain without kvm-ai metadata: $(cat "$ROOT/tmp/hook.err")"
	elif [ "$target" != /usr/libexec/kvmai/libvirt-hook ]; then
		fail hook-installed "$HOOK is not a link to /usr/libexec/kvmai/libvirt-hook ('$target')"
	else
		ok hook-installed
	fi
	rm -f "$ROOT/usr/local/bin/kvmaictl" "$ROOT/tmp/stale-kvmaictl-ran"

	if ! ch apt-get remove -y -q kvmaictl >>"$LOG" 2>&1; then
		fail hook-removed "apt-get remove kvmaictl failed, see build/deb/check.log"
	elif [ ! -e "$ROOT$HOOK" ] && [ ! -L "$ROOT$HOOK" ]; then
		ok hook-removed
	elif rc=$(run_hook) && [ "$rc" = 0 ]; then
		note "$HOOK outlived 'apt-get remove kvmaictl', and exits 0"
		ok hook-removed
	else
		fail hook-removed "$HOOK outlived 'apt-get remove kvmaictl' and exits $rc: every domain would fail to start"
	fi
}

# dkms build and install of kvmai for one kernel: NAME KVER KSRC MODULES
# WANT DEP, MODULES being the kernel's /lib/modules/KVER.  The modules built
# must be WANT, no more; kvmai.ko must depend on DEP (a sorted comma list,
# as modinfo's order is modpost's) and have no test-only
# parameters, although KVMAI_TEST=y is in dkms's environment (dkms.conf's
# MAKE line overrides it).
dkms_kernel() {
	local name=$1 kver=$2 ksrc=$3 mods=$4 want=$5 dep=$6 moddir got ko parm depends vermagic
	want=$(printf '%s\n' "$want" | tr ' ' '\n' | sort | xargs)
	if ch KVMAI_TEST=y dkms build -m kvmai -v "$ver" -k "$kver" --kernelsourcedir "$ksrc" \
		>>"$LOG" 2>&1; then
		ok "dkms-build-$name"
	else
		cp "$ROOT/var/lib/dkms/kvmai/$ver/build/make.log" "$OUT/make-$name.log" 2>/dev/null || true
		fail "dkms-build-$name" "dkms build -k $kver, see build/deb/make-$name.log"
		grep -E 'error|Error' "$OUT/make-$name.log" 2>/dev/null | head -n 5 | sed 's/^/  /'
		return 0
	fi
	moddir=$ROOT/var/lib/dkms/kvmai/$ver/$kver/x86_64/module
	got=$(find "$moddir" -name '*.ko*' -printf '%f\n' 2>/dev/null | sed 's/\.ko.*//' | sort | xargs)
	ko=$(find "$moddir" -name 'kvmai.ko*' 2>/dev/null | head -n 1)
	ko=/${ko#"$ROOT"/}
	parm=$(ch modinfo -F parm "$ko" 2>>"$LOG" | grep -c 'test only' || true)
	depends=$(ch modinfo -F depends "$ko" 2>>"$LOG" | tr ',' '\n' | sort | paste -sd, || true)
	vermagic=$(ch modinfo -F vermagic "$ko" 2>>"$LOG" | awk '{print $1}' || true)
	if [ "$got" != "$want" ]; then
		fail "dkms-modules-$name" "built '$got', expected '$want'"
	elif [ "$parm" -ne 0 ]; then
		fail "dkms-modules-$name" "kvmai.ko has KVMAI_TEST's parameters"
	elif [ "$vermagic" != "$kver" ]; then
		fail "dkms-modules-$name" "vermagic '$vermagic', expected '$kver'"
	elif [ "$depends" != "$dep" ]; then
		fail "dkms-modules-$name" "kvmai.ko depends on '$depends', expected '$dep'"
	else
		ok "dkms-modules-$name"
	fi
	# dkms installs only for a kernel that is there: its modules.* files
	# stand for it (depmod's input), not its modules.
	mkdir -p "$ROOT/lib/modules/$kver"
	find "$mods" -maxdepth 1 -type f -name 'modules.*' -exec cp -t "$ROOT/lib/modules/$kver" {} +
	if ch dkms install -m kvmai -v "$ver" -k "$kver" --kernelsourcedir "$ksrc" >>"$LOG" 2>&1 &&
		got=$(find "$ROOT/lib/modules/$kver/updates/dkms" -name '*.ko*' -printf '%f\n' \
			2>/dev/null | sed 's/\.ko.*//' | sort | xargs) &&
		[ "$got" = "$want" ]; then
		ok "dkms-install-$name"
	else
		fail "dkms-install-$name" "dkms install -k $kver, see build/deb/check.log"
	fi
}

# ---- main -------------------------------------------------------------------

if [ "${1:-}" = _session ]; then
	ROOT=$2
	rc=0
	session || rc=$?
	exit "$rc"
fi

[ $# -gt 0 ] || die "usage: deb.sh build|lint|check ..."
for cmd in "$@"; do
	case "$cmd" in
	build | lint | check) ;;
	*) die "usage: deb.sh build|lint|check ... (not '$cmd')" ;;
	esac
done
for cmd in "$@"; do
	t0=$SECONDS
	"$cmd"
	printf 'deb: == %s: %ds\n' "$cmd" $((SECONDS - t0))
	[ "$failed" -eq 0 ] || exit 1
done
