// AVG_POOL2D and MAX_POOL2D (NHWC). Padding is never counted: the average divides by the
// number of real elements under the window, through the spec's reciprocal_scale for integers.
#include "backends/tosa/runtime/ops/tosa_ops.h"
#include "backends/tosa/runtime/ops/tosa_scale.h"

namespace pteron::tosa_rt {
namespace {

struct PoolGeom {
  int32_t n, ih, iw, c, oh, ow;
  int32_t kernel[2], stride[2], pad[4];
};

Error prepare_pool(const OpArgs& a, const flatbuffers::Vector<int32_t>* kernel,
                   const flatbuffers::Vector<int32_t>* stride,
                   const flatbuffers::Vector<int32_t>* pad, PoolGeom* g) {
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_rank(a, in, 4, "input"));
  PTERON_TRY(expect_rank(a, out, 4, "output"));
  PTERON_TRY(read_int_vec(a, kernel, 2, "kernel", g->kernel));
  PTERON_TRY(read_int_vec(a, stride, 2, "stride", g->stride));
  PTERON_TRY(read_int_vec(a, pad, 4, "pad", g->pad));
  g->n = in.shape[0], g->ih = in.shape[1], g->iw = in.shape[2], g->c = in.shape[3];
  g->oh = out.shape[1], g->ow = out.shape[2];
  if (g->kernel[0] < 1 || g->kernel[1] < 1 || g->stride[0] < 1 || g->stride[1] < 1 ||
      g->pad[0] < 0 || g->pad[1] < 0 || g->pad[2] < 0 || g->pad[3] < 0) {
    return fail(Error::InvalidProgram, "TOSA %s: kernel and stride must be >= 1, pad >= 0",
                a.name());
  }
  int64_t oh = int64_t(g->ih) + g->pad[0] + g->pad[1] - g->kernel[0];
  int64_t ow = int64_t(g->iw) + g->pad[2] + g->pad[3] - g->kernel[1];
  if (out.shape[0] != g->n || out.shape[3] != g->c || oh < 0 || ow < 0 || oh % g->stride[0] != 0 ||
      ow % g->stride[1] != 0 || oh / g->stride[0] + 1 != g->oh || ow / g->stride[1] + 1 != g->ow) {
    return fail(Error::InvalidProgram,
                "TOSA %s: output [%d,%d,%d,%d] does not follow from input "
                "[%d,%d,%d,%d], kernel, stride and pad",
                a.name(), out.shape[0], out.shape[1], out.shape[2], out.shape[3], g->n, g->ih,
                g->iw, g->c);
  }
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  return Error::Ok;
}

// Calls fn(out_index, in_base_index_list...) per output element: visits the valid window.
template <typename Visit>
void for_each_window(const PoolGeom& g, Visit visit) {
  for (int32_t n = 0; n < g.n; ++n) {
    for (int32_t oy = 0; oy < g.oh; ++oy) {
      int32_t y0 = oy * g.stride[0] - g.pad[0];
      int32_t ylo = y0 < 0 ? 0 : y0, yhi = y0 + g.kernel[0] > g.ih ? g.ih : y0 + g.kernel[0];
      for (int32_t ox = 0; ox < g.ow; ++ox) {
        int32_t x0 = ox * g.stride[1] - g.pad[2];
        int32_t xlo = x0 < 0 ? 0 : x0, xhi = x0 + g.kernel[1] > g.iw ? g.iw : x0 + g.kernel[1];
        int64_t out_base = ((int64_t(n) * g.oh + oy) * g.ow + ox) * g.c;
        visit(n, ylo, yhi, xlo, xhi, out_base);
      }
    }
  }
}

template <typename T>
void avg_pool_int(const PoolGeom& g, const T* in, T* out, int32_t izp, int32_t ozp, int32_t lo,
                  int32_t hi) {
  for_each_window(
      g, [&](int32_t n, int32_t ylo, int32_t yhi, int32_t xlo, int32_t xhi, int64_t out_base) {
        int32_t count = (yhi - ylo) * (xhi - xlo);
        for (int32_t c = 0; c < g.c; ++c) {
          int32_t acc = 0;
          for (int32_t y = ylo; y < yhi; ++y) {
            for (int32_t x = xlo; x < xhi; ++x) {
              acc += int32_t(in[((int64_t(n) * g.ih + y) * g.iw + x) * g.c + c]) - izp;
            }
          }
          int32_t v = 0;
          if (count > 0) {
            ScaleT s = reciprocal_scale(uint32_t(count));
            v = apply_scale_32(acc, s.multiplier, s.shift, false);
          }
          out[out_base + c] = T(clip_i64(int64_t(v) + ozp, lo, hi));
        }
      });
}

void avg_pool_f32(const PoolGeom& g, const float* in, float* out) {
  for_each_window(
      g, [&](int32_t n, int32_t ylo, int32_t yhi, int32_t xlo, int32_t xhi, int64_t out_base) {
        int32_t count = (yhi - ylo) * (xhi - xlo);
        for (int32_t c = 0; c < g.c; ++c) {
          float acc = 0;
          for (int32_t y = ylo; y < yhi; ++y) {
            for (int32_t x = xlo; x < xhi; ++x)
              acc += in[((int64_t(n) * g.ih + y) * g.iw + x) * g.c + c];
          }
          out[out_base + c] = count > 0 ? acc / float(count) : 0.f;
        }
      });
}

template <typename T>
void max_pool(const PoolGeom& g, const T* in, T* out, T lowest) {
  for_each_window(
      g, [&](int32_t n, int32_t ylo, int32_t yhi, int32_t xlo, int32_t xhi, int64_t out_base) {
        for (int32_t c = 0; c < g.c; ++c) {
          T m = lowest;
          for (int32_t y = ylo; y < yhi; ++y) {
            for (int32_t x = xlo; x < xhi; ++x) {
              T v = in[((int64_t(n) * g.ih + y) * g.iw + x) * g.c + c];
              if (v > m) m = v;
            }
          }
          out[out_base + c] = m;
        }
      });
}

}  // namespace

Error run_avg_pool2d(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 3, 3));
  const auto* attr = a.fb->attribute_as_AvgPool2dAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA AVG_POOL2D: missing attribute");
  PoolGeom g{};
  PTERON_TRY(prepare_pool(a, attr->kernel(), attr->stride(), attr->pad(), &g));
  int32_t izp = 0, ozp = 0;
  PTERON_TRY(read_zero_point(a, a.in(1), "input_zp", &izp));
  PTERON_TRY(read_zero_point(a, a.in(2), "output_zp", &ozp));
  const TosaTensor &in = a.in(0), &out = a.out(0);
  switch (in.dtype) {
    case tosa::DType::INT8:
      avg_pool_int<int8_t>(g, in.as<int8_t>(), out.as<int8_t>(), izp, ozp, -128, 127);
      return Error::Ok;
    case tosa::DType::INT16:
      avg_pool_int<int16_t>(g, in.as<int16_t>(), out.as<int16_t>(), izp, ozp, -32768, 32767);
      return Error::Ok;
    case tosa::DType::FP32:
      avg_pool_f32(g, in.as<float>(), out.as<float>());
      return Error::Ok;
    default:
      return fail(Error::NotSupported, "TOSA AVG_POOL2D: dtype %s is not supported",
                  tosa::EnumNameDType(in.dtype));
  }
}

Error run_max_pool2d(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 1));
  const auto* attr = a.fb->attribute_as_MaxPool2dAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA MAX_POOL2D: missing attribute");
  PoolGeom g{};
  PTERON_TRY(prepare_pool(a, attr->kernel(), attr->stride(), attr->pad(), &g));
  const TosaTensor &in = a.in(0), &out = a.out(0);
  switch (in.dtype) {
    case tosa::DType::INT8:
      max_pool<int8_t>(g, in.as<int8_t>(), out.as<int8_t>(), -128);
      break;
    case tosa::DType::INT16:
      max_pool<int16_t>(g, in.as<int16_t>(), out.as<int16_t>(), -32768);
      break;
    case tosa::DType::FP32:
      max_pool<float>(g, in.as<float>(), out.as<float>(), -__builtin_inff());
      break;
    default:
      return fail(Error::NotSupported, "TOSA MAX_POOL2D: dtype %s is not supported",
                  tosa::EnumNameDType(in.dtype));
  }
  return Error::Ok;
}

}  // namespace pteron::tosa_rt
