// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out) -> Tensor(a!)
//
// 1-D and 2-D NCHW floating-point convolutions: depthwise ones run a direct loop; every other
// one is a GEMM per image and group: weight (out_per_group x in_per_group * kH * kW) times the
// im2col matrix, which is either the input itself (1x1, stride 1, no padding) or packed on the
// fly. 3-D (5-D input) convolutions and int64 convolutions of any rank run util/conv3d's direct
// loop (a 1-D or 2-D one as a volume of depth 1).
#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/conv3d.h"
#include "kernels/portable/util/conv_transpose.h"
#include "kernels/portable/util/depthwise_conv.h"
#include "kernels/portable/util/gemm.h"
#include "kernels/portable/util/im2col.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::convolution.out";

template <typename T>
void conv_gemm(KernelContext& ctx, const ConvShape& s, const T* input, const T* weight,
               const T* bias, T* out) {
  using Acc = typename ComputeType<T>::type;
  const int64_t M = s.out_per_group(), N = s.out_h * s.out_w;
  const int64_t K = s.in_per_group() * s.kernel_h * s.kernel_w;
  const bool pointwise = s.kernel_h == 1 && s.kernel_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
                         s.pad_h == 0 && s.pad_w == 0;
  const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, M, N, K);
  const int64_t in_plane = s.in_h * s.in_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const T* x = input + (n * s.in_channels + g * s.in_per_group()) * in_plane;
      T* y = out + (n * s.out_channels + g * M) * N;
      // Bias first: the GEMM then adds the product onto it (beta = 1).
      if (bias != nullptr) {
        for (int64_t m = 0; m < M; ++m)
          for (int64_t j = 0; j < N; ++j) y[m * N + j] = bias[g * M + m];
      }
      const Acc beta = bias != nullptr ? Acc(1) : Acc(0);
      const MatrixRef<const T> a{weight + g * M * K, K, 1};
      const MatrixRef<T> c{y, N, 1};
      if (pointwise) {
        gemm<T>(ws, M, N, K, a, MatrixRef<const T>{x, in_plane, 1}, c, Acc(1), beta);
      } else {
        const Im2colSource<T> cols{x, &s};
        gemm_packed_b<T>(ws, M, N, K, a, cols.source(), c, Acc(1), beta);
      }
    }
  }
}

Error check_bias(const Tensor* bias, int64_t out_channels) {
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != out_channels)) {
    return fail(Error::InvalidArgument, "%s: bias must have %lld elements", kOp,
                static_cast<long long>(out_channels));
  }
  return Error::Ok;
}

// Floating-point dtypes, or int64 (torch's CPU convolution takes int64 too); one dtype for all.
Error expect_conv_dtypes(const Tensor& out, const Tensor* const* inputs, int count) {
  if (out.dtype() != ScalarType::Long && !is_floating(out.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point or int64 only)",
                kOp, scalar_type_name(out.dtype()));
  }
  if (out.dtype() != ScalarType::Long) return expect_float_dtypes(kOp, out, inputs, count);
  for (int i = 0; i < count; ++i) {
    if (inputs[i]->dtype() != out.dtype()) {
      return fail(Error::InvalidArgument, "%s: input dtype %s differs from out dtype %s", kOp,
                  scalar_type_name(inputs[i]->dtype()), scalar_type_name(out.dtype()));
    }
  }
  return Error::Ok;
}

// A 1-D or 2-D convolution as a volume of depth 1: NCHW memory is NC1HW memory.
Conv3dShape as_volume(const ConvShape& s) {
  Conv3dShape v;
  v.batch = s.batch;
  v.in_channels = s.in_channels;
  v.out_channels = s.out_channels;
  v.groups = s.groups;
  v.transposed = s.transposed;
  const int64_t in[3] = {1, s.in_h, s.in_w}, kernel[3] = {1, s.kernel_h, s.kernel_w};
  const int64_t out[3] = {1, s.out_h, s.out_w}, stride[3] = {1, s.stride_h, s.stride_w};
  const int64_t pad[3] = {0, s.pad_h, s.pad_w}, dilation[3] = {1, s.dilation_h, s.dilation_w};
  for (int i = 0; i < 3; ++i) {
    v.in[i] = in[i];
    v.kernel[i] = kernel[i];
    v.out[i] = out[i];
    v.stride[i] = stride[i];
    v.pad[i] = pad[i];
    v.dilation[i] = dilation[i];
  }
  return v;
}

void run_conv3d(const Conv3dShape& s, const Tensor& input, const Tensor& weight, const Tensor* bias,
                Tensor& out) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    conv3d<T>(s, input.data<const T>(), weight.data<const T>(),
              bias != nullptr ? bias->data<const T>() : nullptr, out.data<T>());
  };
  if (out.dtype() == ScalarType::Long) {
    run(TypeTag<int64_t>{});
  } else {
    dispatch_float_dtype(out.dtype(), run);
  }
}

Error convolution3d_out(Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[9]->tensor;
  Conv3dShape s;
  PTERON_TRY(parse_conv3d_shape(kOp, args, &s));
  const Tensor* inputs[] = {&input, &weight, bias};
  PTERON_TRY(expect_conv_dtypes(out, inputs, bias != nullptr ? 3 : 2));
  PTERON_TRY(check_bias(bias, s.out_channels));
  int32_t sizes[5] = {static_cast<int32_t>(s.batch), static_cast<int32_t>(s.out_channels),
                      static_cast<int32_t>(s.out[0]), static_cast<int32_t>(s.out[1]),
                      static_cast<int32_t>(s.out[2])};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 5));
  if (!is_row_major(input) || !is_row_major(weight) || !is_row_major(out)) {
    return fail(Error::NotSupported, "%s: only the default (NCDHW) dim order is supported", kOp);
  }
  if (out.numel() == 0) return Error::Ok;
  run_conv3d(s, input, weight, bias, out);
  return Error::Ok;
}

Error convolution_out(KernelContext& ctx, Span<EValue*> args) {
  if (args[0]->tensor->dim() == 5) return convolution3d_out(args);
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[9]->tensor;
  ConvShape s;
  PTERON_TRY(parse_conv_shape(kOp, args, &s));
  const Tensor* inputs[] = {&input, &weight, bias};
  PTERON_TRY(expect_conv_dtypes(out, inputs, bias != nullptr ? 3 : 2));
  PTERON_TRY(check_bias(bias, s.out_channels));
  int32_t sizes[4] = {static_cast<int32_t>(s.batch), static_cast<int32_t>(s.out_channels), 0, 0};
  if (input.dim() == 4) {
    sizes[2] = static_cast<int32_t>(s.out_h);
    sizes[3] = static_cast<int32_t>(s.out_w);
  } else {
    sizes[2] = static_cast<int32_t>(s.out_w);
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  if (!is_row_major(input) || !is_row_major(weight) || !is_row_major(out)) {
    return fail(Error::NotSupported, "%s: only the default (NCHW) dim order is supported", kOp);
  }
  if (out.numel() == 0) return Error::Ok;
  if (out.dtype() == ScalarType::Long) {
    run_conv3d(as_volume(s), input, weight, bias, out);
    return Error::Ok;
  }
  const bool depthwise = !s.transposed && s.groups == s.in_channels && s.in_per_group() == 1;
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = input.data<const T>();
    const T* w = weight.data<const T>();
    const T* b = bias != nullptr ? bias->data<const T>() : nullptr;
    T* y = out.data<T>();
    if (s.transposed) {
      conv_transpose2d<T>(s, x, w, b, y);
    } else if (depthwise) {
      depthwise_conv2d<T>(s, x, w, b, y);
    } else {
      conv_gemm<T>(ctx, s, x, w, b, y);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::convolution.out", convolution_out, "TTtLLLBLIT");

}  // namespace pteron
