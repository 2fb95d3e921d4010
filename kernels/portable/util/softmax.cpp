#include "kernels/portable/util/softmax.h"

#include <cmath>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/vec_math.h"

namespace pteron {
namespace {

constexpr int kLanes = 8;        // independent partial sums/maxima the compiler vectorises
constexpr int64_t kChunk = 256;  // inner positions handled at once when the dim is strided

// One contiguous row of length n.
template <typename In, typename Out, bool kLog>
void softmax_row(const In* x, Out* y, int64_t n) {
  using Acc = typename ComputeType<Out>::type;
  Acc lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = -INFINITY;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const Acc v = load_value(x[j + l]);
      lanes[l] = v > lanes[l] ? v : lanes[l];
    }
  Acc max = -INFINITY;
  for (; j < n; ++j) {
    const Acc v = load_value(x[j]);
    max = v > max ? v : max;
  }
  for (int l = 0; l < kLanes; ++l) max = lanes[l] > max ? lanes[l] : max;

  // Float outputs keep exp(x - max) and rescale it; narrower ones recompute it.
  constexpr bool kKeepExp = std::is_same_v<Out, Acc> && !kLog;
  for (int l = 0; l < kLanes; ++l) lanes[l] = 0;
  j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const Acc e = vexp(static_cast<Acc>(load_value(x[j + l])) - max);
      if constexpr (kKeepExp) y[j + l] = e;
      lanes[l] += e;
    }
  Acc sum = 0;
  for (; j < n; ++j) {
    const Acc e = vexp(static_cast<Acc>(load_value(x[j])) - max);
    if constexpr (kKeepExp) y[j] = e;
    sum += e;
  }
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];

  if constexpr (kLog) {
    // (x - max) - log(sum), not x - (max + log(sum)): the latter cancels for large logits.
    const Acc log_sum = std::log(sum);
    for (j = 0; j < n; ++j)
      y[j] = store_value<Out>((static_cast<Acc>(load_value(x[j])) - max) - log_sum);
  } else if constexpr (kKeepExp) {
    const Acc inv = Acc(1) / sum;
    for (j = 0; j < n; ++j) y[j] *= inv;
  } else {
    const Acc inv = Acc(1) / sum;
    for (j = 0; j < n; ++j)
      y[j] = store_value<Out>(vexp(static_cast<Acc>(load_value(x[j])) - max) * inv);
  }
}

// `count` inner positions of an outer x n x inner block: element (d, i) at d * inner + i.
// Every loop runs over contiguous inner positions.
template <typename In, typename Out, bool kLog>
void softmax_columns(const In* x, Out* y, int64_t n, int64_t inner, int64_t count) {
  using Acc = typename ComputeType<Out>::type;
  Acc max[kChunk], sum[kChunk];
  for (int64_t i = 0; i < count; ++i) max[i] = -INFINITY;
  for (int64_t d = 0; d < n; ++d) {
    const In* xr = x + d * inner;
    for (int64_t i = 0; i < count; ++i) {
      const Acc v = load_value(xr[i]);
      max[i] = v > max[i] ? v : max[i];
    }
  }
  for (int64_t i = 0; i < count; ++i) sum[i] = 0;
  for (int64_t d = 0; d < n; ++d) {
    const In* xr = x + d * inner;
    for (int64_t i = 0; i < count; ++i)
      sum[i] += vexp(static_cast<Acc>(load_value(xr[i])) - max[i]);
  }
  for (int64_t i = 0; i < count; ++i) sum[i] = kLog ? std::log(sum[i]) : Acc(1) / sum[i];
  for (int64_t d = 0; d < n; ++d) {
    const In* xr = x + d * inner;
    Out* yr = y + d * inner;
    for (int64_t i = 0; i < count; ++i) {
      const Acc v = static_cast<Acc>(load_value(xr[i])) - max[i];
      if constexpr (kLog) {
        yr[i] = store_value<Out>(v - sum[i]);
      } else {
        yr[i] = store_value<Out>(vexp(v) * sum[i]);
      }
    }
  }
}

template <typename In, typename Out, bool kLog>
void softmax_typed(const In* x, Out* y, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const In* xo = x + o * n * inner;
    Out* yo = y + o * n * inner;
    if (inner == 1) {
      softmax_row<In, Out, kLog>(xo, yo, n);
      continue;
    }
    for (int64_t i0 = 0; i0 < inner; i0 += kChunk) {
      const int64_t count = inner - i0 < kChunk ? inner - i0 : kChunk;
      softmax_columns<In, Out, kLog>(xo + i0, yo + i0, n, inner, count);
    }
  }
}

}  // namespace

Error softmax_out(const char* op, const Tensor& in, int64_t dim, bool half_to_float, Tensor& out,
                  bool log) {
  int32_t d = 0;
  PTERON_TRY(normalize_dim(op, dim, in.dim(), &d));
  const bool widen =
      half_to_float && (in.dtype() == ScalarType::Half || in.dtype() == ScalarType::BFloat16);
  const ScalarType out_type = widen ? ScalarType::Float : in.dtype();
  if (half_to_float && !widen) {
    return fail(Error::InvalidArgument, "%s: half_to_float needs a Half or BFloat16 input", op);
  }
  if (!is_floating(in.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point only)", op,
                scalar_type_name(in.dtype()));
  }
  if (out.dtype() != out_type) {
    return fail(Error::InvalidArgument, "%s: out dtype %s, expected %s", op,
                scalar_type_name(out.dtype()), scalar_type_name(out_type));
  }
  PTERON_TRY(expect_out_shape(op, out, in.sizes().data(), in.dim()));
  for (int32_t i = 0; i < in.dim(); ++i) {
    if (in.size(i) > 1 && in.stride(i) != out.stride(i)) {
      return fail(Error::NotSupported, "%s: input and out must share one dim order", op);
    }
  }
  if (in.numel() == 0) return Error::Ok;
  // Dense tensor: dims laid out inside `d` multiply to its stride, so memory is
  // outer x size(d) x inner whatever the dim order.
  const int64_t n = in.dim() == 0 ? 1 : in.size(d);
  const int64_t inner = in.dim() == 0 || n == 1 ? 1 : in.stride(d);
  const int64_t outer = in.numel() / (n * inner);
  bool ok = false;
  auto run = [&](auto in_tag, auto out_tag) {
    using In = typename decltype(in_tag)::type;
    using Out = typename decltype(out_tag)::type;
    const In* x = in.data<const In>();
    Out* y = out.data<Out>();
    if (log) {
      softmax_typed<In, Out, true>(x, y, outer, n, inner);
    } else {
      softmax_typed<In, Out, false>(x, y, outer, n, inner);
    }
    ok = true;
  };
  if (widen) {
    if (in.dtype() == ScalarType::Half)
      run(TypeTag<Half>{}, TypeTag<float>{});
    else
      run(TypeTag<BFloat16>{}, TypeTag<float>{});
  } else {
    dispatch_float_dtype(in.dtype(), [&](auto tag) { run(tag, tag); });
  }
  return ok ? Error::Ok
            : fail(Error::NotSupported, "%s: dtype %s not supported", op,
                   scalar_type_name(in.dtype()));
}

}  // namespace pteron
