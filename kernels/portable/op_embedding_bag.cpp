// aten::_embedding_bag.out / aten::_embedding_bag_forward_only.out(Tensor weight,
//     Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0,
//     bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False,
//     int padding_idx=-1, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2,
//     Tensor(d!) out3) -> (Tensor(a!), Tensor(b!), Tensor(c!), Tensor(d!))
// torch.nn.functional.embedding_bag: bag b holds indices[offsets[b] : offsets[b + 1]] (the last
// bag runs to the end, or include_last_offset makes the last offset an end only); out0[b] is the
// sum (times per_sample_weights when given), mean or max of those weight rows, indices equal
// to padding_idx (>= 0) left out, an empty bag 0. As ATen's CPU kernel: sums row by row,
// float16/bfloat16 accumulated in float and rounded once; max keeps the first row that is
// largest (a later NaN never replaces it). out1..out3 (offset2bag, bag_size, max_indices) serve
// autograd and take the sizes the export planned; they are written as eager writes them: the
// bag of every index, the bags' sizes, and the rows max picked (for mean, the sizes again; for
// sum, zeros). scale_grad_by_freq and sparse only matter for gradients.
#include <cstring>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/index_util.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

enum Mode : int64_t { kSum = 0, kMean = 1, kMax = 2 };

Error check_offsets(const char* op, const Tensor& offsets, int64_t num_indices) {
  int64_t prev = 0;
  for (int64_t b = 0; b < offsets.numel(); ++b) {
    const int64_t o = load_index(offsets, b * offsets.stride(0));
    PTERON_CHECK(b > 0 || o == 0, Error::InvalidArgument,
                 "%s: offsets[0] has to be 0 (the first bag starts at position 0), got %lld", op,
                 static_cast<long long>(o));
    PTERON_CHECK(o >= prev && o <= num_indices, Error::InvalidArgument,
                 "%s: offsets[%lld] = %lld is not in [offsets[%lld], %lld]", op,
                 static_cast<long long>(b), static_cast<long long>(o),
                 static_cast<long long>(b > 0 ? b - 1 : 0), static_cast<long long>(num_indices));
    prev = o;
  }
  return Error::Ok;
}

Error embedding_bag_out(const char* op, KernelContext& ctx, Span<EValue*> args) {
  const Tensor& weight = *args[0]->tensor;
  const Tensor& indices = *args[1]->tensor;
  const Tensor& offsets = *args[2]->tensor;
  const int64_t mode = args[4]->i;
  const Tensor* psw = args[6]->tag == Tag::Tensor ? args[6]->tensor : nullptr;
  const bool include_last_offset = args[7]->b;
  const int64_t padding_idx = args[8]->i;
  Tensor& out = *args[9]->tensor;
  Tensor& offset2bag = *args[10]->tensor;
  Tensor& bag_size = *args[11]->tensor;
  Tensor& max_indices = *args[12]->tensor;

  PTERON_CHECK(weight.dim() == 2, Error::InvalidArgument, "%s: weight must be 2-d, got %d-d", op,
               weight.dim());
  PTERON_CHECK(is_floating(weight.dtype()), Error::NotSupported,
               "%s: weight dtype %s not supported (floating point only, as torch)", op,
               scalar_type_name(weight.dtype()));
  PTERON_CHECK(mode == kSum || mode == kMean || mode == kMax, Error::InvalidArgument,
               "%s: mode %lld is not 0 (sum), 1 (mean) or 2 (max)", op,
               static_cast<long long>(mode));
  PTERON_CHECK(indices.dim() == 1 && offsets.dim() == 1, Error::InvalidArgument,
               "%s: indices and offsets must be 1-d (embedding_bag flattens 2-d input first), "
               "got %d-d and %d-d",
               op, indices.dim(), offsets.dim());
  PTERON_TRY(expect_index_dtype(op, indices, "indices", true));
  PTERON_TRY(expect_index_dtype(op, offsets, "offsets", true));
  const int64_t n = indices.numel();
  PTERON_TRY(check_indices(op, indices, weight.size(0), 0, false));
  PTERON_TRY(check_offsets(op, offsets, n));
  PTERON_CHECK(psw == nullptr || mode == kSum, Error::InvalidArgument,
               "%s: per_sample_weights is only supported for mode sum", op);
  if (psw) {
    PTERON_CHECK(psw->dim() == 1 && psw->numel() == n, Error::InvalidArgument,
                 "%s: per_sample_weights must be 1-d with one weight per index (%lld)", op,
                 static_cast<long long>(n));
    PTERON_TRY(expect_dtype(op, *psw, weight.dtype(), "per_sample_weights"));
  }
  const int64_t num_offsets = offsets.numel();
  PTERON_CHECK(!include_last_offset || num_offsets >= 1, Error::InvalidArgument,
               "%s: include_last_offset needs at least one offset", op);
  // torch documents the extra offset as the indices' size and misbehaves otherwise (mean and
  // max then read past it): refused.
  PTERON_CHECK(
      !include_last_offset || load_index(offsets, (num_offsets - 1) * offsets.stride(0)) == n,
      Error::InvalidArgument,
      "%s: include_last_offset: offsets[-1] = %lld must be the number of indices (%lld)", op,
      static_cast<long long>(load_index(offsets, (num_offsets - 1) * offsets.stride(0))),
      static_cast<long long>(n));
  const int64_t bags = include_last_offset ? num_offsets - 1 : num_offsets;
  const int32_t out_sizes[2] = {static_cast<int32_t>(bags), weight.size(1)};
  PTERON_TRY(expect_dtype(op, out, weight.dtype(), "out0"));
  PTERON_TRY(expect_out_shape(op, out, out_sizes, 2));
  for (const Tensor* aux : {&offset2bag, &bag_size, &max_indices}) {
    PTERON_CHECK(aux->dtype() == indices.dtype() || aux->numel() == 0, Error::InvalidArgument,
                 "%s: offset2bag, bag_size and max_indices must have the indices' dtype", op);
  }
  PTERON_CHECK(out.dim() == 2 && out.stride(1) == 1 && weight.stride(1) == 1, Error::NotSupported,
               "%s: weight and out rows must be contiguous", op);

  const int64_t width = weight.size(1);
  auto end_of = [&](int64_t b) {
    return b + 1 < num_offsets ? load_index(offsets, (b + 1) * offsets.stride(0)) : n;
  };
  auto store_aux = [](Tensor& t, int64_t at, int64_t v) {
    if (at >= t.numel()) return;
    if (t.dtype() == ScalarType::Long)
      t.data<int64_t>()[at] = v;
    else
      t.data<int32_t>()[at] = static_cast<int32_t>(v);
  };
  for (Tensor* aux : {&offset2bag, &bag_size, &max_indices}) {
    if (aux->numel() > 0) std::memset(aux->mutable_data(), 0, aux->nbytes());
  }
  bool scratch = true;
  const bool ok = dispatch_dtype(weight.dtype(), kFloatTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    // One bag's row in the compute type (float for float16 / bfloat16): rounded once, at the end.
    C* acc = static_cast<C*>(ctx.allocate_scratch(sizeof(C) * (width > 0 ? width : 1), alignof(C)));
    if (acc == nullptr) {
      scratch = false;
      return;
    }
    const T* w = weight.data<const T>();
    T* o = out.data<T>();
    for (int64_t b = 0; b < bags; ++b) {
      const int64_t begin = load_index(offsets, b * offsets.stride(0)), end = end_of(b);
      int64_t count = 0;
      for (int64_t j = 0; j < width; ++j) acc[j] = C(0);
      for (int64_t i = begin; i < end; ++i) {
        store_aux(offset2bag, i, b);
        const int64_t word = load_index(indices, i * indices.stride(0));
        if (word == padding_idx) continue;
        const T* src = w + word * weight.stride(0);
        if (mode == kMax) {
          for (int64_t j = 0; j < width; ++j) {
            const C v = load_value(src[j]);
            if (count == 0 || v > acc[j]) {
              acc[j] = v;
              store_aux(max_indices, b * width + j, word);
            }
          }
        } else {
          const C scale = psw ? load_value(psw->data<const T>()[i * psw->stride(0)]) : C(1);
          for (int64_t j = 0; j < width; ++j) acc[j] += load_value(src[j]) * scale;
        }
        ++count;
      }
      if (mode == kMean && count > 0) {
        for (int64_t j = 0; j < width; ++j) acc[j] /= static_cast<C>(count);
      }
      T* row = o + b * out.stride(0);
      for (int64_t j = 0; j < width; ++j) row[j] = store_value<T>(acc[j]);
      if (mode != kSum) store_aux(bag_size, b, count);
      if (mode == kMean) store_aux(max_indices, b, count);
    }
  });
  PTERON_CHECK(scratch, Error::OutOfMemory, "%s: no scratch memory for a row of %lld", op,
               static_cast<long long>(width));
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", op,
               scalar_type_name(weight.dtype()));
  return Error::Ok;
}

Error embedding_bag(KernelContext& ctx, Span<EValue*> args) {
  return embedding_bag_out("aten::_embedding_bag.out", ctx, args);
}

Error embedding_bag_forward_only(KernelContext& ctx, Span<EValue*> args) {
  return embedding_bag_out("aten::_embedding_bag_forward_only.out", ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::_embedding_bag.out", embedding_bag, "TTTBIBtBITTTT");
PTERON_KERNEL("aten::_embedding_bag_forward_only.out", embedding_bag_forward_only, "TTTBIBtBITTTT");

}  // namespace pteron
