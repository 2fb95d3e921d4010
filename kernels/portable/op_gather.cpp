// aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out)
// -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out[p] = self[p with p[dim] replaced by index[p]]; out has index's shape.
Error gather_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::gather.out";
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  // Like PyTorch, an empty index may have any dtype and rank (op_db samples have uint8 ones
  // of another rank than self): nothing is read, the output takes its shape.
  if (index.numel() == 0) return expect_out_shape(kOp, out, index.sizes().data(), index.dim());
  PTERON_TRY(expect_index_dtype(kOp, index, "index", true));
  // A 0-d self or index acts as a 1-element vector.
  const int32_t rank = self.dim() > index.dim() ? self.dim() : index.dim();
  PTERON_CHECK(index.dim() == self.dim() || rank <= 1, Error::InvalidArgument,
               "%s: index has rank %d, self has rank %d", kOp, index.dim(), self.dim());
  for (int32_t d = 0; d < index.dim() && d < self.dim(); ++d) {
    PTERON_CHECK(d == dim || index.size(d) <= self.size(d), Error::InvalidArgument,
                 "%s: index size %d exceeds self size %d at dim %d", kOp, index.size(d),
                 self.size(d), d);
  }
  const int64_t dim_size = self.dim() == 0 ? 1 : self.size(dim);
  PTERON_TRY(check_indices(kOp, index, dim_size, dim, false));
  PTERON_TRY(expect_out_shape(kOp, out, index.sizes().data(), index.dim()));
  if (out.numel() == 0) return Error::Ok;

  int64_t os[kMaxTensorDim], is[kMaxTensorDim], ss[kMaxTensorDim];
  for (int32_t d = 0; d < index.dim(); ++d) {
    os[d] = out.stride(d);
    is[d] = index.stride(d);
    ss[d] = d == dim || self.dim() == 0 ? 0 : self.stride(d);
  }
  const int64_t dim_stride = self.dim() == 0 ? 0 : self.stride(dim);
  dispatch_word(self.element_size(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* src = self.data<const W>();
    W* dst = out.data<W>();
    for_each_row3(index.sizes().data(), index.dim(), os, is, ss,
                  [&](int64_t o, int64_t ix, int64_t s, int64_t n, int64_t ostep, int64_t istep,
                      int64_t sstep) {
                    for (int64_t j = 0; j < n; ++j) {
                      const int64_t at = load_index(index, ix + j * istep);
                      dst[o + j * ostep] = src[s + j * sstep + at * dim_stride];
                    }
                  });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::gather.out", gather_out, "TITBT");

}  // namespace pteron
