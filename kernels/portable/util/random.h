// Random numbers for rand, randn and native_dropout: counter-based (SplitMix64 of a per-call
// stream key plus the element index), so each element's value does not depend on the order of
// the walk, and no state lives in the kernel. The stream key comes from a fixed seed and a
// process-wide call counter: runs are reproducible, and successive calls (two dropouts, two
// rand nodes, the same node in the next execute) draw different numbers. Torch's values are not
// reproduced (its Philox/MT streams are an implementation detail); distributions are.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>

#include "kernels/portable/util/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

constexpr uint64_t kRandomSeed = 0x5eed5eed2026ull;

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A fresh stream for one kernel call. 32-bit counter: lock-free on every target (Cortex-M too).
inline uint64_t next_random_stream() {
  static std::atomic<uint32_t> calls{0};
  const uint32_t n = calls.fetch_add(1, std::memory_order_relaxed);
  return splitmix64(kRandomSeed ^ (static_cast<uint64_t>(n) << 32));
}

// The largest integer each dtype holds exactly, with all below it (int64: INT64_MAX).
inline int64_t largest_exact_integer(ScalarType t) {
  switch (t) {
    case ScalarType::Byte:
      return 255;
    case ScalarType::Char:
      return 127;
    case ScalarType::Short:
      return 32767;
    case ScalarType::Int:
      return 2147483647;
    case ScalarType::Half:
      return 2048;
    case ScalarType::BFloat16:
      return 256;
    case ScalarType::Float:
      return 16777216;
    case ScalarType::Double:
      return 9007199254740992;
    default:
      return INT64_MAX;
  }
}

// The smallest: 0 for uint8, -(largest + 1) for the signed integers, -largest for floats.
inline int64_t smallest_exact_integer(ScalarType t) {
  if (t == ScalarType::Byte) return 0;
  const int64_t largest = largest_exact_integer(t);
  return is_floating(t) ? -largest : -largest - 1;
}

// Uniform in [0, 1) with 53 random bits; element k of stream s (`draw` separates the values
// one element needs: Box-Muller takes two).
inline double uniform_double(uint64_t stream, int64_t k, uint64_t draw = 0) {
  const uint64_t bits = splitmix64(stream + static_cast<uint64_t>(k) * 2 + draw);
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Uniform in [0, 1) that stays below 1 after rounding to a type with `mantissa_bits` (24 for
// float, 11 for half, 8 for bfloat16): torch.rand never returns 1.
inline double uniform_for(uint64_t stream, int64_t k, int mantissa_bits) {
  const uint64_t bits = splitmix64(stream + static_cast<uint64_t>(k) * 2);
  return static_cast<double>(bits >> (64 - mantissa_bits)) /
         static_cast<double>(1ull << mantissa_bits);
}

// Standard normal (Box-Muller on two uniforms; 1 - u keeps the log's argument in (0, 1]).
inline double normal_double(uint64_t stream, int64_t k) {
  const double u1 = 1.0 - uniform_double(stream, k, 0);
  const double u2 = uniform_double(stream, k, 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Fills a floating `out` (every element, flat: tensors are dense) with uniform [0, 1) values or
// standard normals from a fresh stream. Fails, naming `op`, on a non-floating out.
inline Error fill_random(const char* op, Tensor& out, bool normal) {
  const uint64_t stream = next_random_stream();
  const bool ok = dispatch_dtype_in<kFloatTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int bits = sizeof(T) == 8                    ? 53
                     : sizeof(T) == 4                  ? 24
                     : out.dtype() == ScalarType::Half ? 11
                                                       : 8;
    T* p = out.data<T>();
    const int64_t n = out.numel();
    for (int64_t k = 0; k < n; ++k) {
      p[k] = store_value<T>(normal ? normal_double(stream, k) : uniform_for(stream, k, bits));
    }
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: out dtype %s is not floating", op,
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

}  // namespace pteron
