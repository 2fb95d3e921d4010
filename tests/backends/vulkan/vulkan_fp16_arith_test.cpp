// The fp16-arithmetic shader variants (`_f16a`, shaders/common.glsl) against the portable
// kernels. Each case is a one-op fp16 region (fp32 inputs -> to_f16 -> op -> to_f32), run
// twice: with fp16 arithmetic (`Fp16Arithmetic::Arithmetic`: on any device with shaderFloat16,
// lavapipe included, where Auto would pick storage-only) and with the storage-only variants
// (`Fp16Arithmetic::StorageOnly`). Inputs
// and weights are fp16-representable, so the reference (the portable fp32 kernel on the same
// values) differs from the storage-only result by the output's rounding alone (2^-11 relative)
// and from the arithmetic result by that plus the fp16 arithmetic.
//
// Tolerance, both variants: |got - ref| <= 2e-3 * |ref| + atol * (1 + max|ref|), atol per op:
// 1e-3 (elementwise, copies, clamp, pooling, mean, softmax: one or two fp16 roundings per
// element; transcendentals are evaluated at fp32), 2e-3 (linear/matmul/bmm/conv: every product
// is rounded to fp16 before the fp32 sum, sqrt(K) random roundings of 2^-12 each stay far
// below 2e-3 of the largest output even at OPT's K = 3072), 4e-3 (layer norm: rstd scales the
// fp16 rounding of x - mean). The measured maxima print as "[fp16 error]" lines.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>

#include "backends/vulkan/runtime/vulkan_context.h"
#include "runtime/core/scalar_type.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace pteron::vulkan::testing {
namespace {

constexpr const char* kArith = "fp16 storage, fp16 arithmetic (fp32 accumulation)";
constexpr const char* kStorage = "fp16 storage, fp32 arithmetic";

bool device_has_float16_arithmetic() {
  Result<Context*> c = shared_context();
  return c.ok() && (*c)->float16_arithmetic;
}

// Rounds values to fp16 and back, so fp16 storage holds them exactly.
std::vector<float> halfs(std::vector<float> v) {
  for (float& x : v) x = half_to_float(float_to_half(x));
  return v;
}

std::vector<float> random_halfs(const std::vector<int32_t>& dims, uint32_t seed, float lo = -1.0f,
                                float hi = 1.0f) {
  return halfs(random_floats(numel(dims), seed, lo, hi));
}

struct Operand {
  std::vector<int32_t> dims;
  std::vector<float> data;
  bool constant = false;
  std::vector<int64_t> indices;  // an Int64 input (embedding) instead of data
};

// One fp16 region computing `op` on `ins` (inputs become fp32 arguments converted on the
// device; constants are stored fp16), run under `mode`.
std::vector<float> run_fp16(fb::OpType op, const std::vector<Operand>& ins,
                            const std::vector<int32_t>& out, const NodeAttrs& attrs,
                            Fp16Arithmetic mode, std::string* precision) {
  const auto f16 = fb::DataType::Float16;
  PayloadBuilder b;
  std::vector<uint32_t> node_ins;
  std::vector<TestTensor*> args;
  std::vector<std::unique_ptr<TestTensor>> keep;
  for (const Operand& o : ins) {
    if (o.constant) {
      node_ins.push_back(b.add_constant(u32(o.dims), o.data, f16));
      continue;
    }
    const uint32_t arg = static_cast<uint32_t>(args.size());
    if (!o.indices.empty()) {
      node_ins.push_back(b.add_input(u32(o.dims), arg, fb::DataType::Int64));
      keep.push_back(std::make_unique<TestTensor>(o.dims, ScalarType::Long));
      keep.back()->fill(o.indices);
    } else {
      const uint32_t x = b.add_input(u32(o.dims), arg);
      const uint32_t h = b.add_tensor(u32(o.dims), f16);
      b.add_node(fb::OpType::Convert, {x}, h);
      node_ins.push_back(h);
      keep.push_back(std::make_unique<TestTensor>(o.dims, o.data));
    }
    args.push_back(keep.back().get());
  }
  const uint32_t yh = b.add_tensor(u32(out), f16);
  b.add_node(op, node_ins, yh, attrs);
  const uint32_t y = b.add_output(u32(out), static_cast<uint32_t>(args.size()));
  b.add_node(fb::OpType::Convert, {yh}, y);
  set_fp16_arithmetic(mode);
  Delegate d;
  const Error init = d.init(b.build());
  set_fp16_arithmetic(Fp16Arithmetic::Auto);
  EXPECT_EQ(init, Error::Ok) << last_error_message();
  if (init != Error::Ok) return {};
  *precision = delegate_precision(d.handle());
  TestTensor ty(out);
  std::vector<EValue*> values;
  for (TestTensor* t : args) values.push_back(t->value());
  values.push_back(ty.value());
  EXPECT_EQ(d.execute(values), Error::Ok) << last_error_message();
  return ty.read();
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// Max |got - ref| / (1 + max|ref|).
float scaled_error(const std::vector<float>& got, const std::vector<float>& ref) {
  float e = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i)
    e = std::max(e, std::fabs(got[i] - ref[i]));
  return e / (1.0f + max_abs(ref));
}

// Runs the case in both variants, checks each against `ref` and that the arithmetic variant
// was the one chosen (where the device has shaderFloat16). Returns the arithmetic result.
std::vector<float> check(const char* what, fb::OpType op, const std::vector<Operand>& ins,
                         const std::vector<int32_t>& out, const NodeAttrs& attrs,
                         const std::vector<float>& ref, float atol) {
  std::string arith_precision, storage_precision;
  const auto arith = run_fp16(op, ins, out, attrs, Fp16Arithmetic::Arithmetic, &arith_precision);
  const auto storage =
      run_fp16(op, ins, out, attrs, Fp16Arithmetic::StorageOnly, &storage_precision);
  EXPECT_EQ(arith_precision, device_has_float16_arithmetic() ? kArith : kStorage) << what;
  EXPECT_EQ(storage_precision, kStorage) << what;
  const float scale = 1.0f + max_abs(ref);
  const std::string a = std::string(what) + " (fp16 arithmetic)";
  const std::string s = std::string(what) + " (fp16 storage)";
  expect_close(arith, ref, 2e-3f, atol * scale, a.c_str());
  expect_close(storage, ref, 2e-3f, atol * scale, s.c_str());
  printf("[fp16 error] %-34s storage-only %.2e  fp16-arith %.2e  (max|ref| %.3g)\n", what,
         scaled_error(storage, ref), scaled_error(arith, ref), max_abs(ref));
  return arith;
}

EValue int_list(std::vector<int64_t> v) {
  static std::deque<std::vector<int64_t>> keep;  // lists outlive the test's EValues
  keep.push_back(std::move(v));
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(keep.back().data(), keep.back().size());
  return e;
}

EValue string_value(const char* s) {
  EValue e;
  e.tag = Tag::String;
  e.string = Span<const char>(s, strlen(s));
  return e;
}

TEST(VulkanFp16Arith, LavapipeHasShaderFloat16) {
  ASSERT_TRUE(shared_context().ok()) << last_error_message();
  // lavapipe reports shaderFloat16 and 16-bit storage: the `_f16a` variants can run on it.
  if (std::string(device_name()).find("llvmpipe") != std::string::npos) {
    EXPECT_TRUE(device_has_float16_arithmetic());
  }
}

// Auto: fp16 arithmetic on GPUs with shaderFloat16, storage-only on CPU devices (lavapipe),
// where widening every half operation to fp32 makes the arithmetic variants slower.
TEST(VulkanFp16Arith, AutoPicksArithmeticOnGpusOnly) {
  Result<Context*> c = shared_context();
  ASSERT_TRUE(c.ok()) << last_error_message();
  const bool gpu = (*c)->properties.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  const std::vector<int32_t> dims = {64};
  std::string precision;
  run_fp16(fb::OpType::Clamp, {{dims, random_halfs(dims, 90)}}, dims, {.output_min = 0.0f},
           Fp16Arithmetic::Auto, &precision);
  EXPECT_EQ(precision, gpu && device_has_float16_arithmetic() ? kArith : kStorage);
}

TEST(VulkanFp16Arith, LinearMatMulBmmMatchPortable) {
  struct Case {
    int32_t m, k, n;
  };
  // K = 3072: OPT-125M's fc2.
  for (LinearShader shader : {LinearShader::Tiled, LinearShader::Direct, LinearShader::Registers}) {
    set_linear_shader(shader);
    const char* tag = shader == LinearShader::Tiled    ? "tiled"
                      : shader == LinearShader::Direct ? "direct"
                                                       : "registers";
    for (const Case& c : {Case{4, 3072, 48}, Case{9, 96, 40}, Case{1, 1, 1}}) {
      const auto x = random_halfs({c.m, c.k}, 1), w = random_halfs({c.n, c.k}, 2),
                 bias = random_halfs({c.n}, 3);
      TestTensor tx({c.m, c.k}, x), tw({c.n, c.k}, w), tb({c.n}, bias), ref({c.m, c.n});
      run_portable("aten::linear.out", {tx.value(), tw.value(), tb.value(), ref.value()});
      const std::string what = std::string("linear ") + tag + " K=" + std::to_string(c.k);
      check(what.c_str(), fb::OpType::Linear,
            {{{c.m, c.k}, x}, {{c.n, c.k}, w, true}, {{c.n}, bias, true}}, {c.m, c.n}, {},
            ref.read(), 2e-3f);
    }
    // mm with a [K, N] weight, fused relu.
    const auto a = random_halfs({7, 19}, 4), w = random_halfs({19, 23}, 5);
    TestTensor ta({7, 19}, a), tw({19, 23}, w), mm({7, 23}), ref({7, 23});
    run_portable("aten::mm.out", {ta.value(), tw.value(), mm.value()});
    run_portable("aten::relu.out", {mm.value(), ref.value()});
    check((std::string("mm+relu ") + tag).c_str(), fb::OpType::MatMul,
          {{{7, 19}, a}, {{19, 23}, w, true}}, {7, 23}, {.output_min = 0.0f}, ref.read(), 2e-3f);
    // bmm of two activations (attention scores).
    const auto p = random_halfs({3, 5, 64}, 6), q = random_halfs({3, 64, 8}, 7);
    TestTensor tp({3, 5, 64}, p), tq({3, 64, 8}, q), bref({3, 5, 8});
    run_portable("aten::bmm.out", {tp.value(), tq.value(), bref.value()});
    check((std::string("bmm ") + tag).c_str(), fb::OpType::BatchMatMul,
          {{{3, 5, 64}, p}, {{3, 64, 8}, q}}, {3, 5, 8}, {}, bref.read(), 2e-3f);
  }
  set_linear_shader(LinearShader::Auto);
}

TEST(VulkanFp16Arith, BinaryPermuteSliceMatchPortable) {
  const std::vector<int32_t> sa = {2, 3, 8}, sb = {3, 1}, so = {2, 3, 8};
  const auto a = random_halfs(sa, 10), b = random_halfs(sb, 11, 0.5f, 2.0f);
  struct Op {
    fb::OpType op;
    const char* kernel;
    float alpha;
  };
  for (const Op& op :
       {Op{fb::OpType::Add, "aten::add.out", 0.5f}, Op{fb::OpType::Sub, "aten::sub.out", 1.0f},
        Op{fb::OpType::Mul, "aten::mul.out", 1.0f}, Op{fb::OpType::Div, "aten::div.out", 1.0f}}) {
    TestTensor ta(sa, a), tb(sb, b), ref(so);
    EValue alpha = EValue::from_double(op.alpha);
    if (op.op == fb::OpType::Add || op.op == fb::OpType::Sub) {
      run_portable(op.kernel, {ta.value(), tb.value(), &alpha, ref.value()});
    } else {
      run_portable(op.kernel, {ta.value(), tb.value(), ref.value()});
    }
    check(op.kernel, op.op, {{sa, a}, {sb, b}}, so, {.alpha = op.alpha}, ref.read(), 1e-3f);
  }
  TestTensor ta(sa, a), pref({8, 2, 3}), sref({2, 1, 8});
  EValue perm = int_list({2, 0, 1});
  run_portable("aten::permute_copy.out", {ta.value(), &perm, pref.value()});
  check("permute", fb::OpType::Permute, {{sa, a}}, {8, 2, 3}, {.perm = {2, 0, 1}}, pref.read(),
        1e-3f);
  EValue dim = EValue::from_int(1), start = EValue::from_int(1), end = EValue::from_int(2),
         step = EValue::from_int(1);
  run_portable("aten::slice_copy.Tensor_out",
               {ta.value(), &dim, &start, &end, &step, sref.value()});
  check("slice", fb::OpType::Slice, {{sa, a}}, {2, 1, 8}, {.axis = 1, .start = 1}, sref.read(),
        1e-3f);
}

TEST(VulkanFp16Arith, ClampAndUnaryMatchPortable) {
  const std::vector<int32_t> dims = {4, 33};
  const auto x = random_halfs(dims, 20, -8.0f, 8.0f);
  TestTensor tx(dims, x), ref(dims);
  EValue lo = EValue::from_double(0.0), hi = EValue::from_double(6.0);
  run_portable("aten::hardtanh.out", {tx.value(), &lo, &hi, ref.value()});
  check("clamp (relu6)", fb::OpType::Clamp, {{dims, x}}, dims,
        {.output_min = 0.0f, .output_max = 6.0f}, ref.read(), 1e-3f);
  struct Case {
    fb::UnaryOp op;
    const char* kernel;
    const char* approximate;  // gelu's argument
    float lo, hi;
  };
  const Case cases[] = {
      {fb::UnaryOp::Sigmoid, "aten::sigmoid.out", nullptr, -20, 20},
      {fb::UnaryOp::Tanh, "aten::tanh.out", nullptr, -8, 8},
      {fb::UnaryOp::Gelu, "aten::gelu.out", "none", -6, 6},
      {fb::UnaryOp::GeluTanh, "aten::gelu.out", "tanh", -6, 6},
      {fb::UnaryOp::Silu, "aten::silu.out", nullptr, -20, 20},
      {fb::UnaryOp::Hardswish, "aten::hardswish.out", nullptr, -6, 6},
      {fb::UnaryOp::Hardsigmoid, "aten::hardsigmoid.out", nullptr, -6, 6},
      {fb::UnaryOp::Exp, "aten::exp.out", nullptr, -8, 8},
      {fb::UnaryOp::Neg, "aten::neg.out", nullptr, -8, 8},
      {fb::UnaryOp::Sqrt, "aten::sqrt.out", nullptr, 0.01f, 100},
      {fb::UnaryOp::Rsqrt, "aten::rsqrt.out", nullptr, 0.01f, 100},
  };
  uint32_t seed = 21;
  for (const Case& c : cases) {
    const auto v = random_halfs(dims, ++seed, c.lo, c.hi);
    TestTensor tv(dims, v), r(dims);
    if (c.approximate != nullptr) {
      EValue approx = string_value(c.approximate);
      run_portable(c.kernel, {tv.value(), &approx, r.value()});
    } else {
      run_portable(c.kernel, {tv.value(), r.value()});
    }
    const std::string what = std::string(c.kernel) + (c.approximate ? c.approximate : "");
    check(what.c_str(), fb::OpType::Unary, {{dims, v}}, dims, {.unary = c.op}, r.read(), 1e-3f);
  }
}

TEST(VulkanFp16Arith, SoftmaxLayerNormMeanMatchPortable) {
  for (const std::vector<int32_t>& dims : {std::vector<int32_t>{3, 50}, {2, 2048}}) {
    const auto x = random_halfs(dims, 40, -6.0f, 6.0f);
    TestTensor tx(dims, x), ref(dims);
    EValue dim = EValue::from_int(-1), half = EValue::from_bool(false);
    run_portable("aten::_softmax.out", {tx.value(), &dim, &half, ref.value()});
    check(("softmax cols=" + std::to_string(dims[1])).c_str(), fb::OpType::Softmax, {{dims, x}},
          dims, {}, ref.read(), 1e-3f);
  }
  // OPT's layer norm: 768 wide, an offset mean (x - mean must not cancel in fp16).
  const std::vector<int32_t> dims = {5, 768};
  const auto x = random_halfs(dims, 41, 2.0f, 6.0f), w = random_halfs({768}, 42),
             bias = random_halfs({768}, 43);
  TestTensor tx(dims, x), tw({768}, w), tb({768}, bias), ref(dims), mean({5, 1}), rstd({5, 1});
  EValue shape = int_list({768}), eps = EValue::from_double(1e-5);
  run_portable("aten::native_layer_norm.out", {tx.value(), &shape, tw.value(), tb.value(), &eps,
                                               ref.value(), mean.value(), rstd.value()});
  check("layer_norm D=768", fb::OpType::LayerNorm,
        {{dims, x}, {{768}, w, true}, {{768}, bias, true}}, dims,
        {.has_weight = true, .has_bias = true}, ref.read(), 4e-3f);
  // Global average pool of resnet-18's last feature map.
  const std::vector<int32_t> in = {1, 512, 7, 7}, out = {1, 512, 1, 1};
  const auto f = random_halfs(in, 44, 0.0f, 4.0f);
  TestTensor tf(in, f), mref(out);
  EValue dims_hw = int_list({2, 3}), keep = EValue::from_bool(true), none;
  run_portable("aten::mean.out", {tf.value(), &dims_hw, &keep, &none, mref.value()});
  check("mean 7x7", fb::OpType::Mean, {{in, f}}, out, {}, mref.read(), 1e-3f);
}

TEST(VulkanFp16Arith, ConvAndPoolMatchPortable) {
  struct Case {
    int32_t c, h, oc, k, stride, pad, groups;
    const char* what;
  };
  // Auto: conv2d_tiled, conv2d_dw3x3s2/s1, conv2d_dw and conv2d_pw by shape; Direct: conv2d.comp
  // for all.
  for (ConvShader shader : {ConvShader::Auto, ConvShader::Direct}) {
    set_conv_shader(shader);
    for (const Case& c : {Case{64, 14, 32, 3, 1, 1, 1, "conv 3x3 C=64"},
                          Case{32, 12, 32, 3, 2, 1, 32, "conv depthwise 3x3/2"},
                          Case{16, 11, 16, 3, 1, 1, 16, "conv depthwise 3x3/1"},
                          Case{16, 11, 32, 5, 1, 2, 16, "conv depthwise 5x5 x2"},
                          Case{96, 7, 24, 1, 1, 0, 1, "conv 1x1 C=96"}}) {
      const int32_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1;
      const std::vector<int32_t> xs = {1, c.c, c.h, c.h}, ws = {c.oc, c.c / c.groups, c.k, c.k},
                                 ys = {1, c.oc, oh, oh};
      const auto x = random_halfs(xs, 50), w = random_halfs(ws, 51, -0.3f, 0.3f),
                 bias = random_halfs({c.oc}, 52);
      TestTensor tx(xs, x), tw(ws, w), tb({c.oc}, bias), conv(ys), ref(ys);
      EValue vs = int_list({c.stride, c.stride}), vp = int_list({c.pad, c.pad}),
             vd = int_list({1, 1}), vo = int_list({0, 0}), transposed = EValue::from_bool(false),
             groups = EValue::from_int(c.groups), lo = EValue::from_double(0.0),
             hi = EValue::from_double(6.0);
      run_portable("aten::convolution.out", {tx.value(), tw.value(), tb.value(), &vs, &vp, &vd,
                                             &transposed, &vo, &groups, conv.value()});
      run_portable("aten::hardtanh.out", {conv.value(), &lo, &hi, ref.value()});
      const uint32_t s = c.stride, p = c.pad;
      const std::string what =
          std::string(c.what) + (shader == ConvShader::Auto ? " (tiled)" : " (direct)");
      check(what.c_str(), fb::OpType::Conv2d, {{xs, x}, {ws, w, true}, {{c.oc}, bias, true}}, ys,
            {.output_min = 0.0f,
             .output_max = 6.0f,
             .stride = {s, s},
             .padding = {p, p},
             .dilation = {1, 1},
             .groups = uint32_t(c.groups)},
            ref.read(), 2e-3f);
    }
  }
  set_conv_shader(ConvShader::Auto);
  const std::vector<int32_t> in = {1, 8, 13, 13}, out = {1, 8, 6, 6};
  const auto x = random_halfs(in, 53, -3.0f, 3.0f);
  TestTensor tx(in, x), mref(out), idx(out, ScalarType::Long), aref(out), gref({1, 8, 3, 3});
  EValue k = int_list({3, 3}), st = int_list({2, 2}), pd = int_list({0, 0}), dl = int_list({1, 1}),
         ceil = EValue::from_bool(false), inc = EValue::from_bool(true), none,
         size = int_list({3, 3});
  run_portable("aten::max_pool2d_with_indices.out",
               {tx.value(), &k, &st, &pd, &dl, &ceil, mref.value(), idx.value()});
  run_portable("aten::avg_pool2d.out",
               {tx.value(), &k, &st, &pd, &ceil, &inc, &none, aref.value()});
  run_portable("aten::_adaptive_avg_pool2d.out", {tx.value(), &size, gref.value()});
  NodeAttrs a{.stride = {2, 2}, .padding = {0, 0}, .dilation = {1, 1}, .kernel = {3, 3}};
  a.pool = fb::PoolType::Max;
  check("max_pool2d 3x3/2", fb::OpType::Pool2d, {{in, x}}, out, a, mref.read(), 1e-3f);
  a.pool = fb::PoolType::Average;
  check("avg_pool2d 3x3/2", fb::OpType::Pool2d, {{in, x}}, out, a, aref.read(), 1e-3f);
  check("adaptive_avg_pool2d 3x3", fb::OpType::Pool2d, {{in, x}}, {1, 8, 3, 3},
        {.pool = fb::PoolType::AdaptiveAverage}, gref.read(), 1e-3f);
}

TEST(VulkanFp16Arith, UpsampleAndPadMatchPortable) {
  const std::vector<int32_t> in = {1, 4, 9, 11}, up = {1, 4, 14, 25}, padded = {1, 4, 12, 14};
  const auto x = random_halfs(in, 63, -3.0f, 3.0f);
  TestTensor tx(in, x), nref(up), bref(up), pref(padded);
  EValue size = int_list({14, 25}), none, ac = EValue::from_bool(false),
         pad = int_list({1, 2, 0, 3}), value = EValue::from_double(-1.5);
  run_portable("aten::upsample_nearest2d.vec_out", {tx.value(), &size, &none, nref.value()});
  run_portable("aten::upsample_bilinear2d.vec_out", {tx.value(), &size, &ac, &none, bref.value()});
  run_portable("aten::constant_pad_nd.out", {tx.value(), &pad, &value, pref.value()});
  check("upsample nearest", fb::OpType::Upsample, {{in, x}}, up,
        {.resize = fb::ResizeMode::Nearest}, nref.read(), 1e-3f);
  check("upsample bilinear", fb::OpType::Upsample, {{in, x}}, up,
        {.resize = fb::ResizeMode::Bilinear}, bref.read(), 1e-3f);
  check("constant pad", fb::OpType::Pad, {{in, x}}, padded,
        {.pads = {1, 2, 0, 3}, .pad_value = -1.5f}, pref.read(), 1e-3f);
}

TEST(VulkanFp16Arith, CatAndEmbeddingMatchPortable) {
  const std::vector<int32_t> s0 = {2, 3, 4}, s1 = {2, 5, 4}, out = {2, 8, 4};
  const auto x0 = random_halfs(s0, 60), x1 = random_halfs(s1, 61);
  TestTensor t0(s0, x0), t1(s1, x1), ref(out);
  EValue list;
  Tensor* items[] = {&t0.tensor(), &t1.tensor()};
  list.tag = Tag::TensorList;
  list.tensor_list = Span<Tensor* const>(items, 2);
  EValue dim = EValue::from_int(1);
  run_portable("aten::cat.out", {&list, &dim, ref.value()});
  check("cat", fb::OpType::Cat, {{s0, x0}, {s1, x1}}, out, {.axis = 1}, ref.read(), 1e-3f);

  const int32_t vocab = 50, width = 16;
  const auto w = random_halfs({vocab, width}, 62);
  const std::vector<int64_t> ids = {3, 0, 49, 7, 7, 12};
  TestTensor ti({2, 3}, ScalarType::Long), tw({vocab, width}, w), eref({2, 3, width});
  ti.fill(ids);
  EValue pad = EValue::from_int(-1), f = EValue::from_bool(false);
  run_portable("aten::embedding.out", {tw.value(), ti.value(), &pad, &f, &f, eref.value()});
  check("embedding", fb::OpType::Embedding, {{{vocab, width}, w, true}, {{2, 3}, {}, false, ids}},
        {2, 3, width}, {}, eref.read(), 1e-3f);
}

// A payload compiled storage-only (`vulkan:fp16=storage`) runs the `_f16` variants on any device.
TEST(VulkanFp16Arith, CompiledStorageOnlyRunsStorageVariants) {
  PayloadBuilder b;
  b.set_fp16_arithmetic(false);
  const uint32_t x = b.add_input({64}, 0);
  const uint32_t h = b.add_tensor({64}, fb::DataType::Float16);
  const uint32_t r = b.add_tensor({64}, fb::DataType::Float16);
  const uint32_t y = b.add_output({64}, 1);
  b.add_node(fb::OpType::Convert, {x}, h);
  b.add_node(fb::OpType::Clamp, {h}, r, {.output_min = 0.0f});
  b.add_node(fb::OpType::Convert, {r}, y);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  EXPECT_STREQ(delegate_precision(d.handle()), kStorage);
  const auto v = random_halfs({64}, 80);
  TestTensor tx({64}, v), ty({64});
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  const auto got = ty.read();
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(got[i], std::max(v[i], 0.0f));
}

// The variants really differ: a chain where fp16 intermediate rounding shows (a + 0.1 * b:
// alpha itself rounds to fp16 under fp16 arithmetic) gives results that are not all
// identical to the storage-only ones, so the `_f16a` shaders ran where the device has them.
TEST(VulkanFp16Arith, ArithmeticVariantComputesInHalf) {
  const std::vector<int32_t> dims = {256};
  const auto a = random_halfs(dims, 70), b = random_halfs(dims, 71);
  std::string p1, p2;
  const auto arith = run_fp16(fb::OpType::Add, {{dims, a}, {dims, b}}, dims, {.alpha = 0.1f},
                              Fp16Arithmetic::Arithmetic, &p1);
  const auto storage = run_fp16(fb::OpType::Add, {{dims, a}, {dims, b}}, dims, {.alpha = 0.1f},
                                Fp16Arithmetic::StorageOnly, &p2);
  size_t differ = 0;
  for (size_t i = 0; i < arith.size(); ++i) differ += arith[i] != storage[i];
  // Without shaderFloat16 both runs are the storage-only variant.
  if (device_has_float16_arithmetic()) {
    EXPECT_GT(differ, 0u);
  } else {
    EXPECT_EQ(differ, 0u);
  }
}

}  // namespace
}  // namespace pteron::vulkan::testing
