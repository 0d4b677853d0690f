/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The convolution pipeline's registers (CNA -> CORE -> DPU, DPU_RDMA) and
 * the fields rkaccel programs, from public register descriptions. Plain
 * constants, no types, no includes: the same file is valid C in the kernel
 * and in userspace. The driver programs them, its simulator decodes them,
 * the library's compiler emits them and the selftests and tools check them,
 * each including this file by name through its -I of the top-level
 * include/ folder. Field masks work with FIELD_GET() in the kernel and with
 * the library's own field helpers.
 */
#ifndef _RKACCEL_NPU_REGS_H_
#define _RKACCEL_NPU_REGS_H_

/* regcmd targets: the block id plus one. */
#define RKNPU_TGT_PC			0x0101
#define RKNPU_TGT_CNA			0x0201
#define RKNPU_TGT_CORE			0x0801
#define RKNPU_TGT_DPU			0x1001
#define RKNPU_TGT_DPU_RDMA		0x2001
/* Tail entries: the op-enable prefix and the op-enable itself. */
#define RKNPU_TGT_OP_PREFIX		0x0041
#define RKNPU_TGT_OP_EN			0x0081
#define RKNPU_REG_OP_EN			0x0008

/* PC: the program counter that fetches regcmd, and its interrupts. */
#define RKNPU_PC_VERSION		0x0000
#define RKNPU_PC_VERSION_NUM		0x0004
#define RKNPU_PC_OPERATION_ENABLE	0x0008
#define RKNPU_PC_BASE_ADDRESS		0x0010
#define RKNPU_PC_REGISTER_AMOUNTS	0x0014
#define RKNPU_PC_INTERRUPT_MASK		0x0020
#define RKNPU_PC_INTERRUPT_CLEAR	0x0024
#define RKNPU_PC_INTERRUPT_STATUS	0x0028
#define RKNPU_PC_INTERRUPT_RAW_STATUS	0x002c
#define RKNPU_PC_TASK_CON		0x0030
#define RKNPU_PC_TASK_DMA_BASE_ADDR	0x0034
#define RKNPU_PC_TASK_STATUS_RK3588	0x003c
#define RKNPU_PC_TASK_STATUS_RK3576	0x0048

/* Op-enable value: which blocks the task runs. */
#define RKNPU_BLK_CNA			0x01
#define RKNPU_BLK_CORE			0x04
#define RKNPU_BLK_DPU			0x08
#define RKNPU_BLK_DPU_RDMA		0x10
#define RKNPU_BLK_PPU			0x20
#define RKNPU_BLK_PPU_RDMA		0x40

/* CNA: feature and weight fetch. */
#define RKNPU_CNA_S_POINTER		0x1004
#define RKNPU_CNA_CONV_CON1		0x100c
#define   RKNPU_CONV_CON1_NONALIGN_DMA		0x40000000
#define   RKNPU_CONV_CON1_GROUP_LINE_OFF	0x20000000
#define   RKNPU_CONV_CON1_DECONV		0x00010000
#define   RKNPU_CONV_CON1_ARGB_IN		0x0000f000
#define   RKNPU_CONV_CON1_PROC_PRECISION	0x00000380
#define   RKNPU_CONV_CON1_IN_PRECISION		0x00000070
#define   RKNPU_CONV_CON1_CONV_MODE		0x0000000f
#define RKNPU_CNA_CONV_CON2		0x1010
#define   RKNPU_CONV_CON2_FEATURE_GRAINS	0x00003ff0
#define RKNPU_CNA_CONV_CON3		0x1014
#define   RKNPU_CONV_CON3_NN_MODE		0x70000000
#define   RKNPU_CONV_CON3_ATROUS_Y		0x03e00000
#define   RKNPU_CONV_CON3_ATROUS_X		0x001f0000
#define   RKNPU_CONV_CON3_DECONV_Y		0x00003800
#define   RKNPU_CONV_CON3_DECONV_X		0x00000700
#define   RKNPU_CONV_CON3_STRIDE_Y		0x00000038
#define   RKNPU_CONV_CON3_STRIDE_X		0x00000007
#define RKNPU_CNA_DATA_SIZE0		0x1020
#define   RKNPU_DATA_SIZE0_WIDTH		0x07ff0000
#define   RKNPU_DATA_SIZE0_HEIGHT		0x000007ff
#define RKNPU_CNA_DATA_SIZE1		0x1024
#define   RKNPU_DATA_SIZE1_CHANNEL_REAL		0x3fff0000
#define   RKNPU_DATA_SIZE1_CHANNEL		0x0000ffff
#define RKNPU_CNA_DATA_SIZE2		0x1028
#define   RKNPU_DATA_SIZE2_DATAOUT_WIDTH	0x000007ff
#define RKNPU_CNA_DATA_SIZE3		0x102c
#define   RKNPU_DATA_SIZE3_DATAOUT_ATOMICS	0x003fffff
#define RKNPU_CNA_WEIGHT_SIZE0		0x1030
#define RKNPU_CNA_WEIGHT_SIZE1		0x1034
#define   RKNPU_WEIGHT_SIZE1_BYTES_PER_KERNEL	0x0007ffff
#define RKNPU_CNA_WEIGHT_SIZE2		0x1038
#define   RKNPU_WEIGHT_SIZE2_WIDTH		0x1f000000
#define   RKNPU_WEIGHT_SIZE2_HEIGHT		0x001f0000
#define   RKNPU_WEIGHT_SIZE2_KERNELS		0x00003fff
#define RKNPU_CNA_CBUF_CON0		0x1040
#define   RKNPU_CBUF_CON0_WEIGHT_REUSE		0x00002000
#define   RKNPU_CBUF_CON0_DATA_REUSE		0x00001000
#define   RKNPU_CBUF_CON0_WEIGHT_BANK		0x000000f0
#define   RKNPU_CBUF_CON0_DATA_BANK		0x0000000f
#define RKNPU_CNA_CBUF_CON1		0x1044
#define   RKNPU_CBUF_CON1_DATA_ENTRIES		0x00003fff
#define RKNPU_CNA_CVT_CON0		0x104c
#define   RKNPU_CVT_CON0_DATA_SIGN		0x00000008
#define   RKNPU_CVT_CON0_CVT_TYPE		0x00000002
#define   RKNPU_CVT_CON0_CVT_BYPASS		0x00000001
#define RKNPU_CNA_CVT_CON1		0x1050
#define RKNPU_CNA_FC_CON0		0x1060
#define RKNPU_CNA_FC_CON1		0x1064
#define RKNPU_CNA_PAD_CON0		0x1068
#define   RKNPU_PAD_CON0_LEFT			0x000000f0
#define   RKNPU_PAD_CON0_TOP			0x0000000f
#define RKNPU_CNA_FEATURE_DATA_ADDR	0x1070
#define RKNPU_CNA_FC_CON2		0x1074
#define RKNPU_CNA_DMA_CON0		0x1078
#define RKNPU_CNA_DMA_CON1		0x107c
#define   RKNPU_DMA_CON1_LINE_STRIDE		0x0fffffff
#define RKNPU_CNA_DMA_CON2		0x1080
#define   RKNPU_DMA_CON2_SURF_STRIDE		0x0fffffff
#define RKNPU_CNA_FC_DATA_SIZE0		0x1084
#define RKNPU_CNA_FC_DATA_SIZE1		0x1088
#define RKNPU_CNA_DCOMP_CTRL		0x1100
#define RKNPU_CNA_DCOMP_REGNUM		0x1104
#define RKNPU_CNA_DCOMP_ADDR0		0x1110
#define RKNPU_CNA_CVT_CON5		0x1180
#define RKNPU_CNA_PAD_CON1		0x1184	/* pad value, a sign-extended int8 */

/* CORE: the MAC array. */
#define RKNPU_CORE_S_POINTER		0x3004
#define RKNPU_CORE_MISC_CFG		0x3010
#define   RKNPU_MISC_CFG_PROC_PRECISION		0x00000700
#define   RKNPU_MISC_CFG_DW_EN			0x00000002
#define   RKNPU_MISC_CFG_QD_EN			0x00000001
#define RKNPU_CORE_DATAOUT_SIZE_0	0x3014
#define   RKNPU_DATAOUT_SIZE_0_HEIGHT		0xffff0000
#define   RKNPU_DATAOUT_SIZE_0_WIDTH		0x0000ffff
#define RKNPU_CORE_DATAOUT_SIZE_1	0x3018
#define   RKNPU_DATAOUT_SIZE_1_CHANNEL		0x0000ffff
#define RKNPU_CORE_CLIP_TRUNCATE	0x301c
#define   RKNPU_CLIP_TRUNCATE_BITS		0x0000001f
/* Undocumented; Mesa writes 0 in every convolution task, so do we. */
#define RKNPU_CORE_3030			0x3030

/* DPU: bias, requantization and the write DMA. */
#define RKNPU_DPU_S_POINTER		0x4004
#define RKNPU_DPU_FEATURE_MODE_CFG	0x400c
#define   RKNPU_FEATURE_MODE_CONV_MODE		0x00000018
#define   RKNPU_FEATURE_MODE_OUTPUT_MODE	0x00000006
#define   RKNPU_FEATURE_MODE_FLYING_MODE	0x00000001
#define RKNPU_DPU_DATA_FORMAT		0x4010
#define   RKNPU_DATA_FORMAT_OUT_PRECISION	0xe0000000
#define   RKNPU_DATA_FORMAT_IN_PRECISION	0x1c000000
#define   RKNPU_DATA_FORMAT_PROC_PRECISION	0x00000007
#define RKNPU_DPU_DST_BASE_ADDR		0x4020
#define RKNPU_DPU_DST_SURF_STRIDE	0x4024
#define   RKNPU_DST_SURF_STRIDE_MASK		0xfffffff0
#define RKNPU_DPU_DATA_CUBE_WIDTH	0x4030
#define RKNPU_DPU_DATA_CUBE_HEIGHT	0x4034
#define RKNPU_DPU_DATA_CUBE_NOTCH	0x4038
#define RKNPU_DPU_DATA_CUBE_CHANNEL	0x403c
#define   RKNPU_CUBE_ORIG_CHANNEL		0x1fff0000
#define   RKNPU_CUBE_CHANNEL			0x00001fff
#define   RKNPU_CUBE_SIZE			0x00001fff
#define RKNPU_DPU_BS_CFG		0x4040
#define   RKNPU_BS_CFG_ALU_ALGO			0x000f0000
#define   RKNPU_BS_CFG_ALU_SRC			0x00000100
#define   RKNPU_BS_CFG_RELUX_EN			0x00000080
#define   RKNPU_BS_CFG_RELU_BYPASS		0x00000040
#define   RKNPU_BS_CFG_MUL_PRELU		0x00000020
#define   RKNPU_BS_CFG_MUL_BYPASS		0x00000010
#define   RKNPU_BS_CFG_ALU_BYPASS		0x00000002
#define   RKNPU_BS_CFG_BYPASS			0x00000001
#define RKNPU_DPU_BS_ALU_CFG		0x4044
#define RKNPU_DPU_BS_MUL_CFG		0x4048
#define   RKNPU_BS_MUL_CFG_OPERAND		0xffff0000
#define   RKNPU_BS_MUL_CFG_SHIFT		0x00003f00
#define   RKNPU_BS_MUL_CFG_TRUNCATE_SRC		0x00000002
#define   RKNPU_BS_MUL_CFG_SRC			0x00000001
#define RKNPU_DPU_BS_RELUX_CMP		0x404c
#define RKNPU_DPU_BS_OW_CFG		0x4050
#define RKNPU_DPU_BS_OW_OP		0x4054
#define   RKNPU_BS_OW_OP_MASK			0x0000ffff
#define RKNPU_DPU_WDMA_SIZE_0		0x4058
#define RKNPU_DPU_WDMA_SIZE_1		0x405c
#define RKNPU_DPU_BN_CFG		0x4060
#define RKNPU_DPU_EW_CFG		0x4070
#define   RKNPU_EW_CFG_RELU_BYPASS		0x00000200
/*
 * EW_CFG of an int8 tensor added from memory (CVT_TYPE, DATA_MODE 1,
 * EDATA_SIZE 1, ALU algo add, LUT bypassed, operand from memory), ReLU aside.
 */
#define   RKNPU_EW_CFG_ADD_INT8			0x904200c0
/*
 * The same with EDATA_SIZE 3 (32-bit operand, per the register description;
 * no public driver emits it: unverified on silicon, Documentation/datapath.rst).
 */
#define   RKNPU_EW_CFG_ADD_INT32		0x90c200c0
#define RKNPU_DPU_EW_CVT_OFFSET		0x4074
#define RKNPU_DPU_EW_CVT_SCALE		0x4078
#define   RKNPU_EW_CVT_TRUNCATE			0xffc00000
#define   RKNPU_EW_CVT_SHIFT			0x003f0000
#define   RKNPU_EW_CVT_SCALE_MASK		0x0000ffff
#define RKNPU_DPU_EW_RELUX_CMP		0x407c
#define RKNPU_DPU_OUT_CVT_OFFSET	0x4080
#define RKNPU_DPU_OUT_CVT_SCALE		0x4084
#define   RKNPU_OUT_CVT_SCALE_FP32TOFP16	0x00010000
#define   RKNPU_OUT_CVT_SCALE_MASK		0x0000ffff
#define RKNPU_DPU_OUT_CVT_SHIFT		0x4088
#define   RKNPU_OUT_CVT_SHIFT_TYPE		0x80000000
#define   RKNPU_OUT_CVT_SHIFT_ROUND		0x40000000
#define   RKNPU_OUT_CVT_SHIFT_MINUS_EXP		0x000ff000
#define   RKNPU_OUT_CVT_SHIFT_MASK		0x00000fff
/* EW_OP_VALUE_0..7: EW's constant operands, unused (written 0). */
#define RKNPU_DPU_EW_OP_VALUE_0		0x4090
#define RKNPU_DPU_EW_OP_VALUES		8
#define RKNPU_DPU_SURFACE_ADD		0x40c0
/* Undocumented; Mesa writes 0 after SURFACE_ADD, so do we. */
#define RKNPU_DPU_40C4			0x40c4
/* LUT_ACCESS_CFG .. LUT_LO_SLOPE_SHIFT: the EW lookup table, unused (0). */
#define RKNPU_DPU_LUT_FIRST		0x4100
#define RKNPU_DPU_LUT_LAST		0x412c

/* PPU: pooling from memory (PPU_RDMA) to memory. */
#define RKNPU_TGT_PPU			0x4001
#define RKNPU_TGT_PPU_RDMA		0x8001
#define RKNPU_PPU_CUBE_IN_WIDTH		0x600c
#define RKNPU_PPU_CUBE_IN_HEIGHT	0x6010
#define RKNPU_PPU_CUBE_IN_CHANNEL	0x6014
#define RKNPU_PPU_CUBE_OUT_WIDTH	0x6018
#define RKNPU_PPU_CUBE_OUT_HEIGHT	0x601c
#define RKNPU_PPU_CUBE_OUT_CHANNEL	0x6020
#define   RKNPU_PPU_CUBE_MASK			0x00001fff
#define RKNPU_PPU_OPERATION_MODE_CFG	0x6024
#define   RKNPU_PPU_MODE_FLYING			0x00000010
#define   RKNPU_PPU_MODE_METHOD			0x00000003
#define RKNPU_PPU_POOLING_KERNEL_CFG	0x6034
#define   RKNPU_PPU_KERNEL_STRIDE_HEIGHT	0x00f00000
#define   RKNPU_PPU_KERNEL_STRIDE_WIDTH		0x000f0000
#define   RKNPU_PPU_KERNEL_HEIGHT		0x00000f00
#define   RKNPU_PPU_KERNEL_WIDTH		0x0000000f
#define RKNPU_PPU_RECIP_KERNEL_WIDTH	0x6038
#define RKNPU_PPU_RECIP_KERNEL_HEIGHT	0x603c
#define   RKNPU_PPU_RECIP_MASK			0x0001ffff
#define RKNPU_PPU_POOLING_PADDING_CFG	0x6040
#define   RKNPU_PPU_PAD_BOTTOM			0x00007000
#define   RKNPU_PPU_PAD_RIGHT			0x00000700
#define   RKNPU_PPU_PAD_TOP			0x00000070
#define   RKNPU_PPU_PAD_LEFT			0x00000007
#define RKNPU_PPU_PADDING_VALUE_1	0x6044
#define RKNPU_PPU_PADDING_VALUE_2	0x6048
#define RKNPU_PPU_DST_BASE_ADDR		0x6070
#define RKNPU_PPU_DST_SURF_STRIDE	0x607c
#define RKNPU_PPU_DATA_FORMAT		0x6084
#define RKNPU_PPU_RDMA_CUBE_IN_WIDTH	0x700c
#define RKNPU_PPU_RDMA_CUBE_IN_HEIGHT	0x7010
#define RKNPU_PPU_RDMA_CUBE_IN_CHANNEL	0x7014
#define RKNPU_PPU_RDMA_SRC_BASE_ADDR	0x701c
#define RKNPU_PPU_RDMA_SRC_LINE_STRIDE	0x7024
#define RKNPU_PPU_RDMA_SRC_SURF_STRIDE	0x7028
#define RKNPU_PPU_RDMA_DATA_FORMAT	0x7030
/* OPERATION_MODE_CFG.POOLING_METHOD (NVDLA PDP's encoding). */
#define RKNPU_POOL_AVERAGE		0
#define RKNPU_POOL_MAX			1

/* Shared by BS_CFG, BN_CFG and EW_CFG: bit 0 bypasses the whole stage. */
#define RKNPU_STAGE_BYPASS		0x00000001
/* BS_CFG.ALU_ALGO: add the operand. */
#define RKNPU_BS_ALU_ALGO_ADD		2

/* DPU_RDMA: reads the bias (BS operand) for the DPU. */
#define RKNPU_RDMA_S_POINTER		0x5004
#define RKNPU_RDMA_DATA_CUBE_WIDTH	0x500c
#define RKNPU_RDMA_DATA_CUBE_HEIGHT	0x5010
#define RKNPU_RDMA_DATA_CUBE_CHANNEL	0x5014
#define RKNPU_RDMA_SRC_BASE_ADDR	0x5018
#define RKNPU_RDMA_BRDMA_CFG		0x501c
#define   RKNPU_BRDMA_CFG_DATA_USE		0x0000001e
/* BRDMA DATA_USE: the ALU operand (bias) only, or ALU and MUL operands. */
#define RKNPU_BRDMA_USE_ALU		1
#define RKNPU_BRDMA_USE_BOTH		2
#define RKNPU_RDMA_BS_BASE_ADDR		0x5020
#define RKNPU_RDMA_NRDMA_CFG		0x5028
#define RKNPU_RDMA_BN_BASE_ADDR		0x502c
#define RKNPU_RDMA_ERDMA_CFG		0x5034
#define   RKNPU_ERDMA_CFG_DISABLE		0x00000001
/* ERDMA_CFG reading an int8 tensor: DATA_MODE 1, DATA_SIZE 1 (Mesa's add). */
#define   RKNPU_ERDMA_CFG_INT8			0x40000004
/* ERDMA_CFG reading an int32 tensor: DATA_SIZE 3 (unverified on silicon). */
#define   RKNPU_ERDMA_CFG_INT32			0x4000000c
#define RKNPU_RDMA_EW_BASE_ADDR		0x5038
#define RKNPU_RDMA_EW_SURF_STRIDE	0x5040
#define RKNPU_RDMA_FEATURE_MODE_CFG	0x5044
#define   RKNPU_RDMA_FEATURE_MRDMA_DISABLE	0x00000010
#define RKNPU_RDMA_SRC_DMA_CFG		0x5048
#define RKNPU_RDMA_SURF_NOTCH		0x504c
#define RKNPU_RDMA_PAD_CFG		0x5064
#define RKNPU_RDMA_WEIGHT		0x5068
#define RKNPU_RDMA_EW_SURF_NOTCH	0x506c

/* Precision codes of the *_PRECISION fields. */
#define RKNPU_PRECISION_INT8		0
#define RKNPU_PRECISION_INT32		4

/* CONV_CON1.CONV_MODE and DPU FEATURE_MODE_CFG.CONV_MODE: depthwise. */
#define RKNPU_CONV_MODE_DEPTHWISE	3

/* DPU FEATURE_MODE_CFG.OUTPUT_MODE: write the result to memory. */
#define RKNPU_OUTPUT_MODE_MEMORY	2

/*
 * CONV_CON2.FEATURE_GRAINS as Mesa programs it (50 + stride + 1, "seems to
 * pass the most tests" on silicon); the simulator only requires one window.
 */
#define RKNPU_FEATURE_GRAINS_BASE	51

/* Convolution buffer: banks of 32 KiB. */
#define RKNPU_CBUF_BANK_SIZE		32768
/*
 * Weight banks beyond what the weights fill: Mesa gives one more ("the calc
 * above might be wrong on this HW"), and so do the compiler and the checks.
 */
#define RKNPU_CBUF_WEIGHT_SPARE		1
/* Feature atom: 16 bytes, so 16 int8 or 4 int32 channels per position. */
#define RKNPU_ATOM_BYTES		16
/* Kernels are fetched in groups of 32, input channels in blocks of 32. */
#define RKNPU_WEIGHT_GROUP		32
/* Input channels are padded to this. */
#define RKNPU_CHANNEL_ALIGN		16

/*
 * Byte offset of weight (kernel @n, input channel @c, kernel position @pos
 * of @taps = width x height, row-major) in the layout the CNA fetches for
 * @kernels kernels over @channels_padded input channels: groups of 32
 * kernels, each split into blocks of 32 input channels (the last block may
 * be 16 wide), each block position-major then kernel-major. A depthwise
 * convolution uses it with one kernel: blocks of 32 channels, position-major.
 */
static inline unsigned int rknpu_weight_offset_kxk(unsigned int n, unsigned int c,
						   unsigned int pos, unsigned int taps,
						   unsigned int kernels,
						   unsigned int channels_padded)
{
	unsigned int group = n / RKNPU_WEIGHT_GROUP, block = c / RKNPU_WEIGHT_GROUP;
	unsigned int group_kernels = kernels - group * RKNPU_WEIGHT_GROUP;
	unsigned int block_width = channels_padded - block * RKNPU_WEIGHT_GROUP;

	if (group_kernels > RKNPU_WEIGHT_GROUP)
		group_kernels = RKNPU_WEIGHT_GROUP;
	if (block_width > RKNPU_WEIGHT_GROUP)
		block_width = RKNPU_WEIGHT_GROUP;
	return (group * RKNPU_WEIGHT_GROUP * channels_padded +
		block * group_kernels * RKNPU_WEIGHT_GROUP) * taps +
	       (pos * group_kernels + n % RKNPU_WEIGHT_GROUP) * block_width +
	       c % RKNPU_WEIGHT_GROUP;
}

/* The same for a 1x1 kernel. */
static inline unsigned int rknpu_weight_offset(unsigned int n, unsigned int c,
					       unsigned int kernels,
					       unsigned int channels_padded)
{
	return rknpu_weight_offset_kxk(n, c, 0, 1, kernels, channels_padded);
}

#endif /* _RKACCEL_NPU_REGS_H_ */
