#include "kernels/optimized/qlinear/qlinear_run.h"

#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/sgemm.h"

namespace pteron::opt {
namespace {

constexpr int64_t kChannelBlock = 16;

// From this many input rows (prefill) the weight-only product runs on the SGEMM, its B panels
// packed from weight rows dequantized on the fly (each weight dequantized once per call, then
// reused by every row in registers); below it the row kernels stream each weight once.
constexpr int64_t kGemmRows = 8;
constexpr int kMaxPanelWidth = 32;  // the widest SGEMM panel (AVX-512's NR)
constexpr int64_t kDequantDepth = 256;

struct DequantPacker {
  const WeightOnlyProblem* p;
  bool int4;
  const QLinearKernels* kt;
};

// SgemmBPacker::pack for B = W^T: panels of nr weight rows (output channels), kc deep.
void pack_dequantized(const void* context, int64_t, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                      int nr, float* dst) {
  const DequantPacker& d = *static_cast<const DequantPacker*>(context);
  const WeightOnlyProblem& p = *d.p;
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

}  // namespace

void run_weight_only(KernelContext& ctx, const WeightOnlyProblem& p, bool int4) {
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

Error quantize_activations(KernelContext& ctx, const char* op, const float* x, int64_t M, int64_t K,
                           int64_t G, float eps, A8Activations* out) {
  const int64_t groups = K / G;
  out->xq = static_cast<int8_t*>(ctx.allocate_scratch(static_cast<size_t>(M * K), 64));
  out->scale = static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(M) * sizeof(float)));
  out->zero = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(M) * 4));
  out->xoff = static_cast<int32_t*>(ctx.allocate_scratch(static_cast<size_t>(M * groups) * 4));
  PTERON_CHECK(
      out->xq != nullptr && out->scale != nullptr && out->zero != nullptr && out->xoff != nullptr,
      Error::OutOfMemory, "%s: no scratch memory for %lld x %lld activations", op,
      static_cast<long long>(M), static_cast<long long>(K));
  const QLinearKernels& kt = qlinear_kernels();
  parallel_for(M, K, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      kt.a8_quantize_row(x + m * K, K, G, eps, out->xq + m * K, &out->scale[m], &out->zero[m],
                         out->xoff + m * groups);
    }
  });
  return Error::Ok;
}

void run_8da4w(const A8W4Problem& p, const A8Activations& a) {
  const QLinearKernels& kt = qlinear_kernels();
  const int64_t groups = p.K / p.G;
  const int64_t panel_count = (p.N + kA8W4Panel - 1) / kA8W4Panel;
  // Decode: one row, panels four at a time (independent chains); prefill: the table's tile.
  const int mr = p.M == 1 ? 1 : kt.a8w4_rows;
  const int np = p.M == 1 ? kA8W4MaxPanels : kt.a8w4_panels;
  const int64_t chunks = (panel_count + np - 1) / np;
  const int64_t panel_bytes = p.K * 8, panel_scales = groups * kA8W4Panel;
  parallel_for(chunks, np * kA8W4Panel * p.M * p.K, [&](int64_t c0, int64_t c1) {
    alignas(64) float tile[kA8W4MaxRows * kA8W4MaxPanels * kA8W4Panel];
    const int64_t tile_rs = np * kA8W4Panel;
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t p0 = c * np;
      const int panels = static_cast<int>(panel_count - p0 < np ? panel_count - p0 : np);
      const int64_t n0 = p0 * kA8W4Panel;
      const int64_t n1 = n0 + panels * kA8W4Panel < p.N ? n0 + panels * kA8W4Panel : p.N;
      for (int64_t m = 0; m < p.M; m += mr) {
        const int rows = static_cast<int>(p.M - m < mr ? p.M - m : mr);
        kt.a8w4_tile(p.w + p0 * panel_bytes, p.scales + p0 * panel_scales, p.K, p.G, panels,
                     a.xq + m * p.K, p.K, a.xoff + m * groups, groups, rows, tile, tile_rs);
        for (int r = 0; r < rows; ++r) {
          const float sx = a.scale[m + r], zx = static_cast<float>(a.zero[m + r]);
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
}

Error run_8da8w(KernelContext& ctx, const char* op, WeightOnlyProblem p, float eps) {
  A8Activations a;
  PTERON_TRY(quantize_activations(ctx, op, p.x, p.M, p.K, p.G, eps, &a));
  auto* rows =
      static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(p.M * p.K) * sizeof(float), 64));
  PTERON_CHECK(rows != nullptr, Error::OutOfMemory,
               "%s: no scratch memory for %lld x %lld activations", op, static_cast<long long>(p.M),
               static_cast<long long>(p.K));
  parallel_for(p.M, p.K, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      const float s = a.scale[m];
      const int32_t z = a.zero[m];
      for (int64_t k = 0; k < p.K; ++k)
        rows[m * p.K + k] = static_cast<float>(a.xq[m * p.K + k] - z) * s;
    }
  });
  p.x = rows;
  run_weight_only(ctx, p, false);
  return Error::Ok;
}

Error check_weight_only_layout(const char* op, bool int4, int64_t K, int64_t G, int64_t N,
                               const Tensor& weight, const Tensor& scales, int lead) {
  PTERON_CHECK(weight.dtype() == (int4 ? ScalarType::Byte : ScalarType::Char),
               Error::InvalidArgument, "%s: weight must be %s", op,
               int4 ? "uint8 (two int4 per byte)" : "int8");
  PTERON_CHECK(G >= 1 && K % G == 0 && (!int4 || (G % 32 == 0)), Error::InvalidArgument,
               "%s: group size %lld does not divide K = %lld%s", op, static_cast<long long>(G),
               static_cast<long long>(K), int4 ? " in multiples of 32" : "");
  PTERON_CHECK(weight.dim() == lead + 2 && scales.dim() == lead + 2 && weight.size(lead) == N &&
                   weight.size(lead + 1) == (int4 ? K / 2 : K) && scales.size(lead) == N &&
                   scales.size(lead + 1) == K / G,
               Error::InvalidArgument,
               "%s: weight [.., %d, %d] / scales [.., %d, %d] do not match N = %lld, K = %lld, "
               "group %lld",
               op, weight.size(weight.dim() - 2), weight.size(weight.dim() - 1),
               scales.size(scales.dim() - 2), scales.size(scales.dim() - 1),
               static_cast<long long>(N), static_cast<long long>(K), static_cast<long long>(G));
  return Error::Ok;
}

Error check_8da4w_layout(const char* op, int64_t K, int64_t G, int64_t N, const Tensor& weight,
                         const Tensor& scales, int lead) {
  PTERON_CHECK(weight.dtype() == ScalarType::Byte, Error::InvalidArgument,
               "%s: weight must be uint8 (int4 panels)", op);
  const int64_t panels = (N + kA8W4Panel - 1) / kA8W4Panel;
  PTERON_CHECK(G >= 32 && G % 32 == 0 && K % G == 0, Error::InvalidArgument,
               "%s: group size %lld does not divide K = %lld in multiples of 32", op,
               static_cast<long long>(G), static_cast<long long>(K));
  PTERON_CHECK(weight.dim() == lead + 3 && weight.size(lead) == panels &&
                   weight.size(lead + 1) == K / 8 && weight.size(lead + 2) == 64,
               Error::InvalidArgument,
               "%s: weight must be int4 panels [%lld, %lld, 64] for N = %lld, K = %lld (a "
               "program written before the panel layout: compile it again)",
               op, static_cast<long long>(panels), static_cast<long long>(K / 8),
               static_cast<long long>(N), static_cast<long long>(K));
  PTERON_CHECK(scales.dim() == lead + 3 && scales.size(lead) == panels &&
                   scales.size(lead + 1) == K / G && scales.size(lead + 2) == kA8W4Panel,
               Error::InvalidArgument,
               "%s: scales must be [%lld, %lld, 16] for K = %lld, group %lld", op,
               static_cast<long long>(panels), static_cast<long long>(K / G),
               static_cast<long long>(K), static_cast<long long>(G));
  return Error::Ok;
}

}  // namespace pteron::opt
