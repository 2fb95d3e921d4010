// Single-precision matrix multiply for the optimized matmul kernels (mm, bmm, addmm, linear):
//   C = alpha * A * B + beta * C + bias + row_bias + addend   (bias: one value per column,
//   row_bias one per row, addend a matrix like C; all optional), optionally followed by ReLU
// over a batch of strided matrices.
//
// Goto/BLIS style: per K block, A is packed into MR-row panels and B into NR-column panels, and
// a register-blocked MR x NR micro-kernel (AVX-512, AVX2+FMA, NEON, generic 128-bit vectors or
// scalar, picked for the CPU at run time) accumulates each C tile in registers. The C tiles are
// split into tasks over (batch, row block, column block) that the shared pthreadpool runs; each
// worker packs into its own part of one scratch buffer. Row vectors (M == 1) with B stored as
// [N, K] (linear weights) take a threaded dot-product path instead: no packing, B streamed once
// (from its cached panels, through the micro-kernel, when a matrix product packed them; else
// from the cache's huge-page copy of a file-mapped constant, ConstantCache::streaming_copy).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/util/output_activation.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/constant_cache.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {

// The cache of the loaded program whose immutable bytes hold every element of `t` (a program
// constant, or a view of one), for SgemmProblem::a_cache / b_cache; nullptr otherwise (an
// activation, an input, no program registered: runtime/host/host_constant_cache.h).
ConstantCache* constant_cache_of(const Tensor& t);

// B given as code instead of memory: packs rows [k0, k0 + kc) x columns [j0, j0 + nc) of batch
// entry `batch` as ceil(nc / nr) panels of kc x nr floats (panel-major, row by row, zero past
// nc), exactly as the SGEMM packs a stored B. The convolution uses it to pack its im2col matrix
// straight from the input, never storing it. Called concurrently from the workers.
struct SgemmBPacker {
  void (*pack)(const void* context, int64_t batch, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
               int nr, float* dst) = nullptr;
  const void* context = nullptr;
};

// For packers that make a panel's columns as rows first (e.g. dequantized weight rows): packs
// dst[k * NR + j] = src[j * ld + k] for k < kc, j < nr, zero for nr <= j < NR, with the packer
// of the micro-kernel sgemm() runs here (16x16 register transposes on AVX-512).
void sgemm_pack_rows(const float* src, int64_t ld, int64_t kc, int nr, int NR, float* dst);

struct SgemmProblem {
  int64_t M = 0, N = 0, K = 0;
  int64_t batch = 1;
  // Element (r, c) of matrix b in the batch is data[b * bs + r * rs + c * cs].
  const float* a = nullptr;
  int64_t a_bs = 0, a_rs = 0, a_cs = 0;
  const float* b = nullptr;
  int64_t b_bs = 0, b_rs = 0, b_cs = 0;
  float* c = nullptr;  // columns of C are contiguous (unit column stride)
  int64_t c_bs = 0, c_rs = 0;
  float alpha = 1.0f;
  float beta = 0.0f;            // 0: C is not read (NaNs in it do not propagate)
  const float* bias = nullptr;  // N contiguous values, or null
  // C = activation(C) after everything else (a fused ReLU, ReLU6, hardtanh: clamped per tile in
  // registers; SiLU: over each task's C block while it is in cache). NaN stays NaN, as in torch.
  OutputActivation activation;
  // When set, B comes from here and b, b_bs, b_rs, b_cs are not read.
  const SgemmBPacker* b_packer = nullptr;
  // Also added before the activation: row_bias[i] to every column of row i (M values; a
  // convolution's per-channel bias), by the micro-kernels with the first K block, and addend, a
  // matrix laid out like C (c_bs, c_rs, unit column stride; a residual), which each task writes
  // into its own C block (with the row bias) before its first K block, in parallel and while
  // the block is in cache. Either may be null.
  const float* row_bias = nullptr;
  const float* addend = nullptr;
  // C = A diag(s) B: A's column k (a_col_scale) or B's row k (b_row_scale) times s[k] (K
  // values), applied as that operand is packed for this call, so a per-call scale of a
  // convolution's input channels (a squeeze-excite gate) costs no pass of its own. Not with a
  // cached constant for that operand (it is packed per call instead).
  const float* a_col_scale = nullptr;
  const float* b_row_scale = nullptr;
  // Set when A or B is a program constant (constant_cache_of): sgemm() then
  // packs it into the micro-kernel's panels once, keeps the panels in that cache and reuses
  // them on every later call (`constant_panels` in sgemm.cpp), instead of packing per call. Used
  // for one matrix (batch 1, or a zero batch stride) that is not B given as code. A row vector
  // times B (the matrix-vector path) packs nothing: it reads B's panels when a matrix product
  // packed them already (decode after prefill), else the cache's streaming copy of B; a matrix
  // product of a B that row vectors streamed first reads that copy and packs per call.
  ConstantCache* a_cache = nullptr;
  ConstantCache* b_cache = nullptr;
};

// Runs the product. Returns false, having written nothing, when it needs scratch memory that
// the context does not have; the caller then takes another path (the portable kernel). Scratch
// needed: all of A packed (batch x M x K floats, rounded up to whole panels) plus one K block of
// a task's columns per thread (<= 256 x 512 floats); row vectors times [N, K] weights need none.
// `kernel` picks a micro-kernel by index (tests cover each); -1 takes this machine's best.
bool sgemm(KernelContext& ctx, const SgemmProblem& p, int kernel = -1);

// The same product on the calling thread only, in caller-provided scratch of
// sgemm_serial_scratch_bytes(p) bytes (64-byte aligned; 0 bytes for a matrix-vector product):
// for kernels that split their work over the pool themselves and run a whole pipeline per
// worker (util/winograd.cpp), where a worker may neither call the pool again nor allocate.
size_t sgemm_serial_scratch_bytes(const SgemmProblem& p);
void sgemm_serial(const SgemmProblem& p, void* scratch);

// The micro-kernels of this build: how many, their names, and whether this CPU runs one.
int sgemm_kernel_count();
const char* sgemm_kernel_name(int index);
bool sgemm_kernel_supported(int index);

}  // namespace pteron::optimized
