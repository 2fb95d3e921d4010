#include "kernels/portable/util/pad_modes.h"

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// One run of output positions along a padded dim and where it reads in self: out index
// o0 + j reads self index i0 + j * step (step -1 mirrors, 0 repeats the edge).
struct Segment {
  int64_t o0 = 0, count = 0, i0 = 0, step = 1;
};

// The (at most three) segments of one padded dim: before, the kept middle, after. Negative
// pads crop (then only the middle remains on that side).
int32_t segments(PadMode mode, int64_t n, int64_t before, int64_t after, Segment* seg) {
  const int64_t out = n + before + after;
  int32_t m = 0;
  if (before > 0) {
    seg[m++] = mode == PadMode::Reflect ? Segment{0, before, before, -1} : Segment{0, before, 0, 0};
  }
  const int64_t mid0 = before > 0 ? before : 0;
  const int64_t mid1 = n + before < out ? n + before : out;
  if (mid1 > mid0) seg[m++] = Segment{mid0, mid1 - mid0, mid0 - before, 1};
  if (after > 0) {
    seg[m++] = mode == PadMode::Reflect ? Segment{n + before, after, n - 2, -1}
                                        : Segment{n + before, after, n - 1, 0};
  }
  return m;
}

}  // namespace

Error pad_modes_out(const char* op, int32_t k, PadMode mode, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> pad = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  const int32_t dim = self.dim();
  PTERON_CHECK(dim == k + 1 || dim == k + 2, Error::InvalidArgument,
               "%s: expects a %dD or %dD input, got %dD", op, k + 1, k + 2, dim);
  PTERON_CHECK(pad.size() == static_cast<size_t>(2 * k), Error::InvalidArgument,
               "%s: padding must have %d values, got %zu", op, 2 * k, pad.size());
  // Torch requires non-empty batch planes for these modes.
  for (int32_t d = 0; d < dim - k; ++d) {
    PTERON_CHECK(self.size(d) > 0 || d == 0, Error::InvalidArgument,
                 "%s: dim %d of the input is empty", op, d);
  }
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < dim; ++d) sizes[d] = self.size(d);
  for (int32_t p = 0; p < k; ++p) {
    const int32_t d = dim - 1 - p;
    const int64_t n = self.size(d), before = pad[2 * p], after = pad[2 * p + 1];
    PTERON_CHECK(before > -(int64_t{1} << 31) && before < (int64_t{1} << 31) &&
                     after > -(int64_t{1} << 31) && after < (int64_t{1} << 31),
                 Error::InvalidArgument, "%s: pad out of range at dim %d", op, d);
    if (mode == PadMode::Reflect) {
      PTERON_CHECK(before < n && after < n, Error::InvalidArgument,
                   "%s: padding (%lld, %lld) must be less than dim %d of the input (%lld)", op,
                   static_cast<long long>(before), static_cast<long long>(after), d,
                   static_cast<long long>(n));
    }
    PTERON_CHECK(n > 0, Error::InvalidArgument, "%s: dim %d of the input is empty", op, d);
    const int64_t size = n + before + after;
    PTERON_CHECK(size >= 1 && size <= INT32_MAX, Error::InvalidArgument,
                 "%s: padding dim %d of size %lld by (%lld, %lld) gives size %lld", op, d,
                 static_cast<long long>(n), static_cast<long long>(before),
                 static_cast<long long>(after), static_cast<long long>(size));
    sizes[d] = static_cast<int32_t>(size);
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  if (out.numel() == 0) return Error::Ok;

  // One strided copy per combination of segments over the padded dims (at most 3^3).
  Segment seg[3][3];
  int32_t nseg[3];
  for (int32_t p = 0; p < k; ++p) {
    const int32_t d = dim - 1 - p;
    nseg[p] = segments(mode, self.size(d), pad[2 * p], pad[2 * p + 1], seg[p]);
  }
  int32_t pick[3] = {0, 0, 0};
  const size_t es = self.element_size();
  while (true) {
    int64_t n[kMaxTensorDim], ds[kMaxTensorDim], ss[kMaxTensorDim];
    int64_t doff = 0, soff = 0;
    for (int32_t d = 0; d < dim; ++d) {
      n[d] = self.size(d);
      ds[d] = out.stride(d);
      ss[d] = self.stride(d);
    }
    for (int32_t p = 0; p < k; ++p) {
      const int32_t d = dim - 1 - p;
      const Segment& s = seg[p][pick[p]];
      n[d] = s.count;
      ss[d] = self.stride(d) * s.step;
      doff += s.o0 * out.stride(d);
      soff += s.i0 * self.stride(d);
    }
    strided_copy(static_cast<char*>(out.mutable_data()) + doff * static_cast<int64_t>(es), ds,
                 static_cast<const char*>(self.const_data()) + soff * static_cast<int64_t>(es), ss,
                 n, dim, es);
    int32_t p = 0;
    for (; p < k; ++p) {
      if (++pick[p] < nseg[p]) break;
      pick[p] = 0;
    }
    if (p == k) return Error::Ok;
  }
}

}  // namespace pteron
