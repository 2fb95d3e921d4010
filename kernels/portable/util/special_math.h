// Gamma-family and error-function special functions the portable math kernels share, as ATen
// computes them (its Cephes ports in ATen/native/Math.h): digamma (psi), trigamma, Hurwitz zeta,
// polygamma, the scaled complementary error function erfcx and the inverse normal CDF ndtri.
// Templates over the compute type S (float for float32, as ATen, unless a kernel asks double).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace pteron::special {

// psi(x) = d/dx log(gamma(x)): the reflection formula below 0 (NaN at the negative integers,
// -inf / +inf at +0 / -0), the recurrence up to 10, then the asymptotic series.
template <typename S>
S digamma_value(S x) {
  constexpr S kPi = S(3.14159265358979323846);
  if (x == 0) return std::copysign(std::numeric_limits<S>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<S>::quiet_NaN();
    S whole;
    const S frac = std::modf(x, &whole);
    return digamma_value<S>(S(1) - x) - kPi / std::tan(kPi * frac);
  }
  S result = 0;
  while (x < S(10)) {
    result -= S(1) / x;
    x += S(1);
  }
  if (x == S(10)) return result + S(2.25175258906672110764);  // psi(10)
  // Asymptotic series in 1/x^2, highest coefficient first.
  constexpr S kA[] = {S(8.33333333333333333333E-2), S(-2.10927960927960927961E-2),
                      S(7.57575757575757575758E-3), S(-4.16666666666666666667E-3),
                      S(3.96825396825396825397E-3), S(-8.33333333333333333333E-3),
                      S(8.33333333333333333333E-2)};
  S y = 0;
  if (x < S(1.0e17)) {
    const S z = S(1) / (x * x);
    S poly = kA[0];
    for (int i = 1; i < 7; ++i) poly = poly * z + kA[i];
    y = z * poly;
  }
  return result + std::log(x) - (S(0.5) / x) - y;
}

// psi'(x): the reflection formula below 1/2, six steps of the recurrence, then the asymptotic
// series (ATen's calc_trigamma).
template <typename S>
S trigamma_value(S x) {
  constexpr S kPi = S(3.14159265358979323846);
  S sign = S(1), result = S(0);
  if (x < S(0.5)) {
    sign = S(-1);
    const S s = std::sin(kPi * x);
    result -= kPi * kPi / (s * s);
    x = S(1) - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += S(1) / (x * x);
    x += S(1);
  }
  const S ixx = S(1) / (x * x);
  result += (S(1) + S(1) / (S(2) * x) +
             ixx * (S(1) / S(6) - ixx * (S(1) / S(30) - ixx * (S(1) / S(42))))) /
            x;
  return sign * result;
}

// Hurwitz zeta(x, q) = sum over k >= 0 of (k + q)^-x, by Euler-Maclaurin summation (Cephes'
// zeta): inf at x = 1, NaN for x < 1, inf at the poles q = 0, -1, ..., NaN for other q <= 0
// when x is not an integer.
template <typename S>
S zeta_value(S x, S q) {
  constexpr S kMachEp = std::numeric_limits<S>::epsilon() / S(2);
  // (2k)! / B_2k, k = 1..12
  constexpr S kA[] = {S(12.0),
                      S(-720.0),
                      S(30240.0),
                      S(-1209600.0),
                      S(47900160.0),
                      S(-1.8924375803183791606e9),
                      S(7.47242496e10),
                      S(-2.950130727918164224e12),
                      S(1.1646782814350067249e14),
                      S(-4.5979787224074726105e15),
                      S(1.8152105401943546773e17),
                      S(-7.1661652561756670113e18)};
  if (x == S(1)) return std::numeric_limits<S>::infinity();
  if (x < S(1)) return std::numeric_limits<S>::quiet_NaN();
  if (q <= S(0)) {
    if (q == std::floor(q)) return std::numeric_limits<S>::infinity();
    if (x != std::floor(x)) return std::numeric_limits<S>::quiet_NaN();
  }
  S s = std::pow(q, -x), a = q, b = S(0);
  int i = 0;
  while (i < 9 || a <= S(9)) {
    ++i;
    a += S(1);
    b = std::pow(a, -x);
    s += b;
    if (std::abs(b / s) < kMachEp) return s;
  }
  const S w = a;
  s += b * w / (x - S(1));
  s -= S(0.5) * b;
  a = S(1);
  S k = S(0);
  for (int j = 0; j < 12; ++j) {
    a *= x + k;
    b /= w;
    const S t = a * b / kA[j];
    s += t;
    if (std::abs(t / s) < kMachEp) return s;
    k += S(1);
    a *= x + k;
    b /= w;
    k += S(1);
  }
  return s;
}

// The n-th derivative of psi: digamma, trigamma, then (-1)^(n+1) n! zeta(n + 1, x) (ATen's).
template <typename S>
S polygamma_value(int64_t n, S x) {
  if (n == 0) return digamma_value(x);
  if (n == 1) return trigamma_value(x);
  const S factorial = std::exp(std::lgamma(static_cast<S>(n) + S(1)));
  return (n % 2 ? S(1) : S(-1)) * factorial * zeta_value(static_cast<S>(n + 1), x);
}

// erfcx(x) = exp(x^2) erfc(x), in double: directly below 26 (where neither factor leaves the
// range of a double), then its asymptotic series 1 / (x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k.
inline double erfcx_value(double x) {
  if (std::isnan(x)) return x;
  if (x < 26.0) return std::exp(x * x) * std::erfc(x);
  if (std::isinf(x)) return 0.0;
  const double inv = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 12; ++k) {
    term *= -(2.0 * k - 1.0) * inv;
    sum += term;
  }
  return sum / (x * 1.7724538509055160273);
}

// ndtri(p): the x with Phi(x) = p (the standard normal CDF), in double: Abramowitz-Stegun
// 26.2.23 as the first guess, then Newton steps on Phi computed from erfc (accurate in the
// lower tail; the upper half is -ndtri(1 - p), exact in double for p >= 1/2).
inline double ndtri_value(double p) {
  if (std::isnan(p) || p < 0.0 || p > 1.0) return std::numeric_limits<double>::quiet_NaN();
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  const bool upper = p > 0.5;
  const double q = upper ? 1.0 - p : p;
  const double t = std::sqrt(-2.0 * std::log(q));
  double x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                       (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t));
  for (int i = 0; i < 8; ++i) {
    const double cdf = 0.5 * std::erfc(-x * 0.70710678118654752440);
    const double pdf = 0.39894228040143267794 * std::exp(-0.5 * x * x);
    const double step = (cdf - q) / pdf;
    x -= step;
    if (std::abs(step) <= 1e-16 * std::abs(x)) break;
  }
  return upper ? -x : x;
}

}  // namespace pteron::special
