# SPDX-License-Identifier: GPL-2.0
# srdma: software RDMA (RoCEv2 + iWARP) for any Ethernet NIC.
#
#   make            build srdma.ko against KDIR
#   make C=1        same, with sparse
#   make deps       install every package the build, demo and tests need
#   make install    install srdma.ko and the modprobe.d file (srdma stands in
#                   for rdma_rxe); make dkms-install does it through DKMS
#   make demo       boot a VM, load srdma, create devices, move data
#   make check      build, then run selftests and pyverbs in VMs
#   make bench      benchmarks against rdma_rxe, siw and TCP (not in check);
#                   BENCH_ARGS=--scale: 1 to 1,000 connections per system
#                   BENCH_ARGS=--loopback: one VM, each device to itself
#   make profile    where a WRITE stream's kernel time goes (function_graph);
#                   PROFILE_SYSTEMS="sroce rxe" picks the systems
#   make debug-kernel  build + install the KASAN/lockdep/kmemleak kernel (cached)
#   make check-debug   the whole of `make check` on the debug kernel
#   make check-install make dkms-install and its removal, tested in a VM
#   make check-612     a representative part of `make check` on Debian 12's 6.12
#   make check-cc      RoCE congestion control through a bottleneck, in VMs

# The kernel to build for: the running one if it has headers, else the one
# the VMs boot (tools/lib.sh srdma_kver: Debian's default kernel, 6.1 on
# Debian 12, even with 6.12 installed beside it). KVER= or KDIR= overrides.
SRDMA_TOOLS := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))tools
KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else bash -c '. "$$1" && srdma_kver' - $(SRDMA_TOOLS)/lib.sh; fi)
KDIR ?= $(SRDMA_KROOT)/lib/modules/$(KVER)/build
PWD := $(shell pwd)

all: modules

modules:
	@test -d "$(KDIR)" || { echo "no kernel build dir (KDIR=$(KDIR)); run 'make deps'"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean
	rm -rf build

deps:
	bash tools/deps.sh

install: modules
	$(MAKE) -C $(KDIR) M=$(PWD) modules_install
	$(MAKE) install-conf

# The modprobe.d file alone (make install and dkms-install both need it).
install-conf:
	install -D -m 644 tools/modprobe.d/srdma.conf $(DESTDIR)/etc/modprobe.d/srdma.conf
	depmod -a $(KVER)

# DKMS: srdma is built for every installed kernel that has headers
# (DKMS_KERNELS) and, through DKMS's autoinstall, for each new one.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
DKMS_KERNELS ?= $(shell for d in /lib/modules/*/build; do \
	[ -d "$$d" ] && basename "$$(dirname "$$d")"; done)
dkms-install:
	rm -rf /usr/src/srdma-$(DKMS_VERSION)
	mkdir -p /usr/src/srdma-$(DKMS_VERSION)
	cp -r dkms.conf Kbuild Makefile drivers include /usr/src/srdma-$(DKMS_VERSION)/
	dkms remove srdma/$(DKMS_VERSION) --all > /dev/null 2>&1 || true
	for k in $(DKMS_KERNELS); do dkms install srdma/$(DKMS_VERSION) -k $$k || exit 1; done
	$(MAKE) install-conf

dkms-remove:
	dkms remove srdma/$(DKMS_VERSION) --all
	rm -rf /usr/src/srdma-$(DKMS_VERSION) /etc/modprobe.d/srdma.conf

demo: modules
	bash tools/demo.sh

check: modules
	bash tools/check.sh

bench: modules
	bash tools/bench.sh $(BENCH_ARGS)

profile: modules
	bash tools/profile.sh

debug-kernel:
	bash tools/debug-kernel.sh

check-debug:
	bash tools/check-debug.sh

# Installing as a user does (DKMS build in a VM; many minutes, not in check)
check-install: modules
	SRDMA_CHECK_TESTS="srdma_dkms.sh" bash tools/check.sh

check-612:
	bash tools/check-612.sh

# RoCE congestion control through a bottleneck (two VMs, about 5 minutes;
# not in check until its bounds hold on the TCG test bed)
check-cc: modules
	SRDMA_CHECK_LABEL=check-cc SRDMA_CHECK_TESTS="roce_cc.sh" bash tools/check.sh

.PHONY: all modules clean deps install install-conf dkms-install dkms-remove demo check bench profile debug-kernel check-debug \
	check-install check-612 check-cc
