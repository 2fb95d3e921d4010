// Quantizer arithmetic: observers, quantization parameters (torch's MinMaxObserver formulas),
// per-channel weights and int32 bias.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "compiler/quantize/observer.h"

namespace pteron::compiler {
namespace {

TEST(QuantizeObserver, MinMaxSkipsNonFiniteValues) {
  RangeObserver o;
  EXPECT_TRUE(o.empty());
  const std::vector<float> a = {0.5f, -2.0f, std::numeric_limits<float>::infinity()};
  const std::vector<float> b = {3.0f, std::nanf("")};
  o.observe(a);
  o.observe(b);
  EXPECT_FLOAT_EQ(o.min(), -2.0f);
  EXPECT_FLOAT_EQ(o.max(), 3.0f);
}

TEST(QuantizeObserver, PercentileClipsARareOutlier) {
  RangeObserver o;
  std::vector<float> values;
  for (int i = 0; i < 100000; ++i) values.push_back(static_cast<float>(i % 1000) / 1000.0f);
  values.push_back(100.0f);  // one outlier in 100001 values
  o.observe(values);
  o.start_histogram();
  o.observe_histogram(values);
  const auto [lo, hi] = o.percentile_range(99.99);
  EXPECT_FLOAT_EQ(lo, 0.0f);
  EXPECT_LT(hi, 1.1f);  // the outlier is clipped; the bulk (up to 0.999) is kept
  EXPECT_GT(hi, 0.99f);
  EXPECT_FLOAT_EQ(o.percentile_range(100).second, 100.0f);
}

TEST(QuantizeObserver, PercentileWithoutHistogramIsMinMax) {
  RangeObserver o;
  const std::vector<float> v = {-1.0f, 4.0f};
  o.observe(v);
  EXPECT_EQ(o.percentile_range(99.0), std::make_pair(-1.0f, 4.0f));
}

TEST(QuantizeObserver, AffineParamsFollowTorch) {
  // torch: scale = (max(hi,0) - min(lo,0)) / 255; zp = -128 - round(min / scale).
  const QParams q = affine_qparams(-1.0f, 3.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(q.scale), 4.0f / 255.0f);
  EXPECT_EQ(q.zp, -64);
  // A range above zero is widened to include it (zero stays exact): zp = qmin.
  const QParams relu = affine_qparams(0.5f, 6.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(relu.scale), 6.0f / 255.0f);
  EXPECT_EQ(relu.zp, -128);
  // A constant zero tensor still gets a positive scale (float32 epsilon).
  EXPECT_GT(affine_qparams(0.0f, 0.0f).scale, 0.0);
}

TEST(QuantizeObserver, SymmetricParamsHaveZeroPointZero) {
  const QParams q = symmetric_qparams(-2.0f, 1.0f);
  EXPECT_FLOAT_EQ(static_cast<float>(q.scale), 2.0f / 127.0f);
  EXPECT_EQ(q.zp, 0);
}

TEST(QuantizeObserver, QuantizeValueRoundsHalfToEvenAndSaturates) {
  EXPECT_EQ(quantize_value(0.5f, 1.0f, 0.0f, -128, 127), 0);
  EXPECT_EQ(quantize_value(1.5f, 1.0f, 0.0f, -128, 127), 2);
  EXPECT_EQ(quantize_value(-2.5f, 1.0f, 3.0f, -128, 127), 1);
  EXPECT_EQ(quantize_value(1000.0f, 1.0f, 0.0f, -128, 127), 127);
  EXPECT_EQ(quantize_value(-1000.0f, 1.0f, 0.0f, -128, 127), -128);
  EXPECT_EQ(quantize_value(std::nanf(""), 1.0f, 0.0f, -128, 127), -128);
}

TEST(QuantizeObserver, PerChannelWeightsUseTheFullSymmetricRange) {
  // Two output channels of 3 weights each.
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 0.0f, 0.0f, 0.0f};
  const PerChannelWeights q = quantize_weights_per_channel(w, 2);
  ASSERT_EQ(q.scales.size(), 2u);
  EXPECT_FLOAT_EQ(q.scales[0], 1.0f / 127.0f);
  EXPECT_EQ(q.values[1], -127);
  EXPECT_EQ(q.values[0], 64);    // 63.5 rounds half to even
  EXPECT_EQ(q.values[2], 32);    // 31.75
  EXPECT_GT(q.scales[1], 0.0f);  // an all-zero channel
  EXPECT_EQ(q.values[3], 0);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_LE(std::fabs(q.values[i] * q.scales[0] - w[i]), q.scales[0] / 2);
}

TEST(QuantizeObserver, BiasScaleIsInputTimesWeightScale) {
  const std::vector<float> b = {1.0f, -0.5f};
  const std::vector<float> ws = {0.01f, 0.02f};
  const PerChannelBias q = quantize_bias(b, 0.1f, ws);
  EXPECT_FLOAT_EQ(q.scales[0], 0.001f);
  EXPECT_FLOAT_EQ(q.scales[1], 0.002f);
  EXPECT_EQ(q.values[0], 1000);
  EXPECT_EQ(q.values[1], -250);
}

}  // namespace
}  // namespace pteron::compiler
