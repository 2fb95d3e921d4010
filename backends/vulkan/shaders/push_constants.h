// The push-constant layouts of the compute shaders: the one definition both the GLSL shaders and
// the C++ backend (runtime/dispatch_*.cpp) compile, so the two cannot disagree.
//
// GLSL: a shader defines the PTERON_*_PARAMS of its layout, then includes this file, which
// declares that one block as `layout(push_constant) uniform Params { ... } p;`.
// C++: every layout is a struct of the same name in pteron::vulkan.
//
// Members are 32-bit scalars and arrays of them only, so std430 (the push-constant layout) and
// the C++ struct layout agree: no padding on either side. Kept within the preprocessor and
// declaration syntax the two languages share (include guards, not #pragma once); clang-format,
// which would read the blocks as C++ functions, leaves the file alone.
// clang-format off
#ifndef PTERON_VULKAN_SHADERS_PUSH_CONSTANTS_H
#define PTERON_VULKAN_SHADERS_PUSH_CONSTANTS_H

#ifdef __cplusplus
#include <cstdint>
#define PTERON_PUSH_CONSTANTS(name) struct name
#define PTERON_PUSH_CONSTANTS_END
namespace pteron {
namespace vulkan {
using uint = uint32_t;
#else
#define PTERON_PUSH_CONSTANTS(name) layout(push_constant) uniform Params
#define PTERON_PUSH_CONSTANTS_END p
#endif

// Tensor rank limit of the strided shaders (kMaxDims in runtime/payload_format.h).
#define PTERON_SHADER_MAX_DIMS 6

// linear.comp, linear_direct.comp, linear_reg.comp
#if defined(__cplusplus) || defined(PTERON_LINEAR_PARAMS)
PTERON_PUSH_CONSTANTS(LinearParams) {
  uint M;
  uint N;
  uint K;
  uint w_transposed;
  uint has_bias;
  float lo;
  float hi;
  // Batched matmul (bmm): workgroup z is the batch; element strides between batches.
  uint a_batch_stride;
  uint w_batch_stride;
  uint out_batch_stride;
} PTERON_PUSH_CONSTANTS_END;
#endif

// binary.comp: elementwise ops with broadcasting, and strided copies (permute, slice)
#if defined(__cplusplus) || defined(PTERON_BINARY_PARAMS)
PTERON_PUSH_CONSTANTS(BinaryParams) {
  uint numel;
  uint op;
  float alpha;
  uint rank;
  uint dims[PTERON_SHADER_MAX_DIMS];
  uint stride0[PTERON_SHADER_MAX_DIMS];
  uint stride1[PTERON_SHADER_MAX_DIMS];
  uint base0;
} PTERON_PUSH_CONSTANTS_END;
#endif

// clamp.comp
#if defined(__cplusplus) || defined(PTERON_CLAMP_PARAMS)
PTERON_PUSH_CONSTANTS(ClampParams) {
  uint numel;
  float lo;
  float hi;
} PTERON_PUSH_CONSTANTS_END;
#endif

// unary.comp
#if defined(__cplusplus) || defined(PTERON_UNARY_PARAMS)
PTERON_PUSH_CONSTANTS(UnaryParams) {
  uint numel;
  uint op;
} PTERON_PUSH_CONSTANTS_END;
#endif

// to_f16.comp, to_f32.comp
#if defined(__cplusplus) || defined(PTERON_CONVERT_PARAMS)
PTERON_PUSH_CONSTANTS(ConvertParams) {
  uint numel;
} PTERON_PUSH_CONSTANTS_END;
#endif

// conv2d.comp, conv2d_tiled.comp, conv2d_pw.comp, conv2d_dw.comp, conv2d_dw3x3.glsl
#if defined(__cplusplus) || defined(PTERON_CONV2D_PARAMS)
PTERON_PUSH_CONSTANTS(Conv2dParams) {
  uint numel;
  uint C, H, W;
  uint OC, OH, OW;
  uint KH, KW;
  uint stride_h, stride_w;
  uint pad_h, pad_w;
  uint dil_h, dil_w;
  uint groups;
  uint has_bias;
  float lo;
  float hi;
} PTERON_PUSH_CONSTANTS_END;
#endif

// pool2d.comp
#if defined(__cplusplus) || defined(PTERON_POOL2D_PARAMS)
PTERON_PUSH_CONSTANTS(Pool2dParams) {
  uint numel;
  uint H, W, OH, OW;
  uint KH, KW;
  uint stride_h, stride_w;
  uint pad_h, pad_w;
  uint dil_h, dil_w;
  uint mode;
  uint count_include_pad;
  uint divisor;
} PTERON_PUSH_CONSTANTS_END;
#endif

// softmax.comp, mean.comp: one row per invocation
#if defined(__cplusplus) || defined(PTERON_ROWS_PARAMS)
PTERON_PUSH_CONSTANTS(RowsParams) {
  uint rows;
  uint cols;
} PTERON_PUSH_CONSTANTS_END;
#endif

// layer_norm.comp
#if defined(__cplusplus) || defined(PTERON_LAYER_NORM_PARAMS)
PTERON_PUSH_CONSTANTS(LayerNormParams) {
  uint rows;
  uint cols;
  float eps;
  uint has_weight;
  uint has_bias;
} PTERON_PUSH_CONSTANTS_END;
#endif

// copy_block.comp (cat)
#if defined(__cplusplus) || defined(PTERON_COPY_BLOCK_PARAMS)
PTERON_PUSH_CONSTANTS(CopyBlockParams) {
  uint numel;
  uint block_in;
  uint block_out;
  uint offset;
} PTERON_PUSH_CONSTANTS_END;
#endif

// embedding.comp
#if defined(__cplusplus) || defined(PTERON_EMBEDDING_PARAMS)
PTERON_PUSH_CONSTANTS(EmbeddingParams) {
  uint numel;
  uint V;
  uint D;
} PTERON_PUSH_CONSTANTS_END;
#endif

// upsample.comp
#if defined(__cplusplus) || defined(PTERON_UPSAMPLE_PARAMS)
PTERON_PUSH_CONSTANTS(UpsampleParams) {
  uint numel;
  uint H, W, OH, OW;
  float scale_h, scale_w;
  uint mode;  // 0 nearest, 1 bilinear, 2 antialiased bilinear
  uint align_corners;
} PTERON_PUSH_CONSTANTS_END;
#endif

// pad.comp
#if defined(__cplusplus) || defined(PTERON_PAD_PARAMS)
PTERON_PUSH_CONSTANTS(PadParams) {
  uint numel;
  uint H, W, OH, OW;
  int top, left;  // negative: cropped
  uint mode;
  float value;
} PTERON_PUSH_CONSTANTS_END;
#endif

#ifdef __cplusplus
}  // namespace vulkan
}  // namespace pteron
#endif
#undef PTERON_PUSH_CONSTANTS
#undef PTERON_PUSH_CONSTANTS_END

#endif  // PTERON_VULKAN_SHADERS_PUSH_CONSTANTS_H
// clang-format on
