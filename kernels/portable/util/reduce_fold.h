// Folding kernels over a ReducePlan: the loops every reduction (sum, prod, amax, any, var,
// argmax) shares. Floats accumulate in float (double for double) with a bounded error: lines
// fold in 8 lanes and pairwise halves, and rows/lines combine in blocks of kReduceBlock, so the
// error grows with the block size and log(length), not with the length.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/reduce_plan.h"

namespace pteron {

constexpr int64_t kReduceChunk = 64;   // outputs per vertical pass (accumulators on the stack)
constexpr int64_t kReduceBlock = 128;  // rows or lines folded into one partial result

// Integer sums and products accumulate in uint64_t: they wrap like torch's int64 arithmetic
// without signed-overflow undefined behaviour. (Plain unsigned lanes also sidestep a GCC 12 -O3
// miscompile of the int64 -> uint64 -> int64 wrapping-add idiom in widening int8 reductions.)
template <typename A>
inline A add_values(A a, A b) {
  return a + b;
}
template <typename A>
inline A mul_values(A a, A b) {
  return a * b;
}

// Accumulator type for results stored in `out`: double for double, float for other floats,
// uint64_t (two's complement int64) for integers and bool.
template <typename Fn>
void dispatch_accumulator(ScalarType out, Fn&& fn) {
  if (out == ScalarType::Double)
    fn(TypeTag<double>{});
  else if (is_floating(out))
    fn(TypeTag<float>{});
  else
    fn(TypeTag<uint64_t>{});
}

// Converts a loaded value to accumulator A (through int64 for the integer accumulator, so
// negative values wrap instead of being undefined; a float, as a reduction of floats into an
// integer dtype reads them, converts as store_value does: NaN and values beyond int64 give 0).
template <typename A, typename V>
inline A to_accumulator(V v) {
  if constexpr (std::is_same_v<A, uint64_t> && std::is_floating_point_v<V>)
    return static_cast<uint64_t>(store_value<int64_t>(v));
  else if constexpr (std::is_same_v<A, uint64_t>)
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  else
    return static_cast<A>(v);
}
template <typename A>
inline auto from_accumulator(A v) {
  if constexpr (std::is_same_v<A, uint64_t>)
    return static_cast<int64_t>(v);
  else
    return v;
}

constexpr int64_t kLineLanes = 32;  // independent accumulators along a line
constexpr int64_t kLineLeaf = 512;  // elements folded lane-wise before pairwise halving

// Folds f(x[k * s], 0) over a line of n elements: 32 lanes, which the compiler keeps as an
// elementwise (vectorisable) loop, over leaves of kLineLeaf elements combined pairwise.
template <typename A, typename T, typename F, typename Op>
A fold_line(const T* x, int64_t n, int64_t s, A identity, const F& f, const Op& op) {
  if (n > kLineLeaf) {
    const int64_t half = (n / 2 + kLineLanes - 1) & ~(kLineLanes - 1);
    return op(fold_line(x, half, s, identity, f, op),
              fold_line(x + half * s, n - half, s, identity, f, op));
  }
  if (s != 1 || n < kLineLanes) {  // short or strided lines: one accumulator is as good
    A acc = identity;
    for (int64_t k = 0; k < n; ++k) acc = op(acc, f(load_value(x[k * s]), 0));
    return acc;
  }
  A lane[kLineLanes];
  for (int64_t j = 0; j < kLineLanes; ++j) lane[j] = f(load_value(x[j]), 0);
  int64_t k = kLineLanes;
  for (; k + kLineLanes <= n; k += kLineLanes) {
    for (int64_t j = 0; j < kLineLanes; ++j) lane[j] = op(lane[j], f(load_value(x[k + j]), 0));
  }
  for (int64_t j = 0; k + j < n; ++j) lane[j] = op(lane[j], f(load_value(x[k + j]), 0));
  for (int64_t w = kLineLanes / 2; w > 0; w /= 2) {  // pairwise across lanes
    for (int64_t j = 0; j < w; ++j) lane[j] = op(lane[j], lane[j + w]);
  }
  return lane[0];
}

// acc[j] = fold over the reduce space of f(x, j) for the `c` adjacent outputs whose reduce
// space starts at in0 (c == 1 on horizontal plans). f gets the column so that a fold may depend
// on a per-output value (var subtracts each output's mean).
// kUnrollRows folds four rows per pass (fewer accumulator loads and stores); ops whose nested
// form the compiler cannot vectorise (NaN-propagating max) turn it off.
template <typename A, bool kUnrollRows = true, typename T, typename F, typename Op>
void fold_columns(const ReducePlan& p, const T* x, int64_t in0, int64_t c, A identity, const F& f,
                  const Op& op, A* acc) {
  // Three levels: `block` folds up to kReduceBlock rows (or lines), `mid` up to kReduceBlock
  // blocks, `acc` the mids, so no partial sees more than about kReduceBlock additions until
  // 2^14 rows, and few after.
  int64_t rows = 0, blocks = 0;
  if (p.inner == 1) {
    A total = identity, mid = identity, block = identity;
    for_each_reduce_line(p, in0, [&](int64_t off, int64_t len, int64_t s) {
      block = op(block, fold_line(x + off, len, s, identity, f, op));
      if (++rows == kReduceBlock) {
        mid = op(mid, block);
        block = identity;
        rows = 0;
        if (++blocks == kReduceBlock) {
          total = op(total, mid);
          mid = identity;
          blocks = 0;
        }
      }
    });
    acc[0] = op(total, op(mid, block));
    return;
  }
  A mid[kReduceChunk], block[kReduceChunk];
  for (int64_t j = 0; j < c; ++j) acc[j] = mid[j] = block[j] = identity;
  const int64_t cs = p.inner_in;
  for_each_reduce_line(p, in0, [&](int64_t off, int64_t len, int64_t s) {
    for (int64_t r = 0; r < len;) {
      const T* row = x + off + r * s;
      if (kUnrollRows && cs == 1 && r + 4 <= len && rows + 4 <= kReduceBlock) {
        // Four rows per pass: a quarter of the accumulator loads and stores.
        const T* r1 = row + s;
        const T* r2 = row + 2 * s;
        const T* r3 = row + 3 * s;
        for (int64_t j = 0; j < c; ++j) {
          block[j] = op(block[j], op(op(f(load_value(row[j]), j), f(load_value(r1[j]), j)),
                                     op(f(load_value(r2[j]), j), f(load_value(r3[j]), j))));
        }
        r += 4;
        rows += 4;
      } else {
        if (cs == 1) {
          for (int64_t j = 0; j < c; ++j) block[j] = op(block[j], f(load_value(row[j]), j));
        } else {
          for (int64_t j = 0; j < c; ++j) block[j] = op(block[j], f(load_value(row[j * cs]), j));
        }
        ++r;
        ++rows;
      }
      if (rows == kReduceBlock) {
        for (int64_t j = 0; j < c; ++j) {
          mid[j] = op(mid[j], block[j]);
          block[j] = identity;
        }
        rows = 0;
        if (++blocks == kReduceBlock) {
          for (int64_t j = 0; j < c; ++j) {
            acc[j] = op(acc[j], mid[j]);
            mid[j] = identity;
          }
          blocks = 0;
        }
      }
    }
  });
  for (int64_t j = 0; j < c; ++j) acc[j] = op(acc[j], op(mid[j], block[j]));
}

// Stores n accumulator values into `out` at offset, offset + stride, ..., converting to out's
// dtype (one dtype dispatch per call, not per element).
template <typename A>
void store_outputs(Tensor& out, int64_t offset, int64_t stride, const A* v, int64_t n) {
  dispatch_dtype(out.dtype(), kAllTypes, [&](auto tag) {
    using O = typename decltype(tag)::type;
    O* o = out.data<O>() + offset;
    for (int64_t k = 0; k < n; ++k) o[k * stride] = store_value<O>(from_accumulator(v[k]));
  });
}

// out = fold of op over each output's reduce space, accumulating in the type dispatch_accumulator
// picks for out (sum, prod). Any input dtype. Fails, naming `name`, on unsupported dtypes.
template <typename Op>
Error accumulate_reduce(const char* name, const Tensor& in, Tensor& out, const ReducePlan& p,
                        int identity, const Op& op) {
  if (!dispatch_dtype(out.dtype(), kAllTypes, [](auto) {})) {
    return fail(Error::NotSupported, "%s: out dtype %s not supported", name,
                scalar_type_name(out.dtype()));
  }
  bool ok = false;
  dispatch_accumulator(out.dtype(), [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    ok = dispatch_dtype(in.dtype(), kAllTypes, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = in.data<const T>();
      const auto f = [](auto v, int64_t) { return to_accumulator<A>(v); };
      A acc[kReduceChunk];
      for_each_output_chunk(p, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t, int64_t c) {
        fold_columns<A>(p, x, i0, c, static_cast<A>(identity), f, op, acc);
        store_outputs(out, o0, p.inner_out[0], acc, c);
      });
    });
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: input dtype %s not supported", name,
                scalar_type_name(in.dtype()));
  }
  return Error::Ok;
}

// For each output, the extreme (max when kMax, else min) value and the position of its first
// occurrence in the reduce space's loop order; NaN beats every number, as in torch.
template <bool kMax, typename T, typename C = typename ComputeType<T>::type>
void arg_fold_columns(const ReducePlan& p, const T* x, int64_t in0, int64_t c, C* best,
                      int64_t* pos) {
  const auto better = [](C v, C b) {
    if constexpr (kMax)
      return (v > b) | ((v != v) & (b == b));
    else
      return (v < b) | ((v != v) & (b == b));
  };
  const C start = kMax ? (std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                               : std::numeric_limits<C>::lowest())
                       : (std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                               : std::numeric_limits<C>::max());
  for (int64_t j = 0; j < c; ++j) {
    best[j] = start;
    pos[j] = 0;
  }
  int64_t at = 0;  // position of the current row (vertical) or element (horizontal)
  const int64_t cs = p.inner_in;
  for_each_reduce_line(p, in0, [&](int64_t off, int64_t len, int64_t s) {
    if (p.inner == 1) {
      for (int64_t k = 0; k < len; ++k, ++at) {
        const C v = load_value(x[off + k * s]);
        if (better(v, best[0])) {
          best[0] = v;
          pos[0] = at;
        }
      }
      return;
    }
    for (int64_t r = 0; r < len; ++r, ++at) {
      const T* row = x + off + r * s;
      for (int64_t j = 0; j < c; ++j) {
        const C v = load_value(row[j * cs]);
        const bool b = better(v, best[j]);
        best[j] = b ? v : best[j];
        pos[j] = b ? at : pos[j];
      }
    }
  });
}

}  // namespace pteron
