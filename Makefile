# SPDX-License-Identifier: GPL-2.0-only
#
# kvm-ai: per-VM P2P and PMU control for virtualized AI hosts.
#
#   make deps     install build/test dependencies (root, Debian 12)
#   make          build kmod/kvmai.ko and tools/ (kvmaictl, kvmaistat): the
#                 product, never its test-only parts (see kmod-test)
#   make host-deps  install what 'make' needs on a Debian host (root)
#   make demo     boot the emulated AI host and show kvmaictl at work
#   make check-quick  the tests that need no emulated host (unit, spec, host)
#   make check    every test: unit, spec, selftests in the emulated host
#   make bench    benchmarks in the emulated host (figures, not tests)
#   make install  kvmaictl, its man page and completion (PREFIX=/usr/local)
#   make regen    regenerate netlink code from Documentation/netlink/specs
#   make patches-check  apply, checkpatch and compile the kernel patch series,
#                       and apply its quilt export to the base
#   make patches-export DEST=dir   the series as a quilt queue (series + patches)
#   make kernel   build the patched test kernel (cached; long when cold)
#   make qemu     build QEMU with kvm-ai's QEMU patches (cached; ~3 min cold)
#   make check-kernel   the selftests in the emulated host on that kernel
#   make check-nested   the nested-guest selftests on both kernels (6.12's are in make check)
#   make check-libvirt  the libvirt selftests alone, on both kernels
#   make deb      Debian packages kvmai-dkms and kvmaictl in build/deb, linted
#   make deb-check      those, installed and DKMS-built in a clean chroot

PYTHON ?= /usr/bin/python3
KVMAI_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kvmai
export KVMAI_CACHE
KSRC ?= $(KVMAI_CACHE)/linux-source-7
BUILD := $(CURDIR)/build
PREFIX ?= /usr/local
CMAKE_BUILD_TYPE ?= RelWithDebInfo
# tools/ compiled 16 sources at a time: a cold build in about half the
# time on two cores.  UNITY=OFF compiles file by file (quicker after a
# one-file edit); the Debian package build always does, so a source that
# leans on another's includes still fails somewhere.
UNITY ?= ON

all: kmod tools

deps:
	tools/devenv/deps.sh

host-deps:
	tools/devenv/deps.sh --host

kmod:
	$(MAKE) -C kmod

# The module's test flavour (kmod/testing/: test.c's fault injection, the
# mock providers, the series' uncore registry for kernels without it), for
# the emulated host only: built in build/, never where an operator's insmod
# finds it.
# The copy keeps its objects between builds (tar keeps the sources' times).
KMOD_TEST := $(BUILD)/kmod-test
kmod-test:
	mkdir -p $(KMOD_TEST)
	git ls-files --cached --others --exclude-standard kmod | sed 's|^kmod/||' | \
		tar -C kmod -cf - -T - | tar -C $(KMOD_TEST) -xf -
	$(MAKE) -C $(KMOD_TEST) KVMAI_TEST=y KVMAI_SERIES=$(CURDIR)/patches

# The kernel's sample mdev driver mtty for Debian's 6.12 (make deps takes
# its source out of linux-source-6.12), a real mdev parent for the
# partition selftests; none when the archive had no matching source.
MTTY_612 := $(BUILD)/mtty-6.12
mtty-6.12:
	@src=$(KVMAI_CACHE)/linux-6.12/samples/mtty.c; \
	if [ -f $$src ]; then \
		mkdir -p $(MTTY_612) && cp -p $$src $(MTTY_612)/ && \
		echo 'obj-m := mtty.o' > $(MTTY_612)/Kbuild && \
		$(MAKE) -C $$(ls -d $(KVMAI_CACHE)/linux-6.12/usr/src/linux-headers-*-amd64) \
			M=$(MTTY_612) modules; \
	else echo "mtty-6.12: no $$src (make deps): the 6.12 boots skip mdev partitions"; fi

tools-configure = cmake -S tools -B $(BUILD)/tools -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) -DCMAKE_UNITY_BUILD=$(UNITY) \
		-DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null

tools:
	$(tools-configure)
	cmake --build $(BUILD)/tools -j2

selftests:
	$(MAKE) -C selftests O=$(BUILD)/selftests KSRC=$(KSRC)

# The selftests of the build machine only (boots.toml's "host").
selftests-host:
	$(MAKE) -C selftests O=$(BUILD)/selftests KSRC=$(KSRC) host

# What the emulated host gets under /kvmai.
vm-payload: kmod-test tools selftests mtty-6.12
	rm -rf $(BUILD)/vm-payload
	mkdir -p $(BUILD)/vm-payload/bin $(BUILD)/vm-payload/selftests $(BUILD)/vm-payload/bench \
		 $(BUILD)/vm-payload/l2
	cp $(KMOD_TEST)/kvmai.ko $(KMOD_TEST)/testing/kvmai_mock_pmu.ko \
	   $(KMOD_TEST)/testing/kvmai_mock_vfbus.ko $(KMOD_TEST)/testing/kvmai_mock_vgpu.ko \
	   $(wildcard $(KMOD_TEST)/testing/kvmai_mock_counters.ko $(KMOD_TEST)/testing/uncore_guest.ko \
		      $(KMOD_TEST)/testing/kvmai_mock_mdev.ko) \
	   $(wildcard $(MTTY_612)/mtty.ko) \
	   $(BUILD)/vm-payload/
	cp $(BUILD)/tools/kvmaictl/kvmaictl $(BUILD)/tools/kvmaistat/kvmaistat \
	   $(BUILD)/selftests/probe/* $(BUILD)/vm-payload/bin/
	# Less their debug info (36 of kvmaictl's 37 MiB): every boot packs the
	# payload into its initramfs, and in a planned L2 guest of 256 MiB a
	# 37 MiB kvmaictl would not run ("Text file busy": most likely its
	# unpacking never finished), where 1.6 MiB does.
	strip --strip-debug $(BUILD)/vm-payload/bin/kvmaictl $(BUILD)/vm-payload/bin/kvmaistat
	cp $(BUILD)/selftests/l2/* $(BUILD)/vm-payload/l2/
	find $(BUILD)/selftests -maxdepth 1 -type f -exec cp {} $(BUILD)/vm-payload/selftests/ \;
	cp $(BUILD)/selftests/bench/* $(BUILD)/vm-payload/bench/
	mkdir -p $(BUILD)/vm-payload/testdata
	cp -a tools/kvmaictl/testdata/hgx tools/kvmaictl/testdata/hgx-vm $(BUILD)/vm-payload/testdata/

# The patch series (patches/) on its mainline base, and a kernel with it.
patches-check:
	tools/devenv/kernel.sh check
	tools/devenv/patches-export.sh --check

# The series as a quilt queue for a distribution kernel: make patches-export DEST=dir
patches-export:
	@[ -n "$(DEST)" ] || { echo "patches-export: DEST=dir is required" >&2; exit 2; }
	tools/devenv/patches-export.sh $(DEST)

kernel:
	tools/devenv/kernel.sh build

# kvm-ai's QEMU patches (patches/qemu/) on Debian's QEMU 10.0.2: checked,
# and built (cached; about two minutes cold) for the emulated host's guests.
qemu-patches-check:
	tools/devenv/qemu.sh check

qemu:
	tools/devenv/qemu.sh build

# kvmai.ko built for the patched kernel, in a payload of its own.
vm-payload-kernel: vm-payload
	@kdir=$$(tools/devenv/kernel.sh dir); \
	test -n "$$kdir" || { echo "no patched kernel built: run 'make kernel'" >&2; exit 1; }; \
	rm -rf $(BUILD)/kmod-kernel $(BUILD)/vm-payload-kernel && mkdir -p $(BUILD)/kmod-kernel && \
	git ls-files --cached --others --exclude-standard kmod | sed 's|^kmod/||' | \
		tar -C kmod -cf - -T - | tar -C $(BUILD)/kmod-kernel -xf - && \
	$(MAKE) -C $(BUILD)/kmod-kernel KDIR=$$kdir/build KVMAI_TEST=y && \
	cp -r $(BUILD)/vm-payload $(BUILD)/vm-payload-kernel && \
	rm -f $(BUILD)/vm-payload-kernel/*.ko && \
	cp $(BUILD)/kmod-kernel/kvmai.ko $(BUILD)/kmod-kernel/testing/*.ko \
	   $$kdir/lib/modules/*/kernel/samples/vfio-mdev/mtty.ko \
	   $(BUILD)/vm-payload-kernel/ && \
	cp $$kdir/selftests/* $(BUILD)/vm-payload-kernel/selftests/

# The selftests on the patched kernel alone.
check-kernel: vm-payload-kernel
	$(PYTHON) selftests/check.py --ksrc $(KSRC) --stages vm-kernel+vm-kernel-dev $(if $(V),-v)

# Guests of the emulated host on both kernels; make check runs 6.12's only
# (selftests/boots.toml: the patched kernel's L2 guests fault under TCG).
check-nested: vm-payload
	-@$(MAKE) --no-print-directory kernel vm-payload-kernel qemu
	$(PYTHON) selftests/check.py --ksrc $(KSRC) --stages nested,nested-uefi,nested-kernel $(if $(V),-v)

# libvirtd in the emulated host running kvm-ai's hook (part of make check).
check-libvirt: vm-payload
	-@$(MAKE) --no-print-directory kernel vm-payload-kernel
	$(PYTHON) selftests/check.py --ksrc $(KSRC) --stages libvirt,libvirt-kernel $(if $(V),-v)

# What the demo's emulated host runs: the module's test flavour (the mock
# PMU plays an uncore driver there) and kvmaictl; none of the tests.
demo-payload: kmod-test
	$(tools-configure)
	cmake --build $(BUILD)/tools --target kvmaictl -j2
	rm -rf $(BUILD)/demo-payload
	mkdir -p $(BUILD)/demo-payload/bin
	cp $(KMOD_TEST)/kvmai.ko $(KMOD_TEST)/testing/kvmai_mock_pmu.ko $(wildcard $(KMOD_TEST)/testing/uncore_guest.ko) \
	   $(BUILD)/demo-payload/
	cp $(BUILD)/tools/kvmaictl/kvmaictl $(BUILD)/demo-payload/bin/

demo: demo-payload
	$(PYTHON) selftests/vmhost/vmhost.py --payload $(BUILD)/demo-payload --scenario demo

# The tests that need no emulated host (unit, spec, host): for iterating
# on the tools, the spec or the docs; a minute or two once built.
check-quick: tools selftests-host
	$(PYTHON) selftests/check.py --ksrc $(KSRC) --stages unit,spec,host $(if $(V),-v)

# Every test, the patched kernel's included: it is built first when the
# cache lacks it (about 8 minutes cold on 2 cores).  If it cannot be built,
# the other stages still run and check.py counts the vm-kernel stage failed.
# check.py builds the patched kernel and its payload itself (its "kernel"
# stage), beside the boots of Debian's kernel.
check: kmod vm-payload
	@rm -rf $(BUILD)/vm-payload-kernel
	-@$(MAKE) --no-print-directory qemu
	$(PYTHON) selftests/check.py --ksrc $(KSRC) $(if $(V),-v)

# Figures, not tests: P2P enable/disable against a setpci loop, in the VM;
# then on the patched kernel, where the PMU read paths all exist.
bench: vm-payload
	$(PYTHON) selftests/vmhost/vmhost.py --payload $(BUILD)/vm-payload --scenario bench
	@$(MAKE) --no-print-directory kernel vm-payload-kernel
	$(PYTHON) selftests/vmhost/vmhost.py --payload $(BUILD)/vm-payload-kernel \
		--kernel-dir "$$(tools/devenv/kernel.sh dir)" --workdir $(BUILD)/bench-kernel --scenario bench
	$(PYTHON) selftests/vmhost/vmhost.py --payload $(BUILD)/vm-payload --profile nested \
		--workdir $(BUILD)/bench-l2 --scenario bench-l2

regen:
	tools/devenv/ynl-regen.sh $(KSRC)

# Debian packages from debian/, built in a scratch copy of the tree
# (Documentation/dev/packaging.rst).
deb:
	tools/devenv/deb.sh build lint

deb-check:
	tools/devenv/deb.sh build lint check

install: tools
	cmake --install $(BUILD)/tools

clean:
	$(MAKE) -C kmod clean
	rm -f kmod/testing/uncore_guest.c kmod/compat/asm/uncore_guest.h
	rm -rf $(BUILD)

.PHONY: all deps host-deps kmod kmod-test mtty-6.12 tools demo-payload check-quick selftests selftests-host \
	vm-payload demo check bench regen install clean \
	patches-check patches-export kernel vm-payload-kernel check-kernel check-nested check-libvirt \
	qemu qemu-patches-check \
	deb deb-check
