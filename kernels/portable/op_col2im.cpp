// aten::col2im.out(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation,
//     int[2] padding, int[2] stride, *, Tensor(a!) out)
// F.fold: sums the sliding blocks of self (N, C * kh * kw, L) or (C * kh * kw, L) back into an
// (N, C, H, W) image; L must be the number of block positions. Floating dtypes; any dim orders.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::col2im.out";

Error read_pair(const EValue& e, const char* name, int64_t min_value, int64_t* v) {
  PTERON_CHECK(e.int_list.size() == 2, Error::InvalidArgument, "%s: %s must have 2 values, got %zu",
               kOp, name, e.int_list.size());
  for (int i = 0; i < 2; ++i) {
    v[i] = e.int_list[i];
    PTERON_CHECK(v[i] >= min_value && v[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: %s must be in [%lld, 2^31), got %lld", kOp, name,
                 static_cast<long long>(min_value), static_cast<long long>(v[i]));
  }
  return Error::Ok;
}

Error col2im_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  int64_t size[2], kernel[2], dilation[2], pad[2], stride[2];
  PTERON_TRY(read_pair(*args[1], "output_size", 1, size));
  PTERON_TRY(read_pair(*args[2], "kernel_size", 1, kernel));
  PTERON_TRY(read_pair(*args[3], "dilation", 1, dilation));
  PTERON_TRY(read_pair(*args[4], "padding", 0, pad));
  PTERON_TRY(read_pair(*args[5], "stride", 1, stride));
  PTERON_CHECK(self.dim() == 2 || self.dim() == 3, Error::InvalidArgument,
               "%s: expected a 2-D or 3-D input, got %d-D", kOp, static_cast<int>(self.dim()));
  PTERON_CHECK(is_floating(self.dtype()) && out.dtype() == self.dtype(), Error::NotSupported,
               "%s: needs a floating self and an out of its dtype, got %s -> %s", kOp,
               scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  const bool batched = self.dim() == 3;
  const int64_t rows = self.size(batched ? 1 : 0), L = self.size(batched ? 2 : 1);
  const int64_t kk = kernel[0] * kernel[1];
  PTERON_CHECK(rows % kk == 0, Error::InvalidArgument,
               "%s: input dim %d (%lld) must be divisible by the kernel's %lld elements", kOp,
               batched ? 1 : 0, static_cast<long long>(rows), static_cast<long long>(kk));
  int64_t blocks[2];
  for (int i = 0; i < 2; ++i) {
    blocks[i] = (size[i] + 2 * pad[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1;
    PTERON_CHECK(size[i] + 2 * pad[i] - dilation[i] * (kernel[i] - 1) - 1 >= 0 && blocks[i] >= 1,
                 Error::InvalidArgument, "%s: output_size %lld is too small for the kernel", kOp,
                 static_cast<long long>(size[i]));
  }
  PTERON_CHECK(blocks[0] * blocks[1] == L, Error::InvalidArgument,
               "%s: %lld blocks expected from the sizes, but the input has %lld", kOp,
               static_cast<long long>(blocks[0] * blocks[1]), static_cast<long long>(L));
  PTERON_CHECK(size[0] <= INT32_MAX && size[1] <= INT32_MAX, Error::InvalidArgument,
               "%s: output_size too large", kOp);
  const int64_t N = batched ? self.size(0) : 1, C = rows / kk;
  int32_t sizes[4];
  int32_t rank = 0;
  if (batched) sizes[rank++] = static_cast<int32_t>(N);
  sizes[rank++] = static_cast<int32_t>(C);
  sizes[rank++] = static_cast<int32_t>(size[0]);
  sizes[rank++] = static_cast<int32_t>(size[1]);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, rank));
  const int64_t in_n = batched ? self.stride(0) : 0, in_r = self.stride(batched ? 1 : 0),
                in_l = self.stride(batched ? 2 : 1);
  const int64_t on = batched ? out.stride(0) : 0, oc = out.stride(rank - 3),
                oh = out.stride(rank - 2), ow = out.stride(rank - 1);
  dispatch_dtype(self.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    const T* x = self.data<const T>();
    T* y = out.data<T>();
    for (int64_t k = 0; k < out.numel(); ++k) y[k] = store_value<T>(Acc(0));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t c = r / kk, ki = (r % kk) / kernel[1], kj = r % kernel[1];
        for (int64_t bh = 0; bh < blocks[0]; ++bh) {
          const int64_t h = bh * stride[0] - pad[0] + ki * dilation[0];
          if (h < 0 || h >= size[0]) continue;
          for (int64_t bw = 0; bw < blocks[1]; ++bw) {
            const int64_t w = bw * stride[1] - pad[1] + kj * dilation[1];
            if (w < 0 || w >= size[1]) continue;
            T& o = y[n * on + c * oc + h * oh + w * ow];
            const Acc v = load_value(x[n * in_n + r * in_r + (bh * blocks[1] + bw) * in_l]);
            o = store_value<T>(load_value(o) + v);
          }
        }
      }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::col2im.out", col2im_out, "TLLLLLT");

}  // namespace pteron
