// Runs each cortex_m kernel twice on the same random inputs, once on the scalar reference path
// and once on the core's vector path (MVE on the M55, the DSP extension on the M4/M7), and
// compares the outputs byte for byte; the convolutions and transposes then run on both paths
// again with their output overlapping their input as the memory planner places them
// (kernels/cortex_m/in_place.h) and must give the same bytes. Prints one line per case
// over semihosting; exits 1 on any mismatch or kernel error, 0 when every case matches.
#include "runtime/kernel/kernel.h"

#include <cstdio>
#include <cstring>

#include "kernels/cortex_m/in_place.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "tests/baremetal/cortex_m/tensor_box.h"

using namespace pteron;

namespace {

uint32_t g_seed = 12345;
uint32_t next_random() {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed >> 8;
}
int32_t random_in(int32_t lo, int32_t hi) {  // inclusive
  return lo + static_cast<int32_t>(next_random() % static_cast<uint32_t>(hi - lo + 1));
}

// Storage for the tensors of one case.
alignas(16) int8_t g_in[32 * 1024];
alignas(16) int8_t g_in2[32 * 1024];
alignas(16) int8_t g_weight[32 * 1024];
alignas(16) float g_float[2048];
alignas(16) int32_t g_bias[512];
alignas(16) int32_t g_mult[512];
alignas(16) int32_t g_shift[512];
alignas(16) uint8_t g_out_scalar[32 * 1024];
alignas(16) uint8_t g_out_simd[32 * 1024];
alignas(16) uint8_t g_scratch[32 * 1024];

void fill_int8(int8_t* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int8_t>(random_in(-128, 127));
}

void fill_requant(int32_t n, int32_t min_shift, int32_t max_shift) {
  for (int32_t i = 0; i < n; ++i) {
    g_mult[i] = random_in(1 << 30, 0x7fffffff);
    g_shift[i] = random_in(min_shift, max_shift);
    g_bias[i] = random_in(-20000, 20000);
  }
}

int g_failures = 0, g_cases = 0;

// Runs `op` on both paths; `out` is the out tensor, whose data pointer is switched between
// the two result buffers.
void run_both(const char* op, const char* what, EValue** args, size_t n, Tensor& out) {
  ++g_cases;
  const KernelEntry* k = find_kernel(op, "");
  if (k == nullptr) {
    printf("FAIL %s %s: no kernel\n", op, what);
    ++g_failures;
    return;
  }
  MemoryAllocator scratch(g_scratch, sizeof(g_scratch));
  KernelContext ctx{&scratch};
  const size_t bytes = out.nbytes();
  memset(g_out_scalar, 0x5a, bytes);
  memset(g_out_simd, 0xa5, bytes);
  out.set_data(g_out_scalar);
  cortex_m::set_use_simd(false);
  Error e1 = call_kernel(*k, ctx, Span<EValue*>(args, n));
  out.set_data(g_out_simd);
  scratch.reset();
  cortex_m::set_use_simd(true);
  Error e2 = call_kernel(*k, ctx, Span<EValue*>(args, n));
  if (e1 != Error::Ok || e2 != Error::Ok) {
    printf("FAIL %s %s: error %s / %s: %s\n", op, what, error_name(e1), error_name(e2),
           last_error_message());
    ++g_failures;
    return;
  }
  size_t bad = 0, first = 0;
  for (size_t i = bytes; i-- > 0;) {
    if (g_out_scalar[i] != g_out_simd[i]) ++bad, first = i;
  }
  if (bad) {
    printf("FAIL %s %s: %u of %u bytes differ (first at %u: scalar %d, simd %d)\n", op, what,
           static_cast<unsigned>(bad), static_cast<unsigned>(bytes), static_cast<unsigned>(first),
           g_out_scalar[first], g_out_simd[first]);
    ++g_failures;
  } else {
    printf("ok   %s %s (%u bytes)\n", op, what, static_cast<unsigned>(bytes));
  }
}

// The output `lag` bytes before the input in one buffer, as the memory planner places a
// convolution's output over its dead input: both paths must still give the vector path's bytes
// (in g_out_simd from run_both).
alignas(16) int8_t g_overlap[48 * 1024];
void run_overlapped(const char* op, const char* what, EValue** args, size_t n, Tensor& in,
                    Tensor& out, int64_t least_lag) {
  const int64_t lag = cortex_m::align_scratch(static_cast<size_t>(least_lag));  // as planned
  const size_t in_bytes = in.nbytes(), out_bytes = out.nbytes();
  if (static_cast<size_t>(lag) + in_bytes > sizeof(g_overlap) || out_bytes > sizeof(g_overlap)) {
    printf("FAIL %s %s: overlap buffer too small\n", op, what);
    ++g_failures;
    return;
  }
  void* const in_data = in.mutable_data();
  void* const out_data = out.mutable_data();
  for (bool simd : {false, true}) {
    ++g_cases;
    memcpy(g_overlap + lag, in_data, in_bytes);
    in.set_data(g_overlap + lag);
    out.set_data(g_overlap);
    MemoryAllocator scratch(g_scratch, sizeof(g_scratch));
    KernelContext ctx{&scratch};
    cortex_m::set_use_simd(simd);
    const Error e = call_kernel(*find_kernel(op, ""), ctx, Span<EValue*>(args, n));
    const bool same = e == Error::Ok && memcmp(g_overlap, g_out_simd, out_bytes) == 0;
    printf("%s %s %s overlapped by %d bytes on the %s path\n", same ? "ok  " : "FAIL", op, what,
           static_cast<int>(lag), simd ? "vector" : "scalar");
    if (!same) ++g_failures;
  }
  in.set_data(in_data);
  out.set_data(out_data);
}

EValue D(double v) { return EValue::from_double(v); }
EValue B(bool v) { return EValue::from_bool(v); }

void test_elementwise(int32_t n) {
  char what[32];
  snprintf(what, sizeof(what), "n=%d", static_cast<int>(n));
  const int32_t shape[1] = {n};
  fill_int8(g_in, n);
  fill_int8(g_in2, n);
  TensorBox a(ScalarType::Char, 1, shape, g_in), b(ScalarType::Char, 1, shape, g_in2);
  TensorBox out(ScalarType::Char, 1, shape, g_out_scalar);
  {
    EValue m1 = I(random_in(1 << 30, 0x7fffffff)), s1 = I(random_in(-4, 0));
    EValue m2 = I(random_in(1 << 30, 0x7fffffff)), s2 = I(random_in(-4, 0));
    EValue mo = I(random_in(1 << 30, 0x7fffffff)), so = I(random_in(-22, -16));
    EValue z1 = I(random_in(-20, 20)), z2 = I(random_in(-20, 20)), zo = I(random_in(-20, 20));
    EValue lo = I(-100), hi = I(120);
    EValue* args[] = {&a.v, &z1, &m1, &s1, &b.v, &z2, &m2, &s2, &zo, &mo, &so, &lo, &hi, &out.v};
    run_both("cortex_m::quantized_add.out", what, args, 14, out.t);
  }
  {
    EValue z1 = I(3), z2 = I(-7), zo = I(5), mo = I(random_in(1 << 30, 0x7fffffff)),
           so = I(random_in(-10, -6));
    EValue* args[] = {&a.v, &z1, &b.v, &z2, &zo, &mo, &so, &out.v};
    run_both("cortex_m::quantized_mul.out", what, args, 8, out.t);
  }
  {
    EValue lo = I(-37), hi = I(90);
    EValue* args[] = {&a.v, &lo, &hi, &out.v};
    run_both("cortex_m::quantized_clamp.out", what, args, 4, out.t);
  }
  {
    EValue zi = I(random_in(-20, 20)), zo = I(random_in(-20, 20));
    EValue m = I(random_in(1 << 30, 0x7fffffff)), s = I(random_in(-3, 1)), lo = I(-120),
           hi = I(127);
    EValue* args[] = {&a.v, &zi, &zo, &m, &s, &lo, &hi, &out.v};
    run_both("cortex_m::requantize.out", what, args, 8, out.t);
  }
  {
    for (int32_t i = 0; i < n; ++i) g_float[i] = static_cast<float>(random_in(-4000, 4000)) / 97.0f;
    if (n > 2) g_float[1] = 0.5f * 0.25f, g_float[2] = -2.5f * 0.25f;  // ties
    TensorBox f(ScalarType::Float, 1, shape, g_float);
    EValue scale = D(0.25), zp = I(-3), qmin = I(-128), qmax = I(127), dtype = I(1);
    EValue* args[] = {&f.v, &scale, &zp, &qmin, &qmax, &dtype, &out.v};
    run_both("cortex_m::quantize_per_tensor.out", what, args, 7, out.t);
    TensorBox fo(ScalarType::Float, 1, shape, g_out_scalar);
    EValue* dargs[] = {&a.v, &scale, &zp, &qmin, &qmax, &dtype, &fo.v};
    run_both("cortex_m::dequantize_per_tensor.out", what, dargs, 7, fo.t);
  }
}

// quantized_mul with `other` broadcast as rows (rank 4: [N, H, W, C] against [N, 1, 1, C], or
// [N, C, H, W] against [N, C, 1, 1]): the MVE path's rows, tails included, against the scalar.
void test_broadcast_mul(const int32_t (&full)[4], const int32_t (&other)[4]) {
  char what[64];
  snprintf(what, sizeof(what), "%dx%dx%dx%d by %dx%dx%dx%d", static_cast<int>(full[0]),
           static_cast<int>(full[1]), static_cast<int>(full[2]), static_cast<int>(full[3]),
           static_cast<int>(other[0]), static_cast<int>(other[1]), static_cast<int>(other[2]),
           static_cast<int>(other[3]));
  fill_int8(g_in, full[0] * full[1] * full[2] * full[3]);
  fill_int8(g_in2, other[0] * other[1] * other[2] * other[3]);
  TensorBox a(ScalarType::Char, 4, full, g_in), b(ScalarType::Char, 4, other, g_in2);
  TensorBox out(ScalarType::Char, 4, full, g_out_scalar);
  EValue z1 = I(random_in(-20, 20)), z2 = I(random_in(-20, 20)), zo = I(random_in(-20, 20));
  EValue mo = I(random_in(1 << 30, 0x7fffffff)), so = I(random_in(-10, -6));
  EValue* args[] = {&a.v, &z1, &b.v, &z2, &zo, &mo, &so, &out.v};
  run_both("cortex_m::quantized_mul.out", what, args, 8, out.t);
}

// quantized_lut: the MVE gather loads (16 lookups each, a predicated tail) against the scalar
// loop, every int8 value among the inputs.
void test_lut(int32_t n) {
  char what[32];
  snprintf(what, sizeof(what), "n=%d", static_cast<int>(n));
  fill_int8(g_in, n);
  for (int32_t i = 0; i < n && i < 256; ++i) g_in[i] = static_cast<int8_t>(i - 128);
  fill_int8(g_weight, 256);
  const int32_t shape[1] = {n}, entries[1] = {256};
  TensorBox in(ScalarType::Char, 1, shape, g_in), table(ScalarType::Char, 1, entries, g_weight);
  TensorBox out(ScalarType::Char, 1, shape, g_out_scalar);
  EValue* args[] = {&in.v, &table.v, &out.v};
  run_both("cortex_m::quantized_lut.out", what, args, 3, out.t);
}

void test_linear(int32_t rows, int32_t k, int32_t n, bool per_channel) {
  char what[48];
  snprintf(what, sizeof(what), "%dx%d->%d%s", static_cast<int>(rows), static_cast<int>(k),
           static_cast<int>(n), per_channel ? " per-channel" : "");
  fill_int8(g_in, rows * k);
  fill_int8(g_weight, n * k);
  fill_requant(n, -12, -6);
  int64_t mults[512], shifts[512];
  for (int32_t i = 0; i < n; ++i) mults[i] = g_mult[i], shifts[i] = g_shift[i];
  const int32_t in_shape[2] = {rows, k}, w_shape[2] = {n, k}, out_shape[2] = {rows, n},
                b_shape[1] = {n};
  TensorBox x(ScalarType::Char, 2, in_shape, g_in), w(ScalarType::Char, 2, w_shape, g_weight);
  TensorBox bias(ScalarType::Int, 1, b_shape, g_bias);
  TensorBox out(ScalarType::Char, 2, out_shape, g_out_scalar);
  EValue none, in_off = I(7), w_off = I(per_channel ? 0 : -2), out_off = I(-4);
  EValue ml = L(mults, per_channel ? n : 1), sl = L(shifts, per_channel ? n : 1);
  EValue amax = I(127), amin = I(-128);
  EValue* args[] = {&x.v,     &w.v, &bias.v, &none, &in_off, &w_off,
                    &out_off, &ml,  &sl,     &amax, &amin,   &out.v};
  run_both("cortex_m::quantized_linear.out", what, args, 12, out.t);
}

// quantized_linear_packed on random packed weights (padding included: the kernel must not read
// it as anything but zeros times inputs) and random records: kernel sums over the whole int32
// range (the sums wrap alike), shifts from -31 to 2, so left shifts and the sign fix-up run.
alignas(16) int32_t g_channel_quant[512 * 4];
void test_linear_packed(int32_t rows, int32_t k, int32_t n) {
  char what[48];
  snprintf(what, sizeof(what), "%dx%d->%d", static_cast<int>(rows), static_cast<int>(k),
           static_cast<int>(n));
  const int32_t groups = static_cast<int32_t>(cortex_m::linear_groups(n));
  const int32_t chunks = static_cast<int32_t>(cortex_m::linear_chunks(k));
  fill_int8(g_in, rows * k);
  memset(g_weight, 0, static_cast<size_t>(groups) * chunks * 64);
  for (int32_t o = 0; o < n; ++o)
    for (int32_t i = 0; i < k; ++i)
      g_weight[cortex_m::linear_packed_index(o, i, chunks)] =
          static_cast<int8_t>(random_in(-127, 127));
  memset(g_channel_quant, 0, static_cast<size_t>(groups) * 16 * sizeof(int32_t));
  for (int32_t o = 0; o < n; ++o) {
    const int32_t shift = random_in(-31, 2);
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearKernelSum)] =
        static_cast<int32_t>(next_random() << 8);
    if (o % 3 == 0)  // small sums too, so most outputs are not clamped
      g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearKernelSum)] =
          random_in(-20000, 20000);
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearMultiplier)] =
        random_in(1 << 30, 0x7fffffff);
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearLeftShift)] =
        shift > 0 ? shift : 0;
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearRightShift)] =
        shift > 0 ? 0 : shift;
  }
  const int32_t in_shape[2] = {rows, k}, w_shape[4] = {groups, chunks, 4, 16},
                q_shape[3] = {groups, 4, 4}, out_shape[2] = {rows, n};
  TensorBox x(ScalarType::Char, 2, in_shape, g_in), w(ScalarType::Char, 4, w_shape, g_weight);
  TensorBox q(ScalarType::Int, 3, q_shape, g_channel_quant);
  TensorBox out(ScalarType::Char, 2, out_shape, g_out_scalar);
  EValue out_off = I(-5), amin = I(-120), amax = I(125);
  EValue* args[] = {&x.v, &w.v, &q.v, &out_off, &amin, &amax, &out.v};
  run_both("cortex_m::quantized_linear_packed.out", what, args, 7, out.t);
}

// The convolution's requantisation shifts (the narrow MVE variants need them all negative).
int32_t g_conv_shift_lo = -11, g_conv_shift_hi = -7;
// The convolutions' activation minimum: -120 clamps (the DSP loops' clamping variant), -128
// takes all of int8 (their variant without it).
int32_t g_act_min = -120;
// Depthwise (multiplier 1: weight [1, kh, kw, cin]) on x [1, h, w, cin], shifts in
// [shift_lo, shift_hi] (positive ones take the left-shift variant).
void depthwise(const char* what, TensorBox& x, int32_t kh, int32_t kw, EValue& stv, EValue& pdv,
               EValue& dlv, int32_t oh, int32_t ow, int32_t shift_lo, int32_t shift_hi) {
  const int32_t cin = x.t.size(3);
  const int32_t dw_shape[4] = {1, kh, kw, cin}, dout_shape[4] = {x.t.size(0), oh, ow, cin},
                dc_shape[1] = {cin};
  fill_int8(g_weight, kh * kw * cin);
  fill_requant(cin, shift_lo, shift_hi);
  TensorBox dw(ScalarType::Char, 4, dw_shape, g_weight);
  TensorBox dbias(ScalarType::Int, 1, dc_shape, g_bias), dm(ScalarType::Int, 1, dc_shape, g_mult),
      ds(ScalarType::Int, 1, dc_shape, g_shift);
  TensorBox dout(ScalarType::Char, 4, dout_shape, g_out_scalar);
  EValue mult = I(1), in_off = I(9), out_off = I(-3), amin = I(g_act_min), amax = I(127), none;
  EValue* dargs[] = {&x.v,     &dw.v, &dbias.v, &stv,  &pdv,  &dlv,  &mult,  &in_off,
                     &out_off, &dm.v, &ds.v,    &amin, &amax, &none, &dout.v};
  run_both("cortex_m::quantized_depthwise_conv2d_nhwc.out", what, dargs, 15, dout.t);
  cortex_m::WindowGeometry g;
  g.n = x.t.size(0), g.h = x.t.size(1), g.w = x.t.size(2), g.in_channels = cin;
  g.out_h = oh, g.out_w = ow, g.out_channels = cin;
  g.stride_h = stv.int_list[0], g.stride_w = stv.int_list[1];
  g.pad_top = pdv.int_list[0], g.pad_left = pdv.int_list[1];
  run_overlapped("cortex_m::quantized_depthwise_conv2d_nhwc.out", what, dargs, 15, x.t, dout.t,
                 cortex_m::window_in_place_lag(g, cortex_m::depthwise_pixels_in_flight(ow)));
}

// A depthwise convolution alone (3x3 unless k): the 3x3 row path's channel tails (1..7, 9,
// 17, 24), odd and even widths, strides, padding (also folded SAME: `extra`), dilation (the
// general path), a positive shift (the left-shift variant), a batch of two.
void test_depthwise(int32_t h, int32_t w_, int32_t c, int32_t stride, int32_t pad, int32_t dil = 1,
                    int32_t extra = 0, int32_t k = 3, int32_t shift_hi = -5, int32_t n = 1) {
  char what[64];
  snprintf(what, sizeof(what), "dw %dx%dx%dx%d k%d s%d p%d%s d%d sh%d", static_cast<int>(n),
           static_cast<int>(h), static_cast<int>(w_), static_cast<int>(c), static_cast<int>(k),
           static_cast<int>(stride), static_cast<int>(pad), extra ? "+1" : "",
           static_cast<int>(dil), static_cast<int>(shift_hi));
  const int32_t oh = (h + extra + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  const int32_t ow = (w_ + extra + 2 * pad - dil * (k - 1) - 1) / stride + 1;
  fill_int8(g_in, n * h * w_ * c);
  const int32_t in_shape[4] = {n, h, w_, c};
  TensorBox x(ScalarType::Char, 4, in_shape, g_in);
  const int64_t st[2] = {stride, stride}, pd[2] = {pad, pad}, dl[2] = {dil, dil};
  EValue stv = L(st, 2), pdv = L(pd, 2), dlv = L(dl, 2);
  depthwise(what, x, k, k, stv, pdv, dlv, oh, ow, -9, shift_hi);
}

// extra: one more row and column of padding at the bottom/right (a folded SAME pad), which only
// the convolutions take.
void test_conv(int32_t h, int32_t w_, int32_t cin, int32_t cout, int32_t kh, int32_t kw,
               int32_t stride, int32_t pad, int32_t dil, int32_t extra = 0) {
  char what[64];
  snprintf(what, sizeof(what), "%dx%dx%d k%dx%d s%d p%d%s d%d ->%d", static_cast<int>(h),
           static_cast<int>(w_), static_cast<int>(cin), static_cast<int>(kh), static_cast<int>(kw),
           static_cast<int>(stride), static_cast<int>(pad), extra ? "+1" : "",
           static_cast<int>(dil), static_cast<int>(cout));
  const int32_t oh = (h + extra + 2 * pad - dil * (kh - 1) - 1) / stride + 1;
  const int32_t ow = (w_ + extra + 2 * pad - dil * (kw - 1) - 1) / stride + 1;
  fill_int8(g_in, h * w_ * cin);
  fill_int8(g_weight, cout * kh * kw * cin);
  fill_requant(cout, g_conv_shift_lo, g_conv_shift_hi);
  const int32_t in_shape[4] = {1, h, w_, cin}, w_shape[4] = {cout, kh, kw, cin},
                out_shape[4] = {1, oh, ow, cout}, c_shape[1] = {cout};
  TensorBox x(ScalarType::Char, 4, in_shape, g_in), w(ScalarType::Char, 4, w_shape, g_weight);
  TensorBox bias(ScalarType::Int, 1, c_shape, g_bias), m(ScalarType::Int, 1, c_shape, g_mult),
      s(ScalarType::Int, 1, c_shape, g_shift);
  TensorBox out(ScalarType::Char, 4, out_shape, g_out_scalar);
  const int64_t st[2] = {stride, stride}, pd[2] = {pad, pad}, dl[2] = {dil, dil};
  EValue stv = L(st, 2), pdv = L(pd, 2), dlv = L(dl, 2), in_off = I(9), out_off = I(-3),
         amin = I(g_act_min), amax = I(127), none;
  EValue* args[] = {&x.v,     &w.v, &bias.v, &stv,  &pdv,  &dlv,  &in_off,
                    &out_off, &m.v, &s.v,    &amin, &amax, &none, &out.v};
  run_both("cortex_m::quantized_conv2d_nhwc.out", what, args, 14, out.t);
  cortex_m::WindowGeometry g;
  g.h = h, g.w = w_, g.in_channels = cin, g.out_h = oh, g.out_w = ow, g.out_channels = cout;
  g.stride_h = g.stride_w = stride, g.pad_top = g.pad_left = pad;
  run_overlapped("cortex_m::quantized_conv2d_nhwc.out", what, args, 14, x.t, out.t,
                 cortex_m::window_in_place_lag(g, cortex_m::conv2d_pixels_in_flight(cout)));

  // Depthwise on the same input (multiplier 1: weight [1, kh, kw, cin]).
  depthwise(what, x, kh, kw, stv, pdv, dlv, oh, ow, -9, -5);

  if (extra) return;
  // Pools with the convolution's window.
  const int32_t pout_shape[4] = {1, oh, ow, cin};
  TensorBox pout(ScalarType::Char, 4, pout_shape, g_out_scalar);
  const int64_t ks[2] = {kh, kw};
  EValue ksv = L(ks, 2), ceil = B(false), zp = I(0), pm = I(1 << 30), ps = I(1);
  EValue* aargs[] = {&x.v, &ksv, &stv, &pdv, &ceil, &zp, &pm, &ps, &none, &pout.v};
  if (dil == 1) run_both("cortex_m::quantized_avg_pool2d_nhwc.out", what, aargs, 10, pout.t);
  EValue izp = I(2), ozp = I(pad ? 5 : 2), lo = I(-90), hi = I(100);
  EValue* margs[] = {&x.v, &ksv, &stv, &pdv, &dlv, &ceil, &izp, &ozp, &lo, &hi, &pout.v};
  run_both("cortex_m::quantized_max_pool2d_nhwc.out", what, margs, 11, pout.t);
}

void test_softmax(int32_t rows, int32_t cols) {
  char what[32];
  snprintf(what, sizeof(what), "%dx%d", static_cast<int>(rows), static_cast<int>(cols));
  fill_int8(g_in, rows * cols);
  const int32_t shape[2] = {rows, cols};
  TensorBox x(ScalarType::Char, 2, shape, g_in), out(ScalarType::Char, 2, shape, g_out_scalar);
  // Input scale 0.05: multiplier/shift/diff_min as TFLite prepares them.
  EValue dim = I(-1), izp = I(3), ozp = I(-128), mult = I(1717986918), shift = I(21),
         diff_min = I(-992);
  EValue* args[] = {&x.v, &dim, &izp, &ozp, &mult, &shift, &diff_min, &out.v};
  run_both("cortex_m::softmax.out", what, args, 8, out.t);
}

// One 4-d transpose of `data` (sizes `shape`) by `perm` on both paths, then overlapped.
void transpose_case(const char* what, const int32_t* shape, const int64_t* perm, int8_t* data) {
  int32_t out_shape[4];
  int64_t sizes[4];
  for (int32_t d = 0; d < 4; ++d) out_shape[d] = shape[perm[d]], sizes[d] = shape[d];
  TensorBox x(ScalarType::Char, 4, shape, data), out(ScalarType::Char, 4, out_shape, g_out_scalar);
  EValue p = L(perm, 4);
  EValue* args[] = {&x.v, &p, &out.v};
  run_both("cortex_m::transpose.out", what, args, 3, out.t);
  run_overlapped("cortex_m::transpose.out", what, args, 3, x.t, out.t,
                 cortex_m::transpose_in_place_lag(4, sizes, perm));
}

void test_transpose(int32_t a, int32_t b, int32_t c, int32_t d) {
  char what[32];
  snprintf(what, sizeof(what), "%dx%dx%dx%d", static_cast<int>(a), static_cast<int>(b),
           static_cast<int>(c), static_cast<int>(d));
  fill_int8(g_in, a * b * c * d);
  const int32_t nchw[4] = {a, b, c, d}, nhwc[4] = {a, c, d, b};
  const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  transpose_case(what, nchw, to_nhwc, g_in);
  // And back (NHWC -> NCHW, as before a model's output), from the first result.
  memcpy(g_in2, g_out_simd, static_cast<size_t>(a * b * c * d));
  transpose_case(what, nhwc, to_nchw, g_in2);
}

// Upsampling: random source tables (any in-range table is valid), channel counts around the
// bilinear MVE path's 4-lane vectors, repeated rows (nearest copies the row above; nearest has
// one path, so it only checks that the kernel runs and agrees with itself).
void test_upsample(int32_t n, int32_t h, int32_t w, int32_t c, int32_t oh, int32_t ow) {
  char what[48];
  snprintf(what, sizeof(what), "%dx%dx%dx%d->%dx%d", static_cast<int>(n), static_cast<int>(h),
           static_cast<int>(w), static_cast<int>(c), static_cast<int>(oh), static_cast<int>(ow));
  fill_int8(g_in, n * h * w * c);
  const int32_t in_shape[4] = {n, h, w, c}, out_shape[4] = {n, oh, ow, c};
  TensorBox x(ScalarType::Char, 4, in_shape, g_in),
      out(ScalarType::Char, 4, out_shape, g_out_scalar);
  for (int32_t i = 0; i < oh + ow; ++i) {
    const int32_t limit = i < oh ? h : w;
    g_bias[i] = i > 0 && i < oh && random_in(0, 1) ? g_bias[i - 1] : random_in(0, limit - 1);
    g_mult[3 * i] = random_in(0, limit - 1);
    g_mult[3 * i + 1] = random_in(0, limit - 1);
    g_mult[3 * i + 2] = random_in(0, 2048);
  }
  const int32_t table_size[1] = {oh + ow}, taps_size[2] = {oh + ow, 3};
  TensorBox table(ScalarType::Int, 1, table_size, g_bias),
      taps(ScalarType::Int, 2, taps_size, g_mult);
  EValue* nearest[] = {&x.v, &table.v, &out.v};
  run_both("cortex_m::upsample_nearest2d_nhwc.out", what, nearest, 3, out.t);
  EValue zi = I(random_in(-20, 20)), zo = I(random_in(-20, 20)),
         m = I(random_in(1 << 30, 0x7fffffff)), s = I(random_in(-23, -21));
  EValue* bilinear[] = {&x.v, &taps.v, &zi, &zo, &m, &s, &out.v};
  run_both("cortex_m::upsample_bilinear2d_nhwc.out", what, bilinear, 7, out.t);
}

}  // namespace

int main() {
  for (int32_t n : {1, 3, 4, 15, 16, 17, 100, 1000}) test_elementwise(n);
  for (int32_t n : {1, 15, 16, 17, 300, 1000}) test_lut(n);
  test_broadcast_mul({1, 5, 7, 24}, {1, 1, 1, 24});
  test_broadcast_mul({2, 3, 3, 7}, {2, 1, 1, 7});
  test_broadcast_mul({1, 24, 9, 11}, {1, 24, 1, 1});
  test_broadcast_mul({2, 3, 10, 13}, {2, 3, 1, 1});
  test_linear(1, 1, 1, false);
  test_linear(3, 17, 5, true);
  test_linear(2, 64, 33, false);
  test_linear(4, 250, 10, true);
  for (const auto& shape : {std::initializer_list<int32_t>{1, 640, 128},
                            {1, 128, 8},
                            {1, 8, 128},
                            {1, 1, 1},
                            {3, 17, 5},
                            {2, 64, 33},
                            {2, 100, 6},
                            {1, 16, 4}}) {
    const int32_t* d = shape.begin();
    test_linear_packed(d[0], d[1], d[2]);
  }
  test_conv(5, 5, 3, 4, 3, 3, 1, 1, 1);
  test_conv(9, 7, 8, 6, 3, 3, 2, 1, 1);
  test_conv(6, 6, 16, 20, 1, 1, 1, 0, 1);  // 1x1 fast path
  test_conv(8, 8, 17, 9, 1, 1, 1, 0, 1);
  test_conv(10, 8, 5, 3, 3, 3, 1, 2, 2);
  test_conv(12, 12, 33, 7, 5, 5, 2, 2, 1);
  test_conv(16, 16, 64, 32, 3, 3, 1, 1, 1);
  // The MVE paths' edges: pixel counts not a multiple of four (conv) or two (depthwise pairs),
  // filters and channel counts not a multiple of 16 / 8 (tail-predicated loops and blocks),
  // windows in the padding on every side, strides and dilation.
  test_conv(7, 9, 20, 5, 3, 3, 1, 1, 1);
  test_conv(13, 11, 3, 8, 3, 3, 2, 1, 1);  // a first layer: three input channels, stride 2
  test_conv(24, 24, 32, 16, 3, 3, 2, 1, 1);
  test_conv(9, 9, 16, 12, 1, 1, 2, 0, 1);  // 1x1 with stride 2: through im2col
  test_conv(6, 6, 7, 9, 1, 1, 1, 0, 1);    // 1x1, seven channels: one partial vector
  test_conv(3, 3, 40, 48, 3, 3, 1, 1, 1);  // every window touches the padding
  test_conv(5, 7, 8, 8, 5, 5, 1, 2, 1);
  test_conv(11, 10, 12, 4, 3, 3, 1, 2, 2);
  test_conv(2, 9, 33, 3, 3, 3, 1, 1, 1);
  test_conv(12, 12, 3, 8, 3, 3, 2, 0, 1,
            1);  // SAME pad folded in: 12 -> 6 with pad 0 top, 1 bottom
  test_conv(8, 10, 24, 16, 3, 3, 2, 0, 1, 1);
  test_conv(7, 7, 17, 5, 3, 3, 1, 1, 1, 1);
  // Depthwise 3x3 four-pixel paths: channels with immediate-offset kernels (8, 16, 32, 64, also
  // under stride 2), the generic one (128), dilation 2, rows whose leftover pixels (1 to 3) go
  // through the tap table together with the next row's.
  test_conv(6, 14, 8, 4, 3, 3, 1, 1, 1);
  test_conv(5, 21, 16, 4, 3, 3, 2, 1, 1);
  test_conv(4, 11, 32, 4, 3, 3, 1, 1, 1);
  test_conv(3, 13, 64, 4, 3, 3, 2, 1, 1);
  test_conv(3, 10, 128, 4, 3, 3, 1, 1, 1);
  test_conv(7, 15, 12, 4, 3, 3, 1, 2, 2);
  // The narrow-input variants of the convolution. Three-row kernels on 1 to 4 channels (rows
  // plus one pixel's step of at most 16 bytes): strides 1 and 2, odd widths (blocks of four
  // pixels cut by the row's end), windows in the padding on every side (pad 2: whole blocks in
  // it; the folded SAME pad), rows longer than a tile, kernels 3x2 and 3x1, channel counts not
  // a multiple of four; then one past the limit (4 channels, stride 2: the general path).
  test_conv(7, 9, 1, 5, 3, 3, 1, 1, 1);
  test_conv(8, 11, 2, 7, 3, 3, 2, 1, 1);
  test_conv(9, 13, 3, 3, 3, 3, 2, 1, 1);
  test_conv(6, 7, 4, 9, 3, 3, 1, 1, 1);
  test_conv(5, 6, 3, 4, 3, 3, 1, 2, 1);
  test_conv(11, 9, 3, 8, 3, 3, 2, 0, 1, 1);
  test_conv(4, 60, 2, 13, 3, 3, 1, 1, 1);
  test_conv(6, 10, 2, 5, 3, 2, 1, 1, 1);
  test_conv(9, 8, 3, 4, 3, 1, 2, 1, 1);
  test_conv(6, 7, 4, 9, 3, 3, 2, 1, 1);
  // 1x1 on at most 16 channels (blocks of four pixels, pairs of output channels: an even number
  // of them, odd ones take the general path) and on 17 to 32 (blocks of three, tiles; at most 64
  // output channels); 16 and 32 channels read the weights in place: pixel counts not a
  // multiple of the block, more pixels than a tile, 64 and 65 output channels (33 input
  // channels: the general path).
  test_conv(9, 9, 8, 6, 1, 1, 1, 0, 1);
  test_conv(9, 9, 8, 5, 1, 1, 1, 0, 1);
  test_conv(2, 5, 8, 2, 1, 1, 1, 0, 1);
  test_conv(5, 7, 1, 14, 1, 1, 1, 0, 1);
  test_conv(5, 7, 1, 13, 1, 1, 1, 0, 1);
  test_conv(4, 5, 3, 64, 1, 1, 1, 0, 1);
  test_conv(7, 7, 16, 34, 1, 1, 1, 0, 1);
  test_conv(3, 3, 12, 66, 1, 1, 1, 0, 1);
  test_conv(9, 9, 20, 5, 1, 1, 1, 0, 1);
  test_conv(4, 7, 17, 9, 1, 1, 1, 0, 1);
  test_conv(5, 5, 32, 8, 1, 1, 1, 0, 1);
  test_conv(3, 5, 24, 64, 1, 1, 1, 0, 1);
  test_conv(3, 3, 24, 65, 1, 1, 1, 0, 1);
  test_conv(2, 2, 33, 8, 1, 1, 1, 0, 1);
  // Shifts at the ends of the narrow variants' range, and some not negative (general path).
  const int32_t shift_ranges[3][2] = {{-1, -1}, {-31, -24}, {-2, 2}};
  for (const auto& range : shift_ranges) {
    g_conv_shift_lo = range[0], g_conv_shift_hi = range[1];
    test_conv(6, 6, 8, 8, 1, 1, 1, 0, 1);
    test_conv(5, 5, 32, 8, 1, 1, 1, 0, 1);
    test_conv(7, 8, 3, 8, 3, 3, 2, 1, 1);
  }
  // All of int8 as the activation range, shifts the DSP loops requantise themselves (-1 to -20).
  g_act_min = -128, g_conv_shift_lo = -20, g_conv_shift_hi = -1;
  test_conv(8, 8, 16, 8, 3, 3, 1, 1, 1);
  test_conv(6, 6, 64, 12, 1, 1, 1, 0, 1);
  test_conv(5, 5, 3, 5, 3, 3, 1, 1, 1);
  test_conv(9, 9, 8, 9, 1, 1, 1, 0, 1);
  g_act_min = -120, g_conv_shift_lo = -11, g_conv_shift_hi = -7;
  for (int32_t c = 1; c <= 9; ++c) test_depthwise(5, 7, c, 1, 1);
  for (int32_t c : {3, 9, 17, 24}) test_depthwise(7, 8, c, 2, 1);
  test_depthwise(6, 1, 24, 1, 1);  // one output column: only the odd pixel
  test_depthwise(4, 2, 16, 2, 1);
  test_depthwise(9, 10, 16, 2, 0);             // stride 2 leaving the last input column out
  test_depthwise(9, 10, 24, 2, 0, 1, 1);       // folded SAME padding
  test_depthwise(5, 6, 40, 1, 2);              // windows wholly in the padding
  test_depthwise(6, 9, 24, 1, 1, 1, 0, 3, 2);  // positive shifts
  test_depthwise(6, 9, 24, 2, 1, 1, 0, 3, 1);
  test_depthwise(6, 9, 24, 1, 1, 2);               // dilation: the general path
  test_depthwise(5, 7, 9, 1, 2, 1, 0, 5);          // 5x5: the general path
  test_depthwise(5, 7, 9, 3, 1);                   // stride 3: the general path
  test_depthwise(4, 5, 12, 1, 1, 1, 0, 3, -5, 2);  // two images
  test_depthwise(3, 3, 256, 1, 1);
  test_softmax(1, 10);
  test_softmax(4, 37);
  test_softmax(2, 100);
  test_transpose(1, 3, 5, 7);
  test_transpose(2, 16, 4, 4);
  test_transpose(1, 40, 3, 3);   // input stride too large for the byte gather
  test_transpose(1, 3, 20, 37);  // an image input: few channels scattered, widths off 16
  test_transpose(2, 17, 5, 19);  // the most channels the scatter takes
  test_transpose(1, 18, 4, 5);   // one more: element by element
  test_transpose(1, 3, 48, 48);  // an image: its output overlaps most of two input planes
  test_upsample(1, 4, 5, 3, 8, 10);
  test_upsample(2, 6, 7, 16, 12, 14);
  test_upsample(1, 5, 5, 17, 9, 11);
  test_upsample(1, 8, 8, 33, 4, 16);
  test_upsample(1, 3, 9, 1, 7, 5);
  printf("%d of %d cases differ between the scalar and vector paths\n", g_failures, g_cases);
  return g_failures == 0 ? 0 : 1;
}
