// Orthogonal decompositions for the linalg kernels (op_linalg_qr.cpp, op_linalg_eigh.cpp,
// op_linalg_svd.cpp): Householder QR as LAPACK's geqr2 + org2r (so Q and R equal torch's, which
// calls LAPACK, to rounding, signs included), the symmetric eigen-decomposition by cyclic Jacobi
// rotations and the SVD by one-sided (Hestenes) Jacobi. Jacobi rather than LAPACK's syevd /
// gesdd: a few dozen lines, accurate to the working precision, and fast enough for the small
// matrices models carry (poses, covariances, whitening); eigenvector and singular vector signs
// are as arbitrary as LAPACK's. Each works in the matrices' own dtype (float or double, as
// LAPACK's s/d routines) through strided views; sweeps are bounded, so NaN or Inf never hangs.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/portable/util/linalg.h"

namespace pteron::linalg {

// Sweeps a Jacobi iteration may take; both converge (quadratically) in well under 20 for
// finite input, the bound only stops a NaN / Inf from cycling.
constexpr int kMaxJacobiSweeps = 100;

// The 2-norm of n values `stride` apart, scaled by the largest magnitude so that it neither
// overflows nor underflows (as BLAS's nrm2).
template <typename T>
T norm2(const T* x, int64_t n, int64_t stride) {
  T scale = 0;
  for (int64_t i = 0; i < n; ++i) scale = std::fmax(scale, std::abs(x[i * stride]));
  if (scale == T(0) || !std::isfinite(scale)) return scale;
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i * stride] / scale;
    sum += v * v;
  }
  return scale * std::sqrt(sum);
}

// LAPACK's larfg: the elementary reflector H = I - tau v v^T (v[0] = 1, v[1:] overwriting x, n - 1
// values `stride` apart) with H [alpha; x] = [beta; 0], beta = -sign(alpha) |[alpha; x]| written
// to alpha. Returns tau (0: H is the identity, x already zero).
template <typename T>
T householder(T& alpha, T* x, int64_t n, int64_t stride) {
  if (n <= 1) return T(0);
  const T xnorm = norm2(x, n - 1, stride);
  if (xnorm == T(0)) return T(0);
  const T beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
  const T tau = (beta - alpha) / beta;
  const T scale = T(1) / (alpha - beta);
  for (int64_t i = 0; i < n - 1; ++i) x[i * stride] *= scale;
  alpha = beta;
  return tau;
}

// LAPACK's larf from the left: C = H C for H = I - tau v v^T, C rows r0.. m - 1 and columns
// c0.. n - 1 of `a`, v column `vc` of `a` from row r0 with v[0] taken as 1.
template <typename T>
void apply_householder(MatrixRef<T> a, int64_t vc, T tau, int64_t r0, int64_t m, int64_t c0,
                       int64_t n) {
  if (tau == T(0)) return;
  auto at = [&](int64_t i, int64_t j) -> T& { return a.data[i * a.rs + j * a.cs]; };
  for (int64_t c = c0; c < n; ++c) {
    T w = at(r0, c);
    for (int64_t i = r0 + 1; i < m; ++i) w += at(i, vc) * at(i, c);
    w *= tau;
    at(r0, c) -= w;
    for (int64_t i = r0 + 1; i < m; ++i) at(i, c) -= w * at(i, vc);
  }
}

// LAPACK's geqr2: the m x n `a` in place as R on and above its diagonal and the Householder
// vectors of Q = H(0) H(1) ... H(k-1) below it, their k = min(m, n) factors in tau.
template <typename T>
void qr_factor(MatrixRef<T> a, int64_t m, int64_t n, T* tau) {
  const int64_t k = m < n ? m : n;
  for (int64_t i = 0; i < k; ++i) {
    T* diag = a.data + i * a.rs + i * a.cs;
    tau[i] = householder(*diag, diag + a.rs, m - i, a.rs);
    if (i + 1 < n) {
      const T d = *diag;
      *diag = T(1);
      apply_householder(a, i, tau[i], i, m, i + 1, n);
      *diag = d;
    }
  }
}

// LAPACK's org2r: overwrites the m x n `a` (n <= m), holding the k Householder vectors of
// qr_factor in its first k columns, with the first n columns of Q = H(0) ... H(k-1), applying the
// reflectors last to first to the identity's columns.
template <typename T>
void qr_form_q(MatrixRef<T> a, int64_t m, int64_t n, int64_t k, const T* tau) {
  auto at = [&](int64_t i, int64_t j) -> T& { return a.data[i * a.rs + j * a.cs]; };
  for (int64_t j = k; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) at(i, j) = i == j ? T(1) : T(0);
  for (int64_t i = k - 1; i >= 0; --i) {
    if (i + 1 < n) {
      at(i, i) = T(1);
      apply_householder(a, i, tau[i], i, m, i + 1, n);
    }
    for (int64_t r = i + 1; r < m; ++r) at(r, i) *= -tau[i];
    at(i, i) = T(1) - tau[i];
    for (int64_t r = 0; r < i; ++r) at(r, i) = T(0);
  }
}

// Fills columns `from`.. `to` - 1 of the m x `to` matrix `q`, whose first `from` columns are
// orthonormal, with further orthonormal columns: for each, the identity's column least in the
// span of those before it (e_i with the smallest sum over them of q(i, c)^2, so at least
// 1 / sqrt(m) of it remains), orthogonalised against them twice (modified Gram-Schmidt) and
// normalised.
template <typename T>
void complete_orthonormal(MatrixRef<T> q, int64_t m, int64_t from, int64_t to) {
  auto at = [&](int64_t i, int64_t j) -> T& { return q.data[i * q.rs + j * q.cs]; };
  for (int64_t j = from; j < to; ++j) {
    int64_t e = 0;
    T least = std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < m; ++i) {
      T in_span = 0;
      for (int64_t c = 0; c < j; ++c) in_span += at(i, c) * at(i, c);
      if (in_span < least) {
        least = in_span;
        e = i;
      }
    }
    for (int64_t i = 0; i < m; ++i) at(i, j) = i == e ? T(1) : T(0);
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t c = 0; c < j; ++c) {
        T dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += at(i, c) * at(i, j);
        for (int64_t i = 0; i < m; ++i) at(i, j) -= dot * at(i, c);
      }
    }
    const T norm = norm2(&at(0, j), m, q.rs);
    for (int64_t i = 0; i < m; ++i) at(i, j) /= norm;
  }
}

// Whether all m x n entries are finite.
template <typename T>
bool all_finite(MatrixRef<const T> a, int64_t m, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      if (!std::isfinite(a.data[i * a.rs + j * a.cs])) return false;
  return true;
}

// Columns p and q of a matrix of `rows` rows (element (i, j) is at(i, j)) turned by the rotation
// (c, s): x_p <- c x_p - s x_q, x_q <- s x_p + c x_q. Eigenvectors and both SVD factors turn so.
template <typename T, typename At>
void rotate_columns(At at, int64_t rows, int64_t p, int64_t q, T c, T s) {
  for (int64_t i = 0; i < rows; ++i) {
    const T xp = at(i, p), xq = at(i, q);
    at(i, p) = c * xp - s * xq;
    at(i, q) = s * xp + c * xq;
  }
}

// (c, s) of the Jacobi rotation [c s; -s c] that zeroes the off-diagonal of the symmetric 2 x 2
// [app apq; apq aqq] (Rutishauser's formulas: t = tan, the smaller of the two angles).
template <typename T>
void jacobi_rotation(T app, T aqq, T apq, T& c, T& s) {
  const T theta = (aqq - app) / (T(2) * apq);
  const T t = std::copysign(T(1), theta) / (std::abs(theta) + std::hypot(T(1), theta));
  c = T(1) / std::hypot(T(1), t);
  s = t * c;
}

// Eigenvalues (ascending, into w) and, when v is not null, orthonormal eigenvectors (v's
// columns, n x n) of the symmetric n x n matrix given by the lower triangle of `a` (pass a
// transposed view for the upper one), by cyclic Jacobi rotations on `work` (n * n values).
// `order` is n indices of scratch. An off-diagonal entry is negligible below eps times the
// geometric mean of its diagonal pair (Demmel and Veselic's criterion, which keeps small
// eigenvalues' relative accuracy) or eps^2 |A|; the sweeps stop when one finds all negligible.
template <typename T>
void symmetric_eigen(MatrixRef<const T> a, int64_t n, T* w, MatrixRef<T> v, bool vectors, T* work,
                     int64_t* order) {
  auto A = [&](int64_t i, int64_t j) -> T& { return work[i * n + j]; };
  auto V = [&](int64_t i, int64_t j) -> T& { return v.data[i * v.rs + j * v.cs]; };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) A(i, j) = A(j, i) = a.data[i * a.rs + j * a.cs];
  if (vectors)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) V(i, j) = i == j ? T(1) : T(0);
  const T eps = std::numeric_limits<T>::epsilon();
  const T floor = eps * eps * norm2(work, n * n, 1);
  for (int sweep = 0; sweep < kMaxJacobiSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        const T apq = A(p, q);
        if (!(std::abs(apq) > floor) ||
            !(std::abs(apq) > eps * std::sqrt(std::abs(A(p, p))) * std::sqrt(std::abs(A(q, q))))) {
          A(p, q) = A(q, p) = T(0);
          continue;
        }
        rotated = true;
        T c, s;
        jacobi_rotation(A(p, p), A(q, q), apq, c, s);
        const T t = s / c;
        A(p, p) -= t * apq;
        A(q, q) += t * apq;
        A(p, q) = A(q, p) = T(0);
        for (int64_t r = 0; r < n; ++r) {
          if (r == p || r == q) continue;
          const T arp = A(r, p), arq = A(r, q);
          A(r, p) = A(p, r) = c * arp - s * arq;
          A(r, q) = A(q, r) = s * arp + c * arq;
        }
        if (vectors) rotate_columns(V, n, p, q, c, s);
      }
    }
    if (!rotated) break;
  }
  // Ascending (a stable insertion sort: n is small), the vectors permuted with them through
  // `work`, free now.
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = i; j > 0 && A(order[j], order[j]) < A(order[j - 1], order[j - 1]); --j)
      std::swap(order[j], order[j - 1]);
  for (int64_t i = 0; i < n; ++i) w[i] = A(order[i], order[i]);
  if (!vectors) return;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) work[i * n + j] = V(i, order[j]);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) V(i, j) = work[i * n + j];
}

// The SVD A = L diag(s) R^T of the m x n `a`, m >= n, by one-sided Jacobi: rotations of pairs of
// columns of W = A (`work`, m * n values, column-major) and of R = I until every pair is
// orthogonal (|w_p . w_q| <= sqrt(m) eps |w_p| |w_q|); s_j = |w_j| sorted descending and, when
// `vectors`, L's first n columns w_j / s_j (and R's columns permuted with them). L has `lcols`
// (n or m) columns: those past n, and those of negligible singular values (below eps m s_0,
// whose w_j is mostly rounding), are completed to an orthonormal basis. `norms` is n values and
// `order` n indices of scratch.
template <typename T>
void jacobi_svd(MatrixRef<const T> a, int64_t m, int64_t n, T* s, bool vectors, MatrixRef<T> l,
                int64_t lcols, MatrixRef<T> r, T* work, T* norms, int64_t* order) {
  auto W = [&](int64_t i, int64_t j) -> T& { return work[j * m + i]; };
  auto R = [&](int64_t i, int64_t j) -> T& { return r.data[i * r.rs + j * r.cs]; };
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) W(i, j) = a.data[i * a.rs + j * a.cs];
  if (vectors)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) R(i, j) = i == j ? T(1) : T(0);
  const T eps = std::numeric_limits<T>::epsilon();
  // LAPACK's gesvj threshold: the computed cosine of two columns carries about sqrt(m) eps of
  // rounding, so a smaller one would only rotate noise.
  const T tol = eps * std::sqrt(static_cast<T>(m > 1 ? m : 1));
  for (int sweep = 0; sweep < kMaxJacobiSweeps; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p + 1 < n; ++p) {
      for (int64_t q = p + 1; q < n; ++q) {
        // Norms through norm2 (scaled) so that huge or tiny columns neither overflow nor vanish.
        const T np = norm2(&W(0, p), m, 1), nq = norm2(&W(0, q), m, 1);
        if (np == T(0) || nq == T(0)) continue;
        T gamma = 0;
        for (int64_t i = 0; i < m; ++i) gamma += (W(i, p) / np) * (W(i, q) / nq);
        if (!(std::abs(gamma) > tol)) continue;
        rotated = true;
        // The rotation diagonalising [np^2 g; g nq^2] (g = gamma np nq), the columns' Gram matrix.
        T c, sn;
        jacobi_rotation(np * np, nq * nq, gamma * np * nq, c, sn);
        rotate_columns(W, m, p, q, c, sn);
        if (vectors) rotate_columns(R, n, p, q, c, sn);
      }
    }
    if (!rotated) break;
  }
  for (int64_t j = 0; j < n; ++j) {
    norms[j] = norm2(&W(0, j), m, 1);
    order[j] = j;
  }
  for (int64_t i = 1; i < n; ++i)
    for (int64_t j = i; j > 0 && norms[order[j]] > norms[order[j - 1]]; --j)
      std::swap(order[j], order[j - 1]);
  for (int64_t j = 0; j < n; ++j) s[j] = norms[order[j]];
  if (!vectors) return;
  auto L = [&](int64_t i, int64_t j) -> T& { return l.data[i * l.rs + j * l.cs]; };
  const T negligible = n > 0 ? eps * static_cast<T>(m) * s[0] : T(0);
  int64_t rank = 0;
  while (rank < n && s[rank] > negligible) {
    for (int64_t i = 0; i < m; ++i) L(i, rank) = W(i, order[rank]) / s[rank];
    ++rank;
  }
  complete_orthonormal(l, m, rank, lcols);
  // R's columns permuted as s, through `work` (W is spent; n * n <= m * n values).
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) work[i * n + j] = R(i, order[j]);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) R(i, j) = work[i * n + j];
}

}  // namespace pteron::linalg
