// aten::scatter_reduce.two_out(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool
// include_self=True, Tensor(a!) out) -> Tensor(a!)
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/scatter.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::scatter_reduce.two_out";

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

bool parse_reduce(Span<const char> s, Reduce* r) {
  auto is = [&](const char* name) {
    return s.size() == std::strlen(name) && std::memcmp(s.data(), name, s.size()) == 0;
  };
  if (is("sum"))
    *r = Reduce::Sum;
  else if (is("prod"))
    *r = Reduce::Prod;
  else if (is("mean"))
    *r = Reduce::Mean;
  else if (is("amax"))
    *r = Reduce::Amax;
  else if (is("amin"))
    *r = Reduce::Amin;
  else
    return false;
  return true;
}

template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

// The value a position starts from when self is left out (include_self=False).
template <typename C>
C identity(Reduce r) {
  switch (r) {
    case Reduce::Prod:
      return C(1);
    case Reduce::Amax:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::lowest();
    case Reduce::Amin:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::max();
    default:
      return C(0);
  }
}

// As torch's CPU reductions: a NaN from src wins; a NaN already there stays (std::max/min).
template <typename C>
C combine(Reduce r, C acc, C v) {
  switch (r) {
    case Reduce::Sum:
    case Reduce::Mean:
      return wrapping_add<C>(acc, v);
    case Reduce::Prod:
      return wrapping_mul<C>(acc, v);
    case Reduce::Amax:
      return is_nan(v) ? v : (acc < v ? v : acc);
    case Reduce::Amin:
      return is_nan(v) ? v : (v < acc ? v : acc);
  }
  return acc;
}

// out = self; every src[p] is reduced into out[..., index[p], ...] (sum, prod, mean, amax, amin),
// with or without self's value. Mean divides by the number of values reduced (flooring for
// integers, as torch); positions nothing is scattered to keep self.
Error scatter_reduce_two_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& index = *args[2]->tensor;
  const Tensor& src = *args[3]->tensor;
  PTERON_CHECK(args[4]->tag == Tag::String, Error::InvalidArgument, "%s: reduce must be a string",
               kOp);
  Reduce reduce;
  PTERON_CHECK(parse_reduce(args[4]->string, &reduce), Error::InvalidArgument,
               "%s: reduce must be sum, prod, mean, amax or amin", kOp);
  const bool include_self = args[5]->b;
  Tensor& out = *args[6]->tensor;
  PTERON_CHECK(self.dtype() != ScalarType::Bool, Error::NotSupported, "%s: bool is not supported",
               kOp);
  int32_t dim = 0;
  PTERON_TRY(check_scatter_args(kOp, self, args[1]->i, index, &src, &dim));
  PTERON_TRY(start_from_self(kOp, self, out));
  if (index.numel() == 0) return Error::Ok;
  int64_t src_strides[kMaxTensorDim];
  scatter_src_strides(index, src, src_strides);
  // Reduced-value counts per out element, for mean (out is dense: offsets are in [0, numel)).
  int32_t* counts = nullptr;
  if (reduce == Reduce::Mean) {
    const size_t bytes = static_cast<size_t>(out.numel()) * sizeof(int32_t);
    counts = static_cast<int32_t*>(ctx.allocate_scratch(bytes, alignof(int32_t)));
    PTERON_CHECK(counts != nullptr, Error::OutOfMemory, "%s: needs %zu bytes of scratch for mean",
                 kOp, bytes);
    for (int64_t k = 0; k < out.numel(); ++k) counts[k] = include_self ? 1 : 0;
  }
  const int64_t zero[kMaxTensorDim] = {0};
  const bool ok = dispatch_dtype_in<kFloatTypes | kIntTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    T* dst = out.data<T>();
    const T* from = src.data<const T>();
    if (!include_self) {
      for_each_scatter(index, out, dim, zero,
                       [&](int64_t o, int64_t) { dst[o] = store_value<T>(identity<C>(reduce)); });
    }
    for_each_scatter(index, out, dim, src_strides, [&](int64_t o, int64_t s) {
      dst[o] = store_value<T>(combine<C>(reduce, load_value(dst[o]), load_value(from[s])));
      if (counts != nullptr) ++counts[o];
    });
    if (counts == nullptr) return;
    for_each_scatter(index, out, dim, zero, [&](int64_t o, int64_t) {
      if (counts[o] <= 1) return;  // each position divides once: mark it done below
      const C n = static_cast<C>(counts[o]);
      const C v = load_value(dst[o]);
      if constexpr (std::is_floating_point_v<C>) {
        dst[o] = store_value<T>(v / n);
      } else {
        C q = static_cast<C>(v / n);
        if (v % n != 0 && v < 0) q = static_cast<C>(q - 1);
        dst[o] = store_value<T>(q);
      }
      counts[o] = 1;
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::scatter_reduce.two_out", scatter_reduce_two_out, "TITT*BT");

}  // namespace pteron
