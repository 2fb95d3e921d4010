// scatter_reduce's reductions (sum, prod, mean, amax, amin), shared by the portable kernel and
// the optimized one so that both reduce with the same arithmetic, NaN rules and identities.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

enum class ScatterReduce { Sum, Prod, Mean, Amax, Amin };

// The reduce argument's string; false for any other.
inline bool parse_scatter_reduce(Span<const char> s, ScatterReduce* r) {
  auto is = [&](const char* name) {
    return s.size() == std::strlen(name) && std::memcmp(s.data(), name, s.size()) == 0;
  };
  if (is("sum"))
    *r = ScatterReduce::Sum;
  else if (is("prod"))
    *r = ScatterReduce::Prod;
  else if (is("mean"))
    *r = ScatterReduce::Mean;
  else if (is("amax"))
    *r = ScatterReduce::Amax;
  else if (is("amin"))
    *r = ScatterReduce::Amin;
  else
    return false;
  return true;
}

// The reduce argument (args[4] of scatter_reduce and index_reduce) as one of the reductions the
// op takes: index_reduce has no sum (`with_sum` false), as in torch.
inline Error read_scatter_reduce_arg(const char* op, const EValue& arg, bool with_sum,
                                     ScatterReduce* r) {
  PTERON_CHECK(arg.tag == Tag::String, Error::InvalidArgument, "%s: reduce must be a string", op);
  PTERON_CHECK(parse_scatter_reduce(arg.string, r) && (with_sum || *r != ScatterReduce::Sum),
               Error::InvalidArgument, "%s: reduce must be %sprod, mean, amax or amin", op,
               with_sum ? "sum, " : "");
  return Error::Ok;
}

template <typename C>
bool scatter_is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

// The value a position starts from when self is left out (include_self=False).
template <typename C>
C scatter_reduce_identity(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Prod:
      return C(1);
    case ScatterReduce::Amax:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::lowest();
    case ScatterReduce::Amin:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::max();
    default:
      return C(0);
  }
}

// acc combined with v, as torch's CPU reductions: a NaN from src wins; a NaN already there stays
// (std::max/min). A template on the reduction so that per-element loops carry no switch.
template <ScatterReduce R, typename C>
C scatter_combine(C acc, C v) {
  if constexpr (R == ScatterReduce::Sum || R == ScatterReduce::Mean) {
    return wrapping_add<C>(acc, v);
  } else if constexpr (R == ScatterReduce::Prod) {
    return wrapping_mul<C>(acc, v);
  } else if constexpr (R == ScatterReduce::Amax) {
    return scatter_is_nan(v) ? v : (acc < v ? v : acc);
  } else {
    return scatter_is_nan(v) ? v : (v < acc ? v : acc);
  }
}

// Calls fn(std::integral_constant<ScatterReduce, r>) for the run-time reduction r.
template <typename Fn>
void with_scatter_reduce(ScatterReduce r, Fn&& fn) {
  switch (r) {
    case ScatterReduce::Sum:
      fn(std::integral_constant<ScatterReduce, ScatterReduce::Sum>{});
      break;
    case ScatterReduce::Prod:
      fn(std::integral_constant<ScatterReduce, ScatterReduce::Prod>{});
      break;
    case ScatterReduce::Mean:
      fn(std::integral_constant<ScatterReduce, ScatterReduce::Mean>{});
      break;
    case ScatterReduce::Amax:
      fn(std::integral_constant<ScatterReduce, ScatterReduce::Amax>{});
      break;
    case ScatterReduce::Amin:
      fn(std::integral_constant<ScatterReduce, ScatterReduce::Amin>{});
      break;
  }
}

// The mean of a position that `count` values (self's included when it counts) were summed into:
// floor division for integers, as torch.
template <typename C>
C scatter_mean(C sum, int32_t count) {
  if constexpr (std::is_same_v<C, bool>) {
    return sum;  // not reached: kernels refuse a mean of bool, as torch does
  } else if constexpr (std::is_floating_point_v<C>) {
    const C n = static_cast<C>(count);
    return sum / n;
  } else {
    const C n = static_cast<C>(count);
    C q = static_cast<C>(sum / n);
    if (sum % n != 0 && sum < 0) q = static_cast<C>(q - 1);
    return q;
  }
}

// Counters for mean (one per out element: out is dense, so offsets lie in [0, numel)), starting
// at 1 when self's value counts; null (and Ok) for any other reduction.
inline Error mean_counts(KernelContext& ctx, const char* op, ScatterReduce reduce,
                         bool include_self, int64_t numel, int32_t** counts) {
  *counts = nullptr;
  if (reduce != ScatterReduce::Mean) return Error::Ok;
  const size_t bytes = static_cast<size_t>(numel) * sizeof(int32_t);
  *counts = static_cast<int32_t*>(ctx.allocate_scratch(bytes, 64));
  PTERON_CHECK(*counts != nullptr, Error::OutOfMemory, "%s: needs %zu bytes of scratch for mean",
               op, bytes);
  for (int64_t k = 0; k < numel; ++k) (*counts)[k] = include_self ? 1 : 0;
  return Error::Ok;
}

// A reduction scattered into dst (scatter_reduce, index_reduce) in three passes: positions
// start from the identity where self is left out, every value of `from` is combined in, and
// mean divides each position once by its count (`counts` from mean_counts). visit(fn, cost)
// calls fn(dst offset, from offset) for every value reduced, each dst element's in index order,
// and returns false when it could not (`cost`: one call's work in the optimized library's
// units, 2 for a store, 4 otherwise).
template <typename T, typename Visit>
bool reduce_scattered(ScatterReduce reduce, bool include_self, const T* from, T* dst,
                      int32_t* counts, Visit&& visit) {
  using C = typename ComputeType<T>::type;
  if (!include_self) {
    const T start = store_value<T>(scatter_reduce_identity<C>(reduce));
    if (!visit([dst, start](int64_t o, int64_t) { dst[o] = start; }, 2)) return false;
  }
  bool ok = true;
  with_scatter_reduce(reduce, [&](auto r) {
    constexpr ScatterReduce kR = decltype(r)::value;
    ok = visit(
        [dst, from, counts](int64_t o, int64_t s) {
          dst[o] = store_value<T>(scatter_combine<kR, C>(load_value(dst[o]), load_value(from[s])));
          if constexpr (kR == ScatterReduce::Mean) ++counts[o];
        },
        4);
  });
  if (!ok || counts == nullptr) return ok;
  return visit(
      [dst, counts](int64_t o, int64_t) {
        if (counts[o] <= 1) return;  // each position divides once: marked done below
        dst[o] = store_value<T>(scatter_mean<C>(load_value(dst[o]), counts[o]));
        counts[o] = 1;
      },
      4);
}

}  // namespace pteron
