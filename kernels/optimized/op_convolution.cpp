// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out) -> Tensor(a!)
// pteron::convolution_relu.out (same arguments): relu(convolution(...)) with the ReLU applied to
// each output tile as the SGEMM finishes it, and pteron::convolution_add_relu.out (the same plus
// Tensor other): relu(convolution(...) + other), resnet's block ending, and
// pteron::convolution_clamp.out (the nine plus Scalar min, Scalar max): clamp(convolution(...),
// min, max), ReLU6 and hardtanh after a convolution, pteron::convolution_silu.out (the nine):
// silu(convolution(...)), EfficientNet's and YOLO's, and pteron::convolution_hardswish.out (the
// nine): hardswish(convolution(...)), MobileNetV3's (all made by
// compiler/passes/fuse_conv_relu.cpp).
//
// float32 2-D NCHW convolutions with groups == 1 run as one SGEMM per image (1-D ones, [N, C, W],
// as 2-D ones of height 1):
// out[n][Cout][pixels] = W[Cout][Cin*kh*kw] x col[Cin*kh*kw][pixels]. 1x1, stride-1, unpadded
// convolutions use the input itself as col; for the others the SGEMM packs col's panels straight
// from the input (SgemmBPacker), so col is never stored. Bias (and convolution_add_relu's
// residual) go in through the SGEMM's row_bias and addend: each task writes them into its C
// block before adding the product onto it. Few pixels and many channels run transposed (see
// use_transposed), with col im2col'd into scratch in blocks of at most kColFloats. Depthwise
// convolutions (groups == Cin == Cout: mobilenet's) run threaded SIMD rows, the activation fused
// (util/depthwise_conv.h); other groupings with several input channels per group one SGEMM per
// image and group (grouped_conv_gemm). Transposed convolutions (1-D and 2-D, any groups) run an
// SGEMM and col2im (util/conv_transpose.h).
// Everything else (other dtypes, other dim orders, malformed arguments) runs the
// portable kernel, so its errors and results are the
// portable ones.
#include <cstring>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/conv_output.h"
#include "kernels/optimized/util/conv_transpose.h"
#include "kernels/optimized/util/depthwise_conv.h"
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/optimized/util/winograd.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kConv = "aten::convolution.out";
constexpr const char* kConvRelu = "pteron::convolution_relu.out";
constexpr const char* kConvAddRelu = "pteron::convolution_add_relu.out";
constexpr const char* kConvClamp = "pteron::convolution_clamp.out";
constexpr const char* kConvSilu = "pteron::convolution_silu.out";
constexpr const char* kConvHardswish = "pteron::convolution_hardswish.out";
constexpr const char* kConvScaled = "pteron::convolution_scaled.out";

// Floats of stored im2col matrix per SGEMM call in the transposed form (2 MiB): bounds the
// scratch this op needs besides the SGEMM's own (the direct form stores none).
constexpr int64_t kColFloats = int64_t{1} << 19;

// opt::parallel_for work units per stored im2col value. Counted as 1, layer3/4's im2col ran on
// the calling thread while the other waited for the SGEMM; threaded, resnet-18's layer4 took
// 8.7-10.0 ms at 2 threads against 10.1-11.5 (8 interleaved profile rounds, each faster).
constexpr int64_t kIm2colWork = 16;

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// Smallest ow with ow * stride >= x (x may be negative).
int64_t ceil_div_floor0(int64_t x, int64_t stride) {
  if (x <= 0) return 0;
  return (x + stride - 1) / stride;
}

// Rows [r0, r1) of the im2col matrix for output pixels [p0, p0 + np) of one image: row
// r = (c * kh + ki) * kw + kj holds, per pixel, the input value its kernel tap (ki, kj) of
// channel c reads (0 in the padding). `col` is [K][np].
void im2col_rows(const ConvShape& s, const float* x, int64_t p0, int64_t np, int64_t r0, int64_t r1,
                 float* col) {
  const int64_t ow_n = s.out_w;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t kj = r % s.kernel_w, ki = r / s.kernel_w % s.kernel_h;
    const int64_t c = r / (s.kernel_w * s.kernel_h);
    const float* plane = x + c * s.in_h * s.in_w;
    float* dst = col + r * np;
    // Output columns whose tap lands inside the row: lo <= ow < hi.
    const int64_t off_w = kj * s.dilation_w - s.pad_w;
    const int64_t lo = min64(ceil_div_floor0(-off_w, s.stride_w), ow_n);
    const int64_t hi = s.in_w - off_w <= 0 ? 0 : min64(ow_n, (s.in_w - off_w - 1) / s.stride_w + 1);
    int64_t p = p0;
    const int64_t p_end = p0 + np;
    while (p < p_end) {
      const int64_t oh = p / ow_n, ow0 = p % ow_n;
      const int64_t ow1 = min64(ow_n, ow0 + (p_end - p));
      float* d = dst + (p - p0) - ow0;  // d[ow] is pixel (oh, ow)
      const int64_t ih = oh * s.stride_h - s.pad_h + ki * s.dilation_h;
      if (ih < 0 || ih >= s.in_h) {
        std::memset(d + ow0, 0, static_cast<size_t>(ow1 - ow0) * sizeof(float));
      } else {
        const float* src = plane + ih * s.in_w + off_w;  // src[ow * stride_w] is the tap
        const int64_t a = max64(ow0, min64(lo, ow1)), b = max64(a, min64(hi, ow1));
        for (int64_t ow = ow0; ow < a; ++ow) d[ow] = 0.0f;
        if (s.stride_w == 1) {
          std::memcpy(d + a, src + a, static_cast<size_t>(b - a) * sizeof(float));
        } else {
          for (int64_t ow = a; ow < b; ++ow) d[ow] = src[ow * s.stride_w];
        }
        for (int64_t ow = b; ow < ow1; ++ow) d[ow] = 0.0f;
      }
      p += ow1 - ow0;
    }
  }
}

// The im2col matrix of one image as the SGEMM's B, packed straight from the input
// (SgemmBPacker): the matrix is never stored, so a 3x3 layer no longer writes 9x its input to
// memory and reads it back (a third of the layer's time with an explicit col).
struct ImplicitIm2col {
  const ConvShape* s;
  const float* x;  // the image
};

// Rows per pass of the per-row table (the SGEMM's K blocks are at most 256 deep).
constexpr int64_t kTableRows = 64;
// Pieces of output rows one panel can span: a panel is at most 64 pixels (NR <= 64), each
// piece at least one pixel.
constexpr int64_t kMaxPanelPieces = 65;

void pack_im2col(const void* context, int64_t /*batch*/, int64_t k0, int64_t kc, int64_t j0,
                 int64_t nc, int nr, float* dst) {
  const ImplicitIm2col& g = *static_cast<const ImplicitIm2col*>(context);
  const ConvShape& s = *g.s;
  const int64_t ow_n = s.out_w;
  for (int64_t r0 = 0; r0 < kc; r0 += kTableRows) {
    const int64_t rows = min64(kTableRows, kc - r0);
    // Where each row's tap reads, computed once per pass (divisions are slow): plane and the
    // tap's row offset; output columns lo <= ow < hi land inside the input row.
    int64_t plane[kTableRows], ih_off[kTableRows], w_off[kTableRows], lo[kTableRows],
        hi[kTableRows];
    for (int64_t k = 0; k < rows; ++k) {
      const int64_t r = k0 + r0 + k;
      const int64_t kj = r % s.kernel_w, ki = r / s.kernel_w % s.kernel_h;
      plane[k] = r / (s.kernel_w * s.kernel_h) * s.in_h * s.in_w;
      ih_off[k] = ki * s.dilation_h - s.pad_h;
      const int64_t off = kj * s.dilation_w - s.pad_w;
      w_off[k] = off;
      lo[k] = min64(ceil_div_floor0(-off, s.stride_w), ow_n);
      hi[k] = s.in_w - off <= 0 ? 0 : min64(ow_n, (s.in_w - off - 1) / s.stride_w + 1);
    }
    for (int64_t p = 0; p < nc; p += nr) {
      const int64_t w = min64(nr, nc - p);
      float* panel = dst + p * kc + r0 * nr;  // panel p / nr: kc x nr, from row r0
      // The panel's pixels as pieces of output rows (once per panel, not per row).
      int64_t seg_oh[kMaxPanelPieces], seg_ow0[kMaxPanelPieces], seg_ow1[kMaxPanelPieces],
          seg_at[kMaxPanelPieces];
      int64_t pieces = 0;
      for (int64_t pix = j0 + p, at = 0; at < w; ++pieces) {
        const int64_t oh = pix / ow_n, ow0 = pix % ow_n, ow1 = min64(ow_n, ow0 + (w - at));
        seg_oh[pieces] = oh;
        seg_ow0[pieces] = ow0;
        seg_ow1[pieces] = ow1;
        seg_at[pieces] = at;
        at += ow1 - ow0;
        pix += ow1 - ow0;
      }
      for (int64_t k = 0; k < rows; ++k) {
        float* d_row = panel + k * nr;
        for (int64_t q = 0; q < pieces; ++q) {
          const int64_t oh = seg_oh[q], ow0 = seg_ow0[q], ow1 = seg_ow1[q];
          float* d = d_row + seg_at[q] - ow0;  // d[ow] is pixel (oh, ow)
          const int64_t ih = oh * s.stride_h + ih_off[k];
          if (ih < 0 || ih >= s.in_h) {
            for (int64_t ow = ow0; ow < ow1; ++ow) d[ow] = 0.0f;
          } else {
            const float* src = g.x + plane[k] + ih * s.in_w + w_off[k];
            const int64_t a = max64(ow0, min64(lo[k], ow1)), b = max64(a, min64(hi[k], ow1));
            for (int64_t ow = ow0; ow < a; ++ow) d[ow] = 0.0f;
            if (s.stride_w == 1) {
              for (int64_t ow = a; ow < b; ++ow) d[ow] = src[ow];
            } else if (s.stride_w == 2) {
              for (int64_t ow = a; ow < b; ++ow) d[ow] = src[ow * 2];
            } else {
              for (int64_t ow = a; ow < b; ++ow) d[ow] = src[ow * s.stride_w];
            }
            for (int64_t ow = b; ow < ow1; ++ow) d[ow] = 0.0f;
          }
        }
        for (int64_t j = w; j < nr; ++j) d_row[j] = 0.0f;
      }
    }
  }
}

// The unfused way for inputs the fast path does not take: the portable convolution (args in
// aten::convolution.out's order), then + residual (if any) and the activation in place (float32
// contiguous out and residual; anything else is reported as unsupported for the fused op).
Error portable_conv_activation(const char* op, KernelContext& ctx, Span<EValue*> args,
                               const Tensor* residual, const OutputActivation& activation) {
  PTERON_TRY(call_portable(kConv, ctx, args));
  Tensor& out = *args[9]->tensor;
  if (out.dtype() != ScalarType::Float || !out.is_contiguous() ||
      (residual != nullptr && (residual->dtype() != ScalarType::Float ||
                               !residual->is_contiguous() || residual->numel() != out.numel()))) {
    return fail(Error::NotSupported, "%s: needs a contiguous float32 out and other of its shape",
                op);
  }
  float* data = out.data<float>();
  const float* r = residual != nullptr ? residual->data<const float>() : nullptr;
  if (r != nullptr) {
    for (int64_t i = 0; i < out.numel(); ++i) data[i] += r[i];
  }
  activation.apply_rows(data, 0, 1, out.numel());
  return Error::Ok;
}

// Whether to compute a pixel block transposed, out^T[pixels][Cout] = col^T x W^T: for few
// pixels and many channels (resnet-18's layer3/4: 196 and 49 pixels, 256 and 512 channels). The
// SGEMM packs its A operand whole, once per call, and B per K block in L2; in the direct form A
// is the weights (layer4: 9 MiB packed to memory and read back per call) and the pixels are the
// N dimension, padded to whole 32-wide panels (49 -> 64). Transposed, the small col matrix is
// A, the weights stream through B's L2-sized blocks and the bias is the SGEMM's column bias; the
// result, pixels x Cout, is then transposed into the NCHW output.
bool use_transposed(int64_t pixels, int64_t cout) { return pixels < cout; }

struct ConvGemm {
  const ConvShape* s;
  const float* weight;
  const float* bias;
  const float* residual;  // added before the activation (all images), or null
  // The weights' constant cache when they are a program constant: the SGEMM packs them once,
  // as A in the direct form and as B transposed (SgemmProblem::a_cache / b_cache).
  ConstantCache* weight_cache;
  OutputActivation activation;
  bool pointwise;
  int64_t M, pixels, K;
  // convolution_scaled's input channel scale for the image being computed, one value per K
  // step (the channel's value repeated over its taps), or null.
  const float* k_scale = nullptr;
};

// One block of output pixels [p0, p0 + np) of one image: the SGEMM into the output, direct
// (B: the input itself when pointwise, else im2col packed from the input) or transposed (`ct`:
// np x Cout scratch; A: the block im2col'd into `col` unless pointwise). False when the SGEMM
// had no scratch.
bool conv_block(KernelContext& ctx, const ConvGemm& g, const float* x, const float* res, float* y,
                int64_t p0, int64_t np, float* col, float* ct) {
  const ConvShape& s = *g.s;
  const int64_t in_plane = s.in_h * s.in_w;
  const float* b = x + p0;  // col[K][np] with row stride b_rs
  int64_t b_rs = in_plane;
  const ImplicitIm2col implicit{&s, x};
  const SgemmBPacker packer{&pack_im2col, &implicit};
  if (!g.pointwise && col != nullptr) {
    // Work per value counted as kIm2colWork (short strided gathers, bounds and padding per
    // row), so that resnet-18's layer3/4 im2col (451K and 225K values) is threaded.
    opt::parallel_for(g.K, np * kIm2colWork,
                      [&](int64_t r0, int64_t r1) { im2col_rows(s, x, p0, np, r0, r1, col); });
    b = col;
    b_rs = np;
  }
  SgemmProblem p;
  p.K = g.K;
  p.activation = g.activation;
  if (ct != nullptr) {
    if (res != nullptr) p.activation = OutputActivation{};  // after adding the residual, below
    p.M = np;
    p.N = g.M;
    p.a = b;
    p.a_rs = 1;
    p.a_cs = b_rs;
    p.b = g.weight;
    p.b_rs = 1;
    p.b_cs = g.K;
    p.b_cache = g.weight_cache;
    p.a_col_scale = g.k_scale;
    p.c = ct;
    p.c_rs = g.M;
    p.bias = g.bias;
    if (!sgemm(ctx, p)) return false;
    if (res == nullptr) {
      // ct [np][Cout] -> y [Cout][pixels]: SIMD transposes of channel blocks on threads.
      const opt::IsaKernels& isa = opt::isa_kernels();
      constexpr int64_t kChannels = 64;
      opt::parallel_for(
          (g.M + kChannels - 1) / kChannels, np * kChannels, [&](int64_t b0, int64_t b1) {
            const int64_t m0 = b0 * kChannels, m1 = min64(g.M, b1 * kChannels);
            isa.transpose(ct + m0, g.M, y + m0 * g.pixels + p0, g.pixels, np, m1 - m0);
          });
      return true;
    }
    for (int64_t m = 0; m < g.M; ++m) {
      float* row = y + m * g.pixels + p0;
      const float* r = res + m * g.pixels + p0;
      for (int64_t j = 0; j < np; ++j) {
        const float v = ct[j * g.M + m] + r[j];
        row[j] = g.activation.apply(v);
      }
    }
    return true;
  }
  p.M = g.M;
  p.N = np;
  p.a = g.weight;
  p.a_rs = g.K;
  p.a_cs = 1;
  p.a_cache = g.weight_cache;
  p.b = b;
  p.b_rs = b_rs;
  p.b_cs = 1;
  if (!g.pointwise && col == nullptr) p.b_packer = &packer;  // the whole image, packed directly
  p.c = y + p0;
  p.c_rs = g.pixels;
  // The SGEMM's tasks write bias (+ residual) into their own C blocks before adding the
  // product onto them: in parallel, and while the block is in cache.
  p.row_bias = g.bias;
  p.addend = res != nullptr ? res + p0 : nullptr;
  p.b_row_scale = g.k_scale;
  return sgemm(ctx, p);
}

// Input channel scales of a convolution_scaled: `values` per image `image_stride` apart (0:
// one set for every image).
struct ChannelScale {
  const float* values = nullptr;
  int64_t image_stride = 0;
};

// Runs the GEMM path; false (nothing reported) when scratch ran out and the caller should run
// the portable kernel instead.
bool conv_gemm(KernelContext& ctx, const ConvShape& s, const float* input, const float* weight,
               ConstantCache* weight_cache, const float* bias, const float* residual, float* out,
               const OutputActivation& activation, const ChannelScale& scale = {}) {
  ConvGemm g;
  g.s = &s;
  g.weight = weight;
  g.bias = bias;
  g.residual = residual;
  g.weight_cache = weight_cache;
  g.activation = activation;
  g.M = s.out_channels;
  g.pixels = s.out_h * s.out_w;
  g.K = s.in_channels * s.kernel_h * s.kernel_w;
  g.pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
                s.pad_h == 0 && s.pad_w == 0;
  // The direct form packs im2col straight from the input: one SGEMM per image, no col. The
  // transposed form (col is its A, which the SGEMM packs from memory) im2cols blocks of pixels
  // into scratch: all of them when col fits kColFloats, else equal blocks that do.
  const bool transposed = use_transposed(g.pixels, g.M);
  int64_t block = g.pixels;
  if (transposed && !g.pointwise && g.K * g.pixels > kColFloats) {
    const int64_t blocks = (g.K * g.pixels + kColFloats - 1) / kColFloats;
    block = (g.pixels + blocks - 1) / blocks;
  }
  float* col = nullptr;
  float* ct = nullptr;
  if (transposed) {
    if (!g.pointwise) {
      col = static_cast<float*>(
          ctx.allocate_scratch(static_cast<size_t>(g.K * block) * sizeof(float), 64));
      if (col == nullptr) return false;
    }
    ct = static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(block * g.M) * sizeof(float), 64));
    if (ct == nullptr) return false;
  }
  float* k_scale = nullptr;
  if (scale.values != nullptr) {
    k_scale =
        static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(g.K) * sizeof(float), 64));
    if (k_scale == nullptr) return false;
    g.k_scale = k_scale;
  }
  const int64_t in_image = s.in_channels * s.in_h * s.in_w, taps = s.kernel_h * s.kernel_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    if (k_scale != nullptr) {
      const float* c = scale.values + n * scale.image_stride;
      for (int64_t k = 0; k < g.K; ++k) k_scale[k] = c[k / taps];
    }
    for (int64_t p0 = 0; p0 < g.pixels; p0 += block) {
      const float* res = residual != nullptr ? residual + n * g.M * g.pixels : nullptr;
      if (!conv_block(ctx, g, input + n * in_image, res, out + n * g.M * g.pixels, p0,
                      min64(block, g.pixels - p0), col, ct)) {
        return false;
      }
    }
  }
  return true;
}

// Grouped convolutions (groups > 1 that are not depthwise: ResNeXt's, RegNet's, ShuffleNet's)
// as one SGEMM per image and group over that group's contiguous channel slices of the input,
// weight, bias, residual and output; each call's scratch is given back before the next. False
// when the SGEMM had no scratch (the caller runs the portable kernel).
bool grouped_conv_gemm(KernelContext& ctx, const ConvShape& s, const float* input,
                       const float* weight, ConstantCache* weight_cache, const float* bias,
                       const float* residual, float* out, const OutputActivation& activation) {
  ConvShape g = s;
  g.batch = 1;
  g.groups = 1;
  g.in_channels = s.in_per_group();
  g.out_channels = s.out_per_group();
  const int64_t in_slice = g.in_channels * s.in_h * s.in_w;
  const int64_t out_slice = g.out_channels * s.out_h * s.out_w;
  const int64_t w_slice = g.out_channels * g.in_channels * s.kernel_h * s.kernel_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t grp = 0; grp < s.groups; ++grp) {
      const int64_t in_at = (n * s.groups + grp) * in_slice;
      const int64_t out_at = (n * s.groups + grp) * out_slice;
      const size_t mark = ctx.scratch_mark();
      if (!conv_gemm(ctx, g, input + in_at, weight + grp * w_slice, weight_cache,
                     bias != nullptr ? bias + grp * g.out_channels : nullptr,
                     residual != nullptr ? residual + out_at : nullptr, out + out_at, activation)) {
        return false;
      }
      ctx.release_scratch(mark);
    }
  }
  return true;
}

// `args` in aten::convolution.out's order; `residual` (convolution_add_relu's other) or null;
// `scale` (convolution_scaled's input channel scale, [1 or N, Cin, 1, 1]) or null. A scaled
// convolution has no portable form: what the SGEMM path does not take is refused.
Error convolution_impl(const char* kOp, const OutputActivation& activation, const Tensor* residual,
                       KernelContext& ctx, Span<EValue*> args, const Tensor* scale = nullptr) {
  auto fallback = [&]() {
    if (scale != nullptr) {
      return fail(Error::NotSupported,
                  "%s: takes float32 row-major NCHW tensors, a 2-D convolution with groups 1 "
                  "and scratch for it",
                  kOp);
    }
    return activation.active() || residual != nullptr
               ? portable_conv_activation(kOp, ctx, args, residual, activation)
               : call_portable(kConv, ctx, args);
  };
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[9]->tensor;
  // A 1-D convolution ([N, C, W], audio and sequence nets) is the 2-D one with a height of 1:
  // the same memory, parse_conv_shape's kernel_h = out_h = 1.
  const bool one_d = input.dim() == 3 && scale == nullptr;
  const bool transposed = args[6]->b;
  if (!all_float32({&input, &weight, bias, &out, residual, scale}) ||
      (input.dim() != 4 && !one_d) || (transposed && (residual != nullptr || scale != nullptr))) {
    return fallback();
  }
  ConvShape s;
  PTERON_TRY(parse_conv_shape(kOp, args, &s));
  if (transposed) {
    PTERON_TRY(check_conv_output(kOp, s, bias, out, nullptr, input.dim()));
    if (!is_row_major(input) || !is_row_major(weight) || !is_row_major(out) ||
        (bias != nullptr && !is_row_major(*bias))) {
      return fallback();
    }
    if (out.numel() == 0) return Error::Ok;
    if (!conv_transpose2d_f32(ctx, s, input.data<const float>(), weight.data<const float>(),
                              constant_cache_of(weight),
                              bias != nullptr ? bias->data<const float>() : nullptr,
                              out.data<float>(), activation)) {
      return fallback();
    }
    return Error::Ok;
  }
  const bool depthwise = s.groups == s.in_channels && s.groups == s.out_channels;
  if ((s.groups != 1 && scale != nullptr) || (bias != nullptr && !is_row_major(*bias))) {
    return fallback();
  }
  if (scale != nullptr &&
      (scale->dim() != 4 || (scale->size(0) != 1 && scale->size(0) != s.batch) ||
       scale->size(1) != s.in_channels || scale->size(2) != 1 || scale->size(3) != 1)) {
    return fail(Error::InvalidArgument, "%s: scale must be [1 or %lld, %lld, 1, 1]", kOp,
                static_cast<long long>(s.batch), static_cast<long long>(s.in_channels));
  }
  PTERON_TRY(check_conv_output(kOp, s, bias, out, residual, input.dim()));
  if (residual != nullptr) {
    if (!is_row_major(*residual) || (depthwise && s.groups > 1)) return fallback();
  }
  if (!is_row_major(input) || !is_row_major(weight) || !is_row_major(out) ||
      (scale != nullptr && !is_row_major(*scale))) {
    return fallback();
  }
  if (out.numel() == 0) return Error::Ok;
  if (depthwise && s.groups > 1) {
    depthwise_conv2d_f32(s, input.data<const float>(), weight.data<const float>(),
                         bias != nullptr ? bias->data<const float>() : nullptr, out.data<float>(),
                         activation);
    return Error::Ok;
  }
  if (s.groups > 1) {
    // One input channel per group (a depthwise channel multiplier) would make SGEMMs of K = the
    // taps alone: the portable loop.
    if (s.in_per_group() == 1) return fallback();
    if (!grouped_conv_gemm(ctx, s, input.data<const float>(), weight.data<const float>(),
                           constant_cache_of(weight),
                           bias != nullptr ? bias->data<const float>() : nullptr,
                           residual != nullptr ? residual->data<const float>() : nullptr,
                           out.data<float>(), activation)) {
      return fallback();
    }
    return Error::Ok;
  }
  // Winograd's output transform fuses a ReLU only; other activations and a scale take the SGEMM.
  if (scale == nullptr && (!activation.active() || activation.is_relu()) && winograd_pays_off(s) &&
      winograd_conv(ctx, s, input.data<const float>(), weight.data<const float>(), nullptr,
                    bias != nullptr ? bias->data<const float>() : nullptr,
                    residual != nullptr ? residual->data<const float>() : nullptr,
                    out.data<float>(), activation.is_relu())) {
    return Error::Ok;
  }
  const ChannelScale channel_scale{scale != nullptr ? scale->data<const float>() : nullptr,
                                   scale != nullptr && scale->size(0) != 1 ? s.in_channels : 0};
  if (!conv_gemm(ctx, s, input.data<const float>(), weight.data<const float>(),
                 constant_cache_of(weight), bias != nullptr ? bias->data<const float>() : nullptr,
                 residual != nullptr ? residual->data<const float>() : nullptr, out.data<float>(),
                 activation, channel_scale)) {
    return fallback();
  }
  return Error::Ok;
}

Error convolution_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConv, OutputActivation{}, nullptr, ctx, args);
}

Error convolution_relu_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConvRelu, OutputActivation::relu(), nullptr, ctx, args);
}

// pteron::convolution_clamp.out(<convolution's nine>, Scalar min, Scalar max, *, Tensor(a!) out)
Error convolution_clamp_out(KernelContext& ctx, Span<EValue*> args) {
  EValue* conv_args[10];
  for (int i = 0; i < 9; ++i) conv_args[i] = args[i];
  conv_args[9] = args[11];
  const OutputActivation clamp{static_cast<float>(args[9]->scalar_as_double()),
                               static_cast<float>(args[10]->scalar_as_double())};
  return convolution_impl(kConvClamp, clamp, nullptr, ctx, Span<EValue*>(conv_args, 10));
}

// pteron::convolution_scaled.out(<convolution's nine>, Tensor scale, *, Tensor(a!) out):
// convolution(input * scale, ...) for scale [1 or N, Cin, 1, 1] (a squeeze-excite gate before
// MobileNetV3's and EfficientNet's projection): the SGEMM scales its input operand's K steps as
// it packs them, so the gated activation is never written. float32, 2-D, groups 1, row-major
// only (what fuse_conv_relu makes it for); anything else is refused (convolution_impl).
Error convolution_scaled_out(KernelContext& ctx, Span<EValue*> args) {
  EValue* conv_args[10];
  for (int i = 0; i < 9; ++i) conv_args[i] = args[i];
  conv_args[9] = args[10];
  return convolution_impl(kConvScaled, OutputActivation{}, nullptr, ctx,
                          Span<EValue*>(conv_args, 10), args[9]->tensor);
}

// pteron::convolution_silu.out and pteron::convolution_hardswish.out(<convolution's nine>, *,
// Tensor(a!) out): the SiLU / hardswish goes over each SGEMM task's block (or depthwise rows)
// while it is in cache, not over the whole tensor after.
Error convolution_silu_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConvSilu, OutputActivation::only(OutputFunction::kSilu), nullptr, ctx,
                          args);
}

Error convolution_hardswish_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConvHardswish, OutputActivation::only(OutputFunction::kHardswish),
                          nullptr, ctx, args);
}

// pteron::convolution_add_relu.out(<convolution's nine>, Tensor other, *, Tensor(a!) out):
// relu(convolution + other) with `other` written into the output before the product is added
// onto it (transposed form: added as the result is transposed), so the residual add and the
// ReLU cost no pass of their own.
Error convolution_add_relu_out(KernelContext& ctx, Span<EValue*> args) {
  EValue* conv_args[10];
  for (int i = 0; i < 9; ++i) conv_args[i] = args[i];
  conv_args[9] = args[10];
  return convolution_impl(kConvAddRelu, OutputActivation::relu(), args[9]->tensor, ctx,
                          Span<EValue*>(conv_args, 10));
}

}  // namespace

PTERON_KERNEL("aten::convolution.out", convolution_out, "TTtLLLBLIT");
PTERON_KERNEL("pteron::convolution_relu.out", convolution_relu_out, "TTtLLLBLIT");
PTERON_KERNEL("pteron::convolution_add_relu.out", convolution_add_relu_out, "TTtLLLBLITT");
PTERON_KERNEL("pteron::convolution_clamp.out", convolution_clamp_out, "TTtLLLBLISST");
PTERON_KERNEL("pteron::convolution_silu.out", convolution_silu_out, "TTtLLLBLIT");
PTERON_KERNEL("pteron::convolution_hardswish.out", convolution_hardswish_out, "TTtLLLBLIT");
PTERON_KERNEL("pteron::convolution_scaled.out", convolution_scaled_out, "TTtLLLBLITT");

}  // namespace pteron::optimized
