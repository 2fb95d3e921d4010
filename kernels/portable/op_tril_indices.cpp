// aten::tril_indices.out(int row, int col, int offset=0, *, Tensor(a!) out)
// aten::triu_indices.out(int row, int col, int offset=0, *, Tensor(a!) out)
// The coordinates of a row x col matrix's lower (col - row <= offset) or upper (col - row >=
// offset) triangle, row-major, as a [2, count] tensor: rows, then columns. Models build their
// pair-interaction masks with them (DLRM-style feature crosses); constant folding usually
// computes them at compile time. Not decomposed by run_decompositions().
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <bool kUpper>
bool in_triangle(int64_t r, int64_t c, int64_t offset) {
  return kUpper ? c - r >= offset : c - r <= offset;
}

template <bool kUpper>
Error triangle_indices_out(const char* op, Span<EValue*> args) {
  const int64_t rows = args[0]->i, cols = args[1]->i, offset = args[2]->i;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(rows >= 0 && cols >= 0 && rows <= INT32_MAX && cols <= INT32_MAX,
               Error::InvalidArgument, "%s: row and col must be in [0, 2^31), got %lld and %lld",
               op, static_cast<long long>(rows), static_cast<long long>(cols));
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    // The columns of row r inside the triangle form one run: [0, r + offset] or [r + offset, col).
    const int64_t lo = kUpper ? r + offset : 0, hi = kUpper ? cols - 1 : r + offset;
    const int64_t first = lo < 0 ? 0 : lo, last = hi >= cols ? cols - 1 : hi;
    if (last >= first) count += last - first + 1;
  }
  PTERON_CHECK(count <= INT32_MAX, Error::InvalidArgument, "%s: %lld indices exceed 2^31", op,
               static_cast<long long>(count));
  const int32_t sizes[] = {2, static_cast<int32_t>(count)};
  PTERON_TRY(expect_out_shape(op, out, sizes, 2));
  const bool ok = dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* row_out = out.data<T>();
    T* col_out = row_out + out.stride(0);
    int64_t k = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        if (in_triangle<kUpper>(r, c, offset)) {
          row_out[k * out.stride(1)] = static_cast<T>(r);
          col_out[k * out.stride(1)] = static_cast<T>(c);
          ++k;
        }
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: out dtype %s not supported (integer types)", op,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

Error tril_indices_out(KernelContext&, Span<EValue*> args) {
  return triangle_indices_out<false>("aten::tril_indices.out", args);
}

Error triu_indices_out(KernelContext&, Span<EValue*> args) {
  return triangle_indices_out<true>("aten::triu_indices.out", args);
}

}  // namespace

PTERON_KERNEL("aten::tril_indices.out", tril_indices_out, "IIIT");
PTERON_KERNEL("aten::triu_indices.out", triu_indices_out, "IIIT");

}  // namespace pteron
