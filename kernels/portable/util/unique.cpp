#include "kernels/portable/util/unique.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/logical_walk.h"
#include "kernels/portable/util/sort_order.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {
namespace {

// The rows being grouped are copied dense in self's logical order: row r holds the elements
// whose index at the grouped dim is r (flattened, every element is a row of one). The row and
// column of the element at logical index e of a tensor with `rows` at the grouped dim and
// `inner` elements after it per index of it:
inline int64_t row_of(int64_t e, int64_t rows, int64_t inner) { return (e / inner) % rows; }
inline int64_t column_of(int64_t e, int64_t rows, int64_t inner) {
  return e / (rows * inner) * inner + e % inner;
}

template <typename T>
bool rows_equal(const T* a, const T* b, int64_t width) {
  for (int64_t j = 0; j < width; ++j) {
    if (!(load_value(a[j]) == load_value(b[j]))) return false;
  }
  return true;
}

// Lexicographic, NaN above every number (NaN and NaN tie here; they still form two groups).
template <typename T>
bool row_before(const T* a, const T* b, int64_t width) {
  for (int64_t j = 0; j < width; ++j) {
    const auto x = load_value(a[j]);
    const auto y = load_value(b[j]);
    const bool x_nan = is_nan_value(x), y_nan = is_nan_value(y);
    if (x_nan || y_nan) {
      if (x_nan && y_nan) continue;
      return y_nan;
    }
    if (x != y) return x < y;
  }
  return false;
}

// `count` elements of `size` bytes (at least one, so an empty input still gets a pointer).
void* scratch_array(KernelContext& ctx, int64_t count, size_t size) {
  return ctx.allocate_scratch(static_cast<size_t>(count > 0 ? count : 1) * size, 16);
}

template <typename T>
Error group_rows(KernelContext& ctx, const Tensor& self, const UniqueRequest& rq, Tensor& out0,
                 Tensor& out1, Tensor& out2) {
  const char* op = rq.op;
  const int32_t rank = self.dim();
  const bool by_dim = rq.dim >= 0;
  const int64_t n = by_dim ? self.size(rq.dim) : self.numel();
  int64_t inner = 1;
  for (int32_t d = rq.dim + 1; by_dim && d < rank; ++d) inner *= self.size(d);
  const int64_t width = n == 0 ? 0 : self.numel() / n;  // elements per row
  PTERON_CHECK(!by_dim || n == 0 || width > 0, Error::InvalidArgument,
               "%s: self has a dim of size 0 other than dim %d, so its slices cannot be told apart "
               "(as torch refuses)",
               op, rq.dim);
  T* rows = static_cast<T*>(scratch_array(ctx, self.numel(), sizeof(T)));
  int64_t* order = static_cast<int64_t*>(scratch_array(ctx, 4 * n, sizeof(int64_t)));
  PTERON_CHECK(rows != nullptr && order != nullptr, Error::OutOfMemory,
               "%s: needs %lld bytes of scratch", op,
               static_cast<long long>(self.numel() * sizeof(T) + 32 * n));
  int64_t* merge_tmp = order + n;
  int64_t* group_of = order + 2 * n;   // the group of row r
  int64_t* first_row = order + 3 * n;  // a row holding group g's value

  const T* x = self.data<const T>();
  LogicalWalk walk(self);
  for (int64_t e = 0; e < self.numel(); ++e, walk.next()) {
    rows[row_of(e, n, inner) * width + column_of(e, n, inner)] = x[walk.offset];
  }
  for (int64_t r = 0; r < n; ++r) order[r] = r;
  if (rq.sorted) {
    merge_sort(order, merge_tmp, n, [&](int64_t a, int64_t b) {
      return row_before(rows + a * width, rows + b * width, width);
    });
  }
  int64_t groups = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || !rows_equal(rows + order[k - 1] * width, rows + order[k] * width, width)) {
      first_row[groups++] = order[k];
    }
    group_of[order[k]] = groups - 1;
  }
  PTERON_CHECK(groups <= INT32_MAX, Error::InvalidArgument, "%s: result too large", op);

  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < rank; ++d) sizes[d] = self.size(d);
  if (by_dim) sizes[rq.dim] = static_cast<int32_t>(groups);
  const int32_t group_count = static_cast<int32_t>(groups);
  const int32_t none = 0;
  const int32_t row_count = static_cast<int32_t>(n);
  PTERON_TRY(expect_dtype(op, out0, self.dtype(), "out0"));
  PTERON_TRY(expect_dtype(op, out1, ScalarType::Long, "out1"));
  PTERON_TRY(expect_dtype(op, out2, ScalarType::Long, "out2"));
  PTERON_TRY(by_dim ? expect_out_shape(op, out0, sizes, rank)
                    : expect_out_shape(op, out0, &group_count, 1));
  if (!rq.inverse) {
    PTERON_TRY(expect_out_shape(op, out1, &none, 1));
  } else if (by_dim) {
    PTERON_TRY(expect_out_shape(op, out1, &row_count, 1));
  } else {
    PTERON_TRY(expect_out_shape(op, out1, self.sizes().data(), rank));
  }
  PTERON_TRY(expect_out_shape(op, out2, rq.counts ? &group_count : &none, 1));

  T* values = out0.data<T>();
  LogicalWalk out_walk(out0);
  for (int64_t e = 0; e < out0.numel(); ++e, out_walk.next()) {
    values[out_walk.offset] =
        rows[first_row[row_of(e, groups, inner)] * width + column_of(e, groups, inner)];
  }
  if (rq.inverse) {
    LogicalWalk inverse_walk(out1);
    int64_t* inverse = out1.data<int64_t>();
    for (int64_t r = 0; r < n; ++r, inverse_walk.next()) inverse[inverse_walk.offset] = group_of[r];
  }
  if (rq.counts) {
    int64_t* counts = out2.data<int64_t>();
    const int64_t stride = out2.stride(0);
    for (int64_t g = 0; g < groups; ++g) counts[g * stride] = 0;
    for (int64_t r = 0; r < n; ++r) ++counts[group_of[r] * stride];
  }
  return Error::Ok;
}

}  // namespace

Error unique_groups(KernelContext& ctx, const Tensor& self, const UniqueRequest& request,
                    Tensor& out0, Tensor& out1, Tensor& out2) {
  Error result = Error::Ok;
  const bool ok = dispatch_dtype_in<kAllTypes>(self.dtype(), [&](auto tag) {
    result = group_rows<typename decltype(tag)::type>(ctx, self, request, out0, out1, out2);
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", request.op,
                scalar_type_name(self.dtype()));
  }
  return result;
}

}  // namespace pteron
