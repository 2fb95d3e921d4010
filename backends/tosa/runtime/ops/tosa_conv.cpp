// CONV2D, DEPTHWISE_CONV2D and MATMUL. INT8 x INT8 accumulates in INT32 exactly as the TOSA
// reference model; FP32 accumulates in float (order differs from the reference: tolerance).
#include "backends/tosa/runtime/ops/tosa_ops.h"

namespace pteron::tosa_rt {
namespace {

struct ConvGeom {
  int32_t n, ih, iw, ic, oh, ow, oc, kh, kw;
  int32_t pad[4], stride[2], dilation[2];
  int32_t depth_mult;  // depthwise only
};

Error read_conv_attr(const OpArgs& a, const flatbuffers::Vector<int32_t>* pad,
                     const flatbuffers::Vector<int32_t>* stride,
                     const flatbuffers::Vector<int32_t>* dilation, ConvGeom* g) {
  PTERON_TRY(read_int_vec(a, pad, 4, "pad", g->pad));
  PTERON_TRY(read_int_vec(a, stride, 2, "stride", g->stride));
  PTERON_TRY(read_int_vec(a, dilation, 2, "dilation", g->dilation));
  for (int i = 0; i < 4; ++i) {
    if (g->pad[i] < 0) return fail(Error::InvalidProgram, "TOSA %s: negative pad", a.name());
  }
  for (int i = 0; i < 2; ++i) {
    if (g->stride[i] < 1 || g->dilation[i] < 1) {
      return fail(Error::InvalidProgram, "TOSA %s: stride and dilation must be >= 1", a.name());
    }
  }
  return Error::Ok;
}

Error check_out_hw(const OpArgs& a, const ConvGeom& g) {
  int64_t oh = (int64_t(g.ih) - 1 + g.pad[0] + g.pad[1] - int64_t(g.kh - 1) * g.dilation[0]);
  int64_t ow = (int64_t(g.iw) - 1 + g.pad[2] + g.pad[3] - int64_t(g.kw - 1) * g.dilation[1]);
  if (oh < 0 || ow < 0 || oh % g.stride[0] != 0 || ow % g.stride[1] != 0 ||
      oh / g.stride[0] + 1 != g.oh || ow / g.stride[1] + 1 != g.ow) {
    return fail(Error::InvalidProgram,
                "TOSA %s: output is %dx%d, input %dx%d with kernel %dx%d, pad, stride and "
                "dilation give another (or no exact) size",
                a.name(), g.oh, g.ow, g.ih, g.iw, g.kh, g.kw);
  }
  return Error::Ok;
}

template <typename InT, typename WT, typename AccT>
void conv2d_loop(const ConvGeom& g, const InT* in, const WT* w, const AccT* bias, int64_t bias_n,
                 AccT izp, AccT wzp, AccT* out) {
  for (int32_t n = 0; n < g.n; ++n) {
    for (int32_t oy = 0; oy < g.oh; ++oy) {
      for (int32_t ox = 0; ox < g.ow; ++ox) {
        AccT* o = out + ((int64_t(n) * g.oh + oy) * g.ow + ox) * g.oc;
        for (int32_t oc = 0; oc < g.oc; ++oc) {
          AccT acc = 0;
          for (int32_t ky = 0; ky < g.kh; ++ky) {
            int32_t iy = oy * g.stride[0] - g.pad[0] + ky * g.dilation[0];
            if (iy < 0 || iy >= g.ih) continue;
            for (int32_t kx = 0; kx < g.kw; ++kx) {
              int32_t ix = ox * g.stride[1] - g.pad[2] + kx * g.dilation[1];
              if (ix < 0 || ix >= g.iw) continue;
              const InT* x = in + ((int64_t(n) * g.ih + iy) * g.iw + ix) * g.ic;
              const WT* wk = w + ((int64_t(oc) * g.kh + ky) * g.kw + kx) * g.ic;
              for (int32_t c = 0; c < g.ic; ++c) acc += (AccT(x[c]) - izp) * (AccT(wk[c]) - wzp);
            }
          }
          o[oc] = acc + bias[bias_n == 1 ? 0 : oc];
        }
      }
    }
  }
}

template <typename InT, typename WT, typename AccT>
void depthwise_loop(const ConvGeom& g, const InT* in, const WT* w, const AccT* bias, int64_t bias_n,
                    AccT izp, AccT wzp, AccT* out) {
  const int32_t m = g.depth_mult;
  for (int32_t n = 0; n < g.n; ++n) {
    for (int32_t oy = 0; oy < g.oh; ++oy) {
      for (int32_t ox = 0; ox < g.ow; ++ox) {
        AccT* o = out + ((int64_t(n) * g.oh + oy) * g.ow + ox) * g.oc;
        for (int32_t oc = 0; oc < g.oc; ++oc) o[oc] = 0;
        for (int32_t ky = 0; ky < g.kh; ++ky) {
          int32_t iy = oy * g.stride[0] - g.pad[0] + ky * g.dilation[0];
          if (iy < 0 || iy >= g.ih) continue;
          for (int32_t kx = 0; kx < g.kw; ++kx) {
            int32_t ix = ox * g.stride[1] - g.pad[2] + kx * g.dilation[1];
            if (ix < 0 || ix >= g.iw) continue;
            const InT* x = in + ((int64_t(n) * g.ih + iy) * g.iw + ix) * g.ic;
            const WT* wk = w + (int64_t(ky) * g.kw + kx) * g.ic * m;
            if (m == 1) {  // the common case, as one contiguous (vectorisable) loop
              for (int32_t c = 0; c < g.ic; ++c) o[c] += (AccT(x[c]) - izp) * (AccT(wk[c]) - wzp);
              continue;
            }
            for (int32_t c = 0; c < g.ic; ++c) {
              AccT xv = AccT(x[c]) - izp;
              for (int32_t j = 0; j < m; ++j) o[c * m + j] += xv * (AccT(wk[c * m + j]) - wzp);
            }
          }
        }
        for (int32_t oc = 0; oc < g.oc; ++oc) o[oc] += bias[bias_n == 1 ? 0 : oc];
      }
    }
  }
}

// Shared validation of the five conv inputs; `depthwise` selects the weight layout
// (CONV2D [OC,KH,KW,IC], DEPTHWISE_CONV2D [KH,KW,C,M]).
Error prepare_conv(const OpArgs& a, bool depthwise, ConvGeom* g, int32_t* izp, int32_t* wzp) {
  PTERON_TRY(expect_inputs(a, 5, 5));
  const TosaTensor &in = a.in(0), &w = a.in(1), &bias = a.in(2), &out = a.out(0);
  PTERON_TRY(expect_rank(a, in, 4, "input"));
  PTERON_TRY(expect_rank(a, w, 4, "weight"));
  PTERON_TRY(expect_rank(a, bias, 1, "bias"));
  PTERON_TRY(expect_rank(a, out, 4, "output"));
  PTERON_TRY(read_zero_point(a, a.in(3), "input_zp", izp));
  PTERON_TRY(read_zero_point(a, a.in(4), "weight_zp", wzp));
  g->n = in.shape[0], g->ih = in.shape[1], g->iw = in.shape[2], g->ic = in.shape[3];
  g->oh = out.shape[1], g->ow = out.shape[2], g->oc = out.shape[3];
  if (depthwise) {
    g->kh = w.shape[0], g->kw = w.shape[1], g->depth_mult = w.shape[3];
    if (w.shape[2] != g->ic || g->ic * g->depth_mult != g->oc) {
      return fail(Error::InvalidProgram,
                  "TOSA %s: weight [%d,%d,%d,%d] does not fit input channels %d, output %d",
                  a.name(), w.shape[0], w.shape[1], w.shape[2], w.shape[3], g->ic, g->oc);
    }
  } else {
    g->kh = w.shape[1], g->kw = w.shape[2], g->depth_mult = 1;
    if (w.shape[3] != g->ic || w.shape[0] != g->oc) {
      return fail(Error::InvalidProgram,
                  "TOSA %s: weight [%d,%d,%d,%d] does not fit input channels %d, output %d",
                  a.name(), w.shape[0], w.shape[1], w.shape[2], w.shape[3], g->ic, g->oc);
    }
  }
  if (out.shape[0] != g->n || (bias.shape[0] != g->oc && bias.shape[0] != 1)) {
    return fail(Error::InvalidProgram, "TOSA %s: batch or bias size does not match the output",
                a.name());
  }
  return check_out_hw(a, *g);
}

Error dispatch_conv(const OpArgs& a, bool depthwise, const ConvGeom& g, int32_t izp, int32_t wzp) {
  const TosaTensor &in = a.in(0), &w = a.in(1), &bias = a.in(2), &out = a.out(0);
  if (in.dtype == tosa::DType::INT8 && w.dtype == tosa::DType::INT8) {
    PTERON_TRY(expect_dtype(a, bias, tosa::DType::INT32, "bias"));
    PTERON_TRY(expect_dtype(a, out, tosa::DType::INT32, "output"));
    if (depthwise) {
      depthwise_loop<int8_t, int8_t, int32_t>(g, in.as<int8_t>(), w.as<int8_t>(),
                                              bias.as<int32_t>(), bias.numel, izp, wzp,
                                              out.as<int32_t>());
    } else {
      conv2d_loop<int8_t, int8_t, int32_t>(g, in.as<int8_t>(), w.as<int8_t>(), bias.as<int32_t>(),
                                           bias.numel, izp, wzp, out.as<int32_t>());
    }
    return Error::Ok;
  }
  if (in.dtype == tosa::DType::FP32 && w.dtype == tosa::DType::FP32) {
    PTERON_TRY(expect_dtype(a, bias, tosa::DType::FP32, "bias"));
    PTERON_TRY(expect_dtype(a, out, tosa::DType::FP32, "output"));
    if (depthwise) {
      depthwise_loop<float, float, float>(g, in.as<float>(), w.as<float>(), bias.as<float>(),
                                          bias.numel, 0.f, 0.f, out.as<float>());
    } else {
      conv2d_loop<float, float, float>(g, in.as<float>(), w.as<float>(), bias.as<float>(),
                                       bias.numel, 0.f, 0.f, out.as<float>());
    }
    return Error::Ok;
  }
  return fail(Error::NotSupported,
              "TOSA %s: input %s with weight %s is not supported (INT8 or "
              "FP32)",
              a.name(), tosa::EnumNameDType(in.dtype), tosa::EnumNameDType(w.dtype));
}

}  // namespace

Error run_conv2d(const OpArgs& a) {
  const auto* attr = a.fb->attribute_as_Conv2dAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA CONV2D: missing attribute");
  ConvGeom g{};
  int32_t izp = 0, wzp = 0;
  PTERON_TRY(read_conv_attr(a, attr->pad(), attr->stride(), attr->dilation(), &g));
  PTERON_TRY(prepare_conv(a, false, &g, &izp, &wzp));
  return dispatch_conv(a, false, g, izp, wzp);
}

Error run_depthwise_conv2d(const OpArgs& a) {
  const auto* attr = a.fb->attribute_as_DepthwiseConv2dAttribute();
  if (attr == nullptr) {
    return fail(Error::InvalidProgram, "TOSA DEPTHWISE_CONV2D: missing attribute");
  }
  ConvGeom g{};
  int32_t izp = 0, wzp = 0;
  PTERON_TRY(read_conv_attr(a, attr->pad(), attr->stride(), attr->dilation(), &g));
  PTERON_TRY(prepare_conv(a, true, &g, &izp, &wzp));
  return dispatch_conv(a, true, g, izp, wzp);
}

namespace {
template <typename InT, typename AccT>
void matmul_loop(const InT* A, const InT* B, AccT* C, int32_t n, int32_t h, int32_t c, int32_t w,
                 AccT azp, AccT bzp) {
  for (int32_t b = 0; b < n; ++b) {
    const InT* a0 = A + int64_t(b) * h * c;
    const InT* b0 = B + int64_t(b) * c * w;
    AccT* c0 = C + int64_t(b) * h * w;
    for (int32_t y = 0; y < h; ++y) {
      AccT* row = c0 + int64_t(y) * w;
      for (int32_t x = 0; x < w; ++x) row[x] = 0;
      for (int32_t k = 0; k < c; ++k) {
        AccT av = AccT(a0[int64_t(y) * c + k]) - azp;
        const InT* brow = b0 + int64_t(k) * w;
        for (int32_t x = 0; x < w; ++x) row[x] += av * (AccT(brow[x]) - bzp);
      }
    }
  }
}
}  // namespace

Error run_matmul(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 4, 4));
  const TosaTensor &A = a.in(0), &B = a.in(1), &C = a.out(0);
  PTERON_TRY(expect_rank(a, A, 3, "A"));
  PTERON_TRY(expect_rank(a, B, 3, "B"));
  PTERON_TRY(expect_rank(a, C, 3, "output"));
  int32_t azp = 0, bzp = 0;
  PTERON_TRY(read_zero_point(a, a.in(2), "A_zp", &azp));
  PTERON_TRY(read_zero_point(a, a.in(3), "B_zp", &bzp));
  int32_t n = A.shape[0], h = A.shape[1], c = A.shape[2], w = B.shape[2];
  if (B.shape[0] != n || B.shape[1] != c || C.shape[0] != n || C.shape[1] != h || C.shape[2] != w) {
    return fail(Error::InvalidProgram,
                "TOSA MATMUL: shapes [%d,%d,%d] x [%d,%d,%d] -> "
                "[%d,%d,%d] do not match",
                n, h, c, B.shape[0], B.shape[1], B.shape[2], C.shape[0], C.shape[1], C.shape[2]);
  }
  if (A.dtype == tosa::DType::INT8 && B.dtype == tosa::DType::INT8) {
    PTERON_TRY(expect_dtype(a, C, tosa::DType::INT32, "output"));
    matmul_loop<int8_t, int32_t>(A.as<int8_t>(), B.as<int8_t>(), C.as<int32_t>(), n, h, c, w, azp,
                                 bzp);
    return Error::Ok;
  }
  if (A.dtype == tosa::DType::FP32 && B.dtype == tosa::DType::FP32) {
    PTERON_TRY(expect_dtype(a, C, tosa::DType::FP32, "output"));
    matmul_loop<float, float>(A.as<float>(), B.as<float>(), C.as<float>(), n, h, c, w, 0.f, 0.f);
    return Error::Ok;
  }
  return fail(Error::NotSupported, "TOSA MATMUL: %s x %s is not supported (INT8 or FP32)",
              tosa::EnumNameDType(A.dtype), tosa::EnumNameDType(B.dtype));
}

}  // namespace pteron::tosa_rt
