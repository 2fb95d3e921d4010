// aten::adaptive_max_pool2d.out(Tensor self, int[2] output_size, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
// aten::adaptive_max_pool3d.out(Tensor self, int[3] output_size, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
// Output cell o of an in -> n dim takes the max of input [floor(o * in / n), ceil((o + 1) * in
// / n)) per dim (util/pool.h's adaptive window, as the average pools), indices its flat position
// in the input plane. As ATen's CPU kernel: a later NaN replaces the max, and a window of -inf
// keeps its first position. timm's 'max' / 'avgmax' global pooling and attention blocks call it.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/pool.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Spatial sizes of one call; dims past `rank` are 1, so one 3-deep loop serves 2-D and 3-D.
struct AdaptiveShape {
  int64_t planes = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
};

template <typename T>
void adaptive_max_pool(const AdaptiveShape& s, const T* x, T* y, int64_t* idx) {
  using Acc = typename ComputeType<T>::type;
  const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* plane = x + p * in_plane;
    for (int64_t od = 0; od < s.out[0]; ++od) {
      const AdaptiveWindow wd = adaptive_window(od, s.out[0], s.in[0]);
      for (int64_t oh = 0; oh < s.out[1]; ++oh) {
        const AdaptiveWindow wh = adaptive_window(oh, s.out[1], s.in[1]);
        for (int64_t ow = 0; ow < s.out[2]; ++ow) {
          const AdaptiveWindow ww = adaptive_window(ow, s.out[2], s.in[2]);
          int64_t at = (wd.begin * s.in[1] + wh.begin) * s.in[2] + ww.begin;
          Acc best = pool_max_start<Acc>();
          for (int64_t d = wd.begin; d < wd.end; ++d)
            for (int64_t h = wh.begin; h < wh.end; ++h)
              for (int64_t w = ww.begin; w < ww.end; ++w) {
                const int64_t pos = (d * s.in[1] + h) * s.in[2] + w;
                const Acc v = load_value(plane[pos]);
                if (v > best || v != v) {
                  best = v;
                  at = pos;
                }
              }
          *y++ = store_value<T>(best);
          *idx++ = at;
        }
      }
    }
  }
}

template <int kRank>
Error adaptive_max_pool_out(const char* op, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  Tensor& indices = *args[3]->tensor;
  PTERON_CHECK(input.dim() == kRank + 1 || input.dim() == kRank + 2, Error::InvalidArgument,
               "%s: expected %d-D or %d-D input, got %d-D", op, kRank + 1, kRank + 2,
               static_cast<int>(input.dim()));
  PTERON_CHECK(size.size() == kRank, Error::InvalidArgument,
               "%s: output_size must have %d values, got %zu", op, kRank, size.size());
  PTERON_CHECK(is_floating(input.dtype()) && out.dtype() == input.dtype(), Error::NotSupported,
               "%s: dtypes %s -> %s not supported (floating point, same dtype)", op,
               scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices must be int64, got %s", op, scalar_type_name(indices.dtype()));
  AdaptiveShape s;
  const int32_t first = input.dim() - kRank;
  int32_t sizes[5];
  for (int32_t d = 0; d < first; ++d) {
    sizes[d] = input.size(d);
    s.planes *= input.size(d);
  }
  for (int i = 0; i < kRank; ++i) {
    const int64_t in = input.size(first + i);
    PTERON_CHECK(in >= 1, Error::InvalidArgument, "%s: spatial dim %d is empty", op,
                 static_cast<int>(first + i));
    PTERON_CHECK(size[i] >= 0 && size[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: output_size %lld is invalid", op, static_cast<long long>(size[i]));
    s.in[3 - kRank + i] = in;
    s.out[3 - kRank + i] = size[i];
    sizes[first + i] = static_cast<int32_t>(size[i]);
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, input.dim()));
  PTERON_TRY(expect_out_shape(op, indices, sizes, input.dim()));
  PTERON_CHECK(is_row_major(input) && is_row_major(out) && is_row_major(indices),
               Error::NotSupported, "%s: only the default dim order is supported", op);
  if (out.numel() == 0) return Error::Ok;
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_max_pool<T>(s, input.data<const T>(), out.data<T>(), indices.data<int64_t>());
  });
  return Error::Ok;
}

Error adaptive_max_pool2d_out(KernelContext&, Span<EValue*> args) {
  return adaptive_max_pool_out<2>("aten::adaptive_max_pool2d.out", args);
}

Error adaptive_max_pool3d_out(KernelContext&, Span<EValue*> args) {
  return adaptive_max_pool_out<3>("aten::adaptive_max_pool3d.out", args);
}

}  // namespace

PTERON_KERNEL("aten::adaptive_max_pool2d.out", adaptive_max_pool2d_out, "TLTT");
PTERON_KERNEL("aten::adaptive_max_pool3d.out", adaptive_max_pool3d_out, "TLTT");

}  // namespace pteron
