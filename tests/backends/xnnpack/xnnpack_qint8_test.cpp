// qint8 operators through the XNNPACK delegate (per-tensor activations, per-channel or
// per-tensor conv weights, int32 bias) against a double-precision reference requantisation:
// real = sum((x - zx) * sx * w * sw) + bias * sx * sw, q = round(real / sy) + zy, saturated.
// Tolerance: 1 LSB.
#include <cmath>

#include "tests/backends/xnnpack/reference_ops.h"
#include "tests/backends/xnnpack/xnnpack_test_util.h"

namespace pteron::xnnpack::testing {
namespace {

constexpr DType kQ8 = DType::kQInt8;

std::vector<float> random_scales(size_t n, uint32_t seed) {
  return random_floats(n, seed, 0.002f, 0.008f);
}

std::vector<int> requantize(const std::vector<double>& real, double scale, int zero_point,
                            double lo = -INFINITY, double hi = INFINITY) {
  const int qlo = std::isinf(lo) ? -128 : quantize(lo, scale, zero_point);
  const int qhi = std::isinf(hi) ? 127 : quantize(hi, scale, zero_point);
  std::vector<int> q(real.size());
  for (size_t i = 0; i < real.size(); ++i) {
    q[i] = std::min(qhi, std::max(qlo, quantize(real[i], scale, zero_point)));
  }
  return q;
}

struct QConvCase {
  Conv2dParams p;
  bool depthwise = false;   // filter [1, kh, kw, oc] and a DepthwiseConv2d node
  bool per_channel = true;  // qcint8 weights + qcint32 bias, else qint8 + qint32
  bool relu = false;
};

void check_qconv(const QConvCase& c, uint32_t seed) {
  const Conv2dParams& p = c.p;
  const float sx = 0.02f, sy = 0.05f;
  const int zx = 3, zy = -5;
  const int oc = p.oc();
  const std::vector<int32_t> in_sizes = {p.n, p.h, p.w, p.ic()};
  const std::vector<int32_t> out_sizes = {p.n, p.out_h(), p.out_w(), oc};
  const auto x = random_int8(size_t(p.n) * p.h * p.w * p.ic(), seed);
  // Weights in the layout the node takes; the reference takes [oc, kh, kw, gic].
  const auto w = random_int8(size_t(oc) * p.kh * p.kw * p.gic, seed + 1, -127, 127);
  std::vector<float> sw =
      c.per_channel ? random_scales(oc, seed + 2) : std::vector<float>(oc, 0.005f);
  std::vector<int32_t> bias(oc);
  {
    std::mt19937 gen(seed + 3);
    std::uniform_int_distribution<int32_t> dist(-2000, 2000);
    for (int32_t& v : bias) v = dist(gen);
  }
  std::vector<float> bias_scales(oc);
  for (int o = 0; o < oc; ++o) bias_scales[o] = sx * sw[o];

  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kQ8, u32(in_sizes), Quant::per_tensor(sx, zx));
  const TensorId yi = b.add_tensor(kQ8, u32(out_sizes), Quant::per_tensor(sy, zy));
  const std::vector<uint32_t> wdims =
      c.depthwise
          ? std::vector<uint32_t>{1, uint32_t(p.kh), uint32_t(p.kw), uint32_t(oc)}
          : std::vector<uint32_t>{uint32_t(oc), uint32_t(p.kh), uint32_t(p.kw), uint32_t(p.gic)};
  std::vector<int8_t> wstored = w;
  if (c.depthwise) {  // [oc, kh, kw, 1] -> [1, kh, kw, oc]
    for (int o = 0; o < oc; ++o)
      for (int k = 0; k < p.kh * p.kw; ++k)
        wstored[size_t(k) * oc + o] = w[size_t(o) * p.kh * p.kw + k];
  }
  TensorId wi, bi;
  if (c.per_channel) {
    wi = b.add_constant(DType::kQCInt8, wdims, std::span<const int8_t>(wstored),
                        Quant::per_channel(sw, c.depthwise ? 3 : 0));
    bi = b.add_constant(DType::kQCInt32, {uint32_t(oc)}, std::span<const int32_t>(bias),
                        Quant::per_channel(bias_scales, 0));
  } else {
    wi = b.add_constant(kQ8, wdims, std::span<const int8_t>(wstored), Quant::per_tensor(sw[0], 0));
    bi = b.add_constant(DType::kQInt32, {uint32_t(oc)}, std::span<const int32_t>(bias),
                        Quant::per_tensor(sx * sw[0], 0));
  }
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  const Padding pad{uint32_t(p.pad_top), uint32_t(p.pad_right), uint32_t(p.pad_bottom),
                    uint32_t(p.pad_left)};
  const OutputRange range = c.relu ? OutputRange::relu() : OutputRange::none();
  if (c.depthwise) {
    b.add_node(DepthwiseConv2d{.kernel_height = uint32_t(p.kh),
                               .kernel_width = uint32_t(p.kw),
                               .stride_height = uint32_t(p.stride_h),
                               .stride_width = uint32_t(p.stride_w),
                               .depth_multiplier = uint32_t(p.goc),
                               .input_channels = uint32_t(p.ic()),
                               .padding = pad},
               {xi, wi, bi}, {yi}, range);
  } else {
    b.add_node(Conv2d{.kernel_height = uint32_t(p.kh),
                      .kernel_width = uint32_t(p.kw),
                      .stride_height = uint32_t(p.stride_h),
                      .stride_width = uint32_t(p.stride_w),
                      .groups = uint32_t(p.groups),
                      .group_input_channels = uint32_t(p.gic),
                      .group_output_channels = uint32_t(p.goc),
                      .padding = pad},
               {xi, wi, bi}, {yi}, range);
  }
  std::vector<double> real_bias(oc);
  for (int o = 0; o < oc; ++o) real_bias[o] = static_cast<double>(bias[o]) * sx * sw[o];
  const auto real = conv2d_ref(
      p, x, w, real_bias, [&](int8_t v) { return (v - zx) * double{sx}; },
      [&](int8_t v, int o) { return v * double{sw[o]}; });
  const auto got = run_graph<int8_t, int8_t>(b, {{in_sizes, x}}, out_sizes);
  expect_within_1lsb(got, requantize(real, sy, zy, c.relu ? 0.0 : -INFINITY), "qconv");
}

TEST(XnnpackQInt8, Conv2dPerChannelStridePaddingRelu) {
  check_qconv({.p = {.n = 1,
                     .h = 9,
                     .w = 8,
                     .groups = 1,
                     .gic = 3,
                     .goc = 8,
                     .kh = 3,
                     .kw = 3,
                     .stride_h = 2,
                     .stride_w = 2,
                     .pad_top = 1,
                     .pad_left = 1,
                     .pad_bottom = 1,
                     .pad_right = 1},
               .relu = true},
              1);
}

TEST(XnnpackQInt8, Conv2dPerChannelGrouped) {
  check_qconv({.p = {.n = 2,
                     .h = 6,
                     .w = 5,
                     .groups = 2,
                     .gic = 4,
                     .goc = 3,
                     .kh = 3,
                     .kw = 2,
                     .pad_top = 1,
                     .pad_left = 0,
                     .pad_bottom = 1,
                     .pad_right = 1}},
              2);
}

TEST(XnnpackQInt8, Conv2dPerTensorWeights) {
  check_qconv({.p = {.n = 1, .h = 7, .w = 7, .groups = 1, .gic = 5, .goc = 6, .kh = 1, .kw = 1},
               .per_channel = false},
              3);
}

TEST(XnnpackQInt8, DepthwisePerChannel) {
  check_qconv({.p = {.n = 1,
                     .h = 10,
                     .w = 9,
                     .groups = 8,
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
               .depthwise = true},
              4);
}

TEST(XnnpackQInt8, DepthwisePerChannelMultiplier2Relu) {
  check_qconv({.p = {.n = 1,
                     .h = 6,
                     .w = 6,
                     .groups = 4,
                     .gic = 1,
                     .goc = 2,
                     .kh = 3,
                     .kw = 3,
                     .pad_top = 1,
                     .pad_left = 1,
                     .pad_bottom = 1,
                     .pad_right = 1},
               .depthwise = true,
               .relu = true},
              5);
}

TEST(XnnpackQInt8, FullyConnectedPerTensor) {
  const int batch = 4, in_ch = 40, out_ch = 9;
  const float sx = 0.03f, sw = 0.004f, sy = 0.04f;
  const int zx = -7, zy = 2;
  const auto x = random_int8(size_t(batch) * in_ch, 10);
  const auto w = random_int8(size_t(out_ch) * in_ch, 11, -127, 127);
  std::vector<int32_t> bias(out_ch);
  for (int o = 0; o < out_ch; ++o) bias[o] = (o - 4) * 300;
  PayloadBuilder b;
  const TensorId xi =
      b.add_tensor(kQ8, {uint32_t(batch), uint32_t(in_ch)}, Quant::per_tensor(sx, zx));
  const TensorId wi = b.add_constant(kQ8, {uint32_t(out_ch), uint32_t(in_ch)},
                                     std::span<const int8_t>(w), Quant::per_tensor(sw, 0));
  const TensorId bi = b.add_constant(DType::kQInt32, {uint32_t(out_ch)},
                                     std::span<const int32_t>(bias), Quant::per_tensor(sx * sw));
  const TensorId yi =
      b.add_tensor(kQ8, {uint32_t(batch), uint32_t(out_ch)}, Quant::per_tensor(sy, zy));
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(yi, ExternalKind::kOutput, 1);
  b.add_node(FullyConnected{}, {xi, wi, bi}, {yi});
  std::vector<double> real(size_t(batch) * out_ch);
  for (int n = 0; n < batch; ++n)
    for (int o = 0; o < out_ch; ++o) {
      double acc = static_cast<double>(bias[o]) * sx * sw;
      for (int i = 0; i < in_ch; ++i) {
        acc += (x[size_t(n) * in_ch + i] - zx) * double{sx} * w[size_t(o) * in_ch + i] * sw;
      }
      real[size_t(n) * out_ch + o] = acc;
    }
  expect_within_1lsb(run_graph<int8_t, int8_t>(b, {{{batch, in_ch}, x}}, {batch, out_ch}),
                     requantize(real, sy, zy), "qfc");
}

TEST(XnnpackQInt8, AddBroadcastDifferentScales) {
  const float sa = 0.03f, sb = 0.07f, sy = 0.08f;
  const int za = -2, zb = 5, zy = 1;
  const auto a = random_int8(2 * 3 * 4, 20);
  const auto c = random_int8(4, 21);
  PayloadBuilder b;
  const TensorId ai = b.add_tensor(kQ8, {2, 3, 4}, Quant::per_tensor(sa, za));
  const TensorId ci = b.add_tensor(kQ8, {4}, Quant::per_tensor(sb, zb));
  const TensorId yi = b.add_tensor(kQ8, {2, 3, 4}, Quant::per_tensor(sy, zy));
  b.mark_external(ai, ExternalKind::kInput, 0);
  b.mark_external(ci, ExternalKind::kInput, 1);
  b.mark_external(yi, ExternalKind::kOutput, 2);
  b.add_node(Binary{BinaryOp::kAdd}, {ai, ci}, {yi});
  std::vector<double> ra(a.size()), rc(c.size());
  for (size_t i = 0; i < a.size(); ++i) ra[i] = (a[i] - za) * double{sa};
  for (size_t i = 0; i < c.size(); ++i) rc[i] = (c[i] - zb) * double{sb};
  const auto real =
      broadcast_ref(ra, {2, 3, 4}, rc, {4}, {2, 3, 4}, [](double u, double v) { return u + v; });
  expect_within_1lsb(run_graph<int8_t, int8_t>(b, {{{2, 3, 4}, a}, {{4}, c}}, {2, 3, 4}),
                     requantize(real, sy, zy), "qadd");
}

TEST(XnnpackQInt8, MaxPoolAndGlobalAvgPool) {
  const int n = 1, h = 6, w = 6, c = 5;
  const float sx = 0.1f, sy = 0.02f;
  const int zx = 4, zy = -3;
  const auto x = random_int8(size_t(n) * h * w * c, 30);
  PayloadBuilder b;
  const TensorId xi = b.add_tensor(kQ8, {1, 6, 6, 5}, Quant::per_tensor(sx, zx));
  const TensorId pi = b.add_tensor(kQ8, {1, 3, 3, 5}, Quant::per_tensor(sx, zx));
  const TensorId yi = b.add_tensor(kQ8, {1, 1, 1, 5}, Quant::per_tensor(sy, zy));
  b.mark_external(xi, ExternalKind::kInput, 0);
  b.mark_external(pi, ExternalKind::kOutput, 1);
  b.mark_external(yi, ExternalKind::kOutput, 2);
  b.add_node(
      MaxPool2d{.pooling_height = 2, .pooling_width = 2, .stride_height = 2, .stride_width = 2},
      {xi}, {pi});
  b.add_node(GlobalAvgPool2d{}, {pi}, {yi});

  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor in(ScalarType::Char, {1, 6, 6, 5}), pooled(ScalarType::Char, {1, 3, 3, 5}),
      out(ScalarType::Char, {1, 1, 1, 5});
  in.fill(x);
  ASSERT_EQ(d.execute({in.value(), pooled.value(), out.value()}), Error::Ok)
      << last_error_message();
  const auto max_ref = pool_ref(
      PoolParams{.n = 1, .h = 6, .w = 6, .c = 5, .kh = 2, .kw = 2, .stride_h = 2, .stride_w = 2}, x,
      true);
  std::vector<int> max_q(max_ref.begin(), max_ref.end());
  expect_within_1lsb(pooled.read<int8_t>(), max_q, "qmax_pool");
  std::vector<double> mean(c, 0.0);
  for (size_t i = 0; i < max_q.size(); ++i) mean[i % c] += (max_q[i] - zx) * double{sx} / 9.0;
  expect_within_1lsb(out.read<int8_t>(), requantize(mean, sy, zy), "qglobal_avg_pool");
}

TEST(XnnpackQInt8, FloatBoundaryQuantizeConvDequantize) {
  // Float in and out; the delegate quantises, runs a per-channel conv and dequantises.
  const float sx = 0.02f, sy = 0.05f;
  const int zx = -1, zy = 6, oc = 4;
  const Conv2dParams p{.n = 1,
                       .h = 5,
                       .w = 5,
                       .groups = 1,
                       .gic = 2,
                       .goc = oc,
                       .kh = 3,
                       .kw = 3,
                       .pad_top = 1,
                       .pad_left = 1,
                       .pad_bottom = 1,
                       .pad_right = 1};
  const auto xf = random_floats(5 * 5 * 2, 40, -2.5f, 2.5f);
  const auto w = random_int8(size_t(oc) * 9 * 2, 41, -127, 127);
  const auto sw = random_scales(oc, 42);
  std::vector<int32_t> bias = {100, -50, 0, 400};
  std::vector<float> bias_scales(oc);
  for (int o = 0; o < oc; ++o) bias_scales[o] = sx * sw[o];
  PayloadBuilder b;
  const TensorId xf_id = b.add_tensor(DType::kFloat32, {1, 5, 5, 2});
  const TensorId xq = b.add_tensor(kQ8, {1, 5, 5, 2}, Quant::per_tensor(sx, zx));
  const TensorId wi = b.add_constant(DType::kQCInt8, {uint32_t(oc), 3, 3, 2},
                                     std::span<const int8_t>(w), Quant::per_channel(sw));
  const TensorId bi =
      b.add_constant(DType::kQCInt32, {uint32_t(oc)}, std::span<const int32_t>(bias),
                     Quant::per_channel(bias_scales));
  const TensorId yq = b.add_tensor(kQ8, {1, 5, 5, uint32_t(oc)}, Quant::per_tensor(sy, zy));
  const TensorId yf = b.add_tensor(DType::kFloat32, {1, 5, 5, uint32_t(oc)});
  b.mark_external(xf_id, ExternalKind::kInput, 0);
  b.mark_external(yf, ExternalKind::kOutput, 1);
  b.add_node(Unary{UnaryOp::kConvert}, {xf_id}, {xq});
  b.add_node(Conv2d{.kernel_height = 3,
                    .kernel_width = 3,
                    .group_input_channels = 2,
                    .group_output_channels = uint32_t(oc),
                    .padding = Padding::uniform(1)},
             {xq, wi, bi}, {yq});
  b.add_node(Unary{UnaryOp::kConvert}, {yq}, {yf});
  const auto got = run_graph<float, float>(b, {{{1, 5, 5, 2}, xf}}, {1, 5, 5, oc});

  std::vector<int8_t> xq_ref(xf.size());
  for (size_t i = 0; i < xf.size(); ++i) xq_ref[i] = static_cast<int8_t>(quantize(xf[i], sx, zx));
  std::vector<double> real_bias(oc);
  for (int o = 0; o < oc; ++o) real_bias[o] = static_cast<double>(bias[o]) * sx * sw[o];
  const auto real = conv2d_ref(
      p, xq_ref, w, real_bias, [&](int8_t v) { return (v - zx) * double{sx}; },
      [&](int8_t v, int o) { return v * double{sw[o]}; });
  const auto q = requantize(real, sy, zy);
  ASSERT_EQ(got.size(), q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    EXPECT_LE(std::fabs(got[i] - (q[i] - zy) * double{sy}), sy * 1.001) << i;
  }
}

}  // namespace
}  // namespace pteron::xnnpack::testing
