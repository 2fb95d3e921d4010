// Linears with quantized weights, the ops compiler/passes/quantized_linear.cpp puts in place
// of torchao's dequantize_affine -> linear patterns (and pteron's own --quantize llm-*):
//   pteron::linear_q8w.out(Tensor input, Tensor weight, Tensor scales, Tensor? bias,
//       int group_size, *, Tensor(a!) out)        int8 weights [N, K] (one byte each)
//   pteron::linear_q4w.out(... same ...)          int4 weights packed [N, K / 2] (uint8)
//   pteron::linear_8da4w.out(Tensor input, Tensor weight, Tensor scales, Tensor weight_sums,
//       Tensor? bias, int group_size, float eps, *, Tensor(a!) out)
//                                                 int4 weights in panels of 16 channels
//                                                 [P, K / 8, 64] (uint8), P = ceil(N / 16)
// Weight-only scales [N, K / group_size], 8da4w's [P, K / group_size, 16] (the panel layout of
// qlinear/qlinear_kernels.h), float32: weight = q * scale of its group. input [..., K] float32,
// out [..., N] float32, N = weight_sums' length for 8da4w.
// 8da4w quantizes each input row to int8 as torchao's choose_qparams_affine(ASYMMETRIC,
// [1, K], int8) + quantize_affine do (scale = (max(x, 0) - min(x, 0)) / 255 clamped to eps,
// zero point -128 - round(min / scale)), then per group sums int4 x int8 products in int32
// and scales them:  out = sx * (sum_g sw_g * I_g) - sx * zx * weight_sums[n] + bias, where
// I_g = sum_{k in g} q_k * xq_k and weight_sums[n] = sum_k q_k * sw (made at compile time).
// The table's a8w4_tile keeps 16 channels per vector lane group, so group sums are never
// reduced across lanes and the group scales are applied in registers. Decode (one row)
// streams each panel once, four at a time; prefill runs tiles of rows x panels, the panel
// staying in cache while all rows pass. Threads split the panels.
// Weight-only kernels: decode four rows per weight pass and blocks of channels; prefill (8+
// rows) on the SGEMM with the weights dequantized into its packed panels.
#include <cmath>

#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr int64_t kChannelBlock = 16;

enum class Kind { Q8W, Q4W };

struct Problem {
  const char* op;
  int64_t M, K, N, G;
  const float* x;
  const void* w;
  const float* scales;
  const float* bias;
  float* y;
};

Error check_problem(Kind kind, const char* op, const Tensor& input, const Tensor& weight,
                    const Tensor& scales, const Tensor* bias, int64_t G, Tensor& out, Problem* p) {
  PTERON_CHECK(input.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float &&
                   scales.dtype() == ScalarType::Float &&
                   (bias == nullptr || bias->dtype() == ScalarType::Float),
               Error::InvalidArgument, "%s: input, scales, bias and out must be float32", op);
  PTERON_CHECK(input.dim() >= 1 && weight.dim() == 2 && scales.dim() == 2, Error::InvalidArgument,
               "%s: input must be [..., K], weight and scales 2-d", op);
  PTERON_CHECK(input.is_contiguous() && weight.is_contiguous() && scales.is_contiguous() &&
                   out.is_contiguous() && (bias == nullptr || bias->is_contiguous()),
               Error::NotSupported, "%s: only contiguous tensors are supported", op);
  const int64_t K = input.size(input.dim() - 1), N = weight.size(0);
  const bool packed = kind == Kind::Q4W;
  PTERON_CHECK(weight.dtype() == (packed ? ScalarType::Byte : ScalarType::Char),
               Error::InvalidArgument, "%s: weight must be %s", op,
               packed ? "uint8 (two int4 per byte)" : "int8");
  PTERON_CHECK(G >= 1 && K % G == 0 && (!packed || (G % 32 == 0)), Error::InvalidArgument,
               "%s: group size %lld does not divide K = %lld%s", op, static_cast<long long>(G),
               static_cast<long long>(K), packed ? " in multiples of 32" : "");
  PTERON_CHECK(
      weight.size(1) == (packed ? K / 2 : K) && scales.size(0) == N && scales.size(1) == K / G,
      Error::InvalidArgument,
      "%s: weight [%d, %d] / scales [%d, %d] do not match K = %lld, group %lld", op, weight.size(0),
      weight.size(1), scales.size(0), scales.size(1), static_cast<long long>(K),
      static_cast<long long>(G));
  PTERON_CHECK(bias == nullptr || bias->numel() == N, Error::InvalidArgument,
               "%s: bias must have N = %lld elements", op, static_cast<long long>(N));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[input.dim() - 1] = static_cast<int32_t>(N);
  PTERON_TRY(expect_out_shape(op, out, sizes, input.dim()));
  p->op = op;
  p->M = K == 0 ? 0 : input.numel() / K;
  p->K = K;
  p->N = N;
  p->G = G;
  p->x = input.data<const float>();
  p->w = weight.const_data();
  p->scales = scales.data<const float>();
  p->bias = bias == nullptr ? nullptr : bias->data<const float>();
  p->y = out.data<float>();
  return Error::Ok;
}

// From this many input rows (prefill) the weight-only product runs on the SGEMM, its B panels
// packed from weight rows dequantized on the fly (each weight dequantized once per call, then
// reused by every row in registers); below it the row kernels stream each weight once.
constexpr int64_t kGemmRows = 8;
constexpr int kMaxPanelWidth = 32;  // the widest SGEMM panel (AVX-512's NR)
constexpr int64_t kDequantDepth = 256;

struct DequantPacker {
  const Problem* p;
  bool int4;
  const QLinearKernels* kt;
};

// SgemmBPacker::pack for B = W^T: panels of nr weight rows (output channels), kc deep.
void pack_dequantized(const void* context, int64_t, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      int nr, float* dst) {
  const DequantPacker& d = *static_cast<const DequantPacker*>(context);
  const Problem& p = *d.p;
  const int64_t row_bytes = d.int4 ? p.K / 2 : p.K, groups = p.K / p.G;
  alignas(64) float rows[kMaxPanelWidth * kDequantDepth];
  for (int64_t c = 0; c < nc; c += nr, dst += kc * nr) {
    const int n = static_cast<int>(nc - c < nr ? nc - c : nr);
    const auto* w = static_cast<const uint8_t*>(p.w) + (j0 + c) * row_bytes;
    const float* s = p.scales + (j0 + c) * groups;
    for (int64_t k = 0; k < kc; k += kDequantDepth) {
      const int64_t depth = kc - k < kDequantDepth ? kc - k : kDequantDepth;
      if (d.int4) {
        d.kt->q4w_dequant(w, s, p.K, p.G, n, k0 + k, depth, rows, depth);
      } else {
        d.kt->q8w_dequant(reinterpret_cast<const int8_t*>(w), s, p.K, p.G, n, k0 + k, depth, rows,
                          depth);
      }
      optimized::sgemm_pack_rows(rows, depth, depth, n, nr, dst + k * nr);
    }
  }
}

void run_weight_only(KernelContext& ctx, const Problem& p, bool int4) {
  if (p.M >= kGemmRows) {
    const DequantPacker context{&p, int4, &qlinear_kernels()};
    const optimized::SgemmBPacker packer{&pack_dequantized, &context};
    optimized::SgemmProblem g;
    g.M = p.M;
    g.N = p.N;
    g.K = p.K;
    g.a = p.x;
    g.a_rs = p.K;
    g.a_cs = 1;
    g.b_packer = &packer;
    g.c = p.y;
    g.c_rs = p.N;
    g.bias = p.bias;
    if (optimized::sgemm(ctx, g)) return;  // else (no scratch) the row kernels below
  }
  const QLinearKernels& kt = qlinear_kernels();
  const int64_t groups = p.K / p.G;
  const int64_t row_bytes = int4 ? p.K / 2 : p.K;
  const int64_t blocks = (p.N + kChannelBlock - 1) / kChannelBlock;
  parallel_for(blocks, kChannelBlock * p.M * p.K, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n0 = b * kChannelBlock,
                    n1 = n0 + kChannelBlock < p.N ? n0 + kChannelBlock : p.N;
      for (int64_t m = 0; m < p.M; m += kQMaxRows) {
        const int rows = static_cast<int>(p.M - m < kQMaxRows ? p.M - m : kQMaxRows);
        for (int64_t n = n0; n < n1; ++n) {
          const uint8_t* w = static_cast<const uint8_t*>(p.w) + n * row_bytes;
          float* y = p.y + m * p.N + n;
          if (int4) {
            kt.q4w_rows(w, p.scales + n * groups, p.K, p.G, p.x + m * p.K, p.K, rows, y, p.N);
          } else {
            kt.q8w_rows(reinterpret_cast<const int8_t*>(w), p.scales + n * groups, p.K, p.G,
                        p.x + m * p.K, p.K, rows, y, p.N);
          }
          if (p.bias != nullptr) {
            for (int r = 0; r < rows; ++r) y[r * p.N] += p.bias[n];
          }
        }
      }
    }
  });
}

struct A8W4 {
  int64_t M, K, N, G, panels;
  const float* x;
  const uint8_t* w;
  const float* scales;
  const float* weight_sums;
  const float* bias;
  float* y;
};

Error check_8da4w(Span<EValue*> args, A8W4* p) {
  constexpr const char* kOp = "pteron::linear_8da4w.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor& scales = *args[2]->tensor;
  const Tensor& sums = *args[3]->tensor;
  const Tensor* bias = args[4]->is_none() ? nullptr : args[4]->tensor;
  const int64_t G = args[5]->i;
  Tensor& out = *args[7]->tensor;
  PTERON_CHECK(input.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float &&
                   scales.dtype() == ScalarType::Float && sums.dtype() == ScalarType::Float &&
                   (bias == nullptr || bias->dtype() == ScalarType::Float),
               Error::InvalidArgument,
               "%s: input, scales, weight_sums, bias and out must be float32", kOp);
  PTERON_CHECK(weight.dtype() == ScalarType::Byte, Error::InvalidArgument,
               "%s: weight must be uint8 (int4 panels)", kOp);
  PTERON_CHECK(input.dim() >= 1 && sums.dim() == 1, Error::InvalidArgument,
               "%s: input must be [..., K], weight_sums [N]", kOp);
  PTERON_CHECK(input.is_contiguous() && weight.is_contiguous() && scales.is_contiguous() &&
                   sums.is_contiguous() && out.is_contiguous() &&
                   (bias == nullptr || bias->is_contiguous()),
               Error::NotSupported, "%s: only contiguous tensors are supported", kOp);
  const int64_t K = input.size(input.dim() - 1), N = sums.size(0);
  const int64_t panels = (N + kA8W4Panel - 1) / kA8W4Panel;
  PTERON_CHECK(G >= 32 && G % 32 == 0 && K % G == 0, Error::InvalidArgument,
               "%s: group size %lld does not divide K = %lld in multiples of 32", kOp,
               static_cast<long long>(G), static_cast<long long>(K));
  PTERON_CHECK(weight.dim() == 3 && weight.size(0) == panels && weight.size(1) == K / 8 &&
                   weight.size(2) == 64,
               Error::InvalidArgument,
               "%s: weight must be int4 panels [%lld, %lld, 64] for N = %lld, K = %lld (a "
               "program written before the panel layout: compile it again)",
               kOp, static_cast<long long>(panels), static_cast<long long>(K / 8),
               static_cast<long long>(N), static_cast<long long>(K));
  PTERON_CHECK(scales.dim() == 3 && scales.size(0) == panels && scales.size(1) == K / G &&
                   scales.size(2) == kA8W4Panel,
               Error::InvalidArgument,
               "%s: scales must be [%lld, %lld, 16] for K = %lld, group %lld", kOp,
               static_cast<long long>(panels), static_cast<long long>(K / G),
               static_cast<long long>(K), static_cast<long long>(G));
  PTERON_CHECK(bias == nullptr || bias->numel() == N, Error::InvalidArgument,
               "%s: bias must have N = %lld elements", kOp, static_cast<long long>(N));
  const double eps = args[6]->scalar_as_double();
  PTERON_CHECK(eps > 0.0 && std::isfinite(eps), Error::InvalidArgument,
               "%s: eps must be positive, got %g", kOp, eps);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[input.dim() - 1] = static_cast<int32_t>(N);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  p->M = K == 0 ? 0 : input.numel() / K;
  p->K = K;
  p->N = N;
  p->G = G;
  p->panels = panels;
  p->x = input.data<const float>();
  p->w = weight.data<const uint8_t>();
  p->scales = scales.data<const float>();
  p->weight_sums = sums.data<const float>();
  p->bias = bias == nullptr ? nullptr : bias->data<const float>();
  p->y = out.data<float>();
  return Error::Ok;
}

Error run_8da4w(KernelContext& ctx, const A8W4& p, float eps) {
  const int64_t groups = p.K / p.G;
  auto* xq = static_cast<int8_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M * p.K), 64));
  auto* xs = static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(p.M) * sizeof(float)));
  auto* xz = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M) * 4));
  auto* xoff = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M * groups) * 4));
  PTERON_CHECK(xq != nullptr && xs != nullptr && xz != nullptr && xoff != nullptr,
               Error::OutOfMemory,
               "pteron::linear_8da4w.out: no scratch memory for %lld x %lld activations",
               static_cast<long long>(p.M), static_cast<long long>(p.K));
  const QLinearKernels& kt = qlinear_kernels();
  parallel_for(p.M, p.K, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      kt.a8_quantize_row(p.x + m * p.K, p.K, p.G, eps, xq + m * p.K, &xs[m], &xz[m],
                         xoff + m * groups);
    }
  });
  // Decode: one row, panels four at a time (independent chains); prefill: the table's tile.
  const int mr = p.M == 1 ? 1 : kt.a8w4_rows;
  const int np = p.M == 1 ? kA8W4MaxPanels : kt.a8w4_panels;
  const int64_t chunks = (p.panels + np - 1) / np;
  const int64_t panel_bytes = p.K * 8, panel_scales = groups * kA8W4Panel;
  parallel_for(chunks, np * kA8W4Panel * p.M * p.K, [&](int64_t c0, int64_t c1) {
    alignas(64) float tile[kA8W4MaxRows * kA8W4MaxPanels * kA8W4Panel];
    const int64_t tile_rs = np * kA8W4Panel;
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t p0 = c * np;
      const int panels = static_cast<int>(p.panels - p0 < np ? p.panels - p0 : np);
      const int64_t n0 = p0 * kA8W4Panel;
      const int64_t n1 = n0 + panels * kA8W4Panel < p.N ? n0 + panels * kA8W4Panel : p.N;
      for (int64_t m = 0; m < p.M; m += mr) {
        const int rows = static_cast<int>(p.M - m < mr ? p.M - m : mr);
        kt.a8w4_tile(p.w + p0 * panel_bytes, p.scales + p0 * panel_scales, p.K, p.G, panels,
                     xq + m * p.K, p.K, xoff + m * groups, groups, rows, tile, tile_rs);
        for (int r = 0; r < rows; ++r) {
          const float sx = xs[m + r], zx = static_cast<float>(xz[m + r]);
          const float* acc = tile + r * tile_rs - n0;
          float* y = p.y + (m + r) * p.N;
          for (int64_t n = n0; n < n1; ++n) {
            float v = sx * acc[n] - sx * zx * p.weight_sums[n];
            if (p.bias != nullptr) v += p.bias[n];
            y[n] = v;
          }
        }
      }
    }
  });
  return Error::Ok;
}

// The weight-only kernels, (x, weight, scales, bias?, group_size, out); they differ only in
// the weight's kind.
Error weight_only_out(KernelContext& ctx, const char* op, Kind kind, Span<EValue*> args) {
  Problem p;
  PTERON_TRY(check_problem(kind, op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                           args[3]->is_none() ? nullptr : args[3]->tensor, args[4]->i,
                           *args[5]->tensor, &p));
  run_weight_only(ctx, p, kind == Kind::Q4W);
  return Error::Ok;
}

Error linear_q8w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::linear_q8w.out", Kind::Q8W, args);
}

Error linear_q4w_out(KernelContext& ctx, Span<EValue*> args) {
  return weight_only_out(ctx, "pteron::linear_q4w.out", Kind::Q4W, args);
}

Error linear_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  A8W4 p;
  PTERON_TRY(check_8da4w(args, &p));
  if (p.M == 0 || p.N == 0) return Error::Ok;
  return run_8da4w(ctx, p, static_cast<float>(args[6]->scalar_as_double()));
}

}  // namespace

PTERON_KERNEL("pteron::linear_q8w.out", linear_q8w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_q4w.out", linear_q4w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_8da4w.out", linear_8da4w_out, "TTTTtIDT");

}  // namespace pteron::opt
