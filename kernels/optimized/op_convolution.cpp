// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out) -> Tensor(a!)
// pteron::convolution_relu.out (same arguments): relu(convolution(...)) with the ReLU applied to
// each output tile as the SGEMM finishes it (compiler/passes/fuse_conv_relu.cpp makes it).
//
// float32 2-D NCHW convolutions with groups == 1 run as one SGEMM per image and block of output
// pixels: out[n][Cout][pixels] = W[Cout][Cin*kh*kw] x col[Cin*kh*kw][pixels]. 1x1, stride-1,
// unpadded convolutions use the input itself as col; the others im2col a block of pixels into
// scratch, the block sized so that col stays about L2-sized (kColFloats). Bias is written into
// the output first and the product added onto it (beta = 1). Everything else (other dtypes,
// 1-D, transposed, grouped but not depthwise, other dim orders, malformed arguments) runs the
// portable kernel, so its errors and results are the portable ones. Depthwise convolutions
// (groups == Cin == Cout: mobilenet's) run a threaded row loop (util/depthwise_conv.h).
#include <cstring>

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

// Floats of im2col matrix per SGEMM call (2 MiB). Larger blocks repack the weights less often
// (the SGEMM packs A once per call); smaller ones keep col in L2 between im2col and the SGEMM's
// packing of it. Also bounds the scratch this op needs besides the SGEMM's own.
constexpr int64_t kColFloats = int64_t{1} << 19;

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

// The unfused way for inputs the fast path does not take: the portable convolution, then ReLU
// in place (float32 contiguous out; anything else is reported as unsupported for the fused op).
Error portable_conv_relu(KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(call_portable(kConv, ctx, args));
  Tensor& out = *args[9]->tensor;
  if (out.dtype() != ScalarType::Float || !out.is_contiguous()) {
    return fail(Error::NotSupported, "%s: needs a contiguous float32 out", kConvRelu);
  }
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) data[i] = data[i] < 0.0f ? 0.0f : data[i];
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
  bool relu;
  bool pointwise;
  int64_t M, pixels, K;
};

// One block of output pixels [p0, p0 + np) of one image: im2col (unless pointwise), then the
// SGEMM into the output, direct or transposed (`ct`: np x Cout scratch). False when the SGEMM
// had no scratch.
bool conv_block(KernelContext& ctx, const ConvGemm& g, const float* x, float* y, int64_t p0,
                int64_t np, float* col, float* ct) {
  const ConvShape& s = *g.s;
  const int64_t in_plane = s.in_h * s.in_w;
  const float* b = x + p0;  // col[K][np] with row stride b_rs
  int64_t b_rs = in_plane;
  if (!g.pointwise) {
    opt::parallel_for(g.K, np,
                      [&](int64_t r0, int64_t r1) { im2col_rows(s, x, p0, np, r0, r1, col); });
    b = col;
    b_rs = np;
  }
  SgemmProblem p;
  p.K = g.K;
  p.relu = g.relu;
  if (ct != nullptr) {
    p.M = np;
    p.N = g.M;
    p.a = b;
    p.a_rs = 1;
    p.a_cs = b_rs;
    p.b = g.weight;
    p.b_rs = 1;
    p.b_cs = g.K;
    p.c = ct;
    p.c_rs = g.M;
    p.bias = g.bias;
    if (!sgemm(ctx, p)) return false;
    for (int64_t m = 0; m < g.M; ++m) {
      float* row = y + m * g.pixels + p0;
      for (int64_t j = 0; j < np; ++j) row[j] = ct[j * g.M + m];
    }
    return true;
  }
  p.M = g.M;
  p.N = np;
  p.a = g.weight;
  p.a_rs = g.K;
  p.a_cs = 1;
  p.b = b;
  p.b_rs = b_rs;
  p.b_cs = 1;
  p.c = y + p0;
  p.c_rs = g.pixels;
  if (g.bias != nullptr) {
    for (int64_t m = 0; m < g.M; ++m) {
      float* row = y + m * g.pixels + p0;
      for (int64_t j = 0; j < np; ++j) row[j] = g.bias[m];
    }
    p.beta = 1.0f;
  }
  return sgemm(ctx, p);
}

// Runs the GEMM path; false (nothing reported) when scratch ran out and the caller should run
// the portable kernel instead.
bool conv_gemm(KernelContext& ctx, const ConvShape& s, const float* input, const float* weight,
               const float* bias, float* out, bool relu) {
  ConvGemm g;
  g.s = &s;
  g.weight = weight;
  g.bias = bias;
  g.relu = relu;
  g.M = s.out_channels;
  g.pixels = s.out_h * s.out_w;
  g.K = s.in_channels * s.kernel_h * s.kernel_w;
  g.pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
                s.pad_h == 0 && s.pad_w == 0;
  // Pixels per block: all of them when col fits kColFloats, else equal blocks that do.
  int64_t block = g.pixels;
  if (!g.pointwise && g.K * g.pixels > kColFloats) {
    const int64_t blocks = (g.K * g.pixels + kColFloats - 1) / kColFloats;
    block = (g.pixels + blocks - 1) / blocks;
  }
  float* col = nullptr;
  if (!g.pointwise) {
    col = static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(g.K * block) * sizeof(float), 64));
    if (col == nullptr) return false;
  }
  float* ct = nullptr;
  if (use_transposed(block, g.M)) {
    ct = static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(block * g.M) * sizeof(float), 64));
    if (ct == nullptr) return false;
  }
  const int64_t in_image = s.in_channels * s.in_h * s.in_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t p0 = 0; p0 < g.pixels; p0 += block) {
      if (!conv_block(ctx, g, input + n * in_image, out + n * g.M * g.pixels, p0,
                      min64(block, g.pixels - p0), col, ct)) {
        return false;
      }
    }
  }
  return true;
}

Error convolution_impl(const char* kOp, bool relu, KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTtLLLBLIT"));
  auto fallback = [&]() {
    return relu ? portable_conv_relu(ctx, args) : call_portable(kConv, ctx, args);
  };
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[9]->tensor;
  if (!all_float32({&input, &weight, bias, &out}) || input.dim() != 4 || args[6]->b) {
    return fallback();
  }
  ConvShape s;
  PTERON_TRY(parse_conv_shape(kOp, args, &s));
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != s.out_channels)) {
    return fail(Error::InvalidArgument, "%s: bias must have %lld elements", kOp,
                static_cast<long long>(s.out_channels));
  }
  const bool depthwise = s.groups == s.in_channels && s.groups == s.out_channels;
  if ((s.groups != 1 && !depthwise) || (bias != nullptr && !is_row_major(*bias))) {
    return fallback();
  }
  const int32_t sizes[4] = {static_cast<int32_t>(s.batch), static_cast<int32_t>(s.out_channels),
                            static_cast<int32_t>(s.out_h), static_cast<int32_t>(s.out_w)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 4));
  if (!is_row_major(input) || !is_row_major(weight) || !is_row_major(out)) return fallback();
  if (out.numel() == 0) return Error::Ok;
  if (depthwise && s.groups > 1) {
    depthwise_conv2d_f32(s, input.data<const float>(), weight.data<const float>(),
                         bias != nullptr ? bias->data<const float>() : nullptr, out.data<float>(),
                         relu);
    return Error::Ok;
  }
  if (winograd_pays_off(s) &&
      winograd_conv(ctx, s, input.data<const float>(), weight.data<const float>(), nullptr,
                    bias != nullptr ? bias->data<const float>() : nullptr, out.data<float>(),
                    relu)) {
    return Error::Ok;
  }
  if (!conv_gemm(ctx, s, input.data<const float>(), weight.data<const float>(),
                 bias != nullptr ? bias->data<const float>() : nullptr, out.data<float>(), relu)) {
    return fallback();
  }
  return Error::Ok;
}

Error convolution_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConv, false, ctx, args);
}

Error convolution_relu_out(KernelContext& ctx, Span<EValue*> args) {
  return convolution_impl(kConvRelu, true, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::convolution.out", convolution_out);
PTERON_KERNEL("pteron::convolution_relu.out", convolution_relu_out);

}  // namespace pteron::optimized
