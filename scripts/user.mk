# SPDX-License-Identifier: GPL-2.0-only
# Userspace for one architecture: librkaccel, the tools, the selftests.
# Called by the top Makefile with OUT, CC, DRM_INC, DRM_LIB and KSFT set.
# The tools and tests link librkaccel.a statically (the initramfs has no
# shared libraries); librkaccel.so.MAJOR is built beside it where libdrm's
# shared library, next to DRM_LIB, resolves (on the host; the arm64 cross
# build has only the libdrm-dev symlink, without libdrm2, so no .so).

LIB_SRCS := $(wildcard lib/*.c)
TOOL_SRCS := $(wildcard tools/*.c)
TEST_SRCS := $(wildcard selftests/*_test.c) selftests/cpu_ref.c

CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	  -Ilib/include -Iuapi/drm -Ikernel -Itools -I$(DRM_INC)
# The harness is written for -Wall; its macros trip -Wextra.
TEST_CFLAGS := $(CFLAGS) -isystem $(KSFT) -Wno-sign-compare -Wno-unused-parameter
LDLIBS := $(DRM_LIB) -lpthread -lm
LDFLAGS := -static

LIB := $(OUT)/lib/librkaccel.a
LIB_OBJS := $(LIB_SRCS:lib/%.c=$(OUT)/lib/%.o)
PIC_OBJS := $(LIB_SRCS:lib/%.c=$(OUT)/lib/pic/%.o)
LIB_MAP := lib/librkaccel.map
lib_ver = $(shell sed -n 's/^\#define RKACCEL_LIB_VERSION_$(1)[[:space:]]*\([0-9]*\)$$/\1/p' \
	lib/include/rkaccel.h)
SO_NAME := librkaccel.so.$(call lib_ver,MAJOR)
SO := $(OUT)/lib/$(SO_NAME).$(call lib_ver,MINOR).$(call lib_ver,PATCH)
DRM_SO ?= $(DRM_LIB:.a=.so)
HAVE_SO := $(shell test -e '$(DRM_SO)' && echo yes)
TOOLS := $(TOOL_SRCS:tools/%.c=$(OUT)/bin/%)
TESTS := $(TEST_SRCS:selftests/%.c=$(OUT)/selftests/%)
HDRS := $(wildcard lib/include/*.h lib/*.h tools/*.h uapi/drm/*.h) kernel/rkaccel_npu_regs.h

all: $(LIB) $(if $(HAVE_SO),$(SO)) $(TOOLS) $(TESTS)

$(OUT)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(OUT)/lib/pic/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c -o $@ $<

# Only what the version script names is exported; -z defs: nothing unresolved.
$(SO): $(PIC_OBJS) $(LIB_MAP)
	$(CC) -shared -Wl,-soname,$(SO_NAME) -Wl,--version-script=$(LIB_MAP) -Wl,-z,defs \
		-Wl,--as-needed -o $@ $(PIC_OBJS) $(DRM_SO) -lpthread -lm
	ln -sf $(notdir $@) $(OUT)/lib/$(SO_NAME)
	ln -sf $(SO_NAME) $(OUT)/lib/librkaccel.so

$(OUT)/bin/%: tools/%.c $(LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(OUT)/selftests/%: selftests/%.c $(LIB) $(HDRS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

.PHONY: all
