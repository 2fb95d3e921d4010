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
// copy in scratch memory (the heap when scratch is short); self and out may have any strides. Only
// in the optimized library: KISS FFT is a host library, so firmware and portable-only programs
// refuse FFTs at compile time.
#include <kissfft/kiss_fft.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/portable/util/broadcast.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

enum class Norm { kNone = 0, kByRootN = 1, kByN = 2 };

// Row-major complex buffer over `sizes` (scratch memory, or the heap when scratch is short).
struct Work {
  kiss_fft_cpx* data = nullptr;
  std::vector<kiss_fft_cpx> heap;
  int64_t numel = 1;
  int32_t sizes[kMaxTensorDim] = {};
  int32_t dim = 0;

  bool allocate(KernelContext& ctx, const int32_t* s, int32_t d) {
    dim = d;
    numel = 1;
    for (int32_t i = 0; i < d; ++i) {
      sizes[i] = s[i];
      numel *= s[i];
    }
    data = static_cast<kiss_fft_cpx*>(
        ctx.allocate_scratch(static_cast<size_t>(numel) * sizeof(kiss_fft_cpx), 64));
    if (data == nullptr) {
      heap.resize(static_cast<size_t>(numel));
      data = heap.data();
    }
    return true;
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

// Transforms every line of `w` along dim d (length n) in place.
Error transform_dim(KernelContext& ctx, Work& w, int32_t d, bool inverse) {
  const int64_t n = w.sizes[d];
  if (n <= 1 || w.numel == 0) return Error::Ok;
  size_t cfg_bytes = 0;
  kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, nullptr, &cfg_bytes);
  std::vector<char> cfg_heap;
  void* cfg_mem = ctx.allocate_scratch(cfg_bytes, 64);
  if (cfg_mem == nullptr) {
    cfg_heap.resize(cfg_bytes);
    cfg_mem = cfg_heap.data();
  }
  kiss_fft_cfg cfg = kiss_fft_alloc(static_cast<int>(n), inverse ? 1 : 0, cfg_mem, &cfg_bytes);
  if (cfg == nullptr)
    return fail(Error::Internal, "fft: cannot plan a transform of %lld", (long long)n);
  std::vector<kiss_fft_cpx> line(static_cast<size_t>(n));
  const int64_t inner = w.stride(d), outer = w.numel / (n * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      kiss_fft_cpx* base = w.data + o * n * inner + i;
      kiss_fft_stride(cfg, base, line.data(), static_cast<int>(inner));
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[static_cast<size_t>(k)];
    }
  }
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
  w.allocate(ctx, self.sizes().data(), self.dim());
  const float* x = self.data<const float>();
  for_each_element(self, [&](int64_t i, int64_t off) { w.data[i] = {x[off], 0.0f}; });
  int64_t n = 1;
  for (int32_t i = 0; i < count; ++i) {
    PTERON_TRY(transform_dim(ctx, w, dims[i], false));
    n *= self.size(dims[i]);
  }
  const float scale = norm_scale(normalization, n);
  // Copy the kept bins (all, or the first half-plus-one of the last dim) into out.
  kiss_fft_cpx* y = out.data<kiss_fft_cpx>();
  const int64_t inner = w.stride(last), full = self.size(last), kept = sizes[last];
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
  // The given bins of the last dim; the others are filled below.
  Work w;
  w.allocate(ctx, sizes, self.dim());
  const kiss_fft_cpx* x = self.data<const kiss_fft_cpx>();
  const int64_t bins = last_size / 2 + 1, in_last = self.size(last);
  const int64_t inner = w.stride(last);
  for_each_element(self, [&](int64_t i, int64_t off) {
    const int64_t k = (i / inner) % in_last;
    if (k >= bins) return;
    const int64_t o = i / (inner * in_last), r = i % inner;
    w.data[(o * last_size + k) * inner + r] = x[off];
  });
  // The other dims' inverses first: each line along `last` then is the spectrum of a real
  // signal, whose bins n - k are the conjugates of bins k (the lines of unfilled bins transform
  // too, and are overwritten).
  for (int32_t i = 0; i + 1 < count; ++i) PTERON_TRY(transform_dim(ctx, w, dims[i], true));
  const int64_t outer = w.numel == 0 ? 0 : w.numel / (last_size * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = bins; k < last_size; ++k)
      for (int64_t r = 0; r < inner; ++r) {
        const kiss_fft_cpx v = w.data[(o * last_size + (last_size - k)) * inner + r];
        w.data[(o * last_size + k) * inner + r] = {v.r, -v.i};
      }
  PTERON_TRY(transform_dim(ctx, w, last, true));
  int64_t n = 1;
  for (int32_t i = 0; i < count; ++i) n *= sizes[dims[i]];
  const float scale = norm_scale(normalization, n);
  float* y = out.data<float>();
  for_each_element(out, [&](int64_t i, int64_t off) { y[off] = w.data[i].r * scale; });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_fft_r2c.out", fft_r2c_out, "TLIBT");
PTERON_KERNEL("aten::_fft_c2c.out", fft_c2c_out, "TLIBT");
PTERON_KERNEL("aten::_fft_c2r.out", fft_c2r_out, "TLIIT");

}  // namespace pteron::optimized
