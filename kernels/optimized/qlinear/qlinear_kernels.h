// Inner loops of the quantized LLM linears and embeddings (op_linear_quantized.cpp,
// op_embedding_quantized.cpp), compiled once per instruction set (qlinear_avx512.cpp: AVX-512
// BW + VNNI, qlinear_avx2.cpp, qlinear_base.cpp: scalar; qlinear_neon_dot.cpp: aarch64 `sdot`)
// and chosen once at run time.
//
// Weight layouts (made by compiler/passes/quantized_linear.cpp):
//   int8: one signed byte per weight, rows of K.
//   int4 (weight-only linears, embeddings): rows of K / 2 bytes in blocks of 32 weights in 16
//         bytes: byte j of a block holds weight j in its low nibble and weight j + 16 in its high
//         nibble, each stored as q + 8 (0..15, q in [-8, 7]). A SIMD unpack (and, shift) then
//         yields the block's 32 weights in order. K is a multiple of 32.
//   int4 panels (8da4w linears): output channels in panels of kA8W4Panel = 16, each panel
//         K * 8 bytes: for k-block b (k = 8b .. 8b + 7), 64 bytes where byte 4c + i (channel c
//         of the panel, i = 0..3) holds q(c, 8b + i) + 8 in its low nibble and q(c, 8b + 4 + i)
//         + 8 in its high nibble. Masking the low nibbles of one 64-byte block gives, in 16
//         int32 lanes (one per channel), the four weights k = 8b..8b+3 that one `vpdpbusd` /
//         `sdot` / `pmaddubsw`+`pmaddwd` multiplies by four broadcast activations; the high
//         nibbles the next four. No group sum is reduced across lanes. The last panel is padded
//         with q = 0 and scale 0. Scales panel by panel: [panels][K / G][16] floats.
// Group scales: `groups = K / G` floats per output channel; the weight is q * scale.
//
// Weight-only kernels compute one output channel for up to kQMaxRows rows of input per call,
// so that weights unpacked into registers are used for every row before the next block is read
// (prefill); decode is one row, a GEMV streaming each packed weight once.
#pragma once

#include <cstdint>

namespace pteron::opt {

constexpr int kQMaxRows = 4;
constexpr int kA8W4Panel = 16;     // output channels per int4 panel
constexpr int kA8W4MaxRows = 8;    // rows one a8w4_tile call takes
constexpr int kA8W4MaxPanels = 4;  // panels one a8w4_tile call takes

struct QLinearKernels {
  const char* name;  // "avx512-vnni", "avx2", "neon-dot", "scalar"
  // out[r * out_step] = sum_g scales[g] * sum_{k in g} x[r * x_rs + k] * w[k]  (int8 weights)
  void (*q8w_rows)(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                   int64_t x_rs, int rows, float* out, int64_t out_step);
  // The same for int4 weights (packed as above; weight = nibble - 8), in one order in every
  // table (bit-identical results): weight k is float(q) * its group's scale and is fused into
  // float lane 32 (b % 2) + k % 32 of 64 (block b = k / 32), the lanes then summed in a fixed
  // tree (qscalar::q4w_rows). Decode reads each packed byte once and unpacks it with a table
  // lookup per group (vpermps on AVX-512), four independent chains per row.
  void (*q4w_rows)(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                   int64_t x_rs, int rows, float* out, int64_t out_step);
  // Weight rows as floats, for the SGEMM's packer (prefill of the weight-only linears):
  // out[j * ld + kk] = q(row j, k0 + kk) * scale of its group, for j < rows, kk < kc; weight
  // row j at w + j * row_bytes (K or K / 2 bytes), its scales at scales + j * (K / G).
  void (*q8w_dequant)(const int8_t* w, const float* scales, int64_t K, int64_t G, int rows,
                      int64_t k0, int64_t kc, float* out, int64_t ld);
  void (*q4w_dequant)(const uint8_t* w, const float* scales, int64_t K, int64_t G, int rows,
                      int64_t k0, int64_t kc, float* out, int64_t ld);
  // 8da4w's activations: row x [K] as int8 with torchao's asymmetric per-token parameters
  // (choose_qparams_affine + quantize_affine: scale = (max(x, 0) - min(x, 0)) / 255 clamped to
  // eps, zero = clamp(-128 - round(min / scale)), q = clamp(round(x * (1 / scale)) + zero),
  // rounding half to even), and xoff[g] = 8 * the sum of q over group g. The same bytes in
  // every table (finite x).
  void (*a8_quantize_row)(const float* x, int64_t K, int64_t G, float eps, int8_t* xq, float* scale,
                          int32_t* zero, int32_t* xoff);
  // 8da4w's integer products and group scales, for `rows` rows (1..kA8W4MaxRows) and
  // `panels` consecutive panels (1..kA8W4MaxPanels, weights and scales as laid out above):
  //   acc[r * acc_rs + 16 p + c] = sum over groups g, in order, of
  //       fma(scale[p][g][c], float(D(r, g, p, c) - xoff[r * xoff_rs + g]), running sum)
  // starting from 0, where D = sum_{k in g} nibble(16 p + c, k) * xq[r * xq_rs + k] (the stored
  // nibble q + 8 times the int8 activation, exact in int32) and xoff = 8 * sum_{k in g} xq, so
  // that D - xoff = sum q * xq. The same operations in the same order (fused multiply-add) in
  // every table: results are bit-identical whichever table ran.
  void (*a8w4_tile)(const uint8_t* w, const float* scales, int64_t K, int64_t G, int panels,
                    const int8_t* xq, int64_t xq_rs, const int32_t* xoff, int64_t xoff_rs, int rows,
                    float* acc, int64_t acc_rs);
  // The tile this table computes fastest for prefill (rows x panels per call); decode calls
  // one row with up to kA8W4MaxPanels panels.
  int a8w4_rows, a8w4_panels;
  // aten::_int_mm's exact products: c[i * c_rs + j] = sum_k A(i, k) * B(j, k) for i < rows,
  // j < cols (1..kInt8Tile each), A's row i at a + i * a_rs and B's row j at b + j * b_rs, K
  // bytes each, signed or unsigned as told, summed modulo 2^32 as torch's int32 accumulator.
  // A plain 4 x 4 loop of sixteen sums that each table's flags vectorise (AVX-512 VNNI
  // `vpdpbusd`, AVX2 widening multiply-adds, aarch64 `sdot` / `udot`).
  void (*int8_tile)(const void* a, bool a_signed, int64_t a_rs, const void* b, bool b_signed,
                    int64_t b_rs, int64_t K, int rows, int cols, int32_t* c, int64_t c_rs);
};

constexpr int kInt8Tile = 4;

// The best table for this CPU (decided once; capped by PTERON_ISA).
const QLinearKernels& qlinear_kernels();
// Every table this CPU can run, best first (tests compare them with each other).
int supported_qlinear_kernels(const QLinearKernels** out, int capacity);

}  // namespace pteron::opt
