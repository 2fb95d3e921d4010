// Bessel functions for the torch.special kernels (op_special_bessel.cpp), in double, with the
// symmetries and limits torch gives at negative, zero, infinite and NaN arguments. J and Y of
// orders 0 and 1 by their power series (in long double: the terms cancel) up to 16 and Hankel's
// asymptotic expansion above (its error, about e^-2x, is below 1e-14 there); libstdc++'s
// std::cyl_bessel_j / std::cyl_neumann are off by up to 1e-7 between 3 and 30. I and K on
// std::cyl_bessel_i / std::cyl_bessel_k (within 1e-15 of torch), the scaled forms (i0e, i1e,
// e^x k0, e^x k1) by their asymptotic series where the unscaled values leave a double's range.
#pragma once

#include <cmath>
#include <limits>

namespace pteron::special {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;  // M_PI is POSIX, not in the bare-metal libc

// e^-x I_nu(x) (sign -1) or e^x K_nu(x) (sign +1) for large x > 0: sum over k of
// sign^k a_k(nu) / x^k, a_k(nu) = prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), times
// 1 / sqrt(2 pi x) or sqrt(pi / (2 x)).
inline double scaled_bessel_asymptotic(double nu, double x, double sign) {
  double term = 1.0, sum = 1.0;
  for (int k = 1; k < 16; ++k) {
    term *= sign * (4.0 * nu * nu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x);
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  const double scale = sign < 0 ? 1.0 / std::sqrt(2.0 * kPi * x) : std::sqrt(kPi / (2.0 * x));
  return sum * scale;
}

// Above this, I_nu overflows and K_nu underflows in double.
constexpr double kScaledSwitch = 700.0;

// Below this, J and Y of orders 0 and 1 come from their power series, above from Hankel's
// expansion.
constexpr double kHankelSwitch = 16.0;

// J_nu(x) and Y_nu(x) (nu 0 or 1) for 0 < x <= kHankelSwitch by their power series (Abramowitz
// and Stegun 9.1.10, 9.1.11 / 9.1.13): sum over k of (-x^2/4)^k / (k! (k + nu)!) with the
// digamma weights of Y's series.
inline void bessel_jy_series(int nu, double x, double* j, double* y) {
  using L = long double;
  const L half = static_cast<L>(x) / 2, q = -half * half;
  const L euler = 0.57721566490153286060651209L, pi = 3.14159265358979323846264338L;
  L term = nu == 0 ? L(1) : half;                         // (x/2)^nu (-x^2/4)^k / (k! (k + nu)!)
  L harmonic_k = 0, harmonic_kn = nu == 0 ? L(0) : L(1);  // H_k, H_(k+nu)
  L sum_j = 0, sum_y = 0;
  for (int k = 0; k < 80; ++k) {
    sum_j += term;
    sum_y += (harmonic_k + harmonic_kn) * term;
    const L next = term * q / (L(k + 1) * L(k + 1 + nu));
    if (k > 2 && std::abs(next) < 1e-22L * std::abs(sum_j) && std::abs(next) < 1e-22L) break;
    term = next;
    harmonic_k += L(1) / L(k + 1);
    harmonic_kn += L(1) / L(k + 1 + nu);
  }
  const L log_term = std::log(half) + euler;
  *j = static_cast<double>(sum_j);
  // Y0 = (2/pi)(ln(x/2) + gamma) J0 - (1/pi) sum (H_k + H_k) t_k; Y1 likewise, less 2/(pi x).
  L yv = (2 / pi) * log_term * sum_j - sum_y / pi;
  if (nu == 1) yv -= 2 / (pi * static_cast<L>(x));
  *y = static_cast<double>(yv);
}

// J_nu(x) and Y_nu(x) (nu 0 or 1) for x > kHankelSwitch: sqrt(2 / (pi x)) (P cos chi -+ Q sin
// chi), chi = x - (nu / 2 + 1 / 4) pi, expanding cos chi and sin chi so that no rounding of x -
// chi's offset enters.
inline void bessel_jy_hankel(int nu, double x, double* j, double* y) {
  const double mu = 4.0 * nu * nu;
  double term = 1.0, p = 1.0, q = 0.0;
  for (int k = 1; k < 40; ++k) {
    const double next = term * (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (k * 8.0 * x);
    if (std::abs(next) > std::abs(term) || std::abs(next) < 1e-18) break;
    term = next;
    // a_k enters P (even k) or Q (odd k), with signs + - + - in each.
    const double sign = (k / 2) % 2 == 0 ? 1.0 : -1.0;
    (k % 2 == 0 ? p : q) += sign * term;
  }
  const double s = std::sin(x), c = std::cos(x), r = 0.70710678118654752440;
  // nu 0: chi = x - pi/4; nu 1: chi = x - 3 pi/4.
  const double cos_chi = nu == 0 ? (c + s) * r : (s - c) * r;
  const double sin_chi = nu == 0 ? (s - c) * r : -(s + c) * r;
  const double scale = std::sqrt(2.0 / (kPi * x));
  *j = scale * (p * cos_chi - q * sin_chi);
  *y = scale * (p * sin_chi + q * cos_chi);
}

inline void bessel_jy(int nu, double x, double* j, double* y) {
  if (x <= kHankelSwitch)
    bessel_jy_series(nu, x, j, y);
  else
    bessel_jy_hankel(nu, x, j, y);
}

// J_nu (nu 0 or 1): even / odd in x; NaN at +-inf, as torch (its Cephes form multiplies a
// series in 1/x by a sine).
inline double bessel_j(int nu, double x) {
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (x == 0) return nu == 0 ? 1.0 : x;
  double j, y;
  bessel_jy(nu, std::abs(x), &j, &y);
  return nu == 1 && x < 0 ? -j : j;
}

// Y_nu: NaN below 0 and at inf (as torch), -inf at 0.
inline double bessel_y(int nu, double x) {
  if (std::isnan(x) || x < 0 || std::isinf(x)) return kNaN;
  if (x == 0) return -kInf;
  double j, y;
  bessel_jy(nu, x, &j, &y);
  return y;
}

// I_nu, or e^-|x| I_nu(x) when scaled: even / odd in x. Unscaled at +-inf: NaN, as torch
// (its Cephes form multiplies exp(x) by a series in 1/x).
inline double bessel_i(int nu, double x, bool scaled) {
  if (std::isnan(x)) return x;
  const double a = std::abs(x);
  double v;
  if (std::isinf(a)) {
    if (!scaled) return kNaN;
    v = 0.0;
  } else if (scaled && a > kScaledSwitch) {
    v = scaled_bessel_asymptotic(nu, a, -1.0);
  } else {
    v = std::cyl_bessel_i(static_cast<double>(nu), a);
    if (scaled) v *= std::exp(-a);
  }
  return nu == 1 && x < 0 ? -v : v;
}

// K_nu, or e^x K_nu(x) when scaled: NaN below 0, inf at 0.
inline double bessel_k(int nu, double x, bool scaled) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (scaled && x > kScaledSwitch) return scaled_bessel_asymptotic(nu, x, 1.0);
  const double v = std::cyl_bessel_k(static_cast<double>(nu), x);
  return scaled ? v * std::exp(x) : v;
}

}  // namespace pteron::special
