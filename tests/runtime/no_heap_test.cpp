// execute() allocates no heap memory: a counting malloc wraps the process allocator and the
// count must not move across execute().
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "tests/runtime/test_program_builder.h"

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);

namespace {
std::atomic<long> g_allocations{0};
}

// glibc lets the executable interpose malloc; the runtime, kernels and libstdc++ all come here.
extern "C" void* malloc(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
extern "C" void* calloc(size_t n, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(p, size);
}

namespace pteron {
namespace {

TEST(NoHeap, ExecuteAllocatesNothing) {
  auto bytes = testing::build_add_program({.n = 1000, .out_offset = 8192, .arena_bytes = 16384});
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  std::vector<float> x(1000, 1.f), y(1000, 2.f);
  int32_t sizes[1] = {1000}, strides[1];
  uint8_t order[1] = {0};
  Tensor tx(ScalarType::Float, 1, sizes, order, strides, x.data());
  Tensor ty(ScalarType::Float, 1, sizes, order, strides, y.data());
  ASSERT_EQ(m.set_input(0, tx), Error::Ok);
  ASSERT_EQ(m.set_input(1, ty), Error::Ok);
  ASSERT_EQ(m.execute(), Error::Ok);  // warm-up

  void* probe = std::malloc(16);  // proves the hook is live
  std::free(probe);
  ASSERT_GT(g_allocations.load(), 0);
  const long before = g_allocations.load();
  for (int i = 0; i < 10; ++i) ASSERT_EQ(m.execute(), Error::Ok);
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(m.output(0).tensor->data<const float>()[999], 3.f);
}

#ifdef PTERON_DYNAMIC_FIXTURE
// A bounded dynamic program (tests/fixtures/dynamic/derived.pte: x[b, s, 4] with b in [1, 8],
// s in [3, 64]; outputs reshape(cat(x, x, 1)[:, 1:]) * 2 and pad(x, s // 3 rows)): set_input at
// new sizes, the prim ops computing sizes and the kernels resizing outputs allocate nothing.
TEST(NoHeap, DynamicProgramAllocatesNothingAcrossSizes) {
  std::ifstream f(PTERON_DYNAMIC_FIXTURE, std::ios::binary);
  ASSERT_TRUE(f) << PTERON_DYNAMIC_FIXTURE;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  std::vector<float> x(8 * 64 * 4, 1.f);
  int32_t shapes[][3] = {{1, 3, 4}, {8, 64, 4}, {3, 10, 4}, {2, 7, 4}};
  int32_t strides[3];
  uint8_t order[3] = {0, 1, 2};
  auto run = [&](int32_t* sizes) {
    Tensor t(ScalarType::Float, 3, sizes, order, strides, x.data());
    ASSERT_EQ(m.set_input(0, t), Error::Ok) << last_error_message();
    ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
    const int64_t b = sizes[0], s = sizes[1];
    EXPECT_EQ(m.output(0).tensor->numel(), b * (2 * s - 1) * 4);
    EXPECT_EQ(m.output(1).tensor->size(1), s + s / 3);
  };
  run(shapes[1]);  // warm-up
  const long before = g_allocations.load();
  for (int k = 0; k < 3; ++k) {
    for (auto& shape : shapes) run(shape);
  }
  EXPECT_EQ(g_allocations.load(), before);
  int32_t too_long[3] = {1, 65, 4};
  Tensor t(ScalarType::Float, 3, too_long, order, strides, x.data());
  EXPECT_EQ(m.set_input(0, t), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("dim 1"), std::string::npos);
}
#endif

}  // namespace
}  // namespace pteron
