// aten::mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values,
//     Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
// The most frequent value of each line along dim and a position of it; ties between values go
// to the smallest. As ATen's CPU kernel, step for step: the line's (value, position) pairs are
// std::sort-ed by value alone and runs of equal values counted, the position being the one the
// sort leaves last in the winning run (so equal inputs give torch's indices; NaN is never equal,
// each NaN a run of one). Every dtype torch takes: integers, bool, float16/32/64, bfloat16.
#include <algorithm>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/line_reduce.h"

namespace pteron {
namespace {

Error mode_values(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::mode.values";
  LineReduceArgs a;
  PTERON_TRY(read_line_reduce_args(kOp, args, &a));
  const Tensor& self = *a.self;
  const int64_t n = a.n;
  bool scratch = true;
  const bool ok = dispatch_dtype(self.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    struct Item {
      C first;
      int64_t second;
    };
    Item* line = static_cast<Item*>(ctx.allocate_scratch(sizeof(Item) * n, alignof(Item)));
    if (line == nullptr) {
      scratch = a.values->numel() == 0;
      return;
    }
    const T* x = self.data<const T>();
    T* vo = a.values->data<T>();
    int64_t* io = a.indices->data<int64_t>();
    for_each_line(a, [&](int64_t in, int64_t step, int64_t len, int64_t ov, int64_t oi) {
      for (int64_t i = 0; i < len; ++i) line[i] = Item{load_value(x[in + i * step]), i};
      std::sort(line, line + len, [](const Item& a, const Item& b) { return a.first < b.first; });
      C mode{};
      int64_t at = 0, run = 0, best = 0;
      for (int64_t i = 0; i < len; ++i) {
        ++run;
        if (i == len - 1 || line[i].first != line[i + 1].first) {
          if (run > best) {
            mode = line[i].first;
            at = line[i].second;
            best = run;
          }
          run = 0;
        }
      }
      vo[ov] = store_value<T>(mode);
      io[oi] = at;
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(self.dtype()));
  PTERON_CHECK(scratch, Error::OutOfMemory, "%s: no scratch memory for a line of %lld elements",
               kOp, static_cast<long long>(n));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::mode.values", mode_values, "TIBTT");

}  // namespace pteron
