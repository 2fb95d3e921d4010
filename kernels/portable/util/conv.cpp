#include "kernels/portable/util/conv.h"

namespace pteron {
namespace {

// Reads an int list of 1 or `n` entries (torch expands a single value) into v[0..n).
Error read_param(const char* op, const char* name, const EValue& e, int32_t n, int64_t min_value,
                 int64_t* v) {
  const Span<const int64_t> list = e.int_list;
  if (list.size() != 1 && list.size() != static_cast<size_t>(n)) {
    return fail(Error::InvalidArgument, "%s: %s must have 1 or %d values, got %zu", op, name, n,
                list.size());
  }
  for (int32_t i = 0; i < n; ++i) {
    v[i] = list[list.size() == 1 ? 0 : i];
    if (v[i] < min_value) {
      return fail(Error::InvalidArgument, "%s: %s must be >= %lld, got %lld", op, name,
                  static_cast<long long>(min_value), static_cast<long long>(v[i]));
    }
  }
  return Error::Ok;
}

}  // namespace

Error parse_conv_shape(const char* op, Span<EValue*> args, ConvShape* s) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const int32_t dim = input.dim();
  if (dim != 3 && dim != 4) {
    return fail(Error::NotSupported,
                "%s: only 1-D and 2-D convolutions (3-D or 4-D input), got "
                "a %d-D input",
                op, dim);
  }
  if (weight.dim() != dim) {
    return fail(Error::InvalidArgument, "%s: expected %d-D weight for %d-D input, got %d-D", op,
                dim, dim, weight.dim());
  }
  const int32_t spatial = dim - 2;
  int64_t stride[2], padding[2], dilation[2], output_padding[2];
  PTERON_TRY(read_param(op, "stride", *args[3], spatial, 1, stride));
  PTERON_TRY(read_param(op, "padding", *args[4], spatial, 0, padding));
  PTERON_TRY(read_param(op, "dilation", *args[5], spatial, 1, dilation));
  PTERON_TRY(read_param(op, "output_padding", *args[7], spatial, 0, output_padding));
  // Bound every parameter so the shape arithmetic below cannot overflow int64, whatever a
  // (possibly corrupt) program passes.
  constexpr int64_t kMaxParam = int64_t{1} << 24;
  for (int32_t i = 0; i < spatial; ++i) {
    if (stride[i] < 1 || stride[i] > kMaxParam || dilation[i] < 1 || dilation[i] > kMaxParam ||
        padding[i] < 0 || padding[i] > kMaxParam || output_padding[i] < 0 ||
        output_padding[i] > kMaxParam) {
      return fail(Error::InvalidArgument,
                  "%s: stride/dilation must be in [1, 2^24] and padding in [0, 2^24] (dim %d)", op,
                  i);
    }
  }
  s->transposed = args[6]->b;
  s->groups = args[8]->i;
  if (s->groups > kMaxParam) {
    return fail(Error::InvalidArgument, "%s: %lld groups is out of range", op,
                static_cast<long long>(s->groups));
  }
  if (s->groups < 1) {
    return fail(Error::InvalidArgument, "%s: groups must be positive, got %lld", op,
                static_cast<long long>(s->groups));
  }
  const int32_t h = spatial == 2 ? 2 : -1;  // height dim index, none for 1-D
  const int32_t w = dim - 1;
  s->batch = input.size(0);
  s->in_channels = input.size(1);
  s->in_h = h > 0 ? input.size(h) : 1;
  s->in_w = input.size(w);
  s->kernel_h = h > 0 ? weight.size(h) : 1;
  s->kernel_w = weight.size(w);
  // 1-D parameters apply to width; height stays 1 x 1 with unit stride.
  const int32_t wi = spatial - 1;
  s->stride_w = stride[wi];
  s->pad_w = padding[wi];
  s->dilation_w = dilation[wi];
  if (spatial == 2) {
    s->stride_h = stride[0];
    s->pad_h = padding[0];
    s->dilation_h = dilation[0];
  }
  if (s->transposed) {
    // weight: in_channels x out_channels / groups x kH x kW
    if (weight.size(0) != s->in_channels) {
      return fail(Error::InvalidArgument,
                  "%s: transposed weight expects %d input channels, input has %lld", op,
                  weight.size(0), static_cast<long long>(s->in_channels));
    }
    if (s->in_channels % s->groups != 0) {
      return fail(Error::InvalidArgument, "%s: %lld input channels not divisible by %lld groups",
                  op, static_cast<long long>(s->in_channels), static_cast<long long>(s->groups));
    }
    s->out_channels = weight.size(1) * s->groups;
    for (int32_t i = 0; i < spatial; ++i) {
      if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]) {
        return fail(Error::InvalidArgument,
                    "%s: output padding must be smaller than either stride or dilation", op);
      }
    }
    s->out_w = (s->in_w - 1) * s->stride_w - 2 * s->pad_w + s->dilation_w * (s->kernel_w - 1) +
               output_padding[wi] + 1;
    if (spatial == 2) {
      s->out_h = (s->in_h - 1) * s->stride_h - 2 * s->pad_h + s->dilation_h * (s->kernel_h - 1) +
                 output_padding[0] + 1;
    }
  } else {
    // weight: out_channels x in_channels / groups x kH x kW
    s->out_channels = weight.size(0);
    if (weight.size(1) * s->groups != s->in_channels) {
      return fail(Error::InvalidArgument,
                  "%s: weight expects %lld input channels (%d x %lld groups), input has %lld", op,
                  static_cast<long long>(weight.size(1) * s->groups), weight.size(1),
                  static_cast<long long>(s->groups), static_cast<long long>(s->in_channels));
    }
    if (s->out_channels % s->groups != 0) {
      return fail(Error::InvalidArgument, "%s: %lld output channels not divisible by %lld groups",
                  op, static_cast<long long>(s->out_channels), static_cast<long long>(s->groups));
    }
    const int64_t eff_h = s->dilation_h * (s->kernel_h - 1) + 1;
    const int64_t eff_w = s->dilation_w * (s->kernel_w - 1) + 1;
    if (s->in_h + 2 * s->pad_h < eff_h || s->in_w + 2 * s->pad_w < eff_w) {
      return fail(Error::InvalidArgument,
                  "%s: padded input (%lld x %lld) is smaller than the dilated kernel (%lld x %lld)",
                  op, static_cast<long long>(s->in_h + 2 * s->pad_h),
                  static_cast<long long>(s->in_w + 2 * s->pad_w), static_cast<long long>(eff_h),
                  static_cast<long long>(eff_w));
    }
    s->out_h = (s->in_h + 2 * s->pad_h - eff_h) / s->stride_h + 1;
    s->out_w = (s->in_w + 2 * s->pad_w - eff_w) / s->stride_w + 1;
  }
  if (s->out_h < 1 || s->out_w < 1) {
    return fail(Error::InvalidArgument, "%s: output size %lld x %lld is too small", op,
                static_cast<long long>(s->out_h), static_cast<long long>(s->out_w));
  }
  return Error::Ok;
}

}  // namespace pteron
