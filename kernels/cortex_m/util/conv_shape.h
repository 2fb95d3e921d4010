// Shape checks shared by the NHWC convolution and pooling kernels.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/int8_args.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {

struct Window {
  int32_t kernel[2];
  int32_t stride[2];
  int32_t padding[2];
  int32_t dilation[2];
};

// Output extent of a window sweep: floor (or ceil) of (in + 2p - d(k-1) - 1) / s + 1.
inline int64_t window_out_size(int64_t in, int32_t k, int32_t s, int32_t p, int32_t d, bool ceil) {
  const int64_t span = in + 2 * static_cast<int64_t>(p) - static_cast<int64_t>(d) * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  // As torch: the last window must start inside the input or left padding.
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// `in` [N, H, W, C] and `out` [N, OH, OW, out_c] with OH/OW the window sweep's.
// `asymmetric`: convolutions, whose loops bound-check every tap against the input, also take one
// more row/column of padding at the bottom/right than at the top/left (TensorFlow's SAME padding
// for even sizes, a pad op folded in by the lowering): the output may be one larger there.
inline Error check_nhwc_window(const char* op, const Tensor& in, const Tensor& out, int32_t out_c,
                               const Window& w, bool ceil, bool asymmetric = false) {
  PTERON_TRY(check_rank(op, in, 4, "input"));
  PTERON_TRY(check_rank(op, out, 4, "out"));
  const int64_t oh =
      window_out_size(in.size(1), w.kernel[0], w.stride[0], w.padding[0], w.dilation[0], ceil);
  const int64_t ow =
      window_out_size(in.size(2), w.kernel[1], w.stride[1], w.padding[1], w.dilation[1], ceil);
  auto fits = [&](int d, int64_t size, int64_t in_size) {
    if (out.size(d) == size) return true;
    return asymmetric && w.kernel[d - 1] > 1 &&
           out.size(d) == window_out_size(in_size + 1, w.kernel[d - 1], w.stride[d - 1],
                                          w.padding[d - 1], w.dilation[d - 1], ceil);
  };
  if (out.size(0) != in.size(0) || !fits(1, oh, in.size(1)) || !fits(2, ow, in.size(2)) ||
      out.size(3) != out_c) {
    return fail(
        Error::InvalidArgument, "%s: out is [%d, %d, %d, %d], expected [%d, %lld, %lld, %d]", op,
        static_cast<int>(out.size(0)), static_cast<int>(out.size(1)), static_cast<int>(out.size(2)),
        static_cast<int>(out.size(3)), static_cast<int>(in.size(0)), static_cast<long long>(oh),
        static_cast<long long>(ow), static_cast<int>(out_c));
  }
  return Error::Ok;
}

// Per-channel requantisation tensors (int32 [C]) as conv kernels take them.
inline Error check_channel_requant(const char* op, const Tensor& mult, const Tensor& shift,
                                   int32_t channels) {
  PTERON_TRY(check_dtype(op, mult, ScalarType::Int, "requantize_multipliers"));
  PTERON_TRY(check_dtype(op, shift, ScalarType::Int, "requantize_shifts"));
  if (mult.numel() != channels || shift.numel() != channels) {
    return fail(Error::InvalidArgument, "%s: need %d multipliers and shifts, got %lld and %lld", op,
                static_cast<int>(channels), static_cast<long long>(mult.numel()),
                static_cast<long long>(shift.numel()));
  }
  // One pass without branches first (it vectorises; a layer has hundreds of channels), the
  // per-channel check only to name a bad one.
  const int32_t* m = mult.data<int32_t>();
  const int32_t* s = shift.data<int32_t>();
  int32_t bad = 0;
  for (int32_t c = 0; c < channels; ++c) {
    bad |= static_cast<int32_t>(m[c] < 0) | static_cast<int32_t>(s[c] < kMinShift) |
           static_cast<int32_t>(s[c] > kMaxShift);
  }
  if (bad == 0) return Error::Ok;
  for (int32_t c = 0; c < channels; ++c) PTERON_TRY(check_requant(op, m[c], s[c], "channel"));
  return Error::Ok;
}

// Optional int32 bias of `channels` values, or nullptr.
inline Error read_bias(const char* op, const EValue& v, int32_t channels, const int32_t** bias) {
  *bias = nullptr;
  if (v.is_none()) return Error::Ok;
  PTERON_TRY(check_dtype(op, *v.tensor, ScalarType::Int, "bias"));
  if (v.tensor->numel() != channels) {
    return fail(Error::InvalidArgument, "%s: bias needs %d values, got %lld", op,
                static_cast<int>(channels), static_cast<long long>(v.tensor->numel()));
  }
  *bias = v.tensor->data<int32_t>();
  return Error::Ok;
}

// The input offset (-zero point) must keep -offset an int8 value: padding is that value.
inline Error check_input_offset(const char* op, int64_t offset) {
  if (offset < -kInt8Max || offset > -kInt8Min) {
    return fail(Error::InvalidArgument, "%s: input_offset %lld out of range [-127, 128]", op,
                static_cast<long long>(offset));
  }
  return Error::Ok;
}

// Scratch from ExecuTorch's scratch tensor when the program passes one big enough, else from
// the kernel context; nullptr when neither has `bytes`.
inline void* kernel_scratch(KernelContext& ctx, const EValue& scratch_arg, size_t bytes) {
  if (scratch_arg.is_tensor() && scratch_arg.tensor->nbytes() >= bytes + 16) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(scratch_arg.tensor->mutable_data());
    return reinterpret_cast<void*>((p + 15) & ~uintptr_t{15});
  }
  return ctx.allocate_scratch(bytes, 16);
}

}  // namespace pteron::cortex_m
