// The Vulkan shaders added for whole models (activations, pooling, cat, slice, embedding, div,
// no-copy reshape, upsample, pad) and the fp16 storage variants, each through the delegate on
// lavapipe against the portable kernel on the same inputs. Tolerances (fp32): unary 2e-6 abs +
// 2e-6 rel (the device's exp; gelu's erf is a 1.5e-7 approximation); pooling 1e-6 + 1e-6 (sums
// in another order); copies (cat, slice, embedding, nearest upsample, pad) exact; div 1 ulp;
// bilinear 1e-5 abs (inputs in [-1, 1]: the shader fuses the source coordinate's
// multiply-add as torch's CPU build does, the portable kernel rounds the product first, so
// lambda may differ by an ulp of the coordinate, 4e-6 at 33). fp16 storage: every stored value
// is rounded to fp16, so each tensor carries up to 2^-11 relative error; the fp16 checks allow
// 4e-3 rel + 4e-3 abs per op.
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <string>

#include "runtime/core/scalar_type.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace pteron::vulkan::testing {
namespace {

// The EValue views a list kept alive for the whole test program.
EValue int_list(std::vector<int64_t> v) {
  static std::deque<std::vector<int64_t>> keep;
  keep.push_back(std::move(v));
  EValue e;
  e.tag = Tag::IntList;
  e.int_list = Span<const int64_t>(keep.back().data(), keep.back().size());
  return e;
}

EValue double_list(std::vector<double> v) {
  static std::deque<std::vector<double>> keep;
  keep.push_back(std::move(v));
  EValue e;
  e.tag = Tag::DoubleList;
  e.double_list = Span<const double>(keep.back().data(), keep.back().size());
  return e;
}

EValue string_value(const char* s) {
  EValue e;
  e.tag = Tag::String;
  e.string = Span<const char>(s, strlen(s));
  return e;
}

// A one-node region: input(s) -> node -> output, run once.
struct OneNode {
  std::vector<int32_t> in, out;
  fb::OpType op;
  NodeAttrs attrs;
};

std::vector<float> run_one(const OneNode& c, const std::vector<float>& x) {
  PayloadBuilder b;
  const uint32_t xi = b.add_input(u32(c.in), 0);
  const uint32_t yi = b.add_output(u32(c.out), 1);
  b.add_node(c.op, {xi}, yi, c.attrs);
  Delegate d;
  EXPECT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor tx(c.in, x), ty(c.out);
  EXPECT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  return ty.read();
}

TEST(VulkanMoreOps, UnaryActivationsMatchPortable) {
  struct Case {
    fb::UnaryOp op;
    const char* kernel;
    const char* approximate;  // gelu only
    float lo, hi;
  };
  const Case cases[] = {
      {fb::UnaryOp::Sigmoid, "aten::sigmoid.out", nullptr, -30.0f, 30.0f},
      {fb::UnaryOp::Tanh, "aten::tanh.out", nullptr, -20.0f, 20.0f},
      {fb::UnaryOp::Gelu, "aten::gelu.out", "none", -6.0f, 6.0f},
      {fb::UnaryOp::GeluTanh, "aten::gelu.out", "tanh", -6.0f, 6.0f},
      {fb::UnaryOp::Silu, "aten::silu.out", nullptr, -10.0f, 10.0f},
      {fb::UnaryOp::Hardswish, "aten::hardswish.out", nullptr, -5.0f, 5.0f},
      {fb::UnaryOp::Hardsigmoid, "aten::hardsigmoid.out", nullptr, -5.0f, 5.0f},
      {fb::UnaryOp::Exp, "aten::exp.out", nullptr, -10.0f, 10.0f},
      {fb::UnaryOp::Neg, "aten::neg.out", nullptr, -3.0f, 3.0f},
      {fb::UnaryOp::Sqrt, "aten::sqrt.out", nullptr, 0.0f, 9.0f},
      {fb::UnaryOp::Rsqrt, "aten::rsqrt.out", nullptr, 0.01f, 9.0f},
  };
  const std::vector<int32_t> sizes = {3, 5, 67};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel + std::string(c.approximate ? c.approximate : ""));
    const auto x = random_floats(numel(sizes), 3, c.lo, c.hi);
    const auto got = run_one({sizes, sizes, fb::OpType::Unary, {.unary = c.op}}, x);
    TestTensor tx(sizes, x), ref(sizes);
    if (c.approximate != nullptr) {
      EValue a = string_value(c.approximate);
      run_portable(c.kernel, {tx.value(), &a, ref.value()});
    } else {
      run_portable(c.kernel, {tx.value(), ref.value()});
    }
    expect_close(got, ref.read(), 2e-6f, 2e-6f, c.kernel);
  }
}

TEST(VulkanMoreOps, DivAndScalarOperandMatchPortable) {
  const std::vector<int32_t> sa = {4, 1, 9}, sb = {5, 9}, so = {4, 5, 9};
  const auto a = random_floats(numel(sa), 5, -4.0f, 4.0f);
  auto bv = random_floats(numel(sb), 6, 0.5f, 3.0f);
  PayloadBuilder b;
  const uint32_t ai = b.add_input(u32(sa), 0), bi = b.add_input(u32(sb), 1);
  const uint32_t scale = b.add_constant({}, std::vector<float>{0.125f});  // a rank-0 scalar
  const uint32_t q = b.add_tensor(u32(so));
  const uint32_t yi = b.add_output(u32(so), 2);
  b.add_node(fb::OpType::Div, {ai, bi}, q);
  b.add_node(fb::OpType::Mul, {q, scale}, yi);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor ta(sa, a), tb(sb, bv), ty(so), ref(so), ref2(so),
      ts(std::vector<int32_t>{}, std::vector<float>{0.125f});
  ASSERT_EQ(d.execute({ta.value(), tb.value(), ty.value()}), Error::Ok) << last_error_message();
  run_portable("aten::div.out", {ta.value(), tb.value(), ref.value()});
  run_portable("aten::mul.out", {ref.value(), ts.value(), ref2.value()});
  expect_close(ty.read(), ref2.read(), 1e-6f, 0.0f, "div * 0.125");
}

TEST(VulkanMoreOps, MaxAndAvgPoolMatchPortable) {
  struct Case {
    std::vector<int32_t> in;
    int64_t k, s, pad;
    bool ceil, include_pad;
  };
  const Case cases[] = {{{1, 3, 8, 8}, 2, 2, 0, false, true},
                        {{2, 4, 11, 9}, 3, 2, 1, false, true},
                        {{1, 2, 10, 10}, 3, 2, 1, true, false},
                        {{1, 5, 7, 7}, 3, 1, 1, false, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "k" << c.k << " s" << c.s << " p" << c.pad << " ceil " << c.ceil);
    const auto span = [&](int32_t n) {
      const int64_t num = n + 2 * c.pad - c.k;
      int64_t o = (c.ceil ? (num + c.s - 1) / c.s : num / c.s) + 1;
      if (c.ceil && (o - 1) * c.s >= n + c.pad) --o;
      return static_cast<int32_t>(o);
    };
    const std::vector<int32_t> out = {c.in[0], c.in[1], span(c.in[2]), span(c.in[3])};
    const auto x = random_floats(numel(c.in), 11, -2.0f, 2.0f);
    const auto pair = [](int64_t v) { return std::vector<uint32_t>{uint32_t(v), uint32_t(v)}; };
    NodeAttrs a{.stride = pair(c.s),
                .padding = pair(c.pad),
                .dilation = pair(1),
                .pool = fb::PoolType::Max,
                .kernel = pair(c.k),
                .count_include_pad = c.include_pad};
    const auto got_max = run_one({c.in, out, fb::OpType::Pool2d, a}, x);
    a.pool = fb::PoolType::Average;
    const auto got_avg = run_one({c.in, out, fb::OpType::Pool2d, a}, x);
    TestTensor tx(c.in, x), ref(out), idx(out, ScalarType::Long), ref_avg(out);
    EValue k = int_list({c.k, c.k}), s = int_list({c.s, c.s}), p = int_list({c.pad, c.pad}),
           dil = int_list({1, 1}), ceil = EValue::from_bool(c.ceil),
           inc = EValue::from_bool(c.include_pad), none;
    run_portable("aten::max_pool2d_with_indices.out",
                 {tx.value(), &k, &s, &p, &dil, &ceil, ref.value(), idx.value()});
    run_portable("aten::avg_pool2d.out",
                 {tx.value(), &k, &s, &p, &ceil, &inc, &none, ref_avg.value()});
    expect_close(got_max, ref.read(), 0.0f, 0.0f, "max_pool2d");
    expect_close(got_avg, ref_avg.read(), 1e-6f, 1e-6f, "avg_pool2d");
  }
}

TEST(VulkanMoreOps, AdaptiveAvgPoolMatchesPortable) {
  for (auto [in, o] : {std::pair{std::vector<int32_t>{1, 8, 7, 7}, 1},
                       {std::vector<int32_t>{2, 3, 10, 9}, 4},
                       {std::vector<int32_t>{1, 2, 5, 5}, 7}}) {
    const std::vector<int32_t> out = {in[0], in[1], o, o};
    const auto x = random_floats(numel(in), 13);
    const auto got =
        run_one({in, out, fb::OpType::Pool2d, {.pool = fb::PoolType::AdaptiveAverage}}, x);
    TestTensor tx(in, x), ref(out);
    EValue size = int_list({o, o});
    run_portable("aten::_adaptive_avg_pool2d.out", {tx.value(), &size, ref.value()});
    expect_close(got, ref.read(), 1e-6f, 1e-6f, "adaptive_avg_pool2d");
  }
}

// Nearest, bilinear and antialiased bilinear (both align_corners) by scale factors and by output
// size, up and down, an axis left alone, a 1x1 output.
TEST(VulkanMoreOps, UpsampleMatchesPortable) {
  struct Case {
    std::vector<int32_t> in;
    int32_t oh, ow;
    double scale;  // 0: by output size (no scales in the payload)
  };
  const Case cases[] = {{{1, 3, 8, 8}, 16, 16, 2.0},   {{2, 4, 11, 9}, 18, 15, 1.7},
                        {{1, 2, 33, 40}, 50, 61, 0.0}, {{1, 2, 33, 40}, 13, 17, 0.0},
                        {{1, 5, 7, 6}, 7, 13, 0.0},    {{1, 2, 5, 5}, 1, 1, 0.0},
                        {{1, 3, 20, 30}, 10, 15, 0.5}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "[" << c.in[2] << ", " << c.in[3] << "] -> [" << c.oh
                                      << ", " << c.ow << "] scale " << c.scale);
    const std::vector<int32_t> out = {c.in[0], c.in[1], c.oh, c.ow};
    const auto x = random_floats(numel(c.in), 17);
    TestTensor tx(c.in, x);
    EValue size = c.scale > 0 ? EValue() : int_list({c.oh, c.ow});
    EValue scales = c.scale > 0 ? double_list({c.scale, c.scale}) : EValue();
    NodeAttrs a{.resize = fb::ResizeMode::Nearest};
    if (c.scale > 0) a.scales = {c.scale, c.scale};
    {
      TestTensor ref(out);
      run_portable("aten::upsample_nearest2d.vec_out", {tx.value(), &size, &scales, ref.value()});
      expect_close(run_one({c.in, out, fb::OpType::Upsample, a}, x), ref.read(), 0.0f, 0.0f,
                   "upsample_nearest2d");
    }
    a.resize = fb::ResizeMode::Bilinear;
    for (bool align : {false, true}) {
      TestTensor ref(out);
      EValue ac = EValue::from_bool(align);
      run_portable("aten::upsample_bilinear2d.vec_out",
                   {tx.value(), &size, &ac, &scales, ref.value()});
      a.align_corners = align;
      expect_close(run_one({c.in, out, fb::OpType::Upsample, a}, x), ref.read(), 0.0f, 1e-5f,
                   align ? "upsample_bilinear2d align_corners" : "upsample_bilinear2d");
    }
    a.resize = fb::ResizeMode::BilinearAntialias;
    for (bool align : {false, true}) {
      TestTensor ref(out);
      EValue osize = int_list({c.oh, c.ow}), ac = EValue::from_bool(align);
      EValue sh = c.scale > 0 ? EValue::from_double(c.scale) : EValue();
      run_portable("aten::_upsample_bilinear2d_aa.out",
                   {tx.value(), &osize, &ac, &sh, &sh, ref.value()});
      a.align_corners = align;
      expect_close(run_one({c.in, out, fb::OpType::Upsample, a}, x), ref.read(), 0.0f, 2e-5f,
                   align ? "_upsample_bilinear2d_aa align_corners" : "_upsample_bilinear2d_aa");
    }
  }
}

// Constant (a 2-D, a last-dim-only and a 1-D tensor's pad), reflect and replicate (pads up to
// the dim, and past it for replicate), on 3-D and 4-D inputs; negative pads crop in every mode.
TEST(VulkanMoreOps, PadMatchesPortable) {
  struct Case {
    std::vector<int32_t> in;
    std::vector<int64_t> pad;  // torch order: [left, right(, top, bottom)]
    fb::PadMode mode;
    const char* kernel;
  };
  const Case cases[] = {
      {{2, 3, 7, 9}, {1, 2, 3, 4}, fb::PadMode::Constant, "aten::constant_pad_nd.out"},
      {{5, 11}, {0, 3}, fb::PadMode::Constant, "aten::constant_pad_nd.out"},
      {{17}, {2, 5}, fb::PadMode::Constant, "aten::constant_pad_nd.out"},
      {{2, 3, 7, 9}, {1, 2, 3, 4}, fb::PadMode::Reflect, "aten::reflection_pad2d.out"},
      {{3, 6, 5}, {4, 1, 5, 2}, fb::PadMode::Reflect, "aten::reflection_pad2d.out"},
      {{2, 4, 9}, {3, 8}, fb::PadMode::Reflect, "aten::reflection_pad1d.out"},
      {{2, 3, 7, 9}, {1, 2, 3, 4}, fb::PadMode::Replicate, "aten::replication_pad2d.out"},
      {{3, 6, 5}, {6, 0, 0, 7}, fb::PadMode::Replicate, "aten::replication_pad2d.out"},
      {{2, 3, 7, 9}, {-2, 3, 1, -4}, fb::PadMode::Constant, "aten::constant_pad_nd.out"},
      {{17}, {-3, -5}, fb::PadMode::Constant, "aten::constant_pad_nd.out"},
      {{2, 3, 7, 9}, {-1, 4, 2, -3}, fb::PadMode::Reflect, "aten::reflection_pad2d.out"},
      {{3, 6, 5}, {3, -2, -1, 2}, fb::PadMode::Replicate, "aten::replication_pad2d.out"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel);
    std::vector<int32_t> out = c.in;
    std::vector<int32_t> pads = {0, 0, 0, 0};
    for (size_t k = 0; k < c.pad.size(); ++k) pads[k] = static_cast<int32_t>(c.pad[k]);
    out.back() += pads[0] + pads[1];
    if (out.size() >= 2) out[out.size() - 2] += pads[2] + pads[3];
    const auto x = random_floats(numel(c.in), 19);
    const bool constant = c.mode == fb::PadMode::Constant;
    const auto got = run_one(
        {c.in, out, fb::OpType::Pad, {.pads = pads, .pad_mode = c.mode, .pad_value = 0.75f}}, x);
    TestTensor tx(c.in, x), ref(out);
    EValue pad = int_list(c.pad), value = EValue::from_double(0.75);
    if (constant) {
      run_portable(c.kernel, {tx.value(), &pad, &value, ref.value()});
    } else {
      run_portable(c.kernel, {tx.value(), &pad, ref.value()});
    }
    expect_close(got, ref.read(), 0.0f, 0.0f, c.kernel);
  }
}

TEST(VulkanMoreOps, CatOfFourInputsMatchesPortable) {
  for (uint32_t axis : {0u, 1u, 2u}) {
    SCOPED_TRACE(::testing::Message() << "axis " << axis);
    std::vector<std::vector<int32_t>> shapes;
    std::vector<int32_t> out = {2, 3, 5};
    out[axis] = 0;
    for (int32_t k : {1, 4, 2, 3}) {
      std::vector<int32_t> s = {2, 3, 5};
      s[axis] = k;
      out[axis] += k;
      shapes.push_back(s);
    }
    PayloadBuilder b;
    std::vector<uint32_t> ins;
    for (uint32_t i = 0; i < shapes.size(); ++i) ins.push_back(b.add_input(u32(shapes[i]), i));
    const uint32_t yi = b.add_output(u32(out), 4);
    b.add_node(fb::OpType::Cat, ins, yi, {.axis = axis});
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor t0(shapes[0], random_floats(numel(shapes[0]), 1)),
        t1(shapes[1], random_floats(numel(shapes[1]), 2)),
        t2(shapes[2], random_floats(numel(shapes[2]), 3)),
        t3(shapes[3], random_floats(numel(shapes[3]), 4)), ty(out), ref(out);
    ASSERT_EQ(d.execute({t0.value(), t1.value(), t2.value(), t3.value(), ty.value()}), Error::Ok)
        << last_error_message();
    Tensor* list[] = {&t0.tensor(), &t1.tensor(), &t2.tensor(), &t3.tensor()};
    EValue tl;
    tl.tag = Tag::TensorList;
    tl.tensor_list = Span<Tensor* const>(list, 4);
    EValue dim = EValue::from_int(axis);
    run_portable("aten::cat.out", {&tl, &dim, ref.value()});
    expect_close(ty.read(), ref.read(), 0.0f, 0.0f, "cat");
  }
}

TEST(VulkanMoreOps, SliceWithStepMatchesPortable) {
  const std::vector<int32_t> in = {3, 10, 4};
  for (auto [axis, start, step, len] :
       {std::tuple{1u, 2u, 3u, 3}, {0u, 2u, 1u, 1}, {2u, 0u, 2u, 2}}) {
    std::vector<int32_t> out = in;
    out[axis] = len;
    const auto x = random_floats(numel(in), 17);
    const auto got =
        run_one({in, out, fb::OpType::Slice, {.axis = axis, .start = start, .step = step}}, x);
    TestTensor tx(in, x), ref(out);
    EValue dim = EValue::from_int(axis), s = EValue::from_int(start),
           e = EValue::from_int(start + step * (len - 1) + 1), st = EValue::from_int(step);
    run_portable("aten::slice_copy.Tensor_out", {tx.value(), &dim, &s, &e, &st, ref.value()});
    expect_close(got, ref.read(), 0.0f, 0.0f, "slice");
  }
}

TEST(VulkanMoreOps, EmbeddingMatchesPortableAndZeroesBadIndices) {
  const int32_t vocab = 50, dim = 12;
  const auto w = random_floats(size_t(vocab) * dim, 19);
  std::vector<int64_t> idx = {0, 49, 7, 7, 23, 1};
  PayloadBuilder b;
  const uint32_t ii = b.add_input({2, 3}, 0, fb::DataType::Int64);
  const uint32_t wi = b.add_constant({uint32_t(vocab), uint32_t(dim)}, w);
  const uint32_t yi = b.add_output({2, 3, uint32_t(dim)}, 1);
  b.add_node(fb::OpType::Embedding, {wi, ii}, yi);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor ti({2, 3}, ScalarType::Long), tw({vocab, dim}, w), ty({2, 3, dim}), ref({2, 3, dim});
  std::memcpy(ti.tensor().mutable_data(), idx.data(), idx.size() * sizeof(int64_t));
  ASSERT_EQ(d.execute({ti.value(), ty.value()}), Error::Ok) << last_error_message();
  EValue pad = EValue::from_int(-1), f = EValue::from_bool(false);
  run_portable("aten::embedding.out", {tw.value(), ti.value(), &pad, &f, &f, ref.value()});
  expect_close(ty.read(), ref.read(), 0.0f, 0.0f, "embedding");
  // A float tensor where the indices go is refused with the argument named.
  TestTensor wrong({2, 3});
  EXPECT_EQ(d.execute({wrong.value(), ty.value()}), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("expected Long"), std::string::npos);
  // Out-of-range indices give zero rows instead of reading outside the weight.
  idx = {50, -1, 3, 3, 3, 3};
  std::memcpy(ti.tensor().mutable_data(), idx.data(), idx.size() * sizeof(int64_t));
  ASSERT_EQ(d.execute({ti.value(), ty.value()}), Error::Ok) << last_error_message();
  const auto got = ty.read();
  for (int32_t i = 0; i < 2 * dim; ++i) EXPECT_EQ(got[size_t(i)], 0.0f);
  EXPECT_EQ(got[size_t(2 * dim)], w[size_t(3 * dim)]);
}

// Reshapes share their input's storage: a chain of them costs no device memory or dispatch.
TEST(VulkanMoreOps, ReshapeChainIsNoCopy) {
  const auto x = random_floats(60, 23);
  const auto build = [&](int reshapes) {
    PayloadBuilder b;
    uint32_t t = b.add_input({3, 4, 5}, 0);
    const std::vector<std::vector<uint32_t>> shapes = {{3, 4, 5}, {12, 5}, {60}, {6, 10}, {3, 20}};
    for (int i = 1; i <= reshapes; ++i) {
      const uint32_t next = b.add_tensor(shapes[size_t(i)]);
      b.add_node(fb::OpType::Reshape, {t}, next);
      t = next;
    }
    const uint32_t y = b.add_output(shapes[size_t(reshapes)], 1);
    b.add_node(fb::OpType::Clamp, {t}, y, {.output_min = 0.0f});
    return b.build();
  };
  Delegate one, four;
  ASSERT_EQ(one.init(build(0)), Error::Ok) << last_error_message();
  ASSERT_EQ(four.init(build(4)), Error::Ok) << last_error_message();
  EXPECT_EQ(delegate_device_bytes(four.handle()), delegate_device_bytes(one.handle()));
  TestTensor tx({3, 4, 5}, x), ty({3, 20});
  ASSERT_EQ(four.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  const auto got = ty.read();
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], std::max(x[i], 0.0f));
}

// fp16 storage: the boundary conversions round like float_to_half, and a linear + gelu +
// layer norm chain stored in fp16 stays within the fp16 tolerance of the fp32 portable result.
TEST(VulkanMoreOps, Fp16ConvertRoundsToNearestEven) {
  auto x = random_floats(1000, 29, -70000.0f, 70000.0f);
  x[0] = 1.0f + 1.0f / 4096.0f;  // exactly between two halves: rounds to even (1.0)
  x[1] = 65519.0f;               // rounds to 65504
  x[2] = 1e-8f;                  // subnormal half (or 0)
  PayloadBuilder b;
  const uint32_t xi = b.add_input({1000}, 0);
  const uint32_t h = b.add_tensor({1000}, fb::DataType::Float16);
  const uint32_t yi = b.add_output({1000}, 1);
  b.add_node(fb::OpType::Convert, {xi}, h);
  b.add_node(fb::OpType::Convert, {h}, yi);
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor tx({1000}, x), ty({1000});
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
  const auto got = ty.read();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i], half_to_float(float_to_half(x[i]))) << i << ": " << x[i];
  }
}

TEST(VulkanMoreOps, Fp16RegionMatchesPortableWithinHalfPrecision) {
  const int32_t m = 9, k = 96, n = 40;
  const auto x = random_floats(size_t(m) * k, 31);
  const auto w = random_floats(size_t(n) * k, 32, -0.2f, 0.2f);
  const auto bias = random_floats(size_t(n), 33);
  for (LinearShader s : {LinearShader::Tiled, LinearShader::Direct, LinearShader::Registers}) {
    set_linear_shader(s);
    PayloadBuilder b;
    const auto f16 = fb::DataType::Float16;
    const uint32_t xi = b.add_input({uint32_t(m), uint32_t(k)}, 0);
    const uint32_t xh = b.add_tensor({uint32_t(m), uint32_t(k)}, f16);
    const uint32_t wi = b.add_constant({uint32_t(n), uint32_t(k)}, w, f16);
    const uint32_t bi = b.add_constant({uint32_t(n)}, bias, f16);
    const uint32_t lin = b.add_tensor({uint32_t(m), uint32_t(n)}, f16);
    const uint32_t act = b.add_tensor({uint32_t(m), uint32_t(n)}, f16);
    const uint32_t norm = b.add_tensor({uint32_t(m), uint32_t(n)}, f16);
    const uint32_t yi = b.add_output({uint32_t(m), uint32_t(n)}, 1);
    b.add_node(fb::OpType::Convert, {xi}, xh);
    b.add_node(fb::OpType::Linear, {xh, wi, bi}, lin);
    b.add_node(fb::OpType::Unary, {lin}, act, {.unary = fb::UnaryOp::Gelu});
    b.add_node(fb::OpType::LayerNorm, {act}, norm);
    b.add_node(fb::OpType::Convert, {norm}, yi);
    Delegate d;
    ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
    TestTensor tx({m, k}, x), ty({m, n}), tw({n, k}, w), tb({n}, bias), l({m, n}), g({m, n}),
        ref({m, n}), mean({m, 1}), rstd({m, 1});
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    run_portable("aten::linear.out", {tx.value(), tw.value(), tb.value(), l.value()});
    EValue none_str = string_value("none"), shape = int_list({n}), none,
           eps = EValue::from_double(1e-5);
    run_portable("aten::gelu.out", {l.value(), &none_str, g.value()});
    run_portable("aten::native_layer_norm.out",
                 {g.value(), &shape, &none, &none, &eps, ref.value(), mean.value(), rstd.value()});
    // Layer norm divides by the row's spread, which fp16 inputs perturb by ~1e-3: 2e-2 abs.
    expect_close(ty.read(), ref.read(), 1e-2f, 2e-2f, "fp16 linear+gelu+layer_norm");
  }
  set_linear_shader(LinearShader::Auto);
}

}  // namespace
}  // namespace pteron::vulkan::testing
