// Each Vulkan shader (through the delegate, on lavapipe in CI) against the portable kernel on
// the same inputs. Tolerances: elementwise and clamp 1e-6 (abs) + 1e-6 (rel); linear/mm/addmm
// 1e-4 abs + 1e-5 rel (summation order differs: 16-wide tiles vs the portable blocking);
// softmax 1e-6 abs + 1e-5 rel (the device's exp); conv2d 1e-4 abs + 1e-5 rel; layer norm 1e-5
// abs + 1e-5 rel (the device's inversesqrt).
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

// Runs `body` once with each linear/matmul shader (tiled shared-memory, barrier-free direct,
// register-tiled).
template <typename F>
void for_each_linear_shader(F body) {
  for (LinearShader s : {LinearShader::Tiled, LinearShader::Direct, LinearShader::Registers}) {
    SCOPED_TRACE(s == LinearShader::Tiled    ? "tiled shader"
                 : s == LinearShader::Direct ? "direct shader"
                                             : "register-tiled shader");
    set_linear_shader(s);
    body();
  }
  set_linear_shader(LinearShader::Auto);
}

TEST(VulkanOps, LinearMatchesPortable) {
  const LinearCase cases[] = {
      {{1, 1}, 1, false},     {{4, 32}, 16, true},  {{3, 17}, 33, true},
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
      ASSERT_EQ(d.execute({ta.value(), tb.value(), ty.value()}), Error::Ok) << last_error_message();
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

EValue int_list(const std::vector<int64_t>& v) {
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(v.data(), v.size());
  return e;
}

struct ConvCase {
  int32_t n, c, h, w, oc, kh, kw, stride, pad, dil, groups;
  bool bias;
};

TEST(VulkanOps, Conv2dMatchesPortable) {
  const ConvCase cases[] = {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, true},      // 3x3 same padding
      {2, 8, 7, 9, 16, 1, 1, 1, 0, 1, 1, false},    // 1x1 (pointwise)
      {1, 6, 9, 9, 6, 3, 3, 2, 1, 1, 6, true},      // depthwise, stride 2
      {1, 4, 10, 6, 8, 3, 3, 1, 2, 2, 4, true},     // depthwise multiplier 2, dilation 2
      {1, 6, 5, 5, 4, 2, 3, 1, 0, 1, 2, false},     // 2 groups, non-square kernel
      {1, 16, 14, 14, 24, 5, 5, 3, 2, 1, 1, true},  // stride 3, 5x5
      // The tiled shaders' edges: channel blocks (8) straddling groups and the channel count,
      // pixel tiles (4 or 8) past the plane, batches.
      {2, 6, 5, 7, 10, 3, 3, 1, 1, 1, 2, true},    // 5 channels per group
      {3, 13, 3, 3, 11, 1, 1, 1, 0, 1, 1, true},   // pointwise, odd everything, batch 3
      {1, 5, 1, 1, 9, 1, 1, 1, 0, 1, 1, false},    // pointwise on one pixel
      {2, 7, 11, 5, 7, 3, 3, 1, 1, 1, 7, false},   // depthwise, batch 2
      {1, 3, 13, 13, 17, 7, 7, 2, 3, 1, 1, true},  // 7x7 stem-like, stride 2
      {1, 4, 6, 6, 8, 1, 1, 2, 0, 1, 1, true},     // strided 1x1 (not the pointwise path)
      {1, 8, 5, 5, 8, 1, 1, 1, 1, 1, 1, false},    // padded 1x1 (not the pointwise path)
      {1, 12, 6, 6, 12, 3, 3, 1, 1, 1, 3, true},   // 3 groups of 4 (grouped, not depthwise)
      {1, 5, 13, 19, 5, 3, 3, 1, 0, 1, 5, true},   // depthwise 3x3, no padding, odd width
      {2, 4, 12, 17, 8, 3, 3, 2, 1, 1, 4, false},  // depthwise 3x3 stride 2, multiplier 2
      {1, 3, 1, 2, 3, 3, 3, 1, 1, 1, 3, true},     // depthwise 3x3 on a 1x2 image
      {1, 6, 9, 11, 6, 5, 5, 1, 2, 1, 6, true},    // depthwise 5x5 (the general dw shader)
  };
  for (ConvShader shader : {ConvShader::Auto, ConvShader::Direct}) {
    set_conv_shader(shader);
    uint32_t seed = 300;
    for (const ConvCase& c : cases) {
      SCOPED_TRACE(::testing::Message() << (shader == ConvShader::Auto ? "tiled" : "direct")
                                        << " C=" << c.c << " OC=" << c.oc << " k=" << c.kh << "x"
                                        << c.kw << " groups=" << c.groups << " N=" << c.n);
      const int32_t oh = (c.h + 2 * c.pad - c.dil * (c.kh - 1) - 1) / c.stride + 1;
      const int32_t ow = (c.w + 2 * c.pad - c.dil * (c.kw - 1) - 1) / c.stride + 1;
      const std::vector<int32_t> xs = {c.n, c.c, c.h, c.w}, ws = {c.oc, c.c / c.groups, c.kh, c.kw};
      const std::vector<int32_t> ys = {c.n, c.oc, oh, ow};
      const auto x = random_floats(numel(xs), ++seed), w = random_floats(numel(ws), ++seed);
      const auto bv = random_floats(size_t(c.oc), ++seed);
      PayloadBuilder b;
      const uint32_t xi = b.add_input(u32(xs), 0);
      std::vector<uint32_t> ins = {xi, b.add_constant(u32(ws), w)};
      if (c.bias) ins.push_back(b.add_constant({uint32_t(c.oc)}, bv));
      const uint32_t yi = b.add_output(u32(ys), 1);
      const uint32_t s = c.stride, p = c.pad, dl = c.dil;
      b.add_node(fb::OpType::Conv2d, ins, yi,
                 {.stride = {s, s},
                  .padding = {p, p},
                  .dilation = {dl, dl},
                  .groups = uint32_t(c.groups)});
      Delegate d;
      ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
      TestTensor tx(xs, x), tw(ws, w), tb({c.oc}, bv), ty(ys), ref(ys);
      ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
      const std::vector<int64_t> stride = {c.stride, c.stride}, pad = {c.pad, c.pad},
                                 dil = {c.dil, c.dil}, out_pad = {0, 0};
      EValue vs = int_list(stride), vp = int_list(pad), vd = int_list(dil), vo = int_list(out_pad);
      EValue transposed = EValue::from_bool(false), groups = EValue::from_int(c.groups), none;
      run_portable("aten::convolution.out",
                   {tx.value(), tw.value(), c.bias ? tb.value() : &none, &vs, &vp, &vd, &transposed,
                    &vo, &groups, ref.value()});
      expect_close(ty.read(), ref.read(), 1e-5f, 1e-4f, "conv2d");
    }
  }
  set_conv_shader(ConvShader::Auto);
}

TEST(VulkanOps, LayerNormMatchesPortable) {
  for (const std::vector<int32_t>& sizes :
       std::vector<std::vector<int32_t>>{{1}, {4, 10}, {3, 2, 65}, {7, 768}}) {
    for (int affine = 0; affine < 3; ++affine) {  // none, weight, weight + bias
      SCOPED_TRACE(::testing::Message() << "D=" << sizes.back() << " affine=" << affine);
      const int32_t dd = sizes.back();
      const auto x = random_floats(numel(sizes), 41, -4.0f, 4.0f);
      const auto wv = random_floats(size_t(dd), 42), bv = random_floats(size_t(dd), 43);
      PayloadBuilder b;
      std::vector<uint32_t> ins = {b.add_input(u32(sizes), 0)};
      if (affine >= 1) ins.push_back(b.add_constant({uint32_t(dd)}, wv));
      if (affine >= 2) ins.push_back(b.add_constant({uint32_t(dd)}, bv));
      const uint32_t yi = b.add_output(u32(sizes), 1);
      b.add_node(fb::OpType::LayerNorm, ins, yi,
                 {.eps = 1e-5f, .has_weight = affine >= 1, .has_bias = affine >= 2});
      Delegate d;
      ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
      std::vector<int32_t> stat_sizes = sizes;
      stat_sizes.back() = 1;
      TestTensor tx(sizes, x), tw({dd}, wv), tb({dd}, bv), ty(sizes), ref(sizes), mean(stat_sizes),
          rstd(stat_sizes);
      ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
      const std::vector<int64_t> shape = {dd};
      EValue vshape = int_list(shape), eps = EValue::from_double(1e-5), none;
      run_portable(
          "aten::native_layer_norm.out",
          {tx.value(), &vshape, affine >= 1 ? tw.value() : &none, affine >= 2 ? tb.value() : &none,
           &eps, ref.value(), mean.value(), rstd.value()});
      expect_close(ty.read(), ref.read(), 1e-5f, 1e-5f, "layer_norm");
    }
  }
}

TEST(VulkanOps, MeanOverTrailingDimsMatchesPortable) {
  struct Case {
    std::vector<int32_t> in, out;
    std::vector<int64_t> dims;
    bool keepdim;
  };
  const Case cases[] = {
      {{2, 8, 7, 7}, {2, 8, 1, 1}, {2, 3}, true},  // global average pool
      {{5, 300}, {5}, {-1}, false},
      {{3, 4, 5}, {3}, {1, 2}, false},
      {{1, 1, 1}, {1, 1, 1}, {2}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "rank " << c.in.size() << " -> " << c.out.size());
    const auto x = random_floats(numel(c.in), 77, -2.0f, 2.0f);
    PayloadBuilder b;
    const uint32_t xi = b.add_input(u32(c.in), 0);
    const uint32_t yi = b.add_output(u32(c.out), 1);
    b.add_node(fb::OpType::Mean, {xi}, yi);
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor tx(c.in, x), ty(c.out), ref(c.out);
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    EValue dims = int_list(c.dims), keep = EValue::from_bool(c.keepdim), none;
    run_portable("aten::mean.out", {tx.value(), &dims, &keep, &none, ref.value()});
    expect_close(ty.read(), ref.read(), 1e-5f, 1e-6f, "mean");
  }
}

TEST(VulkanOps, ReshapeCopiesEveryValue) {
  auto x = random_floats(60, 5);
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[8] = -std::numeric_limits<float>::infinity();
  PayloadBuilder b;
  const uint32_t xi = b.add_input({3, 4, 5}, 0);
  const uint32_t yi = b.add_output({12, 5}, 1);
  b.add_node(fb::OpType::Reshape, {xi}, yi);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor tx({3, 4, 5}, x), ty({12, 5});
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  EXPECT_EQ(std::memcmp(ty.read().data(), x.data(), x.size() * sizeof(float)), 0);
}

void check_bmm() {
  for (auto [bt, m, k, n] : {std::tuple{1, 1, 1, 1}, {3, 7, 19, 23}, {4, 33, 64, 17}}) {
    SCOPED_TRACE(::testing::Message() << bt << "x" << m << "x" << k << "x" << n);
    const auto a = random_floats(size_t(bt) * m * k, 61), w = random_floats(size_t(bt) * k * n, 62);
    PayloadBuilder b;
    const uint32_t ai = b.add_input({uint32_t(bt), uint32_t(m), uint32_t(k)}, 0);
    const uint32_t wi = b.add_input({uint32_t(bt), uint32_t(k), uint32_t(n)}, 1);
    const uint32_t yi = b.add_output({uint32_t(bt), uint32_t(m), uint32_t(n)}, 2);
    b.add_node(fb::OpType::BatchMatMul, {ai, wi}, yi);
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor ta({bt, m, k}, a), tw({bt, k, n}, w), ty({bt, m, n}), ref({bt, m, n});
    ASSERT_EQ(d.execute({ta.value(), tw.value(), ty.value()}), Error::Ok) << last_error_message();
    run_portable("aten::bmm.out", {ta.value(), tw.value(), ref.value()});
    expect_close(ty.read(), ref.read(), 1e-5f, 1e-4f, "bmm");
  }
}

TEST(VulkanOps, BmmMatchesPortable) {
  for_each_linear_shader([] { check_bmm(); });
}

TEST(VulkanOps, PermuteMatchesPortable) {
  struct Case {
    std::vector<int32_t> in;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{5, 7}, {1, 0}},
                        {{2, 3, 4, 5}, {0, 2, 3, 1}},
                        {{2, 3, 4}, {2, 0, 1}},
                        {{1, 6, 1, 2, 3, 2}, {5, 4, 3, 2, 1, 0}},
                        // 0-D: the payload has no perm vector (an empty one is left out)
                        {{}, {}}};
  for (const Case& c : cases) {
    std::vector<int32_t> out;
    std::vector<uint32_t> perm;
    for (int64_t d : c.perm) {
      out.push_back(c.in[size_t(d)]);
      perm.push_back(uint32_t(d));
    }
    const auto x = random_floats(numel(c.in), 91);
    PayloadBuilder b;
    const uint32_t xi = b.add_input(u32(c.in), 0);
    const uint32_t yi = b.add_output(u32(out), 1);
    b.add_node(fb::OpType::Permute, {xi}, yi, {.perm = perm});
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor tx(c.in, x), ty(out), ref(out);
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    EValue dims = int_list(c.perm);
    run_portable("aten::permute_copy.out", {tx.value(), &dims, ref.value()});
    expect_close(ty.read(), ref.read(), 0.0f, 0.0f, "permute");
  }
}

}  // namespace
}  // namespace pteron::vulkan::testing
