// RESIZE (TOSA 1.0, NHWC): NEAREST and BILINEAR for int8 (nearest -> int8, bilinear -> int32
// holding the interpolation times scale_y_n * scale_x_n, as the reference model) and fp32.
// Output pixel o of an axis reads source coordinate (o * scale_d + offset) / scale_n; bilinear
// clamps both taps to the image, nearest rounds half up, then clamps.

#include "backends/tosa/runtime/ops/tosa_ops.h"

namespace pteron::tosa_rt {
namespace {

Error read_shape(const OpArgs& a, const TosaTensor& t, int64_t n, const char* what, int64_t* out) {
  if (!t.is_shape || t.data == nullptr || t.numel != n) {
    return fail(Error::InvalidProgram, "TOSA RESIZE: %s must be a constant shape of %lld values",
                what, (long long)n);
  }
  for (int64_t i = 0; i < n; ++i) out[i] = load_int(t, i);
  return Error::Ok;
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

}  // namespace

Error run_resize(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 4, 4));
  const auto* attr = a.fb->attribute_as_ResizeAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA RESIZE: missing attribute");
  const bool bilinear = attr->mode() == tosa::ResizeMode::BILINEAR;
  if (!bilinear && attr->mode() != tosa::ResizeMode::NEAREST) {
    return fail(Error::InvalidProgram, "TOSA RESIZE: unknown mode");
  }
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_rank(a, in, 4, "input"));
  PTERON_TRY(expect_rank(a, out, 4, "output"));
  const bool fp = in.dtype == tosa::DType::FP32;
  if (!fp && in.dtype != tosa::DType::INT8) {
    return fail(Error::NotSupported, "TOSA RESIZE: input '%s' is %s (int8 and fp32 run here)",
                in.name, tosa::EnumNameDType(in.dtype));
  }
  const tosa::DType out_dtype = fp         ? tosa::DType::FP32
                                : bilinear ? tosa::DType::INT32
                                           : tosa::DType::INT8;
  PTERON_TRY(expect_dtype(a, out, out_dtype, "output"));
  int64_t scale[4], offset[2], border[2];
  PTERON_TRY(read_shape(a, a.in(1), 4, "scale", scale));
  PTERON_TRY(read_shape(a, a.in(2), 2, "offset", offset));
  PTERON_TRY(read_shape(a, a.in(3), 2, "border", border));
  const int64_t n_[2] = {scale[0], scale[2]}, d_[2] = {scale[1], scale[3]};
  for (int i = 0; i < 2; ++i) {
    const int64_t n = n_[i], d = d_[i], ih = in.shape[1 + i], oh = out.shape[1 + i];
    // The limits keep every product below in int64 (and int8 bilinear sums in int32).
    if (n <= 0 || d <= 0 || n > 2048 || d >= 16 * n || offset[i] < -n || offset[i] >= 16 * n ||
        border[i] < -16 * n || border[i] >= n) {
      return fail(Error::InvalidProgram, "TOSA RESIZE: scale, offset or border out of range");
    }
    const int64_t span = (ih - 1) * n - offset[i] + border[i];
    if (span < 0 || span % d != 0 || span / d + 1 != oh) {
      return fail(Error::InvalidProgram,
                  "TOSA RESIZE: axis %d: %d -> %d does not match scale, "
                  "offset and border",
                  1 + i, int(in.shape[1 + i]), int(out.shape[1 + i]));
    }
  }
  if (in.shape[0] != out.shape[0] || in.shape[3] != out.shape[3]) {
    return fail(Error::InvalidProgram, "TOSA RESIZE: batch or channels differ");
  }
  const int64_t N = in.shape[0], IH = in.shape[1], IW = in.shape[2], C = in.shape[3];
  const int64_t OH = out.shape[1], OW = out.shape[2];
  const float* fin = reinterpret_cast<const float*>(in.data);
  const int8_t* qin = reinterpret_cast<const int8_t*>(in.data);
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      const int64_t y = oy * d_[0] + offset[0];
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t x = ox * d_[1] + offset[1];
        int64_t iy = floor_div(y, n_[0]), ix = floor_div(x, n_[1]);
        const int64_t dy = y - iy * n_[0], dx = x - ix * n_[1];  // int: in [0, n)
        const int64_t o = ((b * OH + oy) * OW + ox) * C;
        if (!bilinear) {
          iy = clampi(2 * dy >= n_[0] ? iy + 1 : iy, 0, IH - 1);
          ix = clampi(2 * dx >= n_[1] ? ix + 1 : ix, 0, IW - 1);
          const int64_t s = ((b * IH + iy) * IW + ix) * C;
          for (int64_t c = 0; c < C; ++c) {
            if (fp)
              reinterpret_cast<float*>(out.data)[o + c] = fin[s + c];
            else
              reinterpret_cast<int8_t*>(out.data)[o + c] = qin[s + c];
          }
          continue;
        }
        const int64_t y0 = clampi(iy, 0, IH - 1), y1 = clampi(iy + 1, 0, IH - 1);
        const int64_t x0 = clampi(ix, 0, IW - 1), x1 = clampi(ix + 1, 0, IW - 1);
        const int64_t s00 = ((b * IH + y0) * IW + x0) * C, s01 = ((b * IH + y0) * IW + x1) * C;
        const int64_t s10 = ((b * IH + y1) * IW + x0) * C, s11 = ((b * IH + y1) * IW + x1) * C;
        if (fp) {
          const float fy = float(dy) / float(n_[0]), fx = float(dx) / float(n_[1]);
          for (int64_t c = 0; c < C; ++c) {
            float acc = fin[s00 + c] * (1.0f - fy) * (1.0f - fx);
            acc += fin[s01 + c] * (1.0f - fy) * fx;
            acc += fin[s10 + c] * fy * (1.0f - fx);
            acc += fin[s11 + c] * fy * fx;
            reinterpret_cast<float*>(out.data)[o + c] = acc;
          }
        } else {
          const int64_t wy0 = n_[0] - dy, wx0 = n_[1] - dx;
          for (int64_t c = 0; c < C; ++c) {
            const int64_t acc = qin[s00 + c] * wy0 * wx0 + qin[s01 + c] * wy0 * dx +
                                qin[s10 + c] * dy * wx0 + qin[s11 + c] * dy * dx;
            reinterpret_cast<int32_t*>(out.data)[o + c] = int32_t(acc);
          }
        }
      }
    }
  }
  return Error::Ok;
}

}  // namespace pteron::tosa_rt
