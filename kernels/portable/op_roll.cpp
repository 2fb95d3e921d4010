// aten::roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out)
// out = self with elements shifted cyclically by shifts[i] along dims[i]; with no dims, the
// flattened (row-major) tensor is rolled by shifts[0] and keeps its shape.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Positive shift in [0, n).
int64_t wrap_shift(int64_t s, int64_t n) { return n == 0 ? 0 : ((s % n) + n) % n; }

// Rolls along a set of dims: along each rolled dim the output splits into two blocks
// ([0, s) comes from [n - s, n) and [s, n) from [0, n - s)), so 2^k strided block copies.
void roll_dims(const Tensor& self, Tensor& out, const int64_t* shift) {
  const int32_t rank = self.dim();
  int64_t src_strides[kMaxTensorDim], dst_strides[kMaxTensorDim];
  tensor_strides(self, src_strides);
  tensor_strides(out, dst_strides);
  int32_t rolled[kMaxTensorDim];
  int32_t k = 0;
  for (int32_t d = 0; d < rank; ++d)
    if (shift[d] != 0) rolled[k++] = d;
  for (uint32_t block = 0; block < (1u << k); ++block) {
    int64_t sizes[kMaxTensorDim];
    int64_t src = 0, dst = 0;
    bool empty = false;
    for (int32_t d = 0; d < rank; ++d) sizes[d] = self.size(d);
    for (int32_t j = 0; j < k; ++j) {
      const int32_t d = rolled[j];
      const int64_t n = self.size(d), s = shift[d];
      if (block & (1u << j)) {  // out [s, n) <- self [0, n - s)
        sizes[d] = n - s;
        dst += s * dst_strides[d];
      } else {  // out [0, s) <- self [n - s, n)
        sizes[d] = s;
        src += (n - s) * src_strides[d];
      }
      if (sizes[d] == 0) empty = true;
    }
    if (empty) continue;
    strided_copy(byte_ptr(out, dst), dst_strides, byte_ptr(self, src), src_strides, sizes, rank,
                 self.element_size());
  }
}

// The flattened roll: element i (row-major) moves to (i + s) mod N; the row-major index is
// turned into each tensor's own offset, so any dim orders work.
void roll_flat(const Tensor& self, Tensor& out, int64_t s) {
  const int64_t n = self.numel();
  const int32_t rank = self.dim();
  auto offset_of = [rank](const Tensor& t, int64_t flat) {
    int64_t off = 0;
    for (int32_t d = rank - 1; d >= 0; --d) {
      off += (flat % t.size(d)) * t.stride(d);
      flat /= t.size(d);
    }
    return off;
  };
  dispatch_word(self.element_size(), [&](auto tag) {
    using W = typename decltype(tag)::type;
    const W* x = self.data<const W>();
    W* y = out.data<W>();
    for (int64_t i = 0; i < n; ++i) y[offset_of(out, (i + s) % n)] = x[offset_of(self, i)];
  });
}

Error roll_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::roll.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  const Span<const int64_t> shifts = args[1]->int_list, dims = args[2]->int_list;
  if (dims.empty()) {
    PTERON_CHECK(shifts.size() == 1, Error::InvalidArgument,
                 "%s: without dims, shifts must have one entry, got %zu", kOp, shifts.size());
    if (self.numel() > 0) roll_flat(self, out, wrap_shift(shifts[0], self.numel()));
    return Error::Ok;
  }
  PTERON_CHECK(shifts.size() == dims.size(), Error::InvalidArgument, "%s: %zu shifts for %zu dims",
               kOp, shifts.size(), dims.size());
  int64_t shift[kMaxTensorDim] = {};
  for (size_t i = 0; i < dims.size(); ++i) {
    int32_t d = 0;
    PTERON_TRY(normalize_dim(kOp, dims[i], self.dim(), &d));
    // A dim named twice rolls twice, as torch applies one roll per entry.
    shift[d] = wrap_shift(shift[d] + wrap_shift(shifts[i], self.size(d)), self.size(d));
  }
  if (self.numel() > 0) roll_dims(self, out, shift);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::roll.out", roll_out, "TLLT");

}  // namespace pteron
