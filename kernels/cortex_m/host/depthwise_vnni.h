// The depthwise convolution's rows on AVX-512 VNNI (depthwise_avx512vnni.cpp): `vpdpbusd` sums
// four taps of 16 channels per instruction, where the vector loops (vector_loops.h) spend a
// widening load, a 32-bit multiply and an add per tap. The four taps are four rows of one input
// column; each column is interleaved once per output row and channel group and then read by
// every output pixel whose window covers it (three, for a 3x3 window at stride 1), so the
// interleaving costs about one instruction per tap of the input, not of the window. Bit for bit
// the scalar reference: integer sums in int32, the same requantisation.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/conv_params.h"

namespace pteron::cortex_m::host {

#if defined(__x86_64__)
// Rows of four kernel rows each (a window of kh rows needs ceil(kh / 4)).
inline int32_t depthwise_vnni_row_groups(int32_t kh) { return (kh + 3) / 4; }

// Bytes of the packed weights: per group of 16 channels, per row group, per kernel column, 64
// bytes (channel j's four rows' weights at 4j .. 4j + 3; zeros past kh and past C).
inline int64_t depthwise_vnni_weight_bytes(const ConvParams& p) {
  return (p.cout + 15) / 16 * int64_t{depthwise_vnni_row_groups(p.kh)} * p.kw * 64;
}

// The packed block: the weights, then each channel's weight sum as int32 (C rounded up to 16).
inline int64_t depthwise_vnni_packed_bytes(const ConvParams& p) {
  return depthwise_vnni_weight_bytes(p) + (p.cout + 15) / 16 * 16 * 4;
}

// Input columns an output row's windows span, from the first window's left edge (padding
// included).
inline int64_t depthwise_vnni_column_span(const ConvParams& p) {
  return int64_t{p.ow - 1} * p.win.stride[1] + int64_t{p.kw - 1} * p.win.dilation[1] + 1;
}

// Bytes of column scratch one task needs: the span's columns of one channel group, per row
// group, 64 bytes each.
inline int64_t depthwise_vnni_column_bytes(const ConvParams& p) {
  return int64_t{depthwise_vnni_row_groups(p.kh)} * depthwise_vnni_column_span(p) * 64;
}

struct DepthwiseVnni {
  const int8_t* in;
  int8_t* out;
  const ConvParams* p;
  const int8_t* weights;  // the packed block
  // Per channel (C rounded up to 16): bias + (input_offset - 128) * sum of the channel's weights
  // (`vpdpbusd` reads the input as x + 128, unsigned), the shift's left and right parts.
  const int32_t* base;
  const int32_t* left;
  const int32_t* right;
};

// Packs `weight` ([kh * kw][C], the op's layout) into `packed` (depthwise_vnni_packed_bytes,
// 64-byte aligned): once per program where the weight is a constant (the constant cache).
void depthwise_vnni_pack(const ConvParams& p, const int8_t* weight, void* packed);

// Output rows [first, last) of n * oh, each finished before the next starts (the in-place
// promise of kernels/cortex_m/in_place.h), `columns` the task's depthwise_vnni_column_bytes
// (64-byte aligned).
void depthwise_vnni_rows(const DepthwiseVnni& d, int64_t first, int64_t last, int8_t* columns);
#endif

}  // namespace pteron::cortex_m::host
