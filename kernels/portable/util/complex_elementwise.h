// Elementwise arithmetic on complex tensors (complex64, complex128) for the kernels that take
// them: add, sub, mul, polar, complex, abs, and _to_copy from a real dtype. A value is a (real,
// imaginary) pair of the part type; the arithmetic is ATen's c10::complex (the textbook formulas,
// no C99 Annex G recovery of infinities), so results match torch's bit for bit where the operations
// are exact. Llama's reference RoPE (view_as_complex, multiply by polar(1, freqs), view_as_real)
// runs on these.
#pragma once

#include <cmath>
#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace pteron {

template <typename P>
struct ComplexValue {
  P re = 0, im = 0;
};

template <typename P>
ComplexValue<P> complex_mul(ComplexValue<P> a, ComplexValue<P> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// x + alpha * y with alpha = (alpha_re, alpha_im) multiplied as a complex number, as ATen's add
// (and sub, which adds -alpha) does: a real alpha still meets y's infinities as 0 * inf.
template <typename P>
ComplexValue<P> complex_add_scaled(ComplexValue<P> x, double alpha_re, double alpha_im,
                                   ComplexValue<P> y) {
  const ComplexValue<P> s =
      complex_mul(ComplexValue<P>{static_cast<P>(alpha_re), static_cast<P>(alpha_im)}, y);
  return {x.re + s.re, x.im + s.im};
}

// Reads element `offset` of `t`: a complex value of the part type P, or a real one of any real
// dtype or bool (converted; imaginary 0).
template <typename P>
ComplexValue<P> load_complex(const Tensor& t, int64_t offset) {
  if (is_complex(t.dtype())) return t.data<const ComplexValue<P>>()[offset];
  if (t.dtype() == (sizeof(P) == 4 ? ScalarType::Float : ScalarType::Double)) {
    return {t.data<const P>()[offset], P(0)};
  }
  double v = 0;
  convert_elements(t.dtype(), element_ptr(t, offset), 1, ScalarType::Double, &v, 1, 1);
  return {static_cast<P>(v), P(0)};
}

// Whether `t` may be an operand of complex arithmetic whose result has dtype `out`: complex of
// that dtype, or any real dtype or bool (torch promotes it). The compiler's kernel check asks the
// same (compiler/passes/check_kernels.cpp).
inline bool complex_operand_ok(ScalarType t, ScalarType out) {
  return t == out || (!is_complex(t) && is_supported(t));
}

// Checks a complex out made from two real parts (polar, complex): float32 parts give complex64,
// float64 complex128.
inline Error check_parts_to_complex(const char* op, const Tensor& a, const Tensor& b,
                                    const Tensor& out) {
  PTERON_CHECK(is_complex(out.dtype()) && a.dtype() == complex_part_type(out.dtype()) &&
                   b.dtype() == a.dtype(),
               Error::NotSupported,
               "%s: dtypes %s, %s -> %s not supported (float32 -> complex64, float64 -> "
               "complex128)",
               op, scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

// out = f(a, b) with broadcasting: out complex64 or complex128, each operand complex of out's
// dtype or real (as torch's promotion gives them).
template <typename Fn>
Error complex_binary(const char* op, const Tensor& a, const Tensor& b, Tensor& out, Fn&& f) {
  const auto operand_ok = [&](const Tensor& t) {
    return complex_operand_ok(t.dtype(), out.dtype());
  };
  if ((out.dtype() != ScalarType::ComplexFloat && out.dtype() != ScalarType::ComplexDouble) ||
      !operand_ok(a) || !operand_ok(b)) {
    return fail(Error::NotSupported,
                "%s: dtypes %s, %s -> %s not supported (complex64 or complex128 out, operands of "
                "its dtype or real)",
                op, scalar_type_name(a.dtype()), scalar_type_name(b.dtype()),
                scalar_type_name(out.dtype()));
  }
  RowPlan<3> plan;
  PTERON_TRY(plan_binary_rows(op, a, b, out, &plan));
  const auto run = [&](auto tag) {
    using P = decltype(tag);
    ComplexValue<P>* o = out.data<ComplexValue<P>>();
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t k = 0; k < n; ++k) {
        o[off[0] + k * st[0]] =
            f(load_complex<P>(a, off[1] + k * st[1]), load_complex<P>(b, off[2] + k * st[2]));
      }
    });
  };
  if (out.dtype() == ScalarType::ComplexFloat)
    run(float{});
  else
    run(double{});
  return Error::Ok;
}

// out = in as complex numbers (imaginary 0): a real or bool tensor converted to complex64 /
// complex128, as _to_copy does before an FFT of a real signal.
inline Error complex_from_real(const char* op, const Tensor& in, Tensor& out) {
  PTERON_CHECK(
      !is_complex(in.dtype()) && is_supported(in.dtype()) &&
          (out.dtype() == ScalarType::ComplexFloat || out.dtype() == ScalarType::ComplexDouble),
      Error::NotSupported, "%s: dtype %s -> %s not supported", op, scalar_type_name(in.dtype()),
      scalar_type_name(out.dtype()));
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  const auto run = [&](auto tag) {
    using P = decltype(tag);
    ComplexValue<P>* o = out.data<ComplexValue<P>>();
    for_each_row(plan_unary_rows(in, out), [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t k = 0; k < n; ++k)
        o[off[0] + k * st[0]] = load_complex<P>(in, off[1] + k * st[1]);
    });
  };
  if (out.dtype() == ScalarType::ComplexFloat)
    run(float{});
  else
    run(double{});
  return Error::Ok;
}

}  // namespace pteron
