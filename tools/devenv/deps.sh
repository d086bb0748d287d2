#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install everything kvm-ai needs to build and test on Debian 12, from
# Debian's archive only.  Idempotent: a second run only re-checks.
#
# What goes where:
#   - build/test packages: apt, from bookworm;
#   - QEMU 10: apt, from bookworm-backports, only the named packages;
#   - virt-xml-validate and libvirt's schemas (libvirt 11, the one that goes
#     with QEMU 10): apt, from bookworm-backports, clients only, no daemon;
#   - Linux 6.12 image + headers: *unpacked* into $CACHE/linux-6.12 (we
#     boot that kernel in QEMU and build kvmai.ko against its headers;
#     nothing is installed into /boot);
#   - linux-source-7.x: downloaded from trixie-backports with a private apt
#     configuration (the system never sees trixie) and unpacked into
#     $CACHE/linux-source-7 (patch base, checkpatch, kselftest harness).
set -euo pipefail

CACHE=${KVMAI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kvmai}
MIRROR=${KVMAI_MIRROR:-}

log() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install)"

# --host: only what 'make' needs on a host that runs kvm-ai (README, "On a
# real host"): the running kernel's headers, a compiler and kvmaictl's
# libraries, from the host's own Debian (or derivative) archive.  The
# tests' tools are not installed, and kvmaictl is built without its tests.
if [ "${1:-}" = --host ]; then
	export DEBIAN_FRONTEND=noninteractive
	log "apt-get update"
	apt-get update -qq
	HOST_PKGS=(
		"linux-headers-$(uname -r)" build-essential kmod
		cmake pkg-config libnl-3-dev libnl-genl-3-dev
		libboost-program-options-dev nlohmann-json3-dev libpugixml-dev libfmt-dev libtomlplusplus-dev
	)
	log "installing ${HOST_PKGS[*]}"
	apt-get install -y -qq --no-install-recommends "${HOST_PKGS[@]}" >/dev/null
	log "ok: make builds kmod/kvmai.ko for $(uname -r), kvmaictl and kvmaistat"
	exit 0
fi

. /etc/os-release
[ "${VERSION_CODENAME:-}" = bookworm ] || die "Debian 12 (bookworm) required, found ${PRETTY_NAME:-unknown}"

export DEBIAN_FRONTEND=noninteractive

# The system's own mirror, so backports come from the same place.
if [ -z "$MIRROR" ]; then
	MIRROR=$(grep -hoE '^(URIs:|deb) +[a-z]+://[^ ]+debian/?' \
		/etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
		grep -v security | awk 'NR == 1 {print $2}' || true)
	MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
MIRROR=${MIRROR%/}

BPO=/etc/apt/sources.list.d/kvmai-bookworm-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	log "adding bookworm-backports ($MIRROR)"
	cat >"$BPO" <<EOS
Types: deb
URIs: $MIRROR
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
	rm -f "$CACHE/.apt-updated"
fi

mkdir -p "$CACHE"
# One update per day is enough; CI machines are fresh and always update.
if [ -z "$(find "$CACHE/.apt-updated" -mmin -1440 2>/dev/null)" ]; then
	log "apt-get update"
	apt-get update -qq
	touch "$CACHE/.apt-updated"
fi

PKGS=(
	# toolchain and kbuild
	build-essential bc bison flex libelf-dev libssl-dev dwarves kmod cpio
	xz-utils zstd perl python3 python3-yaml python3-jsonschema git
	# kvmaictl
	cmake pkg-config libnl-3-dev libnl-genl-3-dev
	libboost-program-options-dev libgtest-dev libgmock-dev
	nlohmann-json3-dev libpugixml-dev libfmt-dev libtomlplusplus-dev libxml2-dev clang-format clang-tidy
	# xmllint: the tests validate libvirt metadata against its RELAX NG schema
	libxml2-utils
	# the completion script's test sources bash-completion's helpers; the
	# arm64 build of the module (tools/devenv/product.sh)
	bash-completion gcc-aarch64-linux-gnu
	# emulated host; perf for its L2 guests (uncore PMUs passed through);
	# OVMF for its UEFI guests (the l2 part, vm plan ... firmware uefi)
	busybox-static pciutils linux-perf ovmf
	# patches-export --check; checkpatch's SPDX check (scripts/spdxcheck.py)
	quilt python3-ply python3-git
	# kvm-ai's QEMU (tools/devenv/qemu.sh; meson and pycotap come from
	# backports below)
	libglib2.0-dev zlib1g-dev ninja-build curl
	# Debian packages (make deb, deb-check: tools/devenv/deb.sh): build
	# (dh-dkms is debian/control's dh-sequence-dkms), lintian, and the
	# clean bookworm chroot of 'deb.sh check' (dkms itself goes there)
	dpkg-dev debhelper dh-dkms fakeroot lintian debootstrap
)
missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# QEMU 10 from backports; only these packages, so nothing else moves.
QEMU_PKGS=(qemu-system-x86 qemu-system-common qemu-system-data seabios)
qver=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true)
case "$qver" in
*bpo12*) ;;
*)
	log "installing QEMU from bookworm-backports"
	apt-get install -y -qq --no-install-recommends \
		"${QEMU_PKGS[@]/%//bookworm-backports}" >/dev/null
	;;
esac

# What QEMU 10's build needs newer than bookworm has: meson >= 1.5 and
# pycotap (its configure checks both; the orig tarball bundles neither).
QBUILD_PKGS=(meson python3-pycotap)
if ! dpkg-query -W -f='${Version}' meson 2>/dev/null | grep -q bpo12 ||
	! dpkg-query -W -f='${Status}' python3-pycotap 2>/dev/null | grep -q 'ok installed'; then
	log "installing ${QBUILD_PKGS[*]} from bookworm-backports (QEMU's build)"
	apt-get install -y -qq --no-install-recommends \
		"${QBUILD_PKGS[@]/%//bookworm-backports}" >/dev/null
fi

# libvirt's validator (virt-xml-validate, in libvirt-clients) and its
# RELAX NG schemas (libvirt-common), for the tests of `kvmaictl vm plan
# ... format libvirt`.  From backports: the libvirt that knows QEMU 10;
# these three only, so no daemon comes with them.
LIBVIRT_PKGS=(libvirt-clients libvirt-common libvirt0)
lver=$(dpkg-query -W -f='${Version}' libvirt-clients 2>/dev/null || true)
case "$lver" in
*bpo12*) ;;
*)
	log "installing libvirt-clients (virt-xml-validate) from bookworm-backports"
	apt-get install -y -qq --no-install-recommends \
		"${LIBVIRT_PKGS[@]/%//bookworm-backports}" >/dev/null
	;;
esac

# The libvirt daemon the emulated host runs (libvirtd and its QEMU
# driver, the same version as libvirt0 above): *unpacked* into
# $CACHE/libvirt-daemon, never installed, so that no daemon runs here.
# Their libraries are libvirt0's, installed above.  vmhost.py --libvirt
# copies them into the emulated host.
LVD=$CACHE/libvirt-daemon
lver=$(dpkg-query -W -f='${Version}' libvirt0)
if [ ! -f "$LVD/.complete" ] || [ "$(cat "$LVD/.version")" != "$lver" ]; then
	log "unpacking libvirtd $lver into $LVD"
	rm -rf "$LVD" "$CACHE/debs-libvirt"
	mkdir -p "$LVD" "$CACHE/debs-libvirt"
	(cd "$CACHE/debs-libvirt" && apt-get -o APT::Sandbox::User=root download -qq \
		"libvirt-daemon=$lver" "libvirt-daemon-driver-qemu=$lver")
	for d in "$CACHE"/debs-libvirt/*.deb; do dpkg-deb -x "$d" "$LVD"; done
	rm -rf "$CACHE/debs-libvirt"
	echo "$lver" >"$LVD/.version"
	touch "$LVD/.complete"
fi

# Linux 6.12: newest version for which image, headers and kbuild all exist.
K612=$CACHE/linux-6.12
if [ ! -f "$K612/.complete" ]; then
	ver=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
		awk '{print $1}' | sed 's/^linux-headers-//; s/-amd64$//' | sort -V | tail -n1)
	[ -n "$ver" ] || die "no linux-headers-6.12.*+deb12-amd64 in the archive"
	log "unpacking Linux $ver into $K612"
	rm -rf "$K612" "$CACHE/debs-6.12"
	mkdir -p "$K612" "$CACHE/debs-6.12"
	(cd "$CACHE/debs-6.12" && apt-get -o APT::Sandbox::User=root download -qq \
		"linux-image-$ver-amd64-unsigned" "linux-headers-$ver-amd64" \
		"linux-headers-$ver-common" "linux-kbuild-$ver")
	for d in "$CACHE"/debs-6.12/*.deb; do dpkg-deb -x "$d" "$K612"; done
	kver="$ver-amd64"
	# The headers' Makefile includes the common tree by absolute path;
	# point it into the cache so kbuild works without installing.
	sed -i "s|^include /usr/src/|include $K612/usr/src/|" \
		"$K612/usr/src/linux-headers-$kver/Makefile"
	depmod -b "$K612" "$kver"
	echo "$kver" >"$K612/.kver"
	rm -rf "$CACHE/debs-6.12"
	touch "$K612/.complete"
fi

# The 6.12 kernel's sample mdev driver (samples/vfio-mdev/mtty.c), which
# Debian does not build: the selftests build it for that kernel, so that
# partitioning is tested on real mdev parents.  Only the one file is kept
# from linux-source-6.12 of the headers' version.
if [ ! -f "$K612/samples/.complete" ]; then
	kver=$(cat "$K612/.kver")
	up=${kver%%+*}
	srcver=$(apt-cache madison linux-source-6.12 | awk -v up="$up" \
		'$3 ~ "^" up "-" { print $3; exit }')
	if [ -z "$srcver" ]; then
		log "warning: no linux-source-6.12 of version $up: the 6.12 boots skip mdev partitions"
	else
		log "taking samples/vfio-mdev/mtty.c from linux-source-6.12 $srcver"
		rm -rf "$K612/samples" "$CACHE/debs-6.12-src"
		mkdir -p "$K612/samples" "$CACHE/debs-6.12-src"
		(cd "$CACHE/debs-6.12-src" && apt-get -o APT::Sandbox::User=root download -qq \
			"linux-source-6.12=$srcver")
		dpkg-deb --fsys-tarfile "$CACHE"/debs-6.12-src/*.deb |
			tar -xO ./usr/src/linux-source-6.12.tar.xz |
			tar -xJ -C "$K612/samples" --strip-components=3 \
				linux-source-6.12/samples/vfio-mdev/mtty.c
		rm -rf "$CACHE/debs-6.12-src"
		touch "$K612/samples/.complete"
	fi
fi

# linux-source-7.x from trixie-backports, through a private apt state.
K7=$CACHE/linux-source-7
# The series says which base it applies to (patches/base).
top=$(cd "$(dirname "$0")/../.." && pwd)
pkg=$(sed -n 's/^package=//p' "$top/patches/base")
pver=$(sed -n 's/^version=//p' "$top/patches/base")
if [ ! -f "$K7/.complete" ] || [ "$(cat "$K7/.debversion")" != "$pver" ]; then
	A=$CACHE/apt-trixie
	mkdir -p "$A/lists/partial" "$A/archives/partial"
	cat >"$A/sources.list" <<EOS
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie-backports main
EOS
	: >"$A/status"
	APT=(-o "Dir::Etc::SourceList=$A/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$A/lists" -o "Dir::State::Status=$A/status"
		-o "Dir::Cache=$A" -o APT::Architecture=amd64)
	log "looking up $pkg $pver in trixie-backports"
	apt-get "${APT[@]}" update -qq
	avail=$(apt-cache "${APT[@]}" show "$pkg" 2>/dev/null | sed -n 's/^Version: //p')
	if ! printf '%s\n' $avail | grep -qxF "$pver"; then
		die "$pkg $pver (patches/base) is not in trixie-backports (has: ${avail:-nothing}); rebase the series"
	fi
	pkg="$pkg=$pver"
	log "downloading $pkg"
	rm -rf "$K7" "$A/deb" && mkdir -p "$A/deb"
	(cd "$A/deb" && apt-get "${APT[@]}" -o APT::Sandbox::User=root download -qq "$pkg")
	dpkg-deb -x "$A"/deb/*.deb "$A/deb/x"
	tarball=$(ls "$A"/deb/x/usr/src/linux-source-*.tar.*)
	mkdir -p "$K7"
	tar -xf "$tarball" -C "$K7" --strip-components=1
	dpkg-deb -f "$A"/deb/*.deb Version >"$K7/.debversion"
	make -s -C "$K7" kernelversion >"$K7/.kver"
	rm -rf "$A/deb"
	touch "$K7/.complete"
fi

# The source of the QEMU kvm-ai's QEMU patches apply to (patches/qemu/base):
# the orig tarball of Debian's package, checked against its checksum.
QSRC=$CACHE/qemu-source
qtar=$(sed -n 's/^tarball=//p' "$top/patches/qemu/base")
qsum=$(sed -n 's/^sha256=//p' "$top/patches/qemu/base")
if [ ! -f "$QSRC/$qtar" ] || ! echo "$qsum  $QSRC/$qtar" | sha256sum -c --quiet 2>/dev/null; then
	log "downloading $qtar"
	mkdir -p "$QSRC"
	rm -f "$QSRC/$qtar.part"
	curl -fsS -o "$QSRC/$qtar.part" "$MIRROR/pool/main/q/qemu/${qtar//+/%2B}" ||
		die "could not download $MIRROR/pool/main/q/qemu/$qtar"
	echo "$qsum  $QSRC/$qtar.part" | sha256sum -c --quiet ||
		die "$qtar does not match patches/qemu/base's sha256"
	mv "$QSRC/$qtar.part" "$QSRC/$qtar"
fi

log "ok: qemu $(dpkg-query -W -f='${Version}' qemu-system-x86)," \
	"linux $(cat "$K612/.kver"), source $(cat "$K7/.kver")"
