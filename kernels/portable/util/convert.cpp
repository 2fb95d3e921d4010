#include "kernels/portable/util/convert.h"

namespace pteron {
namespace {

template <typename From, typename To>
void convert_typed(const From* src, int64_t src_step, To* dst, int64_t dst_step, int64_t n) {
  if (src_step == 1 && dst_step == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = store_value<To>(load_value(src[i]));
  } else {
    for (int64_t i = 0; i < n; ++i)
      dst[i * dst_step] = store_value<To>(load_value(src[i * src_step]));
  }
}

}  // namespace

bool convert_elements(ScalarType from, const void* src, int64_t src_step, ScalarType to, void* dst,
                      int64_t dst_step, int64_t n) {
  bool done = false;
  dispatch_dtype(from, kAllTypes, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    done = dispatch_dtype(to, kAllTypes, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      convert_typed(static_cast<const From*>(src), src_step, static_cast<To*>(dst), dst_step, n);
    });
  });
  return done;
}

}  // namespace pteron
