# SPDX-License-Identifier: GPL-2.0-only
# Userspace for one architecture: librkaccel, the tools, the selftests.
# Called by the top Makefile with OUT, CC, DRM_INC, DRM_LIB and KSFT set.

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
TOOLS := $(TOOL_SRCS:tools/%.c=$(OUT)/bin/%)
TESTS := $(TEST_SRCS:selftests/%.c=$(OUT)/selftests/%)
HDRS := $(wildcard lib/include/*.h lib/*.h tools/*.h uapi/drm/*.h) kernel/rkaccel_npu_regs.h

all: $(LIB) $(TOOLS) $(TESTS)

$(OUT)/lib/%.o: lib/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	$(AR) rcs $@ $^

$(OUT)/bin/%: tools/%.c $(LIB) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(OUT)/selftests/%: selftests/%.c $(LIB) $(HDRS) $(wildcard selftests/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

.PHONY: all
