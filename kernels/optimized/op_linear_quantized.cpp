// Linears with quantized weights, the ops compiler/passes/quantized_linear.cpp puts in place
// of torchao's dequantize_affine -> linear patterns (and pteron's own --quantize llm-*):
//   pteron::linear_q8w.out(Tensor input, Tensor weight, Tensor scales, Tensor? bias,
//       int group_size, *, Tensor(a!) out)        int8 weights [N, K] (one byte each)
//   pteron::linear_q4w.out(... same ...)          int4 weights packed [N, K / 2] (uint8)
//   pteron::linear_8da4w.out(Tensor input, Tensor weight, Tensor scales, Tensor weight_sums,
//       Tensor? bias, int group_size, float eps, *, Tensor(a!) out)
// scales [N, K / group_size] float32: weight = q * scale of its group. input [..., K] float32,
// out [..., N] float32.
// 8da4w quantizes each input row to int8 as torchao's choose_qparams_affine(ASYMMETRIC,
// [1, K], int8) + quantize_affine do (scale = (max(x, 0) - min(x, 0)) / 255 clamped to eps,
// zero point -128 - round(min / scale)), then per group sums int4 x int8 products in int32
// and scales them:  out = sx * (sum_g sw_g * I_g) - sx * zx * weight_sums[n] + bias, where
// I_g = sum_{k in g} q_k * xq_k and weight_sums[n] = sum_k q_k * sw (made at compile time).
// Decode (one row) streams each packed weight once; prefill takes four rows per weight pass
// and blocks of channels, so a weight block and four input rows stay in cache. Threads split
// the output channels.
#include <cmath>

#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr int64_t kChannelBlock = 16;
constexpr int64_t kMaxGroupsPerRow = 2048;  // the int32 group dots live on the stack

enum class Kind { Q8W, Q4W, A8W4 };

struct Problem {
  const char* op;
  int64_t M, K, N, G;
  const float* x;
  const void* w;
  const float* scales;
  const float* weight_sums;
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
  const bool packed = kind != Kind::Q8W;
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
  PTERON_CHECK(K / G <= kMaxGroupsPerRow, Error::NotSupported, "%s: more than %lld groups per row",
               op, static_cast<long long>(kMaxGroupsPerRow));
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

void run_weight_only(const Problem& p, bool int4) {
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

// Row r of x as int8 with torchao's asymmetric per-token parameters; group sums of xq into
// xsum (the -8 offset of the stored nibbles is taken off with them).
void quantize_row(const float* x, int64_t K, int64_t G, float eps, int8_t* xq, float* scale,
                  int32_t* zero, int32_t* xsum) {
  float lo = 0.0f, hi = 0.0f;
  for (int64_t k = 0; k < K; ++k) {
    lo = x[k] < lo ? x[k] : lo;
    hi = x[k] > hi ? x[k] : hi;
  }
  float s = (hi - lo) / 255.0f;
  s = s < eps ? eps : s;
  float zp = -128.0f - std::nearbyint(lo / s);
  zp = zp < -128.0f ? -128.0f : (zp > 127.0f ? 127.0f : zp);
  const float inv = 1.0f / s;
  for (int64_t g0 = 0; g0 < K; g0 += G) {
    int32_t sum = 0;
    for (int64_t k = g0; k < g0 + G; ++k) {
      float q = std::nearbyint(x[k] * inv) + zp;
      q = q < -128.0f ? -128.0f : (q > 127.0f ? 127.0f : q);
      xq[k] = static_cast<int8_t>(q);
      sum += xq[k];
    }
    xsum[g0 / G] = sum;
  }
  *scale = s;
  *zero = static_cast<int32_t>(zp);
}

Error run_8da4w(KernelContext& ctx, const Problem& p, float eps) {
  const int64_t groups = p.K / p.G;
  auto* xq = static_cast<int8_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M * p.K), 64));
  auto* xs = static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(p.M) * sizeof(float)));
  auto* xz = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M) * 4));
  auto* xsum = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(p.M * groups) * 4));
  PTERON_CHECK(xq != nullptr && xs != nullptr && xz != nullptr && xsum != nullptr,
               Error::OutOfMemory, "%s: no scratch memory for %lld x %lld activations", p.op,
               static_cast<long long>(p.M), static_cast<long long>(p.K));
  parallel_for(p.M, p.K, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      quantize_row(p.x + m * p.K, p.K, p.G, eps, xq + m * p.K, &xs[m], &xz[m], xsum + m * groups);
    }
  });
  const QLinearKernels& kt = qlinear_kernels();
  const int64_t blocks = (p.N + kChannelBlock - 1) / kChannelBlock;
  parallel_for(blocks, kChannelBlock * p.M * p.K, [&](int64_t b0, int64_t b1) {
    int32_t dots[kQMaxRows * kMaxGroupsPerRow];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n0 = b * kChannelBlock,
                    n1 = n0 + kChannelBlock < p.N ? n0 + kChannelBlock : p.N;
      for (int64_t m = 0; m < p.M; m += kQMaxRows) {
        const int rows = static_cast<int>(p.M - m < kQMaxRows ? p.M - m : kQMaxRows);
        for (int64_t n = n0; n < n1; ++n) {
          kt.q4a8_rows(static_cast<const uint8_t*>(p.w) + n * (p.K / 2), p.K, p.G, xq + m * p.K,
                       p.K, rows, dots);
          const float* sw = p.scales + n * groups;
          for (int r = 0; r < rows; ++r) {
            const int32_t* d = dots + r * groups;
            const int32_t* xsr = xsum + (m + r) * groups;
            // Eight running sums in a fixed order (lane g % 8), so the loop vectorises and the
            // result is the same bits whichever table computed the dots.
            float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            int64_t g = 0;
            for (; g + 8 <= groups; g += 8) {
              for (int l = 0; l < 8; ++l) {
                part[l] += sw[g + l] * static_cast<float>(d[g + l] - 8 * xsr[g + l]);
              }
            }
            for (; g < groups; ++g) part[g % 8] += sw[g] * static_cast<float>(d[g] - 8 * xsr[g]);
            const float acc = ((part[0] + part[1]) + (part[2] + part[3])) +
                              ((part[4] + part[5]) + (part[6] + part[7]));
            const float sx = xs[m + r];
            float y = sx * acc - sx * static_cast<float>(xz[m + r]) * p.weight_sums[n];
            if (p.bias != nullptr) y += p.bias[n];
            p.y[(m + r) * p.N + n] = y;
          }
        }
      }
    }
  });
  return Error::Ok;
}

// The weight-only kernels, (x, weight, scales, bias?, group_size, out); they differ only in
// the weight's kind.
Error weight_only_out(const char* op, Kind kind, Span<EValue*> args) {
  Problem p;
  PTERON_TRY(check_problem(kind, op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                           args[3]->is_none() ? nullptr : args[3]->tensor, args[4]->i,
                           *args[5]->tensor, &p));
  run_weight_only(p, kind == Kind::Q4W);
  return Error::Ok;
}

Error linear_q8w_out(KernelContext&, Span<EValue*> args) {
  return weight_only_out("pteron::linear_q8w.out", Kind::Q8W, args);
}

Error linear_q4w_out(KernelContext&, Span<EValue*> args) {
  return weight_only_out("pteron::linear_q4w.out", Kind::Q4W, args);
}

Error linear_8da4w_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "pteron::linear_8da4w.out";
  Problem p;
  PTERON_TRY(check_problem(Kind::A8W4, kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                           args[4]->is_none() ? nullptr : args[4]->tensor, args[5]->i,
                           *args[7]->tensor, &p));
  const Tensor& sums = *args[3]->tensor;
  PTERON_CHECK(sums.dtype() == ScalarType::Float && sums.numel() == p.N && sums.is_contiguous(),
               Error::InvalidArgument, "%s: weight_sums must be float32 [N = %lld]", kOp,
               static_cast<long long>(p.N));
  p.weight_sums = sums.data<const float>();
  const double eps = args[6]->scalar_as_double();
  PTERON_CHECK(eps > 0.0 && std::isfinite(eps), Error::InvalidArgument,
               "%s: eps must be positive, got %g", kOp, eps);
  if (p.M == 0 || p.N == 0) return Error::Ok;
  return run_8da4w(ctx, p, static_cast<float>(eps));
}

}  // namespace

PTERON_KERNEL("pteron::linear_q8w.out", linear_q8w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_q4w.out", linear_q4w_out, "TTTtIT");
PTERON_KERNEL("pteron::linear_8da4w.out", linear_8da4w_out, "TTTTtIDT");

}  // namespace pteron::opt
