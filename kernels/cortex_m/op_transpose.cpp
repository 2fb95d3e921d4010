// cortex_m::transpose.out(Tensor input, int[] perm, *, Tensor(a!) out)
//
// out = input.permute(perm), contiguous, for int8 tensors of up to 4 dims (any element size
// works; the lowering uses it for NCHW <-> NHWC around convolutions and pools). The inner loop
// runs over the output's last dim; MVE builds gather it with a strided vector load when the
// input stride allows.
#include <cstring>

#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::transpose.out";

// Output viewed as 4 dims [a, b, c, d] with input strides for each (in elements).
struct Walk {
  int32_t size[4];
  int32_t in_stride[4];
};

void transpose_scalar(const int8_t* in, int8_t* out, const Walk& w) {
  for (int32_t i = 0; i < w.size[0]; ++i)
    for (int32_t j = 0; j < w.size[1]; ++j)
      for (int32_t k = 0; k < w.size[2]; ++k) {
        const int8_t* src = in + i * w.in_stride[0] + j * w.in_stride[1] + k * w.in_stride[2];
        const int32_t s = w.in_stride[3];
        for (int32_t l = 0; l < w.size[3]; ++l) *out++ = src[l * s];
      }
}

#if PTERON_CORTEX_M_MVE
void transpose_mve(const int8_t* in, int8_t* out, const Walk& w) {
  const int32_t s = w.in_stride[3];
  // Byte offsets l * s for 16 lanes (offsets are unsigned 8-bit for a byte gather, so only
  // strides up to 17 use the gather).
  if (s > 17) {
    // NCHW -> NHWC with few channels (a model's image input): the output's last dim is short
    // and far apart in the input, but the one before it is contiguous there. Load 16 of those
    // and scatter them `channels` bytes apart into the output, one channel at a time.
    const int32_t channels = w.size[3];
    if (channels <= 17 && w.in_stride[2] == 1) {
      const uint8x16_t apart = vmulq_n_u8(vidupq_n_u8(0, 1), static_cast<uint8_t>(channels));
      const int32_t row = w.size[2] * channels;
      for (int32_t i = 0; i < w.size[0]; ++i)
        for (int32_t j = 0; j < w.size[1]; ++j, out += row) {
          const int8_t* base = in + i * w.in_stride[0] + j * w.in_stride[1];
          for (int32_t l = 0; l < channels; ++l) {
            const int8_t* src = base + l * s;
            for (int32_t k = 0; k < w.size[2]; k += 16) {
              const mve_pred16_t p = vctp8q(static_cast<uint32_t>(w.size[2] - k));
              vstrbq_scatter_offset_p_s8(out + k * channels + l, apart, vldrbq_z_s8(src + k, p), p);
            }
          }
        }
      return;
    }
    transpose_scalar(in, out, w);
    return;
  }
  const uint8x16_t offsets = vmulq_n_u8(vidupq_n_u8(0, 1), static_cast<uint8_t>(s));
  for (int32_t i = 0; i < w.size[0]; ++i)
    for (int32_t j = 0; j < w.size[1]; ++j)
      for (int32_t k = 0; k < w.size[2]; ++k) {
        const int8_t* src = in + i * w.in_stride[0] + j * w.in_stride[1] + k * w.in_stride[2];
        for (int32_t l = 0; l < w.size[3]; l += 16) {
          const mve_pred16_t p = vctp8q(static_cast<uint32_t>(w.size[3] - l));
          const int8x16_t v = vldrbq_gather_offset_z_s8(src + l * s, offsets, p);
          vstrbq_p_s8(out + l, v, p);
        }
        out += w.size[3];
      }
}
#endif

Error transpose_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  const Span<const int64_t> perm = args[1]->int_list;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  const int32_t rank = in.dim();
  if (rank > 4 || perm.size() != static_cast<size_t>(rank) || out.dim() != rank) {
    return fail(Error::InvalidArgument, "%s: perm of %d dims for a %d-dim input (at most 4)", kOp,
                static_cast<int>(perm.size()), static_cast<int>(rank));
  }
  bool seen[4] = {false, false, false, false};
  Walk w;
  const int32_t pad = 4 - rank;
  for (int32_t d = 0; d < pad; ++d) w.size[d] = 1, w.in_stride[d] = 0;
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t p = perm[d] < 0 ? perm[d] + rank : perm[d];
    if (p < 0 || p >= rank || seen[p]) {
      return fail(Error::InvalidArgument, "%s: perm is not a permutation of 0..%d", kOp,
                  static_cast<int>(rank - 1));
    }
    seen[p] = true;
    if (out.size(d) != in.size(static_cast<int32_t>(p))) {
      return fail(Error::InvalidArgument, "%s: out dim %d is %d, expected %d", kOp,
                  static_cast<int>(d), static_cast<int>(out.size(d)),
                  static_cast<int>(in.size(static_cast<int32_t>(p))));
    }
    w.size[pad + d] = out.size(d);
    w.in_stride[pad + d] = in.stride(static_cast<int32_t>(p));
  }
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    transpose_mve(in.data<int8_t>(), out.data<int8_t>(), w);
    return Error::Ok;
  }
#endif
  transpose_scalar(in.data<int8_t>(), out.data<int8_t>(), w);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::transpose.out", transpose_out, "TLT");

}  // namespace pteron::cortex_m
