# SPDX-License-Identifier: MIT
#
# The ONNX converter's host-only library and its test program. Host-only:
# protobuf-c is not in the guests' initramfs. The protobuf-c code for ONNX is
# generated here at build time from Debian's libonnx-dev onnx.proto.
#   make -f lib/convert/convert.mk OUT=build/convert          library + test
#   make -f lib/convert/convert.mk OUT=build/convert-san SAN=1  with ASan/UBSan

SRC_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
OUT ?= build/convert
CC ?= gcc
AR ?= ar
PROTOC_C ?= protoc-c
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

CFLAGS_CV := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror \
	     -I$(SRC_DIR) -I$(OUT)/gen
ifeq ($(SAN),1)
CFLAGS_CV += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS_CV += -fsanitize=address,undefined
endif

LIB_SRCS := $(wildcard $(SRC_DIR)/*.c)
LIB_OBJS := $(patsubst $(SRC_DIR)/%.c,$(OUT)/obj/%.o,$(LIB_SRCS)) $(OUT)/obj/onnx.pb-c.o
TEST_SRCS := $(wildcard $(SRC_DIR)/tests/*.c)

all: $(OUT)/libconvert.a $(OUT)/convert_test

# onnx.proto is copied so protoc-c names the output onnx.pb-c.[ch].
$(OUT)/gen/onnx.pb-c.c $(OUT)/gen/onnx.pb-c.h: $(ONNX_PROTO)
	@mkdir -p $(OUT)/gen
	cp $< $(OUT)/gen/onnx.proto
	cd $(OUT)/gen && $(PROTOC_C) --c_out=. onnx.proto

# Generated code: not ours to keep warning-free.
$(OUT)/obj/onnx.pb-c.o: $(OUT)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror -Wextra,$(CFLAGS_CV)) -c -o $@ $<

$(OUT)/obj/%.o: $(SRC_DIR)/%.c $(wildcard $(SRC_DIR)/*.h) $(OUT)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_CV) -c -o $@ $<

$(OUT)/libconvert.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(OUT)/convert_test: $(TEST_SRCS) $(OUT)/libconvert.a $(wildcard $(SRC_DIR)/*.h)
	$(CC) $(CFLAGS_CV) $(LDFLAGS_CV) -o $@ $(TEST_SRCS) $(OUT)/libconvert.a -lprotobuf-c -lm

.PHONY: all
