#include "kernels/portable/util/upsample.h"

#include <limits>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/strided_copy.h"

namespace pteron {
namespace {

Error check_sizes(const char* op, const Tensor& self, UpsampleShape* s) {
  for (int32_t d = 0; d < s->k; ++d) {
    if (s->in[d] <= 0 || s->out[d] <= 0 || s->out[d] > INT32_MAX) {
      return fail(Error::InvalidArgument,
                  "%s: input and output sizes should be greater than 0 (spatial dim %d: input "
                  "%lld, output %lld)",
                  op, d, static_cast<long long>(s->in[d]), static_cast<long long>(s->out[d]));
    }
  }
  (void)self;
  return Error::Ok;
}

Error check_rank(const char* op, const Tensor& self, int32_t k, UpsampleShape* s) {
  if (self.dim() != k + 2) {
    return fail(Error::InvalidArgument, "%s: expected a %dD input, got %dD", op, k + 2, self.dim());
  }
  s->k = k;
  for (int32_t d = 0; d < k; ++d) s->in[d] = self.size(2 + d);
  return Error::Ok;
}

}  // namespace

Error upsample_shape_vec(const char* op, const Tensor& self, int32_t k, const EValue& output_size,
                         const EValue& scale_factors, UpsampleShape* s) {
  PTERON_TRY(check_rank(op, self, k, s));
  const bool has_size = !output_size.is_none(), has_scales = !scale_factors.is_none();
  if (has_size == has_scales) {
    return fail(Error::InvalidArgument,
                "%s: must specify exactly one of output_size and scale_factors", op);
  }
  if (has_size) {
    if (output_size.tag != Tag::IntList || output_size.int_list.size() != static_cast<size_t>(k)) {
      return fail(Error::InvalidArgument, "%s: output_size must be a list of %d ints", op, k);
    }
    for (int32_t d = 0; d < k; ++d) s->out[d] = output_size.int_list[d];
  } else {
    if (scale_factors.tag != Tag::DoubleList ||
        scale_factors.double_list.size() != static_cast<size_t>(k)) {
      return fail(Error::InvalidArgument, "%s: scale_factors must be a list of %d floats", op, k);
    }
    for (int32_t d = 0; d < k; ++d) {
      const double f = scale_factors.double_list[d];
      const double o = static_cast<double>(s->in[d]) * f;
      if (!(f > 0) || !(o < 2147483648.0)) {
        return fail(Error::InvalidArgument, "%s: invalid scale factor %g for spatial dim %d", op, f,
                    d);
      }
      s->out[d] = static_cast<int64_t>(o);
      s->scale[d] = f;
      s->has_scale[d] = true;
    }
  }
  return check_sizes(op, self, s);
}

Error upsample_shape_out(const char* op, const Tensor& self, int32_t k, const EValue& output_size,
                         EValue* const* scales, UpsampleShape* s) {
  PTERON_TRY(check_rank(op, self, k, s));
  if (output_size.tag != Tag::IntList || output_size.int_list.size() != static_cast<size_t>(k)) {
    return fail(Error::InvalidArgument, "%s: output_size must be a list of %d ints", op, k);
  }
  for (int32_t d = 0; d < k; ++d) {
    s->out[d] = output_size.int_list[d];
    const EValue& v = *scales[d];
    if (v.is_none()) continue;
    if (v.tag != Tag::Double) {
      return fail(Error::InvalidProgram, "%s: scale for spatial dim %d must be a float or None", op,
                  d);
    }
    // ATen ignores scales <= 0 (and NaN); a tiny positive one would put source positions
    // beyond any index.
    if (v.d > 0 && v.d < 1.0 / 2147483648.0) {
      return fail(Error::InvalidArgument, "%s: scale %g for spatial dim %d is out of range", op,
                  v.d, d);
    }
    s->scale[d] = v.d;
    s->has_scale[d] = true;
  }
  return check_sizes(op, self, s);
}

Error upsample_check_out(const char* op, const Tensor& self, Tensor& out, const UpsampleShape& s) {
  PTERON_TRY(expect_dtype(op, out, self.dtype(), "out"));
  int32_t sizes[kMaxUpsampleDims + 2];
  sizes[0] = self.size(0);
  sizes[1] = self.size(1);
  for (int32_t d = 0; d < s.k; ++d) sizes[2 + d] = static_cast<int32_t>(s.out[d]);
  return expect_out_shape(op, out, sizes, s.k + 2);
}

}  // namespace pteron

namespace pteron {
namespace {

// Walks every (n, c, out spatial...) index; fn(out_offset, self_plane_offset, o) where o holds
// the output spatial index of the first k-1 dims and the innermost index runs inside fn.
template <typename Fn>
void for_each_output_row(const Tensor& self, const Tensor& out, const UpsampleShape& s, Fn&& fn) {
  const int32_t k = s.k;
  int64_t o[kMaxUpsampleDims] = {};
  for (int64_t n = 0; n < out.size(0); ++n) {
    for (int64_t c = 0; c < out.size(1); ++c) {
      const int64_t plane_out = n * out.stride(0) + c * out.stride(1);
      const int64_t plane_in = n * self.stride(0) + c * self.stride(1);
      for (int32_t d = 0; d < k; ++d) o[d] = 0;
      while (true) {
        int64_t off = plane_out;
        for (int32_t d = 0; d + 1 < k; ++d) off += o[d] * out.stride(2 + d);
        fn(off, plane_in, o);
        int32_t d = k - 2;
        for (; d >= 0; --d) {
          if (++o[d] < s.out[d]) break;
          o[d] = 0;
        }
        if (d < 0) break;
      }
    }
  }
}

template <typename W>
void nearest_words(const Tensor& self, Tensor& out, const UpsampleShape& s, bool exact) {
  const W* x = static_cast<const W*>(self.const_data());
  W* y = static_cast<W*>(out.mutable_data());
  const int32_t k = s.k, last = k - 1;
  float scale[kMaxUpsampleDims];
  for (int32_t d = 0; d < k; ++d) scale[d] = upsample_scale<float>(s, d);
  const int64_t ys = out.stride(2 + last), xs = self.stride(2 + last);
  for_each_output_row(self, out, s, [&](int64_t yoff, int64_t xoff, const int64_t* o) {
    for (int32_t d = 0; d < last; ++d) {
      xoff += upsample_nearest_index(o[d], s.in[d], s.out[d], scale[d], exact) * self.stride(2 + d);
    }
    for (int64_t j = 0; j < s.out[last]; ++j) {
      y[yoff + j * ys] =
          x[xoff + upsample_nearest_index(j, s.in[last], s.out[last], scale[last], exact) * xs];
    }
  });
}

template <typename S, int N>
struct Taps {
  int64_t idx[N];
  S w[N];
};

template <typename S>
Taps<S, 2> linear_taps(int64_t dst, int64_t in, int64_t out, S scale, bool align_corners) {
  const LinearTaps<S> t = upsample_linear_taps<S>(dst, in, out, scale, align_corners);
  return {{t.i0, t.i1}, {t.w0, t.w1}};
}

template <typename S>
Taps<S, 4> cubic_taps(int64_t dst, int64_t in, S scale, bool align_corners) {
  const CubicTaps<S> t = upsample_cubic_taps<S>(dst, in, scale, align_corners);
  Taps<S, 4> r;
  for (int j = 0; j < 4; ++j) {
    r.idx[j] = t.idx[j];
    r.w[j] = t.w[j];
  }
  return r;
}

// sum_j w_j * interp(inner dims at tap j), outermost dim first, as ATen's Interpolate<n>.
template <typename T, typename S, int N, int K>
S interpolate(const T* x, const Taps<S, N>* taps, const int64_t* strides) {
  if constexpr (K == 0) {
    return static_cast<S>(load_value(*x));
  } else {
    S acc = interpolate<T, S, N, K - 1>(x + taps[0].idx[0] * strides[0], taps + 1, strides + 1) *
            taps[0].w[0];
    for (int j = 1; j < N; ++j) {
      acc += interpolate<T, S, N, K - 1>(x + taps[0].idx[j] * strides[0], taps + 1, strides + 1) *
             taps[0].w[j];
    }
    if constexpr (std::is_integral_v<T> && K == 1) {
      // ATen resizes integers one dim at a time (innermost first), storing each pass.
      return static_cast<S>(store_interpolated<T, S>(acc));
    }
    return acc;
  }
}

template <typename T, int N, int K>
void interp_typed(const Tensor& self, Tensor& out, const UpsampleShape& s, bool align_corners) {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* x = self.data<const T>();
  T* y = out.data<T>();
  constexpr int32_t k = K, last = K - 1;
  S scale[kMaxUpsampleDims];
  for (int32_t d = 0; d < k; ++d) scale[d] = upsample_area_scale<S>(s, d, align_corners);
  int64_t xstr[kMaxUpsampleDims];
  for (int32_t d = 0; d < k; ++d) xstr[d] = self.stride(2 + d);
  auto taps_for = [&](int32_t d, int64_t o) {
    if constexpr (N == 2) {
      return linear_taps<S>(o, s.in[d], s.out[d], scale[d], align_corners);
    } else {
      return cubic_taps<S>(o, s.in[d], scale[d], align_corners);
    }
  };
  const int64_t ys = out.stride(2 + last);
  for_each_output_row(self, out, s, [&](int64_t yoff, int64_t xoff, const int64_t* o) {
    Taps<S, N> taps[kMaxUpsampleDims];
    for (int32_t d = 0; d < last; ++d) taps[d] = taps_for(d, o[d]);
    for (int64_t j = 0; j < s.out[last]; ++j) {
      taps[last] = taps_for(last, j);
      y[yoff + j * ys] = store_interpolated<T, S>(interpolate<T, S, N, K>(x + xoff, taps, xstr));
    }
  });
}

}  // namespace

void upsample_nearest_run(const Tensor& self, Tensor& out, const UpsampleShape& s, bool exact) {
  if (out.numel() == 0) return;
  switch (self.element_size()) {
    case 1:
      return nearest_words<uint8_t>(self, out, s, exact);
    case 2:
      return nearest_words<uint16_t>(self, out, s, exact);
    case 4:
      return nearest_words<uint32_t>(self, out, s, exact);
    default:
      return nearest_words<uint64_t>(self, out, s, exact);
  }
}

Error upsample_interp_run(const char* op, const Tensor& self, Tensor& out, const UpsampleShape& s,
                          bool align_corners, UpsampleInterp mode) {
  if (!is_floating(self.dtype()) && self.dtype() != ScalarType::Byte) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point or uint8)", op,
                scalar_type_name(self.dtype()));
  }
  if (out.numel() == 0) return Error::Ok;
  dispatch_dtype_in<kFloatTypes | kIntTypes>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, uint8_t> || !std::is_integral_v<T>) {
      if (mode == UpsampleInterp::Linear) {
        if (s.k == 1) interp_typed<T, 2, 1>(self, out, s, align_corners);
        if (s.k == 2) interp_typed<T, 2, 2>(self, out, s, align_corners);
        if (s.k == 3) interp_typed<T, 2, 3>(self, out, s, align_corners);
      } else {
        if (s.k == 1) interp_typed<T, 4, 1>(self, out, s, align_corners);
        if (s.k == 2) interp_typed<T, 4, 2>(self, out, s, align_corners);
      }
    }
  });
  return Error::Ok;
}

}  // namespace pteron
