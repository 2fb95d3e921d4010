// aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// (*, C, H*r, W*r) -> (*, C*r*r, H, W): out[c*r*r + i*r + j, h, w] = self[c, h*r+i, w*r+j].
Error pixel_unshuffle_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::pixel_unshuffle.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t r = args[1]->i;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  const int32_t dim = self.dim();
  PTERON_CHECK(dim >= 3, Error::InvalidArgument, "%s: expects rank >= 3, got %d", kOp, dim);
  PTERON_CHECK(r > 0 && r <= 65535, Error::InvalidArgument, "%s: invalid downscale factor %lld",
               kOp, static_cast<long long>(r));
  const int32_t cd = dim - 3, hd = dim - 2, wd = dim - 1;
  PTERON_CHECK(self.size(hd) % r == 0 && self.size(wd) % r == 0, Error::InvalidArgument,
               "%s: height %d and width %d must be divisible by %lld", kOp, self.size(hd),
               self.size(wd), static_cast<long long>(r));
  PTERON_CHECK(self.size(cd) * r * r <= INT32_MAX, Error::InvalidArgument, "%s: result too large",
               kOp);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < cd; ++d) sizes[d] = self.size(d);
  sizes[cd] = static_cast<int32_t>(self.size(cd) * r * r);
  sizes[hd] = static_cast<int32_t>(self.size(hd) / r);
  sizes[wd] = static_cast<int32_t>(self.size(wd) / r);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, dim));

  int64_t n[kMaxTensorDim + 3], ds[kMaxTensorDim + 3], ss[kMaxTensorDim + 3];
  int32_t k = 0;
  for (int32_t d = 0; d < cd; ++d, ++k) {
    n[k] = self.size(d);
    ds[k] = out.stride(d);
    ss[k] = self.stride(d);
  }
  const int64_t oc = out.stride(cd);
  const int64_t loops[5][3] = {
      {self.size(cd), oc * r * r, self.stride(cd)},      // c
      {r, oc * r, self.stride(hd)},                      // i
      {r, oc, self.stride(wd)},                          // j
      {sizes[hd], out.stride(hd), self.stride(hd) * r},  // h
      {sizes[wd], out.stride(wd), self.stride(wd) * r},  // w
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

PTERON_KERNEL("aten::pixel_unshuffle.out", pixel_unshuffle_out, "TIT");

}  // namespace pteron
