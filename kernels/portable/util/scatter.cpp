#include "kernels/portable/util/scatter.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dim_order.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {

Error start_from_self(const char* op, const Tensor& self, Tensor& out) {
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(op, out, self.sizes().data(), self.dim()));
  if (out.const_data() == self.const_data() && self.nbytes() > 0) {
    PTERON_CHECK(same_layout(self, out), Error::InvalidArgument,
                 "%s: out shares self's memory in another dim order", op);
    return Error::Ok;  // updated in place
  }
  return copy_tensor(op, self, out);
}

}  // namespace pteron

namespace pteron {

Error check_scatter_args(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                         const Tensor* src, int32_t* dim) {
  // Like PyTorch, an empty index may have any dtype (op_db samples use uint8 ones): nothing
  // is read from it.
  if (index.numel() != 0) PTERON_TRY(expect_index_dtype(op, index, "index", true));
  PTERON_TRY(normalize_dim(op, dim_arg, self.dim() > 0 ? self.dim() : 1, dim));
  const bool scalar_case = self.dim() <= 1 && index.dim() <= 1 && (!src || src->dim() <= 1);
  PTERON_CHECK(index.dim() == self.dim() || scalar_case, Error::InvalidArgument,
               "%s: index has rank %d, self has rank %d", op, index.dim(), self.dim());
  if (src != nullptr) {
    PTERON_TRY(expect_dtype(op, *src, self.dtype(), "src"));
    PTERON_CHECK(src->dim() == index.dim() || scalar_case, Error::InvalidArgument,
                 "%s: src has rank %d, index has rank %d", op, src->dim(), index.dim());
  }
  for (int32_t d = 0; d < index.dim(); ++d) {
    if (src != nullptr && src->dim() > d) {
      PTERON_CHECK(index.size(d) <= src->size(d), Error::InvalidArgument,
                   "%s: index size %d exceeds src size %d at dim %d", op, index.size(d),
                   src->size(d), d);
    }
    if (d != *dim && self.dim() > d) {
      PTERON_CHECK(index.size(d) <= self.size(d), Error::InvalidArgument,
                   "%s: index size %d exceeds self size %d at dim %d", op, index.size(d),
                   self.size(d), d);
    }
  }
  const int64_t dim_size = self.dim() == 0 ? 1 : self.size(*dim);
  return check_indices(op, index, dim_size, *dim, false);
}

Error start_scatter_src(const char* op, Span<EValue*> args, int32_t* dim, int64_t* src_strides) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  PTERON_TRY(check_scatter_args(op, self, args[1]->i, index, &src, dim));
  PTERON_TRY(start_from_self(op, self, *args[4]->tensor));
  scatter_src_strides(index, src, src_strides);
  return Error::Ok;
}

Error check_index_rows(const char* op, const Tensor& self, int64_t dim_arg, const Tensor& index,
                       const Tensor& source, bool allow_int32, int32_t* dim) {
  PTERON_TRY(expect_dtype(op, source, self.dtype(), "source"));
  PTERON_TRY(expect_index_dtype(op, index, "index", allow_int32));
  PTERON_CHECK(index.dim() <= 1, Error::InvalidArgument, "%s: index has rank %d, expected 0 or 1",
               op, index.dim());
  PTERON_TRY(normalize_dim(op, dim_arg, self.dim() > 0 ? self.dim() : 1, dim));
  const int64_t n = index.numel();
  const int64_t dim_size = self.dim() == 0 ? 1 : self.size(*dim);
  PTERON_CHECK(source.dim() == self.dim(), Error::InvalidArgument,
               "%s: source has rank %d, self has rank %d", op, source.dim(), self.dim());
  for (int32_t d = 0; d < self.dim(); ++d) {
    const int64_t want = d == *dim ? n : self.size(d);
    PTERON_CHECK(source.size(d) == want, Error::InvalidArgument,
                 "%s: source size %d at dim %d, expected %lld", op, source.size(d), d,
                 static_cast<long long>(want));
  }
  PTERON_CHECK(self.dim() > 0 || n == 1, Error::InvalidArgument,
               "%s: a 0-d self takes one index, got %lld", op, static_cast<long long>(n));
  return check_indices(op, index, dim_size, *dim, false);
}

}  // namespace pteron
