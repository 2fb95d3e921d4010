// fp32 operators through the XNNPACK delegate against double-precision scalar references.
// Tolerance: 1e-5 relative (1e-5 absolute for results below 1 in magnitude).
#include <cmath>

#include "tests/backends/xnnpack/reference_ops.h"
#include "tests/backends/xnnpack/xnnpack_test_util.h"

namespace pteron::xnnpack::testing {
namespace {

constexpr DType kF32 = DType::kFloat32;
auto identity = [](float v) { return double{v}; };
auto identity_w = [](float v, int) { return double{v}; };

// Runs one conv2d (NHWC) through the delegate and checks it against conv2d_ref.
void check_conv2d(const Conv2dParams& p, bool bias, bool same_padding, uint32_t seed) {
  const std::vector<int32_t> in_sizes = {p.n, p.h, p.w, p.ic()};
  const std::vector<int32_t> out_sizes = {p.n, p.out_h(), p.out_w(), p.oc()};
  const auto x = random_floats(static_cast<size_t>(p.n) * p.h * p.w * p.ic(), seed);
  const auto w = random_floats(static_cast<size_t>(p.oc()) * p.kh * p.kw * p.gic, seed + 1);
  const auto bv = random_floats(bias ? p.oc() : 0, seed + 2);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, u32(in_sizes));
  const TensorId wi =
      b.add_constant(kF32, {uint32_t(p.oc()), uint32_t(p.kh), uint32_t(p.kw), uint32_t(p.gic)},
                     std::span<const float>(w));
  const TensorId yi = b.add_tensor(kF32, u32(out_sizes));
  std::vector<TensorId> ins = {xi, wi};
  if (bias) ins.push_back(b.add_constant(kF32, {uint32_t(p.oc())}, std::span<const float>(bv)));
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  Conv2d conv{.kernel_height = uint32_t(p.kh),
              .kernel_width = uint32_t(p.kw),
              .stride_height = uint32_t(p.stride_h),
              .stride_width = uint32_t(p.stride_w),
              .dilation_height = uint32_t(p.dil_h),
              .dilation_width = uint32_t(p.dil_w),
              .groups = uint32_t(p.groups),
              .group_input_channels = uint32_t(p.gic),
              .group_output_channels = uint32_t(p.goc)};
  if (same_padding) {
    conv.same_padding = true;
  } else {
    conv.padding = Padding{uint32_t(p.pad_top), uint32_t(p.pad_right), uint32_t(p.pad_bottom),
                           uint32_t(p.pad_left)};
  }
  b.add_node(conv, ins, {yi});
  const auto got = run_graph<float, float>(b, {{in_sizes, x}}, out_sizes);
  expect_close(got, conv2d_ref(p, x, w, to_double(bv), identity, identity_w), "conv2d");
}

TEST(XnnpackFp32, Conv2dPadded3x3WithBias) {
  check_conv2d({.n = 1,
                .h = 7,
                .w = 9,
                .groups = 1,
                .gic = 3,
                .goc = 8,
                .kh = 3,
                .kw = 3,
                .pad_top = 1,
                .pad_left = 1,
                .pad_bottom = 1,
                .pad_right = 1},
               true, false, 1);
}

TEST(XnnpackFp32, Conv2dStrideDilationAsymmetricPaddingNoBias) {
  check_conv2d({.n = 2,
                .h = 11,
                .w = 10,
                .groups = 1,
                .gic = 5,
                .goc = 7,
                .kh = 3,
                .kw = 2,
                .stride_h = 2,
                .stride_w = 3,
                .dil_h = 2,
                .dil_w = 1,
                .pad_top = 0,
                .pad_left = 1,
                .pad_bottom = 2,
                .pad_right = 0},
               false, false, 2);
}

TEST(XnnpackFp32, Conv2dGrouped) {
  check_conv2d({.n = 1,
                .h = 6,
                .w = 6,
                .groups = 2,
                .gic = 3,
                .goc = 4,
                .kh = 3,
                .kw = 3,
                .pad_top = 1,
                .pad_left = 1,
                .pad_bottom = 1,
                .pad_right = 1},
               true, false, 3);
}

TEST(XnnpackFp32, Conv2dDepthwiseAsGroups) {
  // groups == channels with one input channel per group: XNNPACK picks its depthwise kernel.
  check_conv2d({.n = 1,
                .h = 8,
                .w = 8,
                .groups = 6,
                .gic = 1,
                .goc = 1,
                .kh = 3,
                .kw = 3,
                .stride_h = 2,
                .stride_w = 2,
                .pad_top = 1,
                .pad_left = 1,
                .pad_bottom = 1,
                .pad_right = 1},
               true, false, 4);
}

TEST(XnnpackFp32, Conv2dSamePaddingStride2) {
  // SAME with stride 2 on 9x9, 3x3: output 5x5, total pad 2 split 1/1.
  Conv2dParams p{.n = 1,
                 .h = 9,
                 .w = 9,
                 .groups = 1,
                 .gic = 2,
                 .goc = 3,
                 .kh = 3,
                 .kw = 3,
                 .stride_h = 2,
                 .stride_w = 2,
                 .pad_top = 1,
                 .pad_left = 1,
                 .pad_bottom = 1,
                 .pad_right = 1};
  ASSERT_EQ(p.out_h(), 5);
  check_conv2d(p, true, true, 5);
}

TEST(XnnpackFp32, DepthwiseConv2dMultiplierStridePadding) {
  const int n = 1, h = 9, w = 7, c = 6, m = 2, k = 3;
  Conv2dParams p{.n = n,
                 .h = h,
                 .w = w,
                 .groups = c,
                 .gic = 1,
                 .goc = m,
                 .kh = k,
                 .kw = k,
                 .stride_h = 2,
                 .stride_w = 2,
                 .pad_top = 1,
                 .pad_left = 1,
                 .pad_bottom = 1,
                 .pad_right = 1};
  const std::vector<int32_t> in_sizes = {n, h, w, c};
  const std::vector<int32_t> out_sizes = {n, p.out_h(), p.out_w(), c * m};
  const auto x = random_floats(size_t(n) * h * w * c, 10);
  const auto wt = random_floats(size_t(k) * k * c * m, 11);
  const auto bv = random_floats(c * m, 12);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, u32(in_sizes));
  const TensorId wi = b.add_constant(kF32, {1, uint32_t(k), uint32_t(k), uint32_t(c * m)},
                                     std::span<const float>(wt));
  const TensorId bi = b.add_constant(kF32, {uint32_t(c * m)}, std::span<const float>(bv));
  const TensorId yi = b.add_tensor(kF32, u32(out_sizes));
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(DepthwiseConv2d{.kernel_height = 3,
                             .kernel_width = 3,
                             .stride_height = 2,
                             .stride_width = 2,
                             .depth_multiplier = uint32_t(m),
                             .input_channels = uint32_t(c),
                             .padding = Padding::uniform(1)},
             {xi, wi, bi}, {yi});
  const auto got = run_graph<float, float>(b, {{in_sizes, x}}, out_sizes);
  expect_close(got, depthwise_ref(p, x, wt, to_double(bv), identity, identity_w), "depthwise");
}

TEST(XnnpackFp32, FullyConnectedVariants) {
  const int batch = 5, in_ch = 20, out_ch = 12;
  const auto x = random_floats(size_t(batch) * in_ch, 20);
  const auto w = random_floats(size_t(out_ch) * in_ch, 21);
  const auto bias = random_floats(out_ch, 22);
  const std::vector<double> ref = fc_ref(x, w, bias, batch, in_ch, out_ch);
  {  // [batch, in] x [out, in]^T + bias
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {uint32_t(batch), uint32_t(in_ch)});
    const TensorId wi =
        b.add_constant(kF32, {uint32_t(out_ch), uint32_t(in_ch)}, std::span<const float>(w));
    const TensorId bi = b.add_constant(kF32, {uint32_t(out_ch)}, std::span<const float>(bias));
    const TensorId yi = b.add_tensor(kF32, {uint32_t(batch), uint32_t(out_ch)});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(FullyConnected{}, {xi, wi, bi}, {yi});
    expect_close(run_graph<float, float>(b, {{{batch, in_ch}, x}}, {batch, out_ch}), ref, "fc");
  }
  {  // transposed weights [in, out], fused relu
    std::vector<float> wt(w.size());
    for (int o = 0; o < out_ch; ++o)
      for (int i = 0; i < in_ch; ++i) wt[size_t(i) * out_ch + o] = w[size_t(o) * in_ch + i];
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {uint32_t(batch), uint32_t(in_ch)});
    const TensorId wi =
        b.add_constant(kF32, {uint32_t(in_ch), uint32_t(out_ch)}, std::span<const float>(wt));
    const TensorId bi = b.add_constant(kF32, {uint32_t(out_ch)}, std::span<const float>(bias));
    const TensorId yi = b.add_tensor(kF32, {uint32_t(batch), uint32_t(out_ch)});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(FullyConnected{.transpose_weights = true}, {xi, wi, bi}, {yi}, OutputRange::relu());
    std::vector<double> relu = ref;
    for (double& v : relu) v = std::max(v, 0.0);
    expect_close(run_graph<float, float>(b, {{{batch, in_ch}, x}}, {batch, out_ch}), relu,
                 "fc transposed relu");
  }
  {  // 3-D input flattened with reshape_2d: [1, 5, 20] -> [5, 12], no bias
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {1, uint32_t(batch), uint32_t(in_ch)});
    const TensorId wi =
        b.add_constant(kF32, {uint32_t(out_ch), uint32_t(in_ch)}, std::span<const float>(w));
    const TensorId yi = b.add_tensor(kF32, {uint32_t(batch), uint32_t(out_ch)});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(FullyConnected{.reshape_2d = true}, {xi, wi}, {yi});
    expect_close(run_graph<float, float>(b, {{{1, batch, in_ch}, x}}, {batch, out_ch}),
                 fc_ref(x, w, {}, batch, in_ch, out_ch), "fc reshape_2d");
  }
}

TEST(XnnpackFp32, BinaryOpsBroadcast) {
  struct Case {
    BinaryOp op;
    double (*ref)(double, double);
  };
  const Case cases[] = {
      {BinaryOp::kAdd, [](double a, double b) { return a + b; }},
      {BinaryOp::kSubtract, [](double a, double b) { return a - b; }},
      {BinaryOp::kMultiply, [](double a, double b) { return a * b; }},
      {BinaryOp::kDivide, [](double a, double b) { return a / b; }},
      {BinaryOp::kMaximum, [](double a, double b) { return std::max(a, b); }},
      {BinaryOp::kMinimum, [](double a, double b) { return std::min(a, b); }},
      {BinaryOp::kSquaredDifference, [](double a, double b) { return (a - b) * (a - b); }},
  };
  // [2, 3, 4, 5] op [4, 1], and [1, 5] op [3, 1, 1] (both sides broadcast).
  const std::vector<std::vector<int>> shapes[] = {{{2, 3, 4, 5}, {4, 1}, {2, 3, 4, 5}},
                                                  {{1, 5}, {3, 1, 1}, {3, 1, 5}}};
  uint32_t seed = 30;
  for (const Case& c : cases) {
    for (const auto& s : shapes) {
      size_t na = 1, nb = 1;
      for (int d : s[0]) na *= d;
      for (int d : s[1]) nb *= d;
      const auto a = random_floats(na, seed++);
      auto bv = random_floats(nb, seed++, 0.5f, 2.0f);  // away from 0 for divide
      PayloadBuilder b;
      auto dims = [](const std::vector<int>& v) {
        return std::vector<uint32_t>(v.begin(), v.end());
      };
      const TensorId ai = b.add_tensor(kF32, dims(s[0]));
      const TensorId bi = b.add_tensor(kF32, dims(s[1]));
      const TensorId yi = b.add_tensor(kF32, dims(s[2]));
      b.mark_external(ai, ExternalKind::kInput, 0);
      b.mark_external(bi, ExternalKind::kInput, 1);
      b.mark_external(yi, ExternalKind::kOutput, 2);
      b.add_node(Binary{c.op}, {ai, bi}, {yi});
      auto sizes = [](const std::vector<int>& v) {
        return std::vector<int32_t>(v.begin(), v.end());
      };
      const auto got =
          run_graph<float, float>(b, {{sizes(s[0]), a}, {sizes(s[1]), bv}}, sizes(s[2]));
      const std::string what = node_kind_name(Binary{c.op});
      expect_close(got, broadcast_ref(to_double(a), s[0], to_double(bv), s[1], s[2], c.ref),
                   what.c_str());
    }
  }
}

TEST(XnnpackFp32, AddConstantOperandWithFusedClamp) {
  // A constant operand is read at run time straight from the payload's constant blob.
  const auto x = random_floats(2 * 3 * 8, 40, -3, 3);
  const auto k = random_floats(8, 41, -3, 3);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {2, 3, 8});
  const TensorId ki = b.add_constant(kF32, {8}, std::span<const float>(k));
  const TensorId yi = b.add_tensor(kF32, {2, 3, 8});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(Binary{BinaryOp::kAdd}, {xi, ki}, {yi}, OutputRange{-1.0f, 2.5f});
  auto ref = broadcast_ref(to_double(x), {2, 3, 8}, to_double(k), {8}, {2, 3, 8},
                           [](double a, double c) { return std::min(2.5, std::max(-1.0, a + c)); });
  expect_close(run_graph<float, float>(b, {{{2, 3, 8}, x}}, {2, 3, 8}), ref, "add const clamp");
}

TEST(XnnpackFp32, ClampReluRelu6) {
  const auto x = random_floats(97, 50, -10, 10);
  const std::pair<float, float> ranges[] = {{0.0f, INFINITY}, {0.0f, 6.0f}, {-0.5f, 0.25f}};
  for (auto [lo, hi] : ranges) {
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {97});
    const TensorId yi = b.add_tensor(kF32, {97});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(Clamp{lo, hi}, {xi}, {yi});
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = std::min<double>(hi, std::max<double>(lo, x[i]));
    expect_close(run_graph<float, float>(b, {{{97}, x}}, {97}), ref, "clamp");
  }
}

void check_pool(const PoolParams& p, bool max, uint32_t seed) {
  const std::vector<int32_t> in_sizes = {p.n, p.h, p.w, p.c};
  const std::vector<int32_t> out_sizes = {p.n, p.out_h(), p.out_w(), p.c};
  const auto x = random_floats(size_t(p.n) * p.h * p.w * p.c, seed);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, u32(in_sizes));
  const TensorId yi = b.add_tensor(kF32, u32(out_sizes));
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  const Padding pad{uint32_t(p.pad_top), uint32_t(p.pad_right), uint32_t(p.pad_bottom),
                    uint32_t(p.pad_left)};
  if (max) {
    b.add_node(MaxPool2d{.pooling_height = uint32_t(p.kh),
                         .pooling_width = uint32_t(p.kw),
                         .stride_height = uint32_t(p.stride_h),
                         .stride_width = uint32_t(p.stride_w),
                         .padding = pad},
               {xi}, {yi});
  } else {
    b.add_node(AvgPool2d{.pooling_height = uint32_t(p.kh),
                         .pooling_width = uint32_t(p.kw),
                         .stride_height = uint32_t(p.stride_h),
                         .stride_width = uint32_t(p.stride_w),
                         .padding = pad},
               {xi}, {yi});
  }
  expect_close(run_graph<float, float>(b, {{in_sizes, x}}, out_sizes), pool_ref(p, x, max),
               max ? "max_pool" : "avg_pool");
}

TEST(XnnpackFp32, MaxPool3x3Stride2Padded) {
  check_pool({.n = 2,
              .h = 9,
              .w = 8,
              .c = 5,
              .kh = 3,
              .kw = 3,
              .stride_h = 2,
              .stride_w = 2,
              .pad_top = 1,
              .pad_left = 1,
              .pad_bottom = 1,
              .pad_right = 1},
             true, 60);
}

TEST(XnnpackFp32, AvgPool2x2Stride2) {
  check_pool({.n = 1, .h = 8, .w = 6, .c = 7, .kh = 2, .kw = 2, .stride_h = 2, .stride_w = 2},
             false, 61);
}

TEST(XnnpackFp32, AvgPoolPaddedExcludesPadding) {
  // Documented semantics: with padding the divisor counts input pixels only
  // (torch count_include_pad=False).
  check_pool({.n = 1,
              .h = 5,
              .w = 5,
              .c = 3,
              .kh = 3,
              .kw = 3,
              .stride_h = 1,
              .stride_w = 1,
              .pad_top = 1,
              .pad_left = 1,
              .pad_bottom = 1,
              .pad_right = 1},
             false, 62);
}

TEST(XnnpackFp32, MaxPoolSamePaddingStride2) {
  // TensorFlow SAME on 7x7, 3x3 window, stride 2: output 4x4, total pad 2 split 1/1.
  const PoolParams p{.n = 1,
                     .h = 7,
                     .w = 7,
                     .c = 3,
                     .kh = 3,
                     .kw = 3,
                     .stride_h = 2,
                     .stride_w = 2,
                     .pad_top = 1,
                     .pad_left = 1,
                     .pad_bottom = 1,
                     .pad_right = 1};
  ASSERT_EQ(p.out_h(), 4);
  const auto x = random_floats(7 * 7 * 3, 64);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {1, 7, 7, 3});
  const TensorId yi = b.add_tensor(kF32, {1, 4, 4, 3});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(MaxPool2d{.pooling_height = 3,
                       .pooling_width = 3,
                       .stride_height = 2,
                       .stride_width = 2,
                       .same_padding = true},
             {xi}, {yi});
  expect_close(run_graph<float, float>(b, {{{1, 7, 7, 3}, x}}, {1, 4, 4, 3}), pool_ref(p, x, true),
               "max_pool same");
}

TEST(XnnpackFp32, Deconv2dStridePaddingAdjustment) {
  // Transposed conv: each input pixel scatters kernel * value to out[i * stride + k * dil - pad].
  const int n = 1, h = 4, w = 3, ic = 3, oc = 2, k = 3, s = 2, pad = 1, adj = 1;
  const int oh = s * (h - 1) + adj + k - 2 * pad, ow = s * (w - 1) + adj + k - 2 * pad;
  const auto x = random_floats(size_t(n) * h * w * ic, 65);
  const auto wt = random_floats(size_t(oc) * k * k * ic, 66);
  const auto bias = random_floats(oc, 67);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {1, uint32_t(h), uint32_t(w), uint32_t(ic)});
  const TensorId wi = b.add_constant(kF32, {uint32_t(oc), uint32_t(k), uint32_t(k), uint32_t(ic)},
                                     std::span<const float>(wt));
  const TensorId bi = b.add_constant(kF32, {uint32_t(oc)}, std::span<const float>(bias));
  const TensorId yi = b.add_tensor(kF32, {1, uint32_t(oh), uint32_t(ow), uint32_t(oc)});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(Deconv2d{.kernel_height = k,
                      .kernel_width = k,
                      .stride_height = s,
                      .stride_width = s,
                      .adjustment_height = adj,
                      .adjustment_width = adj,
                      .group_input_channels = ic,
                      .group_output_channels = oc,
                      .padding = Padding::uniform(pad)},
             {xi, wi, bi}, {yi});
  std::vector<double> ref(size_t(oh) * ow * oc);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = bias[i % oc];
  for (int iy = 0; iy < h; ++iy)
    for (int ix = 0; ix < w; ++ix)
      for (int ky = 0; ky < k; ++ky)
        for (int kx = 0; kx < k; ++kx) {
          const int oy = iy * s + ky - pad, ox = ix * s + kx - pad;
          if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
          for (int o = 0; o < oc; ++o)
            for (int c = 0; c < ic; ++c) {
              ref[(size_t(oy) * ow + ox) * oc + o] += double{x[(size_t(iy) * w + ix) * ic + c]} *
                                                      wt[((size_t(o) * k + ky) * k + kx) * ic + c];
            }
        }
  expect_close(run_graph<float, float>(b, {{{1, h, w, ic}, x}}, {1, oh, ow, oc}), ref, "deconv2d");
}

TEST(XnnpackFp32, GlobalAvgPool) {
  const int n = 2, h = 7, w = 5, c = 11;
  const auto x = random_floats(size_t(n) * h * w * c, 63);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {uint32_t(n), uint32_t(h), uint32_t(w), uint32_t(c)});
  const TensorId yi = b.add_tensor(kF32, {uint32_t(n), 1, 1, uint32_t(c)});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(GlobalAvgPool2d{}, {xi}, {yi});
  const PoolParams p{.n = n, .h = h, .w = w, .c = c, .kh = h, .kw = w};
  expect_close(run_graph<float, float>(b, {{{n, h, w, c}, x}}, {n, 1, 1, c}), pool_ref(p, x, false),
               "global_avg_pool");
}

TEST(XnnpackFp32, SoftmaxLastDim) {
  for (const std::vector<int32_t>& shape : {std::vector<int32_t>{3, 10}, {2, 3, 17}}) {
    size_t total = 1;
    for (int32_t d : shape) total *= d;
    const auto x = random_floats(total, 70, -5, 5);
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, u32(shape));
    const TensorId yi = b.add_tensor(kF32, u32(shape));
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(Unary{UnaryOp::kSoftmax}, {xi}, {yi});
    expect_close(run_graph<float, float>(b, {{shape, x}}, shape), softmax_ref(x, shape.back()),
                 "softmax");
  }
}

TEST(XnnpackFp32, ElementwiseActivations) {
  const auto x = random_floats(61, 80, -4, 4);
  struct Case {
    NodeAttrs attrs;
    double (*ref)(double);
  };
  const Case cases[] = {
      {Unary{UnaryOp::kSigmoid}, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {Unary{UnaryOp::kHardswish},
       [](double v) { return v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; }},
      {Elu{.alpha = 1.5f}, [](double v) { return v > 0 ? v : 1.5 * std::expm1(v); }},
      {LeakyRelu{.negative_slope = 0.1f}, [](double v) { return v > 0 ? v : double{0.1f} * v; }},
      {Unary{UnaryOp::kAbs}, [](double v) { return std::fabs(v); }},
      {Unary{UnaryOp::kNegate}, [](double v) { return -v; }},
      {Unary{UnaryOp::kSquare}, [](double v) { return v * v; }},
      {Unary{UnaryOp::kFloor}, [](double v) { return std::floor(v); }},
  };
  for (const Case& c : cases) {
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {61});
    const TensorId yi = b.add_tensor(kF32, {61});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(c.attrs, {xi}, {yi});
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = c.ref(x[i]);
    const std::string what = node_kind_name(c.attrs);
    expect_close(run_graph<float, float>(b, {{{61}, x}}, {61}), ref, what.c_str());
  }
}

TEST(XnnpackFp32, PReluPerChannel) {
  const int rows = 6, c = 5;
  const auto x = random_floats(size_t(rows) * c, 90);
  const auto slope = random_floats(c, 91, 0.0f, 0.5f);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {2, 3, uint32_t(c)});
  const TensorId si = b.add_constant(kF32, {uint32_t(c)}, std::span<const float>(slope));
  const TensorId yi = b.add_tensor(kF32, {2, 3, uint32_t(c)});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(PRelu{}, {xi, si}, {yi});
  std::vector<double> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = x[i] > 0 ? x[i] : double{x[i]} * slope[i % c];
  expect_close(run_graph<float, float>(b, {{{2, 3, c}, x}}, {2, 3, c}), ref, "prelu");
}

TEST(XnnpackFp32, ConstantPadAndStaticReshape) {
  const auto x = random_floats(2 * 3, 100);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {2, 3});
  const TensorId pi = b.add_tensor(kF32, {3, 6});
  const TensorId yi = b.add_tensor(kF32, {18});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(ConstantPad{.pre = {1, 2}, .post = {0, 1}, .value = 0.5f}, {xi}, {pi});
  b.add_node(StaticReshape{.new_shape = {18}}, {pi}, {yi});
  std::vector<double> ref(18, 0.5);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) ref[size_t(r + 1) * 6 + c + 2] = x[size_t(r) * 3 + c];
  expect_close(run_graph<float, float>(b, {{{2, 3}, x}}, {18}), ref, "pad+reshape");
}

TEST(XnnpackFp32, ResizeBilinearHalfPixelAndAlignCorners) {
  const int h = 4, w = 5, c = 3, oh = 7, ow = 3;
  const auto x = random_floats(size_t(h) * w * c, 110);
  for (bool align : {false, true}) {
    PayloadBuilder b;
    const TensorId xi = b.add_tensor(kF32, {1, uint32_t(h), uint32_t(w), uint32_t(c)});
    const TensorId yi = b.add_tensor(kF32, {1, uint32_t(oh), uint32_t(ow), uint32_t(c)});
    b.mark_external(xi, ExternalKind::kInput, 0);
    b.mark_external(yi, ExternalKind::kOutput, 1);
    b.add_node(ResizeBilinear2d{.new_height = oh, .new_width = ow, .align_corners = align}, {xi},
               {yi});
    // torch.nn.functional.interpolate(mode="bilinear", align_corners=align) on NHWC data.
    auto src = [&](int o, int in, int out) {
      if (align) return out > 1 ? double(o) * (in - 1) / (out - 1) : 0.0;
      return std::max(0.0, (o + 0.5) * in / out - 0.5);
    };
    std::vector<double> ref(size_t(oh) * ow * c);
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        const double sy = src(oy, h, oh), sx = src(ox, w, ow);
        const int y0 = int(sy), x0 = int(sx);
        const int y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
        const double ly = sy - y0, lx = sx - x0;
        for (int ch = 0; ch < c; ++ch) {
          auto at = [&](int yy, int xx) { return double{x[(size_t(yy) * w + xx) * c + ch]}; };
          ref[(size_t(oy) * ow + ox) * c + ch] =
              (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
              ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
        }
      }
    expect_close(run_graph<float, float>(b, {{{1, h, w, c}, x}}, {1, oh, ow, c}), ref,
                 align ? "resize align_corners" : "resize half_pixel");
  }
}

TEST(XnnpackFp32, DepthToSpaceDcrOrder) {
  const int h = 2, w = 3, c = 2, bs = 2;
  const auto x = random_floats(size_t(h) * w * c * bs * bs, 120);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {1, uint32_t(h), uint32_t(w), uint32_t(c * bs * bs)});
  const TensorId yi = b.add_tensor(kF32, {1, uint32_t(h * bs), uint32_t(w * bs), uint32_t(c)});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(DepthToSpace{.block_size = bs}, {xi}, {yi});
  std::vector<double> ref(x.size());
  for (int y = 0; y < h * bs; ++y)
    for (int xx = 0; xx < w * bs; ++xx)
      for (int ch = 0; ch < c; ++ch) {
        const int in_c = ((y % bs) * bs + xx % bs) * c + ch;
        ref[(size_t(y) * w * bs + xx) * c + ch] =
            x[(size_t(y / bs) * w + xx / bs) * c * bs * bs + in_c];
      }
  expect_close(run_graph<float, float>(b, {{{1, h, w, c * bs * bs}, x}}, {1, h * bs, w * bs, c}),
               ref, "depth_to_space");
}

TEST(XnnpackFp32, Fp16BoundaryConvert) {
  // fp16 tensors cross the boundary; XNNPACK converts them to and from fp32.
  const auto x = random_floats(33, 130, -8, 8);
  std::vector<uint16_t> xh(x.size());
  for (size_t i = 0; i < x.size(); ++i) xh[i] = float_to_half(x[i]);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(DType::kFloat16, {33});
  const TensorId fi = b.add_tensor(kF32, {33});
  const TensorId gi = b.add_tensor(kF32, {33});
  const TensorId yi = b.add_tensor(DType::kFloat16, {33});
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(Unary{UnaryOp::kConvert}, {xi}, {fi});
  b.add_node(Clamp{-2.0f, 3.0f}, {fi}, {gi});
  b.add_node(Unary{UnaryOp::kConvert}, {gi}, {yi});
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor in(ScalarType::Half, {33}), out(ScalarType::Half, {33});
  in.fill(xh);
  ASSERT_EQ(d.execute({in.value(), out.value()}), Error::Ok) << last_error_message();
  const auto got = out.read<uint16_t>();
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = std::min(3.0f, std::max(-2.0f, half_to_float(xh[i])));
    EXPECT_EQ(got[i], float_to_half(want)) << i;
  }
}

TEST(XnnpackFp32, ChainConvReluPoolFcWithChannelsLastInput) {
  // conv 3x3 (pad 1) -> relu -> max pool 2x2/2 -> reshape -> fully connected. The input is a
  // channels-last NCHW pteron tensor, bound with dim order (0, 2, 3, 1).
  const int n = 1, h = 8, w = 8, c = 3, oc = 4, classes = 5;
  const auto x = random_floats(size_t(n) * h * w * c, 140);  // NHWC memory order
  const auto cw = random_floats(size_t(oc) * 9 * c, 141);
  const auto cb = random_floats(oc, 142);
  const int flat = 4 * 4 * oc;
  const auto fw = random_floats(size_t(classes) * flat, 143);
  const auto fb = random_floats(classes, 144);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kF32, {1, 8, 8, 3});
  const TensorId cwi = b.add_constant(kF32, {4, 3, 3, 3}, std::span<const float>(cw));
  const TensorId cbi = b.add_constant(kF32, {4}, std::span<const float>(cb));
  const TensorId t1 = b.add_tensor(kF32, {1, 8, 8, 4});
  const TensorId t2 = b.add_tensor(kF32, {1, 8, 8, 4});
  const TensorId t3 = b.add_tensor(kF32, {1, 4, 4, 4});
  const TensorId t4 = b.add_tensor(kF32, {1, uint32_t(flat)});
  const TensorId fwi =
      b.add_constant(kF32, {uint32_t(classes), uint32_t(flat)}, std::span<const float>(fw));
  const TensorId fbi = b.add_constant(kF32, {uint32_t(classes)}, std::span<const float>(fb));
  const TensorId yi = b.add_tensor(kF32, {1, uint32_t(classes)});
  b.mark_external(xi, ExternalKind::kInput, 0, {0, 2, 3, 1});
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(Conv2d{.kernel_height = 3,
                    .kernel_width = 3,
                    .group_input_channels = 3,
                    .group_output_channels = 4,
                    .padding = Padding::uniform(1)},
             {xi, cwi, cbi}, {t1});
  b.add_node(Clamp{0.0f, INFINITY}, {t1}, {t2});
  b.add_node(
      MaxPool2d{.pooling_height = 2, .pooling_width = 2, .stride_height = 2, .stride_width = 2},
      {t2}, {t3});
  b.add_node(StaticReshape{.new_shape = {1, uint32_t(flat)}}, {t3}, {t4});
  b.add_node(FullyConnected{}, {t4, fwi, fbi}, {yi});
  EXPECT_EQ(b.validate(), "");

  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor in(ScalarType::Float, {n, c, h, w}, {0, 2, 3, 1});
  in.fill(x);
  TestTensor out(ScalarType::Float, {1, classes});
  ASSERT_EQ(d.execute({in.value(), out.value()}), Error::Ok) << last_error_message();

  const Conv2dParams cp{.n = 1,
                        .h = 8,
                        .w = 8,
                        .groups = 1,
                        .gic = 3,
                        .goc = 4,
                        .kh = 3,
                        .kw = 3,
                        .pad_top = 1,
                        .pad_left = 1,
                        .pad_bottom = 1,
                        .pad_right = 1};
  std::vector<double> r = conv2d_ref(cp, x, cw, to_double(cb), identity, identity_w);
  for (double& v : r) v = std::max(v, 0.0);
  r = pool_ref(
      PoolParams{.n = 1, .h = 8, .w = 8, .c = 4, .kh = 2, .kw = 2, .stride_h = 2, .stride_w = 2}, r,
      true);
  std::vector<double> ref(classes);
  for (int o = 0; o < classes; ++o) {
    double acc = fb[o];
    for (int i = 0; i < flat; ++i) acc += r[i] * fw[size_t(o) * flat + i];
    ref[o] = acc;
  }
  expect_close(out.read<float>(), ref, "chain");
}

}  // namespace
}  // namespace pteron::xnnpack::testing
