// Walks a dense tensor in memory order one (outer block, channel) run at a time, for ops with
// per-channel parameters along one axis (quantize_per_channel and friends). Works for any dim
// order: in a dense layout the axis's stride is the length of each contiguous run.
#pragma once

#include <cstdint>

#include "runtime/core/tensor.h"

namespace pteron {

// Calls fn(channel, offset, count) for each run of `count` consecutive elements (starting at
// memory offset `offset`) that share channel `channel` of dimension `axis`.
template <typename Fn>
void for_each_channel_run(const Tensor& t, int32_t axis, Fn&& fn) {
  const int64_t channels = t.size(axis);
  const int64_t run = t.stride(axis);
  if (t.numel() == 0) return;
  const int64_t outer = t.numel() / (channels * run);
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t c = 0; c < channels; ++c) fn(c, (b * channels + c) * run, run);
  }
}

}  // namespace pteron
