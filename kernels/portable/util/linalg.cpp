#include "kernels/portable/util/linalg.h"

#include "kernels/portable/util/broadcast.h"

namespace pteron::linalg {

Error broadcast_batch(const char* op, const Tensor& t, int32_t matrix_dims, Batch& batch) {
  const int32_t rank = t.dim() - matrix_dims;
  PTERON_CHECK(rank >= 0, Error::InvalidArgument, "%s: a tensor of rank %d has no %d matrix dims",
               op, t.dim(), matrix_dims);
  if (rank > batch.rank) {  // align right: leading dims of size 1
    const int32_t lead = rank - batch.rank;
    for (int32_t i = batch.rank - 1; i >= 0; --i) batch.sizes[i + lead] = batch.sizes[i];
    for (int32_t i = 0; i < lead; ++i) batch.sizes[i] = 1;
    batch.rank = rank;
  }
  const int32_t lead = batch.rank - rank;
  batch.count = 1;
  for (int32_t i = 0; i < batch.rank; ++i) {
    if (i >= lead) {
      const int32_t s = t.size(i - lead);
      PTERON_CHECK(s == batch.sizes[i] || s == 1 || batch.sizes[i] == 1, Error::InvalidArgument,
                   "%s: batch dims do not broadcast (%d against %d)", op, s, batch.sizes[i]);
      if (batch.sizes[i] == 1) batch.sizes[i] = s;
    }
    batch.count *= batch.sizes[i];
  }
  return Error::Ok;
}

int64_t batch_offset(const Tensor& t, int32_t matrix_dims, const Batch& batch, int64_t b) {
  const int32_t lead = batch.rank - (t.dim() - matrix_dims);
  int64_t offset = 0;
  for (int32_t i = batch.rank - 1; i >= 0 && b > 0; --i) {
    const int64_t index = b % batch.sizes[i];
    b /= batch.sizes[i];
    if (i >= lead && t.size(i - lead) != 1) offset += index * t.stride(i - lead);
  }
  return offset;
}

Error expect_batched_out(const char* op, Tensor& out, const Batch& batch, int64_t rows,
                         int64_t cols) {
  int32_t sizes[kMaxTensorDim + 2];
  int32_t dim = 0;
  for (; dim < batch.rank; ++dim) sizes[dim] = batch.sizes[dim];
  if (rows >= 0) sizes[dim++] = static_cast<int32_t>(rows);
  if (rows >= 0 && cols >= 0) sizes[dim++] = static_cast<int32_t>(cols);
  PTERON_CHECK(dim <= kMaxTensorDim, Error::InvalidArgument, "%s: result of rank %d", op, dim);
  return expect_out_shape(op, out, sizes, dim);
}

Error expect_square(const char* op, const char* what, const Tensor& t) {
  PTERON_CHECK(t.dim() >= 2 && t.size(t.dim() - 1) == t.size(t.dim() - 2), Error::InvalidArgument,
               "%s: %s must be a batch of square matrices, got rank %d%s", op, what, t.dim(),
               t.dim() >= 2 ? " with non-square matrices" : "");
  return Error::Ok;
}

}  // namespace pteron::linalg
