// One cortex_m kernel call on one layer shape, on the scalar or the vector (MVE or DSP) path,
// between board_icount_begin() and board_icount_end(), for tools/qemu_icount. The layer comes from
// the QEMU command line (`-append`), so one firmware serves every shape:
//   scalar|simd conv H W CIN COUT K STRIDE PAD     (KxK convolution, NHWC)
//   scalar|simd dw H W C K STRIDE PAD              (KxK depthwise, multiplier 1)
//   scalar|simd linear ROWS IN OUT
//   scalar|simd fc ROWS IN OUT                     (quantized_linear_packed)
//   scalar|simd add N                              (elementwise int8 add)
//   scalar|simd avgpool H W C K                    (KxK average pool, stride K)
//   scalar|simd upnearest H W C                    (2x nearest upsample, NHWC)
//   scalar|simd upbilinear H W C                   (2x bilinear upsample, align_corners=False)
// Not a test: bench/cortex_m_layers.py runs the MLPerf Tiny layer shapes through it.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "board.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"
#include "semihosting.h"
#include "tests/baremetal/cortex_m/tensor_box.h"

using namespace pteron;

namespace {

alignas(16) int8_t g_in[48 * 1024];
alignas(16) int8_t g_in2[48 * 1024];
alignas(16) int8_t g_weight[96 * 1024];
alignas(16) int8_t g_out[48 * 1024];
alignas(16) int32_t g_bias[1024], g_mult[1024], g_shift[1024];
alignas(16) uint8_t g_scratch[16 * 1024];

int run(const char* op, EValue** args, size_t n) {
  const KernelEntry* k = find_kernel(op, "");
  if (k == nullptr) return 2;
  MemoryAllocator scratch(g_scratch, sizeof(g_scratch));
  KernelContext ctx{&scratch};
  board_icount_begin();
  const Error e = call_kernel(*k, ctx, Span<EValue*>(args, n));
  board_icount_end();
  if (e != Error::Ok) {
    printf("%s: %s\n", op, last_error_message());
    return 1;
  }
  return 0;
}

bool fits(int64_t bytes, size_t capacity) {
  if (bytes <= static_cast<int64_t>(capacity)) return true;
  printf("layer needs %lld bytes, the buffer has %u\n", static_cast<long long>(bytes),
         static_cast<unsigned>(capacity));
  return false;
}

int conv(const int32_t* a, bool depthwise) {
  const int32_t h = a[0], w = a[1], cin = a[2], cout = depthwise ? cin : a[3];
  const int32_t* win = a + (depthwise ? 3 : 4);
  const int32_t k = win[0], stride = win[1], pad = win[2];
  const int32_t oh = (h + 2 * pad - k) / stride + 1, ow = (w + 2 * pad - k) / stride + 1;
  if (!fits(int64_t{h} * w * cin, sizeof(g_in)) || !fits(int64_t{oh} * ow * cout, sizeof(g_out)) ||
      !fits(int64_t{k} * k * cin * (depthwise ? 1 : cout), sizeof(g_weight)) || cout > 512) {
    return 3;
  }
  TensorBox x(ScalarType::Char, {1, h, w, cin}, g_in),
      y(ScalarType::Char, {1, oh, ow, cout}, g_out);
  TensorBox wt(ScalarType::Char, {depthwise ? 1 : cout, k, k, depthwise ? cout : cin}, g_weight);
  TensorBox b(ScalarType::Int, {cout}, g_bias), m(ScalarType::Int, {cout}, g_mult),
      s(ScalarType::Int, {cout}, g_shift);
  const int64_t st[2] = {stride, stride}, pd[2] = {pad, pad}, dl[2] = {1, 1};
  EValue stv = L(st, 2), pdv = L(pd, 2), dlv = L(dl, 2), none, in_off = I(5), out_off = I(-3),
         amin = I(-128), amax = I(127), mult = I(1);
  if (depthwise) {
    EValue* args[] = {&x.v,     &wt.v, &b.v, &stv,  &pdv,  &dlv,  &mult, &in_off,
                      &out_off, &m.v,  &s.v, &amin, &amax, &none, &y.v};
    return run("cortex_m::quantized_depthwise_conv2d_nhwc.out", args, 15);
  }
  EValue* args[] = {&x.v,     &wt.v, &b.v, &stv,  &pdv,  &dlv,  &in_off,
                    &out_off, &m.v,  &s.v, &amin, &amax, &none, &y.v};
  return run("cortex_m::quantized_conv2d_nhwc.out", args, 14);
}

int linear(const int32_t* a) {
  const int32_t rows = a[0], in = a[1], out = a[2];
  if (!fits(int64_t{rows} * in, sizeof(g_in)) || !fits(int64_t{in} * out, sizeof(g_weight)) ||
      !fits(int64_t{rows} * out, sizeof(g_out)) || out > 1024) {
    return 3;
  }
  TensorBox x(ScalarType::Char, {rows, in}, g_in), w(ScalarType::Char, {out, in}, g_weight);
  TensorBox b(ScalarType::Int, {out}, g_bias), y(ScalarType::Char, {rows, out}, g_out);
  int64_t mults[1] = {1500000000}, shifts[1] = {-9};
  EValue none, ml = L(mults, 1), sl = L(shifts, 1), in_off = I(5), w_off = I(0), out_off = I(-3),
               amin = I(-128), amax = I(127);
  EValue* args[] = {&x.v,     &w.v, &b.v, &none, &in_off, &w_off,
                    &out_off, &ml,  &sl,  &amax, &amin,   &y.v};
  return run("cortex_m::quantized_linear.out", args, 12);
}

// The packed layout holds the same weights as g_weight's first out * in bytes, padded.
alignas(16) int8_t g_packed[96 * 1024];
alignas(16) int32_t g_channel_quant[1024 * 4];
int fc(const int32_t* a) {
  const int32_t rows = a[0], in = a[1], out = a[2];
  const int32_t groups = static_cast<int32_t>(cortex_m::linear_groups(out));
  const int32_t chunks = static_cast<int32_t>(cortex_m::linear_chunks(in));
  if (!fits(int64_t{rows} * in, sizeof(g_in)) ||
      !fits(int64_t{groups} * chunks * 64, sizeof(g_packed)) ||
      !fits(int64_t{rows} * out, sizeof(g_out)) || out > 1024) {
    return 3;
  }
  for (int32_t o = 0; o < out; ++o) {
    for (int32_t i = 0; i < in; ++i)
      g_packed[cortex_m::linear_packed_index(o, i, chunks)] = g_weight[o * in + i];
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearKernelSum)] = g_bias[o];
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearMultiplier)] = 1500000000;
    g_channel_quant[cortex_m::linear_quant_index(o, cortex_m::kLinearRightShift)] = -9;
  }
  TensorBox x(ScalarType::Char, {rows, in}, g_in),
      w(ScalarType::Char, {groups, chunks, 4, 16}, g_packed);
  TensorBox q(ScalarType::Int, {groups, 4, 4}, g_channel_quant),
      y(ScalarType::Char, {rows, out}, g_out);
  EValue out_off = I(-3), amin = I(-128), amax = I(127);
  EValue* args[] = {&x.v, &w.v, &q.v, &out_off, &amin, &amax, &y.v};
  return run("cortex_m::quantized_linear_packed.out", args, 7);
}

int add(const int32_t* a) {
  const int32_t n = a[0];
  if (!fits(n, sizeof(g_in))) return 3;
  TensorBox x(ScalarType::Char, {n}, g_in), x2(ScalarType::Char, {n}, g_in2),
      y(ScalarType::Char, {n}, g_out);
  EValue m1 = I(1500000000), s1 = I(-1), m2 = I(1300000000), s2 = I(-1), mo = I(1200000000),
         so = I(-19), z1 = I(3), z2 = I(-4), zo = I(2), lo = I(-128), hi = I(127);
  EValue* args[] = {&x.v, &z1, &m1, &s1, &x2.v, &z2, &m2, &s2, &zo, &mo, &so, &lo, &hi, &y.v};
  return run("cortex_m::quantized_add.out", args, 14);
}

int avgpool(const int32_t* a) {
  const int32_t h = a[0], w = a[1], c = a[2], k = a[3];
  if (!fits(int64_t{h} * w * c, sizeof(g_in))) return 3;
  TensorBox x(ScalarType::Char, {1, h, w, c}, g_in),
      y(ScalarType::Char, {1, h / k, w / k, c}, g_out);
  const int64_t ks[2] = {k, k}, zero[2] = {0, 0};
  EValue ksv = L(ks, 2), stv = L(ks, 2), pdv = L(zero, 2), ceil = EValue::from_bool(false),
         zp = I(0), pm = I(1 << 30), ps = I(1), none;
  EValue* args[] = {&x.v, &ksv, &stv, &pdv, &ceil, &zp, &pm, &ps, &none, &y.v};
  return run("cortex_m::quantized_avg_pool2d_nhwc.out", args, 10);
}

// 2x upsampling tables as the lowering makes them for a 2x resize: nearest o / 2; bilinear
// (align_corners=False) source (o + 0.5) / 2 - 0.5, clamped at 0, weights 0.25 / 0.75 in Q11.
alignas(16) int32_t g_table[3 * 1024];
int upsample(const int32_t* a, bool bilinear) {
  const int32_t h = a[0], w = a[1], c = a[2];
  if (!fits(int64_t{h} * w * c, sizeof(g_in)) || !fits(int64_t{4} * h * w * c, sizeof(g_out)) ||
      2 * (h + w) > 1024) {
    return 3;
  }
  int32_t* t = g_table;
  for (int32_t axis = 0; axis < 2; ++axis) {
    const int32_t in = axis == 0 ? h : w;
    for (int32_t o = 0; o < 2 * in; ++o) {
      if (!bilinear) {
        *t++ = o / 2;
        continue;
      }
      const int32_t i0 = o == 0 ? 0 : (o - 1) / 2;
      *t++ = i0;
      *t++ = i0 + (i0 < in - 1 ? 1 : 0);
      *t++ = o == 0 || o == 2 * in - 1 ? 0 : (o % 2 ? 512 : 1536);
    }
  }
  TensorBox x(ScalarType::Char, {1, h, w, c}, g_in),
      y(ScalarType::Char, {1, 2 * h, 2 * w, c}, g_out);
  const int32_t table_shape[2] = {2 * (h + w), 3};
  TensorBox table(ScalarType::Int, bilinear ? 2 : 1, table_shape, g_table);
  if (!bilinear) {
    EValue* args[] = {&x.v, &table.v, &y.v};
    return run("cortex_m::upsample_nearest2d_nhwc.out", args, 3);
  }
  EValue zi = I(3), zo = I(-5), m = I(1500000000), s = I(-22);
  EValue* args[] = {&x.v, &table.v, &zi, &zo, &m, &s, &y.v};
  return run("cortex_m::upsample_bilinear2d_nhwc.out", args, 7);
}

}  // namespace

int main() {
  static char line[256];
  char* words[12] = {};
  int n = 0;
  if (sh_command_line(line, sizeof(line)) >= 0) {
    for (char* tok = strtok(line, " "); tok != nullptr && n < 12; tok = strtok(nullptr, " ")) {
      words[n++] = tok;
    }
  }
  // words[0] is the program's name.
  if (n < 3 || (strcmp(words[1], "simd") != 0 && strcmp(words[1], "scalar") != 0)) {
    printf("usage: scalar|simd conv|dw|linear|fc|add|avgpool|upnearest|upbilinear DIMS...\n");
    return 2;
  }
  cortex_m::set_use_simd(strcmp(words[1], "simd") == 0);
  int32_t dims[8] = {};
  for (int i = 3; i < n && i - 3 < 8; ++i) dims[i - 3] = static_cast<int32_t>(atoi(words[i]));
  for (size_t i = 0; i < sizeof(g_in); ++i) {
    g_in[i] = static_cast<int8_t>(i * 37 + 11);
    g_in2[i] = static_cast<int8_t>(i * 29 + 3);
  }
  // Weights in [-127, 127], as symmetric int8 quantisation makes them.
  for (size_t i = 0; i < sizeof(g_weight); ++i)
    g_weight[i] = static_cast<int8_t>((i * 13 + 5) % 255 - 127);
  for (int i = 0; i < 1024; ++i) g_bias[i] = i * 17 - 2000, g_mult[i] = 1500000000, g_shift[i] = -9;
  const char* op = words[2];
  if (strcmp(op, "conv") == 0) return conv(dims, false);
  if (strcmp(op, "dw") == 0) return conv(dims, true);
  if (strcmp(op, "linear") == 0) return linear(dims);
  if (strcmp(op, "fc") == 0) return fc(dims);
  if (strcmp(op, "add") == 0) return add(dims);
  if (strcmp(op, "avgpool") == 0) return avgpool(dims);
  if (strcmp(op, "upnearest") == 0) return upsample(dims, false);
  if (strcmp(op, "upbilinear") == 0) return upsample(dims, true);
  printf("unknown layer kind '%s'\n", op);
  return 2;
}
