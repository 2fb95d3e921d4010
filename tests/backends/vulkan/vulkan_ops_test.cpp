// Each Vulkan shader (through the delegate, on lavapipe in CI) against the portable kernel on
// the same inputs. Tolerances: elementwise and clamp 1e-6 (abs) + 1e-6 (rel); linear/mm/addmm
// 1e-4 abs + 1e-5 rel (summation order differs: 16-wide tiles vs the portable blocking);
// softmax 1e-6 abs + 1e-5 rel (the device's exp).
#include <cmath>
#include <limits>

#include "tests/backends/vulkan/vulkan_test_util.h"

namespace pteron::vulkan::testing {
namespace {

struct LinearCase {
  std::vector<int32_t> in;  // [..., K]
  int32_t n;
  bool bias;
};

// linear (weight [N, K]) vs aten::linear.out.
void check_linear(const LinearCase& c, uint32_t seed) {
  const int32_t k = c.in.back();
  std::vector<int32_t> out = c.in;
  out.back() = c.n;
  const auto x = random_floats(numel(c.in), seed);
  const auto w = random_floats(static_cast<size_t>(c.n) * k, seed + 1);
  const auto bv = random_floats(static_cast<size_t>(c.n), seed + 2);
  PayloadBuilder b;
  const uint32_t xi = b.add_input(u32(c.in), 0);
  const uint32_t wi = b.add_constant({uint32_t(c.n), uint32_t(k)}, w);
  std::vector<uint32_t> ins = {xi, wi};
  if (c.bias) ins.push_back(b.add_constant({uint32_t(c.n)}, bv));
  const uint32_t yi = b.add_output(u32(out), 1);
  b.add_node(fb::OpType::Linear, ins, yi);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor tx(c.in, x), ty(out), tw({c.n, k}, w), tb({c.n}, bv), ref(out);
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  EValue none;
  run_portable("aten::linear.out",
               {tx.value(), tw.value(), c.bias ? tb.value() : &none, ref.value()});
  expect_close(ty.read(), ref.read(), 1e-5f, 1e-4f, "linear");
}

// Runs `body` once with each linear/matmul shader (tiled shared-memory, barrier-free direct).
template <typename F>
void for_each_linear_shader(F body) {
  for (LinearShader s : {LinearShader::Tiled, LinearShader::Direct}) {
    SCOPED_TRACE(s == LinearShader::Tiled ? "tiled shader" : "direct shader");
    set_linear_shader(s);
    body();
  }
  set_linear_shader(LinearShader::Auto);
}

TEST(VulkanOps, LinearMatchesPortable) {
  const LinearCase cases[] = {
      {{1, 1}, 1, false},  {{4, 32}, 16, true}, {{3, 17}, 33, true},
      {{2, 5, 40}, 7, false}, {{65, 70}, 31, true}, {{128, 256}, 96, true},
  };
  for_each_linear_shader([&] {
    uint32_t seed = 1;
    for (const LinearCase& c : cases) {
      SCOPED_TRACE(::testing::Message() << "K=" << c.in.back() << " N=" << c.n);
      check_linear(c, seed += 3);
    }
  });
}

void check_matmuls();

// mm (weight [K, N]) and addmm (bias [N], beta = alpha = 1) vs the portable kernels; the mm
// weight here is a constant, the activation an input.
TEST(VulkanOps, MatMulAndAddmmMatchPortable) {
  for_each_linear_shader([] { check_matmuls(); });
}

void check_matmuls() {
  for (auto [m, k, n] : {std::tuple{1, 1, 1}, {7, 19, 23}, {33, 64, 17}, {50, 3, 100}}) {
    for (bool bias : {false, true}) {
      SCOPED_TRACE(::testing::Message() << m << "x" << k << "x" << n << " bias=" << bias);
      const auto a = random_floats(size_t(m) * k, 11);
      const auto w = random_floats(size_t(k) * n, 12);
      const auto bv = random_floats(size_t(n), 13);
      PayloadBuilder b;
      const uint32_t ai = b.add_input({uint32_t(m), uint32_t(k)}, 0);
      const uint32_t wi = b.add_constant({uint32_t(k), uint32_t(n)}, w);
      std::vector<uint32_t> ins = {ai, wi};
      if (bias) ins.push_back(b.add_constant({uint32_t(n)}, bv));
      const uint32_t yi = b.add_output({uint32_t(m), uint32_t(n)}, 1);
      b.add_node(fb::OpType::MatMul, ins, yi);
      Delegate d;
      ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
      TestTensor ta({m, k}, a), tw({k, n}, w), tb({n}, bv), ty({m, n}), ref({m, n});
      ASSERT_EQ(d.execute({ta.value(), ty.value()}), Error::Ok) << last_error_message();
      if (bias) {
        EValue one = EValue::from_double(1.0);
        run_portable("aten::addmm.out",
                     {tb.value(), ta.value(), tw.value(), &one, &one, ref.value()});
      } else {
        run_portable("aten::mm.out", {ta.value(), tw.value(), ref.value()});
      }
      expect_close(ty.read(), ref.read(), 1e-5f, 1e-4f, bias ? "addmm" : "mm");
    }
  }
}

struct BinaryCase {
  std::vector<int32_t> a, b, out;
};

TEST(VulkanOps, BinaryBroadcastMatchesPortable) {
  const BinaryCase cases[] = {
      {{1}, {1}, {1}},
      {{5, 7}, {5, 7}, {5, 7}},
      {{5, 7}, {7}, {5, 7}},
      {{4, 1, 3}, {1, 6, 1}, {4, 6, 3}},
      {{2, 3, 1, 5}, {3, 4, 1}, {2, 3, 4, 5}},
      {{1, 1, 1, 1, 1, 9}, {2, 3, 1, 2, 2, 1}, {2, 3, 1, 2, 2, 9}},
      {{1000, 33}, {1, 33}, {1000, 33}},
  };
  const struct {
    fb::OpType op;
    const char* kernel;
    float alpha;
  } ops[] = {{fb::OpType::Add, "aten::add.out", 1.0f},
             {fb::OpType::Add, "aten::add.out", 2.5f},
             {fb::OpType::Sub, "aten::sub.out", 1.0f},
             {fb::OpType::Sub, "aten::sub.out", -0.5f},
             {fb::OpType::Mul, "aten::mul.out", 1.0f}};
  uint32_t seed = 100;
  for (const BinaryCase& c : cases) {
    for (const auto& op : ops) {
      SCOPED_TRACE(::testing::Message() << op.kernel << " alpha=" << op.alpha << " out rank "
                                        << c.out.size() << " numel " << numel(c.out));
      const auto av = random_floats(numel(c.a), ++seed);
      const auto bv = random_floats(numel(c.b), ++seed);
      PayloadBuilder b;
      const uint32_t ai = b.add_input(u32(c.a), 0);
      const uint32_t bi = b.add_input(u32(c.b), 1);
      const uint32_t yi = b.add_output(u32(c.out), 2);
      b.add_node(op.op, {ai, bi}, yi, {.alpha = op.alpha});
      Delegate d;
      ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
      TestTensor ta(c.a, av), tb(c.b, bv), ty(c.out), ref(c.out);
      ASSERT_EQ(d.execute({ta.value(), tb.value(), ty.value()}), Error::Ok)
          << last_error_message();
      EValue alpha = EValue::from_double(op.alpha);
      if (op.op == fb::OpType::Mul) {
        run_portable(op.kernel, {ta.value(), tb.value(), ref.value()});
      } else {
        run_portable(op.kernel, {ta.value(), tb.value(), &alpha, ref.value()});
      }
      expect_close(ty.read(), ref.read(), 1e-6f, 1e-6f, op.kernel);
    }
  }
}

TEST(VulkanOps, ReluAndClampMatchPortable) {
  const std::vector<int32_t> sizes = {3, 70, 5};
  auto x = random_floats(numel(sizes), 7, -3.0f, 3.0f);
  x[5] = std::numeric_limits<float>::quiet_NaN();  // NaN passes through, as in torch
  const float inf = std::numeric_limits<float>::infinity();
  for (auto [lo, hi] : {std::pair{0.0f, inf}, {-1.0f, 1.0f}, {0.0f, 6.0f}, {-inf, 0.5f}}) {
    SCOPED_TRACE(::testing::Message() << "clamp " << lo << " " << hi);
    PayloadBuilder b;
    const uint32_t xi = b.add_input(u32(sizes), 0);
    const uint32_t yi = b.add_output(u32(sizes), 1);
    b.add_node(fb::OpType::Clamp, {xi}, yi, {.output_min = lo, .output_max = hi});
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor tx(sizes, x), ty(sizes), ref(sizes);
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    EValue vlo = EValue::from_double(lo), vhi = EValue::from_double(hi), none;
    if (lo == 0.0f && hi == inf) {
      run_portable("aten::relu.out", {tx.value(), ref.value()});
    } else {
      run_portable("aten::clamp.out", {tx.value(), std::isinf(lo) ? &none : &vlo,
                                       std::isinf(hi) ? &none : &vhi, ref.value()});
    }
    auto got = ty.read();
    auto want = ref.read();
    EXPECT_TRUE(std::isnan(got[5]));
    EXPECT_TRUE(std::isnan(want[5]));
    want[5] = got[5] = 0.0f;
    expect_close(got, want, 1e-6f, 1e-6f, "clamp");
  }
}

TEST(VulkanOps, SoftmaxMatchesPortable) {
  for (const std::vector<int32_t>& sizes :
       std::vector<std::vector<int32_t>>{{1}, {4, 10}, {3, 2, 65}, {7, 1000}, {300, 3}}) {
    SCOPED_TRACE(::testing::Message() << "last dim " << sizes.back());
    const auto x = random_floats(numel(sizes), 21, -8.0f, 8.0f);
    PayloadBuilder b;
    const uint32_t xi = b.add_input(u32(sizes), 0);
    const uint32_t yi = b.add_output(u32(sizes), 1);
    b.add_node(fb::OpType::Softmax, {xi}, yi);
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor tx(sizes, x), ty(sizes), ref(sizes);
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    EValue dim = EValue::from_int(-1), half = EValue::from_bool(false);
    run_portable("aten::_softmax.out", {tx.value(), &dim, &half, ref.value()});
    expect_close(ty.read(), ref.read(), 1e-5f, 1e-6f, "softmax");
  }
}

}  // namespace
}  // namespace pteron::vulkan::testing
