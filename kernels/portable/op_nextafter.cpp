// aten::nextafter.out(Tensor self, Tensor other, *, Tensor(a!) out)
// out = the next value of out's dtype after self towards other, with broadcasting: std::nextafter
// for float32 / float64; a step of one in the bit pattern for float16 / bfloat16 (both are
// sign-magnitude, so the next value away from zero is the pattern plus one), whose values the
// driver hands over widened to float, exactly. Not decomposed by run_decompositions().
#include <cmath>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/half.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// nextafter in a 16-bit format given by its conversions to and from float.
template <typename ToBits, typename FromBits>
float nextafter_16(float x, float y, ToBits to_bits, FromBits from_bits) {
  if (std::isnan(x) || std::isnan(y)) return x + y;
  if (x == y) return y;
  if (x == 0) return from_bits(static_cast<uint16_t>(std::signbit(y) ? 0x8001 : 0x0001));
  const uint16_t bits = to_bits(x);
  const bool away_from_zero = (x < y) == (x > 0);
  return from_bits(static_cast<uint16_t>(away_from_zero ? bits + 1 : bits - 1));
}

Error nextafter_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::nextafter.out";
  Tensor& out = *args[2]->tensor;
  const ScalarType dtype = out.dtype();
  return binary_float_elementwise(
      kOp, *args[0]->tensor, *args[1]->tensor, out, [dtype](auto x, auto y) {
        using C = decltype(x);
        if (dtype == ScalarType::Half)
          return static_cast<C>(nextafter_16(x, y, float_to_half_bits, half_bits_to_float));
        if (dtype == ScalarType::BFloat16)
          return static_cast<C>(nextafter_16(x, y, float_to_bf16_bits, bf16_bits_to_float));
        return std::nextafter(x, y);
      });
}

}  // namespace

PTERON_KERNEL("aten::nextafter.out", nextafter_out, "TTT");

}  // namespace pteron
