// Inner loops of the quantized LLM linears and embeddings (op_linear_quantized.cpp,
// op_embedding_quantized.cpp), compiled once per instruction set (qlinear_avx512.cpp: AVX-512
// BW + VNNI, qlinear_avx2.cpp, qlinear_base.cpp: scalar; qlinear_neon_dot.cpp: aarch64 `sdot`)
// and chosen once at run time.
//
// Weight layouts (made by compiler/passes/quantized_linear.cpp):
//   int8: one signed byte per weight, rows of K.
//   int4: rows of K / 2 bytes in blocks of 32 weights in 16 bytes: byte j of a block holds
//         weight j in its low nibble and weight j + 16 in its high nibble, each stored as
//         q + 8 (0..15, q in [-8, 7]). A SIMD unpack (and, shift) then yields the block's 32
//         weights in order. K is a multiple of 32.
// Group scales: `groups = K / G` floats per output channel; the weight is q * scale.
//
// Each call computes one output channel for up to kMaxRows rows of input, so that weights
// unpacked into registers are used for every row before the next block is read (prefill);
// decode is one row, a GEMV streaming each packed weight once.
#pragma once

#include <cstdint>

namespace pteron::opt {

constexpr int kQMaxRows = 4;

struct QLinearKernels {
  const char* name;  // "avx512-vnni", "avx2", "neon-dot", "scalar"
  // out[r * out_step] = sum_g scales[g] * sum_{k in g} x[r * x_rs + k] * w[k]  (int8 weights)
  void (*q8w_rows)(const int8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                   int64_t x_rs, int rows, float* out, int64_t out_step);
  // The same for int4 weights (packed as above; weight = nibble - 8).
  void (*q4w_rows)(const uint8_t* w, const float* scales, int64_t K, int64_t G, const float* x,
                   int64_t x_rs, int rows, float* out, int64_t out_step);
  // Integer part of the dynamic-int8-activation x int4-weight product: for each row r and
  // group g, dots[r * groups + g] = sum_{k in g} nibble[k] * xq[r * xq_rs + k], the stored
  // nibble (q + 8, 0..15) times the int8 activation, accumulated exactly in int32.
  void (*q4a8_rows)(const uint8_t* w, int64_t K, int64_t G, const int8_t* xq, int64_t xq_rs,
                    int rows, int32_t* dots);
};

// The best table for this CPU (decided once; capped by PTERON_ISA).
const QLinearKernels& qlinear_kernels();
// Every table this CPU can run, best first (tests compare them with each other).
int supported_qlinear_kernels(const QLinearKernels** out, int capacity);

}  // namespace pteron::opt
