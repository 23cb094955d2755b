# SPDX-License-Identifier: GPL-2.0
# srdma: software RDMA (RoCEv2 + iWARP) for any Ethernet NIC.
#
#   make            build srdma.ko against KDIR
#   make C=1        same, with sparse
#   make deps       install every package the build, demo and tests need
#   make install    install srdma.ko and the modprobe.d file keeping rdma_rxe out
#   make demo       boot a VM, load srdma, create devices, move data
#   make check      build, then run selftests and pyverbs in VMs
#   make bench      benchmarks against rdma_rxe, siw and TCP (not in check)
#   make debug-kernel  build + install the KASAN/lockdep/kmemleak kernel (cached)
#   make check-debug   the whole of `make check` on the debug kernel

KVER ?= $(shell if [ -d /lib/modules/$$(uname -r)/build ]; then uname -r; \
	else ls -1 /lib/modules 2>/dev/null | sort -V | \
	grep -v -- '-srdma-debug$$' | \
	while read v; do [ -d /lib/modules/$$v/build ] && echo $$v; done | tail -n 1; fi)
KDIR ?= /lib/modules/$(KVER)/build
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
	install -D -m 644 tools/modprobe.d/srdma.conf /etc/modprobe.d/srdma.conf
	depmod -a $(KVER)

demo: modules
	bash tools/demo.sh

check: modules
	bash tools/check.sh

bench: modules
	bash tools/bench.sh $(BENCH_ARGS)

debug-kernel:
	bash tools/debug-kernel.sh

check-debug:
	bash tools/check-debug.sh

.PHONY: all modules clean deps install demo check bench debug-kernel check-debug
