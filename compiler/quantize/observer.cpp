#include "compiler/quantize/observer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pteron::compiler {
namespace {

// torch's observers clamp scales to float32's epsilon so that a constant tensor still gets a
// usable (tiny) step instead of a zero scale.
constexpr float kMinScale = std::numeric_limits<float>::epsilon();

}  // namespace

void RangeObserver::observe(std::span<const float> values) {
  for (float v : values) {
    if (!std::isfinite(v)) continue;  // an infinity would make every other value round to 0
    if (!seen_) {
      min_ = max_ = v;
      seen_ = true;
    }
    min_ = std::min(min_, v);
    max_ = std::max(max_, v);
  }
}

void RangeObserver::start_histogram(int bins) {
  histogram_.assign(static_cast<size_t>(bins), 0);
  total_ = 0;
}

void RangeObserver::observe_histogram(std::span<const float> values) {
  if (histogram_.empty() || !seen_) return;
  const double width = static_cast<double>(max_) - min_;
  const size_t bins = histogram_.size();
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    size_t b = width > 0 ? static_cast<size_t>((v - static_cast<double>(min_)) / width * bins) : 0;
    histogram_[std::min(b, bins - 1)]++;
    ++total_;
  }
}

std::pair<float, float> RangeObserver::percentile_range(double percentile) const {
  if (histogram_.empty() || total_ == 0 || percentile >= 100) return {min_, max_};
  const double width = (static_cast<double>(max_) - min_) / static_cast<double>(histogram_.size());
  const double clipped = static_cast<double>(total_) * (100.0 - percentile) / 100.0;
  // Lower edge: skip bins while they hold no more than the clipped count; likewise the top.
  double below = 0;
  size_t lo = 0;
  while (lo + 1 < histogram_.size() && below + static_cast<double>(histogram_[lo]) <= clipped)
    below += histogram_[lo++];
  double above = 0;
  size_t hi = histogram_.size() - 1;
  while (hi > lo && above + static_cast<double>(histogram_[hi]) <= clipped)
    above += histogram_[hi--];
  const float lo_value = static_cast<float>(min_ + width * static_cast<double>(lo));
  const float hi_value = static_cast<float>(min_ + width * static_cast<double>(hi + 1));
  return {std::max(lo_value, min_), std::min(hi_value, max_)};
}

QParams affine_qparams(float lo, float hi, int64_t qmin, int64_t qmax) {
  const float min_neg = std::min(lo, 0.0f), max_pos = std::max(hi, 0.0f);
  float scale = (max_pos - min_neg) / static_cast<float>(qmax - qmin);
  scale = std::max(scale, kMinScale);
  int64_t zp = qmin - static_cast<int64_t>(std::nearbyint(min_neg / scale));
  zp = std::clamp(zp, qmin, qmax);
  return {scale, zp, qmin, qmax};
}

QParams symmetric_qparams(float lo, float hi, int64_t qmin, int64_t qmax) {
  const float max_abs = std::max(-std::min(lo, 0.0f), std::max(hi, 0.0f));
  float scale = max_abs / (static_cast<float>(qmax - qmin) / 2);
  scale = std::max(scale, kMinScale);
  return {scale, 0, qmin, qmax};
}

int64_t quantize_value(float x, float inv_scale, float zero_point, float qmin, float qmax) {
  float v = std::nearbyint(x * inv_scale) + zero_point;
  v = v > qmin ? v : qmin;
  v = v < qmax ? v : qmax;
  return static_cast<int64_t>(v);
}

PerChannelWeights quantize_weights_per_channel(std::span<const float> weights, int64_t channels) {
  PerChannelWeights out;
  out.values.resize(weights.size());
  out.scales.resize(static_cast<size_t>(channels));
  const size_t per_channel = channels > 0 ? weights.size() / static_cast<size_t>(channels) : 0;
  for (size_t c = 0; c < static_cast<size_t>(channels); ++c) {
    const std::span<const float> row = weights.subspan(c * per_channel, per_channel);
    float lo = 0, hi = 0;
    for (float v : row) lo = std::min(lo, v), hi = std::max(hi, v);
    const float scale = static_cast<float>(symmetric_qparams(lo, hi, -127, 127).scale);
    out.scales[c] = scale;
    const float inv = 1.0f / scale;  // torch: input * (1.0 / scales) with float32 scales
    for (size_t k = 0; k < per_channel; ++k) {
      out.values[c * per_channel + k] =
          static_cast<int8_t>(quantize_value(row[k], inv, 0.0f, -127.0f, 127.0f));
    }
  }
  return out;
}

PerChannelBias quantize_bias(std::span<const float> bias, float input_scale,
                             std::span<const float> weight_scales) {
  PerChannelBias out;
  out.values.resize(bias.size());
  out.scales.resize(bias.size());
  for (size_t c = 0; c < bias.size(); ++c) {
    const float scale = std::max(input_scale * weight_scales[c], kMinScale);
    out.scales[c] = scale;
    const double q =
        std::nearbyint(static_cast<double>(bias[c]) * (1.0 / static_cast<double>(scale)));
    out.values[c] = static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
  }
  return out;
}

}  // namespace pteron::compiler
