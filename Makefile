# SPDX-License-Identifier: GPL-2.0-only
#
# rkaccel: top-level build. See README.md.
#   make         build the module, library, tools and selftests for amd64 and arm64
#   make run     convert the trained digits model (ONNX -> int8) on the host, boot the
#                simulated RK3588 (batch 3) and RK3576 (batch 2) in QEMU, run its test
#                digits across the cores: top-1 and every slice against the host
#   make check   every test: host checks, then QEMU on amd64/arm64 x rk3588/rk3576
#   make bench   rkaccel-bench in the simulated SoCs, figures in build/bench.json
#   make deps    host packages and the cached Debian 6.12 kernel packages
#   make install       module, library, headers, pkg-config file, tools
#                      (DESTDIR, PREFIX=/usr/local, INSTALL_ARCH=host arch)
#   make dkms-install  the module source under /usr/src for DKMS (DESTDIR)

BUILD := $(CURDIR)/build
KPKG := $(BUILD)/kernel-pkgs
KSFT := $(KPKG)/src/tree/tools/testing/selftests
ARCHES := amd64 arm64
SOCS := rk3588 rk3576

CC_amd64 := gcc
AR_amd64 := ar
DRM_INC_amd64 := /usr/include/libdrm
DRM_LIB_amd64 := /usr/lib/x86_64-linux-gnu/libdrm.a
CC_arm64 := aarch64-linux-gnu-gcc
AR_arm64 := aarch64-linux-gnu-ar
DRM_INC_arm64 := $(KPKG)/arm64/usr/include/libdrm
DRM_LIB_arm64 := $(KPKG)/arm64/usr/lib/aarch64-linux-gnu/libdrm.a

export BUILD

all: $(addprefix modules-,$(ARCHES)) $(addprefix user-,$(ARCHES))

# Always asked: deps.sh returns at once when everything is there.
deps:
	@scripts/deps.sh

# Phony targets skip implicit-rule search: one explicit pair per arch.
define arch_rules
modules-$(1): deps
	@scripts/build-module.sh $(1)

user-$(1): deps
	@$$(MAKE) -s -f scripts/user.mk OUT=$(BUILD)/$(1) CC=$(CC_$(1)) AR=$(AR_$(1)) \
		DRM_INC=$(DRM_INC_$(1)) DRM_LIB=$(DRM_LIB_$(1)) KSFT=$(KSFT)
endef
$(foreach a,$(ARCHES),$(eval $(call arch_rules,$(a))))

PREFIX ?= /usr/local
INSTALL_ARCH ?= $(if $(filter aarch64,$(shell uname -m)),arm64,amd64)

install: modules-$(INSTALL_ARCH) user-$(INSTALL_ARCH)
	@DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" scripts/install.sh user $(INSTALL_ARCH)
	@DESTDIR="$(DESTDIR)" scripts/install.sh module $(INSTALL_ARCH)

# Without DESTDIR, and with dkms present, also registers and builds it.
dkms-install:
	@DESTDIR="$(DESTDIR)" scripts/install.sh dkms
	@v=$$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf); \
	if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null; then dkms install "rkaccel/$$v"; fi

# qemu-run.sh converts the digits model on the host first (scripts/digits-data.sh)
# and prints the host's float and int8 top-1; digits_test in the guest the NPU's.
run: all
	@scripts/qemu-run.sh amd64 rk3588 scripts/demo-rk3588.list demo
	@scripts/qemu-run.sh amd64 rk3576 scripts/demo-rk3576.list demo

check: all
	@scripts/check.sh

# The benchmark in the simulated RK3588 and RK3576; writes build/bench.json.
bench: all
	@scripts/bench.sh

clean:
	rm -rf $(BUILD)/amd64 $(BUILD)/arm64 $(BUILD)/initramfs $(BUILD)/logs

# Also drops the downloaded kernel packages.
distclean:
	rm -rf $(BUILD)

.PHONY: all deps run check bench clean distclean install dkms-install $(addprefix modules-,$(ARCHES)) $(addprefix user-,$(ARCHES))
