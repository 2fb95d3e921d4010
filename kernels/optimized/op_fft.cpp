// aten::_fft_r2c.out(Tensor self, int[] dim, int normalization, bool onesided, *, Tensor(a!) out)
// aten::_fft_c2r.out(Tensor self, int[] dim, int normalization, SymInt last_dim_size, *,
//     Tensor(a!) out)
// aten::_fft_c2c.out(Tensor self, SymInt[] dim, int normalization, bool forward, *,
//     Tensor(a!) out)
//
// Discrete Fourier transforms over the dims `dim` (torch.fft.*, torch.stft / istft, spectrogram
// front ends) on KISS FFT (Debian's libkissfft, mixed radix, any length): float32 and complex64,
// as torch's definitions: forward e^(-2 pi i jk / n), normalization 0 none, 1 by 1/sqrt(n), 2 by
// 1/n (n the product of the signal sizes). r2c transforms the real input as complex and keeps
// the first n / 2 + 1 bins of the last dim when onesided; c2r completes the last dim's spectrum
// by Hermitian symmetry (the imaginary parts of its DC and Nyquist bins drop out, as in torch)
// and returns the real part. Each transform runs line by line over a row-major complex working
// copy in scratch memory (the heap when scratch is short); self and out may have any strides. A
// real last dim of even length (rfft, stft and irfft's usual n_fft) goes through KISS FFT's real
// transforms, which compute only the half spectrum: about half the work and half the copy. Only
// in the optimized library: KISS FFT is a host library, so firmware and portable-only programs
// refuse FFTs at compile time.
#include <kissfft/kiss_fft.h>
#include <kissfft/kiss_fftr.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

enum class Norm { kNone = 0, kByRootN = 1, kByN = 2 };

// `bytes` of scratch memory, or of `heap` when scratch is short.
void* scratch_or_heap(KernelContext& ctx, size_t bytes, std::vector<char>& heap) {
  void* p = ctx.allocate_scratch(bytes, 64);
  if (p != nullptr) return p;
  heap.resize(bytes);
  return heap.data();
}

// A complex KISS FFT plan for length n, in scratch or `heap`.
kiss_fft_cfg complex_plan(KernelContext& ctx, int64_t n, bool inverse, std::vector<char>& heap) {
  size_t bytes = 0;
  kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, &bytes);
  return kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, scratch_or_heap(ctx, bytes, heap),
                        &bytes);
}

// Row-major complex buffer over `sizes`.
struct Work {
  kiss_fft_cpx* data = nullptr;
  std::vector<char> heap;
  int64_t numel = 1;
  int32_t sizes[kMaxTensorDim] = {};
  int32_t dim = 0;

  void allocate(KernelContext& ctx, const int32_t* s, int32_t d) {
    dim = d;
    numel = 1;
    for (int32_t i = 0; i < d; ++i) {
      sizes[i] = s[i];
      numel *= s[i];
    }
    data = static_cast<kiss_fft_cpx*>(
        scratch_or_heap(ctx, static_cast<size_t>(numel) * sizeof(kiss_fft_cpx), heap));
  }
  int64_t stride(int32_t d) const {
    int64_t s = 1;
    for (int32_t i = d + 1; i < dim; ++i) s *= sizes[i];
    return s;
  }
};

// Calls f(row-major index, strided element offset) for every element of `t`.
template <typename F>
void for_each_element(const Tensor& t, F&& f) {
  int32_t idx[kMaxTensorDim] = {};
  int64_t offset = 0;
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    f(i, offset);
    for (int32_t d = t.dim() - 1; d >= 0; --d) {
      if (++idx[d] < t.size(d)) {
        offset += t.stride(d);
        break;
      }
      offset -= static_cast<int64_t>(t.stride(d)) * (t.size(d) - 1);
      idx[d] = 0;
    }
  }
}

// About the operations of one length-n transform, for opt::parallel_for.
int64_t line_work(int64_t n) {
  int64_t log2n = 1;
  while ((int64_t{1} << log2n) < n) ++log2n;
  return 5 * n * log2n;
}

// Transforms every line of `w` along dim d (length n) in place.
Error transform_dim(KernelContext& ctx, Work& w, int32_t d, bool inverse) {
  const int64_t n = w.sizes[d];
  if (n <= 1 || w.numel == 0) return Error::Ok;
  std::vector<char> plan_heap;
  const kiss_fft_cfg cfg = complex_plan(ctx, n, inverse, plan_heap);
  if (cfg == nullptr)
    return fail(Error::Internal, "fft: cannot plan a transform of %lld", (long long)n);
  const int64_t inner = w.stride(d), lines = w.numel / n;
  // A shared plan is safe across threads: kiss_fft_stride out of place only reads it.
  opt::parallel_for(lines, line_work(n), [&](int64_t begin, int64_t end) {
    std::vector<kiss_fft_cpx> line(static_cast<size_t>(n));
    for (int64_t l = begin; l < end; ++l) {
      kiss_fft_cpx* base = w.data + (l / inner) * n * inner + l % inner;
      kiss_fft_stride(cfg, base, line.data(), static_cast<int>(inner));
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[static_cast<size_t>(k)];
    }
  });
  return Error::Ok;
}

// Whether a real dim of length n goes through KISS FFT's real transforms (even lengths only).
bool real_path(int64_t n) { return n >= 2 && n % 2 == 0; }

// Calls body(cfg, l, line, spectrum) for every line l in [0, lines) of a real transform of even
// length n on the thread pool, with a plan and buffers (n floats, n / 2 + 1 bins) per chunk:
// kiss_fftr works in its plan's buffer, so chunks cannot share one.
template <typename Body>
Error for_each_real_line(int64_t n, bool inverse, int64_t lines, Body body) {
  std::atomic<bool> planned{true};
  opt::parallel_for(lines, line_work(n), [&](int64_t begin, int64_t end) {
    const kiss_fftr_cfg cfg =
        kiss_fftr_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, nullptr);
    if (cfg == nullptr) {
      planned = false;
      return;
    }
    std::vector<float> line(static_cast<size_t>(n));
    std::vector<kiss_fft_cpx> spectrum(static_cast<size_t>(n / 2 + 1));
    for (int64_t l = begin; l < end; ++l) body(cfg, l, line.data(), spectrum.data());
    kiss_fftr_free(cfg);
  });
  if (!planned)
    return fail(Error::Internal, "fft: cannot plan a real transform of %lld", (long long)n);
  return Error::Ok;
}

// Real forward transforms of every line of `self` along `last` (even length n) into `w`, whose
// dim `last` holds the n / 2 + 1 bins.
Error forward_real_lines(KernelContext& ctx, const Tensor& self, int32_t last, Work& w) {
  const int64_t n = self.size(last), bins = n / 2 + 1, inner = w.stride(last);
  std::vector<char> copy_heap;
  // self row-major, so that a line is `inner` apart whatever self's strides
  float* x = static_cast<float*>(
      scratch_or_heap(ctx, static_cast<size_t>(self.numel()) * sizeof(float), copy_heap));
  const float* src = self.data<const float>();
  for_each_element(self, [&](int64_t i, int64_t off) { x[i] = src[off]; });
  return for_each_real_line(n, false, self.numel() / n,
                            [&](kiss_fftr_cfg cfg, int64_t l, float* line, kiss_fft_cpx* spectrum) {
                              const int64_t o = l / inner, r = l % inner;
                              for (int64_t k = 0; k < n; ++k) line[k] = x[(o * n + k) * inner + r];
                              kiss_fftr(cfg, line, spectrum);
                              for (int64_t k = 0; k < bins; ++k)
                                w.data[(o * bins + k) * inner + r] = spectrum[k];
                            });
}

// Real inverse transforms of every line of `w` along `last` (n / 2 + 1 bins of a length-n
// signal, n even) into out, scaled.
Error inverse_real_lines(KernelContext& ctx, const Work& w, int32_t last, int64_t n, float scale,
                         Tensor& out) {
  const int64_t bins = n / 2 + 1, inner = w.stride(last);
  std::vector<char> copy_heap;
  // out row-major first, then to out's strides
  float* y = static_cast<float*>(
      scratch_or_heap(ctx, static_cast<size_t>(out.numel()) * sizeof(float), copy_heap));
  PTERON_TRY(
      for_each_real_line(n, true, out.numel() / n,
                         [&](kiss_fftr_cfg cfg, int64_t l, float* line, kiss_fft_cpx* spectrum) {
                           const int64_t o = l / inner, r = l % inner;
                           for (int64_t k = 0; k < bins; ++k)
                             spectrum[k] = w.data[(o * bins + k) * inner + r];
                           kiss_fftri(cfg, spectrum, line);
                           for (int64_t k = 0; k < n; ++k) y[(o * n + k) * inner + r] = line[k];
                         }));
  float* dst = out.data<float>();
  for_each_element(out, [&](int64_t i, int64_t off) { dst[off] = y[i] * scale; });
  return Error::Ok;
}

// The dims of `list` normalised to [0, rank), each once; fails on repeats or out-of-range dims.
Error read_dims(const char* op, const EValue& list, int32_t rank, int32_t* dims, int32_t* count) {
  const Span<const int64_t> v = list.int_list;
  PTERON_CHECK(!v.empty() && static_cast<int64_t>(v.size()) <= rank, Error::InvalidArgument,
               "%s: dim must name 1 to %d dims, got %zu", op, static_cast<int>(rank), v.size());
  *count = static_cast<int32_t>(v.size());
  for (int32_t i = 0; i < *count; ++i) {
    const int64_t d = v[i] < 0 ? v[i] + rank : v[i];
    PTERON_CHECK(d >= 0 && d < rank, Error::InvalidArgument, "%s: dim %lld out of range", op,
                 static_cast<long long>(v[i]));
    for (int32_t j = 0; j < i; ++j) {
      PTERON_CHECK(dims[j] != d, Error::InvalidArgument, "%s: dim %lld repeated", op,
                   static_cast<long long>(d));
    }
    dims[i] = static_cast<int32_t>(d);
  }
  return Error::Ok;
}

float norm_scale(int64_t normalization, int64_t n) {
  if (normalization == static_cast<int64_t>(Norm::kByRootN)) return 1.0f / std::sqrt(float(n));
  if (normalization == static_cast<int64_t>(Norm::kByN)) return 1.0f / float(n);
  return 1.0f;
}

Error check_common(const char* op, const Tensor& self, ScalarType in, const Tensor& out,
                   ScalarType want_out, int64_t normalization) {
  PTERON_CHECK(self.dtype() == in && out.dtype() == want_out, Error::NotSupported,
               "%s: dtypes %s -> %s not supported (%s -> %s)", op, scalar_type_name(self.dtype()),
               scalar_type_name(out.dtype()), scalar_type_name(in), scalar_type_name(want_out));
  PTERON_CHECK(normalization >= 0 && normalization <= 2, Error::InvalidArgument,
               "%s: normalization %lld not in 0 (none), 1 (by sqrt(n)), 2 (by n)", op,
               static_cast<long long>(normalization));
  return Error::Ok;
}

Error fft_r2c_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_fft_r2c.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t normalization = args[2]->i;
  const bool onesided = args[3]->b;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(
      check_common(kOp, self, ScalarType::Float, out, ScalarType::ComplexFloat, normalization));
  int32_t dims[kMaxTensorDim], count = 0;
  PTERON_TRY(read_dims(kOp, *args[1], self.dim(), dims, &count));
  const int32_t last = dims[count - 1];
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  if (onesided) sizes[last] = self.size(last) / 2 + 1;
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  Work w;
  int64_t n = 1;
  for (int32_t i = 0; i < count; ++i) n *= self.size(dims[i]);
  if (onesided && real_path(self.size(last))) {
    // The real transform of the last dim gives the kept bins; the other dims transform those.
    w.allocate(ctx, sizes, self.dim());
    if (w.numel > 0) PTERON_TRY(forward_real_lines(ctx, self, last, w));
    for (int32_t i = 0; i + 1 < count; ++i) PTERON_TRY(transform_dim(ctx, w, dims[i], false));
  } else {
    w.allocate(ctx, self.sizes().data(), self.dim());
    const float* x = self.data<const float>();
    for_each_element(self, [&](int64_t i, int64_t off) { w.data[i] = {x[off], 0.0f}; });
    for (int32_t i = 0; i < count; ++i) PTERON_TRY(transform_dim(ctx, w, dims[i], false));
  }
  const float scale = norm_scale(normalization, n);
  // Copy the kept bins (all, or the first half-plus-one of the last dim) into out.
  kiss_fft_cpx* y = out.data<kiss_fft_cpx>();
  const int64_t inner = w.stride(last), full = w.sizes[last], kept = sizes[last];
  for_each_element(out, [&](int64_t i, int64_t off) {
    const int64_t r = i % inner, k = (i / inner) % kept, o = i / (inner * kept);
    const kiss_fft_cpx v = w.data[(o * full + k) * inner + r];
    y[off] = {v.r * scale, v.i * scale};
  });
  return Error::Ok;
}

Error fft_c2c_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_fft_c2c.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t normalization = args[2]->i;
  const bool forward = args[3]->b;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(check_common(kOp, self, ScalarType::ComplexFloat, out, ScalarType::ComplexFloat,
                          normalization));
  int32_t dims[kMaxTensorDim], count = 0;
  PTERON_TRY(read_dims(kOp, *args[1], self.dim(), dims, &count));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  Work w;
  w.allocate(ctx, self.sizes().data(), self.dim());
  const kiss_fft_cpx* x = self.data<const kiss_fft_cpx>();
  for_each_element(self, [&](int64_t i, int64_t off) { w.data[i] = x[off]; });
  int64_t n = 1;
  for (int32_t i = 0; i < count; ++i) {
    PTERON_TRY(transform_dim(ctx, w, dims[i], !forward));
    n *= self.size(dims[i]);
  }
  const float scale = norm_scale(normalization, n);
  kiss_fft_cpx* y = out.data<kiss_fft_cpx>();
  for_each_element(
      out, [&](int64_t i, int64_t off) { y[off] = {w.data[i].r * scale, w.data[i].i * scale}; });
  return Error::Ok;
}

Error fft_c2r_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_fft_c2r.out";
  const Tensor& self = *args[0]->tensor;
  const int64_t normalization = args[2]->i;
  const int64_t last_size = args[3]->i;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(
      check_common(kOp, self, ScalarType::ComplexFloat, out, ScalarType::Float, normalization));
  int32_t dims[kMaxTensorDim], count = 0;
  PTERON_TRY(read_dims(kOp, *args[1], self.dim(), dims, &count));
  const int32_t last = dims[count - 1];
  PTERON_CHECK(last_size >= 1 && last_size <= INT32_MAX && self.size(last) >= last_size / 2 + 1,
               Error::InvalidArgument,
               "%s: last_dim_size %lld needs at least %lld bins along dim %d, got %d", kOp,
               static_cast<long long>(last_size), static_cast<long long>(last_size / 2 + 1),
               static_cast<int>(last), self.size(last));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  sizes[last] = static_cast<int32_t>(last_size);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, self.dim()));
  int64_t n = 1;
  for (int32_t i = 0; i < count; ++i) n *= sizes[dims[i]];
  const float scale = norm_scale(normalization, n);
  const int64_t bins = last_size / 2 + 1, in_last = self.size(last);
  const bool real_lines = real_path(last_size);
  // The given bins of the last dim (the real transform needs no others; the complex one's are
  // completed below).
  int32_t work_sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) work_sizes[d] = sizes[d];
  if (real_lines) work_sizes[last] = static_cast<int32_t>(bins);
  Work w;
  w.allocate(ctx, work_sizes, self.dim());
  if (w.numel == 0) return Error::Ok;
  // Zeros in the bins filled later, so that the other dims' transforms read no stale scratch.
  if (!real_lines) std::memset(w.data, 0, static_cast<size_t>(w.numel) * sizeof(kiss_fft_cpx));
  const kiss_fft_cpx* x = self.data<const kiss_fft_cpx>();
  const int64_t inner = w.stride(last), work_last = w.sizes[last];
  for_each_element(self, [&](int64_t i, int64_t off) {
    const int64_t k = (i / inner) % in_last;
    if (k >= bins) return;
    const int64_t o = i / (inner * in_last), r = i % inner;
    w.data[(o * work_last + k) * inner + r] = x[off];
  });
  // The other dims' inverses first: each line along `last` then is the spectrum of a real
  // signal, whose bins n - k are the conjugates of bins k.
  for (int32_t i = 0; i + 1 < count; ++i) PTERON_TRY(transform_dim(ctx, w, dims[i], true));
  if (real_lines) return inverse_real_lines(ctx, w, last, last_size, scale, out);
  const int64_t outer = w.numel / (last_size * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = bins; k < last_size; ++k)
      for (int64_t r = 0; r < inner; ++r) {
        const kiss_fft_cpx v = w.data[(o * last_size + (last_size - k)) * inner + r];
        w.data[(o * last_size + k) * inner + r] = {v.r, -v.i};
      }
  PTERON_TRY(transform_dim(ctx, w, last, true));
  float* y = out.data<float>();
  for_each_element(out, [&](int64_t i, int64_t off) { y[off] = w.data[i].r * scale; });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_fft_r2c.out", fft_r2c_out, "TLIBT");
PTERON_KERNEL("aten::_fft_c2c.out", fft_c2c_out, "TLIBT");
PTERON_KERNEL("aten::_fft_c2r.out", fft_c2r_out, "TLIIT");

}  // namespace pteron::optimized
