// Instruction counts of representative cortex_m kernels on the scalar and the MVE path, for
// tools/qemu_icount (h8): one workload per firmware (CORTEX_M_BENCH_OP), run between
// board_icount_begin() and board_icount_end(), with the path chosen by CORTEX_M_BENCH_MVE.
// Not a test: tests/baremetal/cortex_m/icount_bench.sh builds the numbers table.
#include <cstdio>
#include <cstring>

#include "board.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

using namespace pteron;

namespace {

alignas(16) int8_t g_in[32 * 1024];
alignas(16) int8_t g_weight[48 * 1024];
alignas(16) int8_t g_out[32 * 1024];
alignas(16) int32_t g_bias[256], g_mult[256], g_shift[256];
alignas(16) uint8_t g_scratch[16 * 1024];

struct Box {
  int32_t sizes[4];
  uint8_t order[4] = {0, 1, 2, 3};
  int32_t strides[4];
  Tensor t;
  EValue v;
  Box(ScalarType dtype, std::initializer_list<int32_t> s, void* data) {
    int32_t rank = 0;
    for (int32_t x : s) sizes[rank++] = x;
    t = Tensor(dtype, rank, sizes, order, strides, data);
    v = EValue::from_tensor(&t);
  }
};

EValue I(int64_t v) { return EValue::from_int(v); }
EValue L(const int64_t* p, size_t n) {
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(p, n);
  return e;
}

int run(const char* op, EValue** args, size_t n) {
  const KernelEntry* k = find_kernel(op, "");
  if (k == nullptr) return 2;
  MemoryAllocator scratch(g_scratch, sizeof(g_scratch));
  KernelContext ctx{&scratch};
  board_icount_begin();
  const Error e = k->fn(ctx, Span<EValue*>(args, n));
  board_icount_end();
  if (e != Error::Ok) {
    printf("%s: %s\n", op, last_error_message());
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  cortex_m::set_use_mve(CORTEX_M_BENCH_MVE != 0);
  for (size_t i = 0; i < sizeof(g_in); ++i) g_in[i] = static_cast<int8_t>(i * 37 + 11);
  for (size_t i = 0; i < sizeof(g_weight); ++i) g_weight[i] = static_cast<int8_t>(i * 13 + 5);
  for (int i = 0; i < 256; ++i) g_bias[i] = i * 17 - 2000, g_mult[i] = 1500000000, g_shift[i] = -9;
  EValue none, in_off = I(5), out_off = I(-3), amin = I(-128), amax = I(127);
  const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
  EValue s1 = L(one, 2), p0 = L(zero, 2), p1 = L(one, 2), d1 = L(one, 2);
  const int op = CORTEX_M_BENCH_OP;
  if (op == 0) {  // 3x3 convolution, 16x16x32 -> 32 (resnet-8 / ds-cnn body)
    Box x(ScalarType::Char, {1, 16, 16, 32}, g_in), w(ScalarType::Char, {32, 3, 3, 32}, g_weight);
    Box b(ScalarType::Int, {32}, g_bias), m(ScalarType::Int, {32}, g_mult), s(ScalarType::Int, {32}, g_shift);
    Box y(ScalarType::Char, {1, 16, 16, 32}, g_out);
    EValue* args[] = {&x.v, &w.v, &b.v, &s1, &p1, &d1, &in_off, &out_off, &m.v, &s.v, &amin, &amax, &none, &y.v};
    return run("cortex_m::quantized_conv2d_nhwc.out", args, 14);
  }
  if (op == 1) {  // 1x1 convolution, 16x16x64 -> 64 (mobilenet pointwise)
    Box x(ScalarType::Char, {1, 16, 16, 64}, g_in), w(ScalarType::Char, {64, 1, 1, 64}, g_weight);
    Box b(ScalarType::Int, {64}, g_bias), m(ScalarType::Int, {64}, g_mult), s(ScalarType::Int, {64}, g_shift);
    Box y(ScalarType::Char, {1, 16, 16, 64}, g_out);
    EValue* args[] = {&x.v, &w.v, &b.v, &s1, &p0, &d1, &in_off, &out_off, &m.v, &s.v, &amin, &amax, &none, &y.v};
    return run("cortex_m::quantized_conv2d_nhwc.out", args, 14);
  }
  if (op == 2) {  // depthwise 3x3, 16x16x64 (mobilenet depthwise)
    Box x(ScalarType::Char, {1, 16, 16, 64}, g_in), w(ScalarType::Char, {1, 3, 3, 64}, g_weight);
    Box b(ScalarType::Int, {64}, g_bias), m(ScalarType::Int, {64}, g_mult), s(ScalarType::Int, {64}, g_shift);
    Box y(ScalarType::Char, {1, 16, 16, 64}, g_out);
    EValue mult = I(1);
    EValue* args[] = {&x.v, &w.v, &b.v, &s1, &p1, &d1, &mult, &in_off, &out_off, &m.v, &s.v, &amin, &amax, &none, &y.v};
    return run("cortex_m::quantized_depthwise_conv2d_nhwc.out", args, 15);
  }
  // fully connected 1x640 -> 128 (fc-autoencoder layer)
  Box x(ScalarType::Char, {1, 640}, g_in), w(ScalarType::Char, {128, 640}, g_weight);
  Box b(ScalarType::Int, {128}, g_bias), y(ScalarType::Char, {1, 128}, g_out);
  int64_t mults[1] = {1500000000}, shifts[1] = {-9};
  EValue ml = L(mults, 1), sl = L(shifts, 1), w_off = I(0);
  EValue* args[] = {&x.v, &w.v, &b.v, &none, &in_off, &w_off, &out_off, &ml, &sl, &amax, &amin, &y.v};
  return run("cortex_m::quantized_linear.out", args, 12);
}
