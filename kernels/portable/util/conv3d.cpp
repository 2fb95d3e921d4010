#include "kernels/portable/util/conv3d.h"

#include <type_traits>

#include "kernels/portable/util/dtype.h"

namespace pteron {
namespace {

// Integer convolutions accumulate in the unsigned type: torch's int64 convolution wraps on
// overflow, and signed overflow would be undefined behaviour on values from a file.
template <typename T, bool = std::is_integral_v<T>>
struct ConvAcc {
  using type = typename ComputeType<T>::type;
  static type load(const T& v) { return load_value(v); }
  static T store(type v) { return store_value<T>(v); }
};
template <typename T>
struct ConvAcc<T, true> {
  using type = std::make_unsigned_t<T>;
  static type load(const T& v) { return static_cast<type>(v); }
  // Two's complement back (well defined through memcpy under C++17).
  static T store(type v) {
    T out;
    __builtin_memcpy(&out, &v, sizeof(out));
    return out;
  }
};

Error read3(const char* op, const char* name, const EValue& e, int64_t lo, int64_t* v) {
  const Span<const int64_t> list = e.int_list;
  if (list.size() != 1 && list.size() != 3) {
    return fail(Error::InvalidArgument, "%s: %s must have 1 or 3 values, got %zu", op, name,
                list.size());
  }
  // Bounded so the shape arithmetic cannot overflow int64 whatever a program passes.
  constexpr int64_t kMaxParam = int64_t{1} << 24;
  for (int32_t i = 0; i < 3; ++i) {
    v[i] = list[list.size() == 1 ? 0 : i];
    if (v[i] < lo || v[i] > kMaxParam) {
      return fail(Error::InvalidArgument, "%s: %s must be in [%lld, 2^24], got %lld", op, name,
                  static_cast<long long>(lo), static_cast<long long>(v[i]));
    }
  }
  return Error::Ok;
}

}  // namespace

Error parse_conv3d_shape(const char* op, Span<EValue*> args, Conv3dShape* s) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  if (input.dim() != 5 || weight.dim() != 5) {
    return fail(Error::InvalidArgument, "%s: expected 5-D input and weight, got %d-D and %d-D", op,
                input.dim(), weight.dim());
  }
  int64_t output_padding[3];
  PTERON_TRY(read3(op, "stride", *args[3], 1, s->stride));
  PTERON_TRY(read3(op, "padding", *args[4], 0, s->pad));
  PTERON_TRY(read3(op, "dilation", *args[5], 1, s->dilation));
  PTERON_TRY(read3(op, "output_padding", *args[7], 0, output_padding));
  s->transposed = args[6]->b;
  s->groups = args[8]->i;
  if (s->groups < 1 || s->groups > (int64_t{1} << 24)) {
    return fail(Error::InvalidArgument, "%s: groups must be in [1, 2^24], got %lld", op,
                static_cast<long long>(s->groups));
  }
  s->batch = input.size(0);
  s->in_channels = input.size(1);
  for (int32_t i = 0; i < 3; ++i) {
    s->in[i] = input.size(2 + i);
    s->kernel[i] = weight.size(2 + i);
  }
  if (s->in_channels % s->groups != 0) {
    return fail(Error::InvalidArgument, "%s: %lld input channels not divisible by %lld groups", op,
                static_cast<long long>(s->in_channels), static_cast<long long>(s->groups));
  }
  if (s->transposed) {
    if (weight.size(0) != s->in_channels) {
      return fail(Error::InvalidArgument,
                  "%s: transposed weight expects %d input channels, input has %lld", op,
                  weight.size(0), static_cast<long long>(s->in_channels));
    }
    s->out_channels = weight.size(1) * s->groups;
    for (int32_t i = 0; i < 3; ++i) {
      if (output_padding[i] >= s->stride[i] && output_padding[i] >= s->dilation[i]) {
        return fail(Error::InvalidArgument,
                    "%s: output padding must be smaller than either stride or dilation", op);
      }
      s->out[i] = (s->in[i] - 1) * s->stride[i] - 2 * s->pad[i] +
                  s->dilation[i] * (s->kernel[i] - 1) + output_padding[i] + 1;
    }
  } else {
    s->out_channels = weight.size(0);
    if (weight.size(1) * s->groups != s->in_channels || s->out_channels % s->groups != 0) {
      return fail(Error::InvalidArgument,
                  "%s: weight %d x %d does not fit %lld input channels in %lld groups", op,
                  weight.size(0), weight.size(1), static_cast<long long>(s->in_channels),
                  static_cast<long long>(s->groups));
    }
    for (int32_t i = 0; i < 3; ++i) {
      const int64_t eff = s->dilation[i] * (s->kernel[i] - 1) + 1;
      if (s->in[i] + 2 * s->pad[i] < eff) {
        return fail(Error::InvalidArgument,
                    "%s: padded input size %lld is smaller than the dilated kernel %lld (dim %d)",
                    op, static_cast<long long>(s->in[i] + 2 * s->pad[i]),
                    static_cast<long long>(eff), 2 + i);
      }
      s->out[i] = (s->in[i] + 2 * s->pad[i] - eff) / s->stride[i] + 1;
    }
  }
  for (int32_t i = 0; i < 3; ++i) {
    if (s->out[i] < 1) {
      return fail(Error::InvalidArgument, "%s: output size %lld at dim %d is too small", op,
                  static_cast<long long>(s->out[i]), 2 + i);
    }
  }
  return Error::Ok;
}

template <typename T>
void conv3d(const Conv3dShape& s, const T* input, const T* weight, const T* bias, T* out) {
  using A = ConvAcc<T>;
  using Acc = typename A::type;
  const int64_t cin_g = s.in_channels / s.groups, cout_g = s.out_channels / s.groups;
  const int64_t in_vol = s.in[0] * s.in[1] * s.in[2];
  const int64_t k_vol = s.kernel[0] * s.kernel[1] * s.kernel[2];
  // Input position of output o through kernel tap k along dim i, or -1 where it falls outside.
  // A transposed convolution is the gather form: o = i * stride - pad + k * dilation.
  auto source = [&](int32_t i, int64_t o, int64_t k) -> int64_t {
    if (!s.transposed) {
      const int64_t at = o * s.stride[i] - s.pad[i] + k * s.dilation[i];
      return at >= 0 && at < s.in[i] ? at : -1;
    }
    const int64_t shifted = o + s.pad[i] - k * s.dilation[i];
    if (shifted < 0 || shifted % s.stride[i] != 0) return -1;
    const int64_t at = shifted / s.stride[i];
    return at < s.in[i] ? at : -1;
  };
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t oc = 0; oc < s.out_channels; ++oc) {
      const int64_t g = oc / cout_g, col = oc % cout_g;
      for (int64_t od = 0; od < s.out[0]; ++od) {
        for (int64_t oh = 0; oh < s.out[1]; ++oh) {
          for (int64_t ow = 0; ow < s.out[2]; ++ow) {
            Acc acc = bias != nullptr ? A::load(bias[oc]) : Acc(0);
            for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
              const int64_t id = source(0, od, kd);
              if (id < 0) continue;
              for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
                const int64_t ih = source(1, oh, kh);
                if (ih < 0) continue;
                for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                  const int64_t iw = source(2, ow, kw);
                  if (iw < 0) continue;
                  const int64_t tap = (kd * s.kernel[1] + kh) * s.kernel[2] + kw;
                  const int64_t in_at = (id * s.in[1] + ih) * s.in[2] + iw;
                  for (int64_t c = 0; c < cin_g; ++c) {
                    const int64_t ci = g * cin_g + c;
                    const int64_t w_at = s.transposed ? (ci * cout_g + col) * k_vol + tap
                                                      : (oc * cin_g + c) * k_vol + tap;
                    acc += A::load(weight[w_at]) *
                           A::load(input[(n * s.in_channels + ci) * in_vol + in_at]);
                  }
                }
              }
            }
            out[(((n * s.out_channels + oc) * s.out[0] + od) * s.out[1] + oh) * s.out[2] + ow] =
                A::store(acc);
          }
        }
      }
    }
  }
}

template void conv3d<float>(const Conv3dShape&, const float*, const float*, const float*, float*);
template void conv3d<double>(const Conv3dShape&, const double*, const double*, const double*,
                             double*);
template void conv3d<Half>(const Conv3dShape&, const Half*, const Half*, const Half*, Half*);
template void conv3d<BFloat16>(const Conv3dShape&, const BFloat16*, const BFloat16*,
                               const BFloat16*, BFloat16*);
template void conv3d<int64_t>(const Conv3dShape&, const int64_t*, const int64_t*, const int64_t*,
                              int64_t*);

}  // namespace pteron
