// Elementwise operators: ADD, SUB, MUL, MAXIMUM, MINIMUM (with TOSA broadcasting: equal ranks,
// size-1 dimensions stretch), RESCALE, CLAMP and TABLE.
#include <cstring>

#include "backends/tosa/runtime/ops/tosa_ops.h"
#include "backends/tosa/runtime/ops/tosa_scale.h"

namespace pteron::tosa_rt {
namespace {

// Walks the output in row-major order, tracking each input's element offset (stride 0 on
// broadcast dimensions).
struct BroadcastWalk {
  int32_t rank;
  int32_t shape[kMaxRank];
  int64_t stride_a[kMaxRank], stride_b[kMaxRank];
};

Error make_walk(const OpArgs& a, const TosaTensor& x, const TosaTensor& y, const TosaTensor& out,
                BroadcastWalk* w) {
  if (x.rank != out.rank || y.rank != out.rank) {
    return fail(Error::InvalidProgram, "TOSA %s: ranks %d, %d and output %d must be equal",
                a.name(), x.rank, y.rank, out.rank);
  }
  w->rank = out.rank;
  int64_t sa = 1, sb = 1;
  for (int d = out.rank - 1; d >= 0; --d) {
    int32_t o = out.shape[d];
    if ((x.shape[d] != o && x.shape[d] != 1) || (y.shape[d] != o && y.shape[d] != 1)) {
      return fail(Error::InvalidProgram,
                  "TOSA %s: dimension %d: inputs %d and %d do not broadcast to output %d", a.name(),
                  d, x.shape[d], y.shape[d], o);
    }
    w->shape[d] = o;
    w->stride_a[d] = x.shape[d] == 1 ? 0 : sa;
    w->stride_b[d] = y.shape[d] == 1 ? 0 : sb;
    sa *= x.shape[d];
    sb *= y.shape[d];
  }
  return Error::Ok;
}

template <typename Fn>
void walk(const BroadcastWalk& w, int64_t numel, Fn fn) {
  int32_t idx[kMaxRank] = {};
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < numel; ++i) {
    fn(i, ia, ib);
    for (int d = w.rank - 1; d >= 0; --d) {
      ia += w.stride_a[d];
      ib += w.stride_b[d];
      if (++idx[d] < w.shape[d]) break;
      ia -= w.stride_a[d] * w.shape[d];
      ib -= w.stride_b[d] * w.shape[d];
      idx[d] = 0;
    }
  }
}

int32_t wrap_add(int32_t x, int32_t y) { return int32_t(uint32_t(x) + uint32_t(y)); }
int32_t wrap_sub(int32_t x, int32_t y) { return int32_t(uint32_t(x) - uint32_t(y)); }

}  // namespace

Error run_binary(const OpArgs& a) {
  bool is_mul = a.op == tosa::Op::MUL;
  PTERON_TRY(expect_inputs(a, is_mul ? 3 : 2, is_mul ? 3 : 2));
  const TosaTensor &x = a.in(0), &y = a.in(1), &out = a.out(0);
  BroadcastWalk w{};
  PTERON_TRY(make_walk(a, x, y, out, &w));
  if (x.dtype != y.dtype) {
    return fail(Error::InvalidProgram, "TOSA %s: inputs are %s and %s", a.name(),
                tosa::EnumNameDType(x.dtype), tosa::EnumNameDType(y.dtype));
  }
  if (x.dtype == tosa::DType::FP32) {
    PTERON_TRY(expect_dtype(a, out, tosa::DType::FP32, "output"));
    const float *px = x.as<float>(), *py = y.as<float>();
    float* po = out.as<float>();
    switch (a.op) {
      case tosa::Op::ADD:
        walk(w, out.numel, [&](int64_t i, int64_t p, int64_t q) { po[i] = px[p] + py[q]; });
        break;
      case tosa::Op::SUB:
        walk(w, out.numel, [&](int64_t i, int64_t p, int64_t q) { po[i] = px[p] - py[q]; });
        break;
      case tosa::Op::MUL:
        walk(w, out.numel, [&](int64_t i, int64_t p, int64_t q) { po[i] = px[p] * py[q]; });
        break;
      case tosa::Op::MAXIMUM:
        walk(w, out.numel,
             [&](int64_t i, int64_t p, int64_t q) { po[i] = px[p] > py[q] ? px[p] : py[q]; });
        break;
      default:
        walk(w, out.numel,
             [&](int64_t i, int64_t p, int64_t q) { po[i] = px[p] < py[q] ? px[p] : py[q]; });
        break;
    }
    return Error::Ok;
  }
  if (!is_int_dtype(x.dtype) || x.dtype == tosa::DType::INT48 || x.dtype == tosa::DType::BOOL) {
    return fail(Error::NotSupported, "TOSA %s: dtype %s is not supported", a.name(),
                tosa::EnumNameDType(x.dtype));
  }
  if (is_mul) {
    PTERON_TRY(expect_dtype(a, out, tosa::DType::INT32, "output"));
    const TosaTensor& shift_t = a.in(2);
    if (shift_t.numel != 1 || shift_t.dtype != tosa::DType::INT8) {
      return fail(Error::InvalidProgram, "TOSA MUL: shift must be an INT8 [1] tensor");
    }
    int32_t shift = int32_t(load_int(shift_t, 0));
    if (shift < 0 || shift > 63 || (shift > 0 && x.dtype != tosa::DType::INT32)) {
      return fail(Error::InvalidProgram, "TOSA MUL: shift %d is invalid for %s", shift,
                  tosa::EnumNameDType(x.dtype));
    }
    int32_t* po = out.as<int32_t>();
    walk(w, out.numel, [&](int64_t i, int64_t p, int64_t q) {
      int64_t prod = load_int(x, p) * load_int(y, q);
      if (shift > 0) prod = (prod + (int64_t(1) << (shift - 1))) >> shift;
      po[i] = int32_t(prod);
    });
    return Error::Ok;
  }
  PTERON_TRY(expect_dtype(a, out, x.dtype, "output"));
  walk(w, out.numel, [&](int64_t i, int64_t p, int64_t q) {
    int64_t u = load_int(x, p), v = load_int(y, q), r;
    switch (a.op) {
      case tosa::Op::ADD:
        r = wrap_add(int32_t(u), int32_t(v));
        break;
      case tosa::Op::SUB:
        r = wrap_sub(int32_t(u), int32_t(v));
        break;
      case tosa::Op::MAXIMUM:
        r = u > v ? u : v;
        break;
      default:
        r = u < v ? u : v;
        break;
    }
    store_int(out, i, r);
  });
  return Error::Ok;
}

namespace {

// The signed scale32 forms the lowering writes (int32 accumulators to int8, int8 to int32 for
// additions, int8 to int8), with typed loads and a running channel index instead of the
// generic per-element dtype switch and modulo. Same arithmetic as the generic loop.
template <typename InT, typename OutT>
void rescale_loop(const InT* in, OutT* out, int64_t n, int64_t channels, const int32_t* mult,
                  const int8_t* shift, int32_t izp, int32_t ozp, int64_t lo, int64_t hi,
                  bool double_round) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t r = apply_scale_32(int64_t(in[i]) - izp, mult[c], shift[c], double_round);
    out[i] = OutT(clip_i64(int64_t(int32_t(uint32_t(r) + uint32_t(ozp))), lo, hi));
    if (++c == channels) c = 0;
  }
}

bool rescale_fast(const TosaTensor& in, const TosaTensor& out, const TosaTensor& mult,
                  const TosaTensor& shift, int64_t channels, int32_t izp, int32_t ozp, int64_t lo,
                  int64_t hi, bool double_round) {
  const int32_t* m = mult.as<int32_t>();
  const int8_t* s = shift.as<int8_t>();
  using D = tosa::DType;
  if (in.dtype == D::INT32 && out.dtype == D::INT8) {
    rescale_loop(in.as<int32_t>(), out.as<int8_t>(), in.numel, channels, m, s, izp, ozp, lo, hi,
                 double_round);
  } else if (in.dtype == D::INT8 && out.dtype == D::INT32) {
    rescale_loop(in.as<int8_t>(), out.as<int32_t>(), in.numel, channels, m, s, izp, ozp, lo, hi,
                 double_round);
  } else if (in.dtype == D::INT8 && out.dtype == D::INT8) {
    rescale_loop(in.as<int8_t>(), out.as<int8_t>(), in.numel, channels, m, s, izp, ozp, lo, hi,
                 double_round);
  } else if (in.dtype == D::INT32 && out.dtype == D::INT32) {
    rescale_loop(in.as<int32_t>(), out.as<int32_t>(), in.numel, channels, m, s, izp, ozp, lo, hi,
                 double_round);
  } else {
    return false;
  }
  return true;
}

}  // namespace

Error run_rescale(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 5, 5));
  const auto* attr = a.fb->attribute_as_RescaleAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA RESCALE: missing attribute");
  const TosaTensor &in = a.in(0), &mult = a.in(1), &shift = a.in(2), &out = a.out(0);
  if (!is_int_dtype(in.dtype) || in.dtype == tosa::DType::BOOL ||
      !(out.dtype == tosa::DType::INT8 || out.dtype == tosa::DType::INT16 ||
        out.dtype == tosa::DType::INT32)) {
    return fail(Error::NotSupported, "TOSA RESCALE: %s -> %s is not supported",
                tosa::EnumNameDType(in.dtype), tosa::EnumNameDType(out.dtype));
  }
  if (in.numel != out.numel || in.rank != out.rank) {
    return fail(Error::InvalidProgram, "TOSA RESCALE: input and output shapes differ");
  }
  bool scale32 = attr->scale32();
  PTERON_TRY(
      expect_dtype(a, mult, scale32 ? tosa::DType::INT32 : tosa::DType::INT16, "multiplier"));
  PTERON_TRY(expect_dtype(a, shift, tosa::DType::INT8, "shift"));
  int64_t channels = attr->per_channel() && in.rank > 0 ? in.shape[in.rank - 1] : 1;
  if (mult.numel != channels || shift.numel != channels) {
    return fail(Error::InvalidProgram,
                "TOSA RESCALE: %lld multipliers and %lld shifts for %lld "
                "channels",
                (long long)mult.numel, (long long)shift.numel, (long long)channels);
  }
  for (int64_t c = 0; c < channels; ++c) {
    int64_t s = load_int(shift, c), m = load_int(mult, c);
    if (s < 2 || s > 62 || m < 0) {
      return fail(Error::InvalidProgram,
                  "TOSA RESCALE: channel %lld has shift %lld, multiplier "
                  "%lld (need 2..62 and >= 0)",
                  (long long)c, (long long)s, (long long)m);
    }
  }
  int32_t izp = 0, ozp = 0;
  PTERON_TRY(read_zero_point(a, a.in(3), "input_zp", &izp));
  PTERON_TRY(read_zero_point(a, a.in(4), "output_zp", &ozp));
  int in_bits = int(dtype_size(in.dtype)) * 8, out_bits = int(dtype_size(out.dtype)) * 8;
  bool in_unsigned = attr->input_unsigned(), out_unsigned = attr->output_unsigned();
  int64_t in_mask = in_bits >= 64 ? -1 : (int64_t(1) << in_bits) - 1;
  int64_t ext_izp = in_unsigned ? (int64_t(izp) & in_mask) : izp;
  int64_t ext_ozp = out_unsigned ? (int64_t(ozp) & ((int64_t(1) << out_bits) - 1)) : ozp;
  int64_t lo = out_unsigned ? 0 : -(int64_t(1) << (out_bits - 1));
  int64_t hi = out_unsigned ? (int64_t(1) << out_bits) - 1 : (int64_t(1) << (out_bits - 1)) - 1;
  bool double_round = attr->rounding_mode() == tosa::RoundingMode::DOUBLE_ROUND;
  if (!in_unsigned && !out_unsigned && scale32 &&
      rescale_fast(in, out, mult, shift, channels, izp, int32_t(ext_ozp), lo, hi, double_round)) {
    return Error::Ok;
  }
  for (int64_t i = 0; i < in.numel; ++i) {
    int64_t c = channels == 1 ? 0 : i % channels;
    int64_t v = load_int(in, i);
    if (in_unsigned) v &= in_mask;
    v -= ext_izp;
    int32_t m = int32_t(load_int(mult, c)), s = int32_t(load_int(shift, c));
    int32_t r = scale32 ? apply_scale_32(v, m, s, double_round) : apply_scale_16(v, m, s);
    int64_t res = int64_t(wrap_add(r, int32_t(ext_ozp)));
    store_int(out, i, clip_i64(res, lo, hi));
  }
  return Error::Ok;
}

Error run_clamp(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 1));
  const auto* attr = a.fb->attribute_as_ClampAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA CLAMP: missing attribute");
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  if (in.numel != out.numel) return fail(Error::InvalidProgram, "TOSA CLAMP: shapes differ");
  size_t es = dtype_size(in.dtype);
  if (attr->min_val() == nullptr || attr->max_val() == nullptr || attr->min_val()->size() < es ||
      attr->max_val()->size() < es) {
    return fail(Error::InvalidProgram, "TOSA CLAMP: min_val/max_val must hold one %s",
                tosa::EnumNameDType(in.dtype));
  }
  if (in.dtype == tosa::DType::FP32) {
    float lo, hi;
    std::memcpy(&lo, attr->min_val()->data(), 4);
    std::memcpy(&hi, attr->max_val()->data(), 4);
    const float* p = in.as<float>();
    float* o = out.as<float>();
    for (int64_t i = 0; i < in.numel; ++i) o[i] = p[i] < lo ? lo : (p[i] > hi ? hi : p[i]);
    return Error::Ok;
  }
  if (!is_int_dtype(in.dtype) || in.dtype == tosa::DType::INT48) {
    return fail(Error::NotSupported, "TOSA CLAMP: dtype %s is not supported",
                tosa::EnumNameDType(in.dtype));
  }
  TosaTensor lo_t = in, hi_t = in;
  lo_t.data = const_cast<uint8_t*>(attr->min_val()->data());
  hi_t.data = const_cast<uint8_t*>(attr->max_val()->data());
  int64_t lo = load_int(lo_t, 0), hi = load_int(hi_t, 0);
  if (in.dtype == tosa::DType::INT8) {
    const int8_t* p = in.as<int8_t>();
    int8_t* o = out.as<int8_t>();
    for (int64_t i = 0; i < in.numel; ++i) o[i] = int8_t(p[i] < lo ? lo : (p[i] > hi ? hi : p[i]));
    return Error::Ok;
  }
  for (int64_t i = 0; i < in.numel; ++i) {
    int64_t v = load_int(in, i);
    store_int(out, i, v < lo ? lo : (v > hi ? hi : v));
  }
  return Error::Ok;
}

Error run_table(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 2, 2));
  const TosaTensor &in = a.in(0), &table = a.in(1), &out = a.out(0);
  if (in.numel != out.numel) return fail(Error::InvalidProgram, "TOSA TABLE: shapes differ");
  if (in.dtype == tosa::DType::INT8) {
    PTERON_TRY(expect_dtype(a, table, tosa::DType::INT8, "table"));
    PTERON_TRY(expect_dtype(a, out, tosa::DType::INT8, "output"));
    if (table.numel != 256) {
      return fail(Error::InvalidProgram, "TOSA TABLE: INT8 table has %lld entries, needs 256",
                  (long long)table.numel);
    }
    const int8_t *p = in.as<int8_t>(), *t = table.as<int8_t>();
    int8_t* o = out.as<int8_t>();
    for (int64_t i = 0; i < in.numel; ++i) o[i] = t[int32_t(p[i]) + 128];
    return Error::Ok;
  }
  if (in.dtype == tosa::DType::INT16) {
    PTERON_TRY(expect_dtype(a, table, tosa::DType::INT16, "table"));
    PTERON_TRY(expect_dtype(a, out, tosa::DType::INT32, "output"));
    if (table.numel != 513) {
      return fail(Error::InvalidProgram, "TOSA TABLE: INT16 table has %lld entries, needs 513",
                  (long long)table.numel);
    }
    const int16_t *p = in.as<int16_t>(), *t = table.as<int16_t>();
    int32_t* o = out.as<int32_t>();
    for (int64_t i = 0; i < in.numel; ++i) {
      int32_t v = int32_t(p[i]) + 32768;
      int32_t index = v >> 7, fraction = v & 0x7f;
      int32_t base = t[index], next = t[index + 1];
      o[i] = base * 128 + (next - base) * fraction;
    }
    return Error::Ok;
  }
  return fail(Error::NotSupported, "TOSA TABLE: dtype %s is not supported (INT8, INT16)",
              tosa::EnumNameDType(in.dtype));
}

}  // namespace pteron::tosa_rt
