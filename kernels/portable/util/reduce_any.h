// any(): true where some element of the reduce space is non-zero (NaN counts as non-zero).
// Shared by any.out, any.dims_out and any.all_out.
#pragma once

#include "kernels/portable/util/reduce_fold.h"

namespace pteron {

// out is bool (or uint8, what torch returns for uint8 input); any input dtype.
inline Error any_reduce(const char* name, const Tensor& in, Tensor& out, const ReducePlan& p) {
  if (out.dtype() != ScalarType::Bool && out.dtype() != ScalarType::Byte) {
    return fail(Error::InvalidArgument, "%s: out must be bool or uint8, got %s", name,
                scalar_type_name(out.dtype()));
  }
  const bool ok = dispatch_dtype(in.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<const T>();
    uint8_t* o = static_cast<uint8_t*>(out.mutable_data());  // bool and uint8 share 0/1 bytes
    const auto f = [](auto v, int64_t) { return v != 0; };
    const auto either = [](bool a, bool b) { return a || b; };
    bool acc[kReduceChunk];
    for_each_output_chunk(p, kReduceChunk, [&](int64_t i0, int64_t o0, int64_t, int64_t c) {
      fold_columns<bool>(p, x, i0, c, false, f, either, acc);
      for (int64_t j = 0; j < c; ++j) o[o0 + j * p.inner_out[0]] = acc[j] ? 1 : 0;
    });
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", name,
                scalar_type_name(in.dtype()));
  }
  return Error::Ok;
}

}  // namespace pteron
