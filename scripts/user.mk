# SPDX-License-Identifier: GPL-2.0-only
# Userspace for one architecture: librkaccel, the tools, the selftests.
# Called by the top Makefile with OUT, CC, DRM_INC, DRM_LIB and KSFT set.
# The tools and tests link librkaccel.a statically (the initramfs has no
# shared libraries); librkaccel.so.MAJOR is built beside it where libdrm's
# shared library, next to DRM_LIB, resolves (on the host; the arm64 cross
# build has only the libdrm-dev symlink, without libdrm2, so no .so).

# librkaccel is its units, one folder each with its own internal header
# (Documentation/design.rst, "The library's units"). lib/rknn/ is
# librkaccel-rknn, a library of its own (Documentation/rknn.rst).
LIB_UNITS := runtime model compiler
LIB_SRCS := $(foreach u,$(LIB_UNITS),$(wildcard lib/$(u)/*.c))
RKNN_SRCS := $(wildcard lib/rknn/*.c)
TOOL_SRCS := $(wildcard tools/*.c)
TEST_SRCS := $(wildcard selftests/*_test.c) selftests/cpu_ref.c

# include/: the register description (no kernel/ folder: userspace reaches
# into no part of the driver). A unit's internal header is found beside it.
CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
	  -Ilib/include -Iuapi/drm -Iinclude -Itools -I$(DRM_INC)
# The harness is written for -Wall; its macros trip -Wextra.
TEST_CFLAGS := $(CFLAGS) -isystem $(KSFT) -Wno-sign-compare -Wno-unused-parameter
LDLIBS := $(DRM_LIB) -lpthread -lm
LDFLAGS := -static

# binutils of the same target as AR: ar -> objcopy, aarch64-linux-gnu-ar -> ...
OBJCOPY := $(patsubst %ar,%objcopy,$(AR))

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
HDRS := $(wildcard lib/include/*.h lib/*/*.h tools/*.h uapi/drm/*.h include/*.h)

RKNN_LIB := $(OUT)/lib/librkaccel-rknn.a
RKNN_BINS := $(OUT)/selftests/rknn_test $(OUT)/selftests/rknn_sdk_example
RKNN_OBJS := $(RKNN_SRCS:lib/%.c=$(OUT)/lib/%.o)
RKNN_PIC_OBJS := $(RKNN_SRCS:lib/%.c=$(OUT)/lib/pic/%.o)
RKNN_MAP := lib/rknn/librkaccel-rknn.map
RKNN_HDRS := $(wildcard lib/rknn/*.h)
rknn_ver = $(shell sed -n 's/^\#define RKACCEL_RKNN_VERSION[[:space:]]*"\([0-9.]*\)"$$/\1/p' \
	lib/include/rknn_api.h)
RKNN_SO_NAME := librkaccel-rknn.so.$(firstword $(subst ., ,$(rknn_ver)))
RKNN_SO := $(OUT)/lib/librkaccel-rknn.so.$(rknn_ver)
# The same library under the name and soname -lrknnrt gives a program.
RKNNRT_SO := $(OUT)/lib/librknnrt.so

all: $(LIB) $(if $(HAVE_SO),$(SO)) $(TOOLS) $(TESTS) $(RKNN_LIB) $(RKNN_BINS) \
	$(if $(HAVE_SO),$(RKNN_SO) $(RKNNRT_SO))

$(OUT)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# One relocatable object whose only globals are the version script's names:
# the library's internal helpers (prog_put, isqrt, ...) are local to it, so
# they cannot clash with a program's own symbols in a static link.
$(LIB): $(LIB_OBJS) $(LIB_MAP)
	sed -n 's/^[[:space:]]*\(rkaccel_[a-z0-9_]*\);$$/\1/p' $(LIB_MAP) > $(OUT)/lib/librkaccel.syms
	$(CC) -r -nostdlib -o $(OUT)/lib/librkaccel-all.o $(LIB_OBJS)
	$(OBJCOPY) --keep-global-symbols=$(OUT)/lib/librkaccel.syms $(OUT)/lib/librkaccel-all.o
	rm -f $@
	$(AR) rcs $@ $(OUT)/lib/librkaccel-all.o

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

# --dump-layers compares with the CPU reference of the selftests (layer_dump.h).
$(OUT)/bin/rkaccel-run: tools/rkaccel-run.c $(LIB) $(HDRS) selftests/graph_ref.h selftests/quant_ref.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iselftests $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(OUT)/selftests/%: selftests/%.c $(LIB) $(HDRS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# librkaccel-rknn: over librkaccel; its programs link both. As for
# librkaccel.a, one object whose only globals are the SDK's functions.
$(RKNN_LIB): $(RKNN_OBJS) $(RKNN_MAP)
	sed -n 's/^[[:space:]]*\(rknn_[a-z0-9_]*\);$$/\1/p' $(RKNN_MAP) > $(OUT)/lib/librkaccel-rknn.syms
	$(CC) -r -nostdlib -o $(OUT)/lib/librkaccel-rknn-all.o $(RKNN_OBJS)
	$(OBJCOPY) --keep-global-symbols=$(OUT)/lib/librkaccel-rknn.syms \
		$(OUT)/lib/librkaccel-rknn-all.o
	rm -f $@
	$(AR) rcs $@ $(OUT)/lib/librkaccel-rknn-all.o

# Shared, over librkaccel.so: exports the map's names only, nothing unresolved.
rknn_so_link = $(CC) -shared -Wl,-soname,$(1) -Wl,--version-script=$(RKNN_MAP) -Wl,-z,defs \
	-Wl,--as-needed -o $@ $(RKNN_PIC_OBJS) $(SO) $(DRM_SO) -lpthread -lm

$(RKNN_SO): $(RKNN_PIC_OBJS) $(RKNN_MAP) $(SO)
	$(call rknn_so_link,$(RKNN_SO_NAME))
	ln -sf $(notdir $@) $(OUT)/lib/$(RKNN_SO_NAME)
	ln -sf $(RKNN_SO_NAME) $(OUT)/lib/librkaccel-rknn.so

$(RKNNRT_SO): $(RKNN_PIC_OBJS) $(RKNN_MAP) $(SO)
	$(call rknn_so_link,librknnrt.so)

$(OUT)/selftests/rknn_test: selftests/rknn_test.c $(RKNN_LIB) $(LIB) $(HDRS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(RKNN_LIB) $(LIB) $(LDLIBS)

$(OUT)/selftests/rknn_sdk_example: selftests/rknn_sdk_example.c $(RKNN_LIB) $(LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(RKNN_LIB) $(LIB) $(LDLIBS)

.PHONY: all
