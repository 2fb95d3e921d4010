// Range observers and the arithmetic that turns ranges into int8 quantization parameters,
// following torch.ao.quantization's MinMax observers (so PT2E and pteron agree on what a
// range means) and its quantize_per_tensor/per_channel decompositions (so values quantized at
// compile time equal what the quantize kernels compute at run time).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "compiler/quantize/qparams.h"

namespace pteron::compiler {

// Min and max of everything observed, and optionally a histogram over that range (a second
// pass over the same data) from which a percentile range is read.
class RangeObserver {
 public:
  void observe(std::span<const float> values);  // min/max pass
  bool empty() const { return !seen_; }
  float min() const { return min_; }
  float max() const { return max_; }

  // Second pass: histogram of the values over [min, max] in `bins` equal bins.
  void start_histogram(int bins = 2048);
  void observe_histogram(std::span<const float> values);
  // The range that keeps values between the (100 - percentile)th and the percentile-th
  // percentile (both tails clipped), bounded by [min, max]; min/max without a histogram.
  std::pair<float, float> percentile_range(double percentile) const;

 private:
  bool seen_ = false;
  float min_ = 0, max_ = 0;
  std::vector<uint64_t> histogram_;
  uint64_t total_ = 0;
};

// Asymmetric (affine) per-tensor parameters for [lo, hi] widened to include 0 (so zero and
// zero padding are exact), as torch's MinMaxObserver with per_tensor_affine.
QParams affine_qparams(float lo, float hi, int64_t qmin = -128, int64_t qmax = 127);
// Symmetric parameters (zero point 0 for signed types): scale = max|x| / ((qmax - qmin) / 2).
QParams symmetric_qparams(float lo, float hi, int64_t qmin = -127, int64_t qmax = 127);

// q = clamp(round_half_even(x * float(1 / scale)) + zero_point, qmin, qmax), in float32 as the
// quantize_per_tensor kernel and torch's decomposition compute it.
int64_t quantize_value(float x, float inv_scale, float zero_point, float qmin, float qmax);

// Symmetric per-channel int8 weights along axis 0 (the output channels of conv and linear
// weights): scale[c] = max|w[c]| / 127 (float32), q in [-127, 127].
struct PerChannelWeights {
  std::vector<int8_t> values;
  std::vector<float> scales;
};
PerChannelWeights quantize_weights_per_channel(std::span<const float> weights, int64_t channels);

// int32 bias for an integer kernel: q[c] = round(b[c] / (input_scale * weight_scale[c])) with
// that product as the bias's own per-channel scale (PT2E's derived bias spec).
struct PerChannelBias {
  std::vector<int32_t> values;
  std::vector<float> scales;
};
PerChannelBias quantize_bias(std::span<const float> bias, float input_scale,
                             std::span<const float> weight_scales);

}  // namespace pteron::compiler
