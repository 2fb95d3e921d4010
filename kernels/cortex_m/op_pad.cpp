// cortex_m::pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *,
//     Tensor(a!) out)
//
// Constant padding of an int8 tensor of up to 4 dims: pre_pad[d] / post_pad[d] elements before
// and after dim d (non-negative), filled with pad_value (the quantised pad value, usually the
// zero point). Lists shorter than the rank pad the last dims, as ExecuTorch's 4-entry lists do
// for a 4-d tensor. Pure data movement: the row copies are memcpy/memset, which the C library
// vectorises, so there is one path.
#include <cstring>

#include "kernels/cortex_m/util/int8_args.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::pad.out";

Error pad_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[4]->tensor;
  const Span<const int64_t> pre = args[1]->int_list, post = args[2]->int_list;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_zero_point(kOp, args[3]->i, "pad_value"));
  const int32_t rank = in.dim();
  if (rank > 4 || rank < 1 || out.dim() != rank || pre.size() != post.size() || pre.size() > 4 ||
      pre.size() < static_cast<size_t>(rank)) {
    return fail(Error::InvalidArgument,
                "%s: input of %d dims (1 to 4) with %d/%d pad entries (one per dim, or 4)", kOp,
                static_cast<int>(rank), static_cast<int>(pre.size()),
                static_cast<int>(post.size()));
  }
  // Views of 4 dims: [n, c, h, w] with padding on each.
  int32_t in_size[4], lo[4], hi[4];
  const int32_t extra = 4 - rank, list_extra = 4 - static_cast<int32_t>(pre.size());
  for (int32_t d = 0; d < 4; ++d) {
    in_size[d] = d < extra ? 1 : in.size(d - extra);
    const int32_t li = d - list_extra;
    lo[d] = li >= 0 ? static_cast<int32_t>(pre[li]) : 0;
    hi[d] = li >= 0 ? static_cast<int32_t>(post[li]) : 0;
    if (lo[d] < 0 || hi[d] < 0 || (d < extra && (lo[d] != 0 || hi[d] != 0))) {
      return fail(Error::InvalidArgument, "%s: padding must be non-negative and within the rank",
                  kOp);
    }
    const int32_t want = in_size[d] + lo[d] + hi[d];
    if (d >= extra && out.size(d - extra) != want) {
      return fail(Error::InvalidArgument, "%s: out dim %d is %d, expected %d", kOp,
                  static_cast<int>(d - extra), static_cast<int>(out.size(d - extra)),
                  static_cast<int>(want));
    }
  }
  const int8_t value = static_cast<int8_t>(args[3]->i);
  int8_t* dst = out.data<int8_t>();
  const int8_t* src = in.data<int8_t>();
  const int32_t ow = in_size[3] + lo[3] + hi[3];
  const int32_t oh = in_size[2] + lo[2] + hi[2];
  const int32_t oc = in_size[1] + lo[1] + hi[1];
  const int32_t on = in_size[0] + lo[0] + hi[0];
  for (int32_t n = 0; n < on; ++n)
    for (int32_t c = 0; c < oc; ++c)
      for (int32_t h = 0; h < oh; ++h) {
        const int32_t in_n = n - lo[0], in_c = c - lo[1], in_h = h - lo[2];
        if (in_n < 0 || in_n >= in_size[0] || in_c < 0 || in_c >= in_size[1] || in_h < 0 ||
            in_h >= in_size[2]) {
          std::memset(dst, value, static_cast<size_t>(ow));
        } else {
          std::memset(dst, value, static_cast<size_t>(lo[3]));
          const int8_t* row = src + ((in_n * in_size[1] + in_c) * in_size[2] + in_h) * in_size[3];
          std::memcpy(dst + lo[3], row, static_cast<size_t>(in_size[3]));
          std::memset(dst + lo[3] + in_size[3], value, static_cast<size_t>(hi[3]));
        }
        dst += ow;
      }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::pad.out", pad_out, "TLLIT");

}  // namespace pteron::cortex_m
