// aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// (*, C*r*r, H, W) -> (*, C, H*r, W*r): out[c, h*r+i, w*r+j] = self[c*r*r + i*r + j, h, w].
// The channel dim splits into (c, i, j), so the op is one strided copy; any dim orders.
Error pixel_shuffle_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::pixel_shuffle.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t r = args[1]->i;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const int32_t dim = self.dim();
  PTERON_CHECK(dim >= 3, Error::InvalidArgument, "%s: expects rank >= 3, got %d", kOp, dim);
  PTERON_CHECK(r > 0 && r <= 65535, Error::InvalidArgument, "%s: invalid upscale factor %lld", kOp,
               static_cast<long long>(r));
  const int32_t cd = dim - 3, hd = dim - 2, wd = dim - 1;
  PTERON_CHECK(self.size(cd) % (r * r) == 0, Error::InvalidArgument,
               "%s: channels %d not divisible by upscale_factor^2 = %lld", kOp, self.size(cd),
               static_cast<long long>(r * r));
  PTERON_CHECK(self.size(hd) * r <= INT32_MAX && self.size(wd) * r <= INT32_MAX,
               Error::InvalidArgument, "%s: result too large", kOp);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < cd; ++d) sizes[d] = self.size(d);
  const int64_t c = self.size(cd) / (r * r);
  sizes[cd] = static_cast<int32_t>(c);
  sizes[hd] = static_cast<int32_t>(self.size(hd) * r);
  sizes[wd] = static_cast<int32_t>(self.size(wd) * r);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, dim));

  int64_t n[kMaxTensorDim + 3], ds[kMaxTensorDim + 3], ss[kMaxTensorDim + 3];
  int32_t k = 0;
  for (int32_t d = 0; d < cd; ++d, ++k) {
    n[k] = self.size(d);
    ds[k] = out.stride(d);
    ss[k] = self.stride(d);
  }
  const int64_t sc = self.stride(cd);
  const int64_t loops[5][3] = {
      {c, out.stride(cd), sc * r * r},                       // c
      {self.size(hd), out.stride(hd) * r, self.stride(hd)},  // h
      {r, out.stride(hd), sc * r},                           // i
      {self.size(wd), out.stride(wd) * r, self.stride(wd)},  // w
      {r, out.stride(wd), sc},                               // j
  };
  for (const auto& l : loops) {
    n[k] = l[0];
    ds[k] = l[1];
    ss[k++] = l[2];
  }
  strided_copy(out.mutable_data(), ds, self.const_data(), ss, n, k, self.element_size());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::pixel_shuffle.out", pixel_shuffle_out, "TIT");

}  // namespace pteron
