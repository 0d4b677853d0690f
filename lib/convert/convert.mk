# SPDX-License-Identifier: MIT
#
# The ONNX converter's host-only library, its test programs and the
# rkaccel-convert tool. Host-only: protobuf-c is not in the guests'
# initramfs. The protobuf-c code for ONNX is generated here at build time
# from Debian's libonnx-dev onnx.proto. The model file is written by
# librkaccel's model unit (lib/model), compiled here for the host.
#   make -f lib/convert/convert.mk OUT=build/convert          library, tests, rkaccel-convert,
#                                                             libconvert.so (Python's toolkit)
#   make -f lib/convert/convert.mk OUT=build/convert-san SAN=1  with ASan/UBSan

SRC_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
TOP := $(SRC_DIR)/../..
OUT ?= build/convert
CC ?= gcc
AR ?= ar
PROTOC_C ?= protoc-c
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

CFLAGS_CV := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror \
	     -I$(SRC_DIR) -I$(OUT)/gen -I$(TOP)/lib/include
ifeq ($(SAN),1)
CFLAGS_CV += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
LDFLAGS_CV += -fsanitize=address,undefined
endif

# The float convolution's inner loop is vectorised at -O3 (the same IEEE
# operations as scalar code, no contraction under -std=c11: the same bits).
$(OUT)/obj/exec_conv.o $(OUT)/pic/exec_conv.o: CFLAGS_CV += -O3 -ffp-contract=off

LIB_SRCS := $(wildcard $(SRC_DIR)/*.c)
LIB_OBJS := $(patsubst $(SRC_DIR)/%.c,$(OUT)/obj/%.o,$(LIB_SRCS)) $(OUT)/obj/onnx.pb-c.o
MODEL_SRCS := $(wildcard $(TOP)/lib/model/*.c)
MODEL_OBJS := $(patsubst $(TOP)/lib/model/%.c,$(OUT)/obj/model/%.o,$(MODEL_SRCS))
# digits_int8, tv_ref, concat_int8 and softmax_int8 are GPL-2.0 (they run the
# selftests' CPU references): programs of their own.
TEST_SRCS := $(filter-out %/digits_int8.c %/tv_ref.c %/concat_int8.c %/softmax_int8.c,\
	$(wildcard $(SRC_DIR)/tests/*.c))
LIBS_CV := $(OUT)/libconvert.a $(MODEL_OBJS) -lprotobuf-c -lpng -ljpeg -lm -pthread

# libconvert.so: the same objects built PIC, for python/rkaccel/toolkit.py
# (ctypes); only cv_convert_file() is exported. Not under ASan (Python does
# not preload its runtime).
PIC_OBJS := $(patsubst $(OUT)/obj/%,$(OUT)/pic/%,$(LIB_OBJS) $(MODEL_OBJS))
CFLAGS_PIC := -fPIC -fvisibility=hidden

all: $(OUT)/libconvert.a $(OUT)/convert_test $(OUT)/digits_int8 $(OUT)/tv_ref $(OUT)/concat_int8 $(OUT)/softmax_int8 \
	$(OUT)/rkaccel-convert
ifneq ($(SAN),1)
all: $(OUT)/libconvert.so $(OUT)/libconvert-host.so
endif

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

$(OUT)/obj/model/%.o: $(TOP)/lib/model/%.c $(wildcard $(TOP)/lib/model/*.h) \
		$(TOP)/lib/include/rkaccel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_CV) -D_GNU_SOURCE -I$(TOP)/lib/model -c -o $@ $<

$(OUT)/pic/onnx.pb-c.o: $(OUT)/gen/onnx.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror -Wextra,$(CFLAGS_CV)) $(CFLAGS_PIC) -c -o $@ $<

$(OUT)/pic/%.o: $(SRC_DIR)/%.c $(wildcard $(SRC_DIR)/*.h) $(OUT)/gen/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_CV) $(CFLAGS_PIC) -c -o $@ $<

$(OUT)/pic/model/%.o: $(TOP)/lib/model/%.c $(wildcard $(TOP)/lib/model/*.h) \
		$(TOP)/lib/include/rkaccel.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_CV) $(CFLAGS_PIC) -D_GNU_SOURCE -I$(TOP)/lib/model -c -o $@ $<

$(OUT)/libconvert.so: $(PIC_OBJS)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libconvert.so -o $@ $^ \
		-lprotobuf-c -lpng -ljpeg -lm -pthread

# libconvert-host.so: the toolkit's simulator for Python (init_runtime() with
# no target): the selftests' CPU reference over a model file, and the float
# executor beside it per layer. GPL-2.0 like that reference: a library of its own.
$(OUT)/libconvert-host.so: $(SRC_DIR)/hostrun/host_run.c $(PIC_OBJS) $(wildcard $(SRC_DIR)/*.h) \
		$(wildcard $(TOP)/selftests/*_ref.h)
	$(CC) $(CFLAGS_CV) $(CFLAGS_PIC) -I$(TOP)/selftests -shared -Wl,-z,defs \
		-Wl,-soname,libconvert-host.so -o $@ $< $(PIC_OBJS) -lprotobuf-c -lpng -ljpeg -lm -pthread

$(OUT)/libconvert.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(OUT)/convert_test: $(TEST_SRCS) $(OUT)/libconvert.a $(MODEL_OBJS) $(wildcard $(SRC_DIR)/*.h)
	$(CC) $(CFLAGS_CV) $(LDFLAGS_CV) -o $@ $(TEST_SRCS) $(LIBS_CV)

$(OUT)/digits_int8: $(SRC_DIR)/tests/digits_int8.c $(OUT)/libconvert.a $(MODEL_OBJS) \
		$(wildcard $(SRC_DIR)/*.h) $(wildcard $(TOP)/selftests/*_ref.h)
	$(CC) $(CFLAGS_CV) -I$(TOP)/selftests $(LDFLAGS_CV) -o $@ $< $(LIBS_CV)

$(OUT)/concat_int8: $(SRC_DIR)/tests/concat_int8.c $(OUT)/libconvert.a $(MODEL_OBJS) \
		$(wildcard $(SRC_DIR)/*.h) $(wildcard $(TOP)/selftests/*_ref.h)
	$(CC) $(CFLAGS_CV) -I$(TOP)/selftests $(LDFLAGS_CV) -o $@ $< $(LIBS_CV)

$(OUT)/softmax_int8: $(SRC_DIR)/tests/softmax_int8.c $(OUT)/libconvert.a $(MODEL_OBJS) \
		$(wildcard $(SRC_DIR)/*.h) $(wildcard $(TOP)/selftests/*_ref.h)
	$(CC) $(CFLAGS_CV) -I$(TOP)/selftests $(LDFLAGS_CV) -o $@ $< $(LIBS_CV)

$(OUT)/tv_ref: $(SRC_DIR)/tests/tv_ref.c $(OUT)/libconvert.a $(MODEL_OBJS) \
		$(wildcard $(SRC_DIR)/*.h) $(wildcard $(TOP)/selftests/*_ref.h)
	$(CC) $(CFLAGS_CV) -I$(TOP)/selftests $(LDFLAGS_CV) -o $@ $< $(LIBS_CV)

# The host tool (tools/rkaccel-convert): the same library calls as digits_int8.
$(OUT)/rkaccel-convert: $(TOP)/tools/rkaccel-convert/rkaccel-convert.c $(OUT)/libconvert.a \
		$(MODEL_OBJS) $(wildcard $(SRC_DIR)/*.h)
	$(CC) $(CFLAGS_CV) $(LDFLAGS_CV) -o $@ $< $(LIBS_CV)

.PHONY: all
