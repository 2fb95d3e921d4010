// Data movement and reductions: RESHAPE, IDENTITY, TRANSPOSE, PAD, CONCAT, SLICE, REDUCE_SUM,
// REDUCE_MAX, REDUCE_MIN. Movement works on raw elements of any dtype the executor handles.
#include <cstring>

#include "backends/tosa/runtime/ops/tosa_ops.h"

namespace pteron::tosa_rt {
namespace {

void strides_of(const TosaTensor& t, int64_t* s) {
  int64_t acc = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    s[d] = acc;
    acc *= t.shape[d];
  }
}

// Calls fn(out_index, idx) for every output element in row-major order.
template <typename Fn>
void for_each_index(const TosaTensor& out, Fn fn) {
  int32_t idx[kMaxRank] = {};
  for (int64_t i = 0; i < out.numel; ++i) {
    fn(i, idx);
    for (int d = out.rank - 1; d >= 0; --d) {
      if (++idx[d] < out.shape[d]) break;
      idx[d] = 0;
    }
  }
}

Error read_shape_values(const OpArgs& a, const TosaTensor& t, int64_t n, const char* what,
                        int64_t* out) {
  if (!t.is_shape || t.data == nullptr || t.numel != n) {
    return fail(Error::InvalidProgram, "TOSA %s: %s must be a constant shape of %lld values",
                a.name(), what, (long long)n);
  }
  for (int64_t i = 0; i < n; ++i) out[i] = load_int(t, i);
  return Error::Ok;
}

}  // namespace

Error run_reshape(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 2));
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  if (in.numel != out.numel) {
    return fail(Error::InvalidProgram, "TOSA %s: %lld elements into %lld", a.name(),
                (long long)in.numel, (long long)out.numel);
  }
  if (out.data != in.data) std::memmove(out.data, in.data, tensor_bytes(in));
  return Error::Ok;
}

Error run_transpose(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 1));
  const auto* attr = a.fb->attribute_as_TransposeAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA TRANSPOSE: missing attribute");
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  PTERON_TRY(expect_rank(a, out, in.rank, "output"));
  int32_t perms[kMaxRank];
  PTERON_TRY(read_int_vec(a, attr->perms(), in.rank, "perms", perms));
  bool seen[kMaxRank] = {};
  for (int d = 0; d < in.rank; ++d) {
    if (perms[d] < 0 || perms[d] >= in.rank || seen[perms[d]] ||
        out.shape[d] != in.shape[perms[d]]) {
      return fail(Error::InvalidProgram, "TOSA TRANSPOSE: perms do not map input to output");
    }
    seen[perms[d]] = true;
  }
  int64_t is[kMaxRank];
  strides_of(in, is);
  size_t es = dtype_size(in.dtype);
  for_each_index(out, [&](int64_t i, const int32_t* idx) {
    int64_t src = 0;
    for (int d = 0; d < out.rank; ++d) src += int64_t(idx[d]) * is[perms[d]];
    std::memcpy(out.data + i * es, in.data + src * es, es);
  });
  return Error::Ok;
}

Error run_pad(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 3, 3));
  const TosaTensor &in = a.in(0), &pad_const = a.in(2), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  PTERON_TRY(expect_dtype(a, pad_const, in.dtype, "pad_const"));
  if (pad_const.numel != 1) {
    return fail(Error::InvalidProgram, "TOSA PAD: pad_const must hold one value");
  }
  PTERON_TRY(expect_rank(a, out, in.rank, "output"));
  int64_t padding[2 * kMaxRank];
  PTERON_TRY(read_shape_values(a, a.in(1), 2 * in.rank, "padding", padding));
  for (int d = 0; d < in.rank; ++d) {
    if (padding[2 * d] < 0 || padding[2 * d + 1] < 0 ||
        in.shape[d] + padding[2 * d] + padding[2 * d + 1] != out.shape[d]) {
      return fail(Error::InvalidProgram,
                  "TOSA PAD: dimension %d: %d padded by %lld,%lld is not "
                  "%d",
                  d, in.shape[d], (long long)padding[2 * d], (long long)padding[2 * d + 1],
                  out.shape[d]);
    }
  }
  int64_t is[kMaxRank];
  strides_of(in, is);
  size_t es = dtype_size(in.dtype);
  for_each_index(out, [&](int64_t i, const int32_t* idx) {
    int64_t src = 0;
    bool inside = true;
    for (int d = 0; d < out.rank && inside; ++d) {
      int64_t s = idx[d] - padding[2 * d];
      inside = s >= 0 && s < in.shape[d];
      src += s * is[d];
    }
    std::memcpy(out.data + i * es, inside ? in.data + src * es : pad_const.data, es);
  });
  return Error::Ok;
}

Error run_concat(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 1 << 20));
  const auto* attr = a.fb->attribute_as_ConcatAttribute();
  if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA CONCAT: missing attribute");
  const TosaTensor& out = a.out(0);
  int32_t axis = attr->axis();
  if (axis < 0 || axis >= out.rank) {
    return fail(Error::InvalidProgram, "TOSA CONCAT: axis %d out of range for rank %d", axis,
                out.rank);
  }
  int64_t total = 0;
  for (int i = 0; i < a.num_inputs; ++i) {
    const TosaTensor& t = a.in(i);
    PTERON_TRY(expect_dtype(a, t, out.dtype, "input"));
    PTERON_TRY(expect_rank(a, t, out.rank, "input"));
    for (int d = 0; d < out.rank; ++d) {
      if (d != axis && t.shape[d] != out.shape[d]) {
        return fail(Error::InvalidProgram, "TOSA CONCAT: input %d differs in dimension %d", i, d);
      }
    }
    total += t.shape[axis];
  }
  if (total != out.shape[axis]) {
    return fail(Error::InvalidProgram, "TOSA CONCAT: inputs sum to %lld along axis %d, output %d",
                (long long)total, axis, out.shape[axis]);
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out.shape[d];
  for (int d = axis + 1; d < out.rank; ++d) inner *= out.shape[d];
  size_t es = dtype_size(out.dtype);
  int64_t out_row = int64_t(out.shape[axis]) * inner * es;
  int64_t at = 0;
  for (int i = 0; i < a.num_inputs; ++i) {
    const TosaTensor& t = a.in(i);
    int64_t row = int64_t(t.shape[axis]) * inner * es;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(out.data + o * out_row + at, t.data + o * row, size_t(row));
    }
    at += row;
  }
  return Error::Ok;
}

Error run_slice(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 3, 3));
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  PTERON_TRY(expect_rank(a, out, in.rank, "output"));
  int64_t start[kMaxRank], size[kMaxRank];
  PTERON_TRY(read_shape_values(a, a.in(1), in.rank, "start", start));
  PTERON_TRY(read_shape_values(a, a.in(2), in.rank, "size", size));
  for (int d = 0; d < in.rank; ++d) {
    if (start[d] < 0 || size[d] != out.shape[d] || start[d] + size[d] > in.shape[d]) {
      return fail(Error::InvalidProgram,
                  "TOSA SLICE: dimension %d: start %lld size %lld does "
                  "not fit %d",
                  d, (long long)start[d], (long long)size[d], in.shape[d]);
    }
  }
  int64_t is[kMaxRank];
  strides_of(in, is);
  size_t es = dtype_size(in.dtype);
  for_each_index(out, [&](int64_t i, const int32_t* idx) {
    int64_t src = 0;
    for (int d = 0; d < out.rank; ++d) src += (idx[d] + start[d]) * is[d];
    std::memcpy(out.data + i * es, in.data + src * es, es);
  });
  return Error::Ok;
}

Error run_reduce(const OpArgs& a) {
  PTERON_TRY(expect_inputs(a, 1, 1));
  int32_t axis = 0;
  if (a.op == tosa::Op::REDUCE_SUM) {
    const auto* attr = a.fb->attribute_as_ReduceSumAttribute();
    if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA REDUCE_SUM: missing attribute");
    axis = attr->axis();
  } else if (a.op == tosa::Op::REDUCE_MAX) {
    const auto* attr = a.fb->attribute_as_ReduceMaxAttribute();
    if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA REDUCE_MAX: missing attribute");
    axis = attr->axis();
  } else {
    const auto* attr = a.fb->attribute_as_ReduceMinAttribute();
    if (attr == nullptr) return fail(Error::InvalidProgram, "TOSA REDUCE_MIN: missing attribute");
    axis = attr->axis();
  }
  const TosaTensor &in = a.in(0), &out = a.out(0);
  PTERON_TRY(expect_dtype(a, out, in.dtype, "output"));
  PTERON_TRY(expect_rank(a, out, in.rank, "output"));
  if (axis < 0 || axis >= in.rank) {
    return fail(Error::InvalidProgram, "TOSA %s: axis %d out of range for rank %d", a.name(), axis,
                in.rank);
  }
  for (int d = 0; d < in.rank; ++d) {
    if (out.shape[d] != (d == axis ? 1 : in.shape[d])) {
      return fail(Error::InvalidProgram, "TOSA %s: output dimension %d is %d", a.name(), d,
                  out.shape[d]);
    }
  }
  int64_t outer = 1, inner = 1, n = in.shape[axis];
  for (int d = 0; d < axis; ++d) outer *= in.shape[d];
  for (int d = axis + 1; d < in.rank; ++d) inner *= in.shape[d];
  if (in.dtype == tosa::DType::FP32) {
    const float* p = in.as<float>();
    float* o = out.as<float>();
    for (int64_t u = 0; u < outer; ++u) {
      for (int64_t v = 0; v < inner; ++v) {
        float acc = p[u * n * inner + v];
        for (int64_t k = 1; k < n; ++k) {
          float x = p[(u * n + k) * inner + v];
          if (a.op == tosa::Op::REDUCE_SUM)
            acc += x;
          else if (a.op == tosa::Op::REDUCE_MAX)
            acc = x > acc ? x : acc;
          else
            acc = x < acc ? x : acc;
        }
        o[u * inner + v] = acc;
      }
    }
    return Error::Ok;
  }
  if (!is_int_dtype(in.dtype) || in.dtype == tosa::DType::INT48 || in.dtype == tosa::DType::BOOL ||
      (a.op == tosa::Op::REDUCE_SUM && in.dtype != tosa::DType::INT32)) {
    return fail(Error::NotSupported, "TOSA %s: dtype %s is not supported", a.name(),
                tosa::EnumNameDType(in.dtype));
  }
  for (int64_t u = 0; u < outer; ++u) {
    for (int64_t v = 0; v < inner; ++v) {
      int64_t acc = load_int(in, u * n * inner + v);
      for (int64_t k = 1; k < n; ++k) {
        int64_t x = load_int(in, (u * n + k) * inner + v);
        if (a.op == tosa::Op::REDUCE_SUM)
          acc = int32_t(uint32_t(acc) + uint32_t(x));
        else if (a.op == tosa::Op::REDUCE_MAX)
          acc = x > acc ? x : acc;
        else
          acc = x < acc ? x : acc;
      }
      store_int(out, u * inner + v, acc);
    }
  }
  return Error::Ok;
}

}  // namespace pteron::tosa_rt
