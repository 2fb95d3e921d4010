#include "backends/tosa/runtime/ops/tosa_ops.h"

namespace pteron::tosa_rt {

bool op_supported(tosa::Op op) {
  switch (op) {
    case tosa::Op::CONST:
    case tosa::Op::CONST_SHAPE:
    case tosa::Op::CONV2D:
    case tosa::Op::DEPTHWISE_CONV2D:
    case tosa::Op::MATMUL:
    case tosa::Op::AVG_POOL2D:
    case tosa::Op::MAX_POOL2D:
    case tosa::Op::ADD:
    case tosa::Op::SUB:
    case tosa::Op::MUL:
    case tosa::Op::MAXIMUM:
    case tosa::Op::MINIMUM:
    case tosa::Op::RESCALE:
    case tosa::Op::CLAMP:
    case tosa::Op::TABLE:
    case tosa::Op::RESHAPE:
    case tosa::Op::IDENTITY:
    case tosa::Op::TRANSPOSE:
    case tosa::Op::PAD:
    case tosa::Op::RESIZE:
    case tosa::Op::CONCAT:
    case tosa::Op::SLICE:
    case tosa::Op::REDUCE_SUM:
    case tosa::Op::REDUCE_MAX:
    case tosa::Op::REDUCE_MIN:
      return true;
    default:
      return false;
  }
}

Error run_op(const OpArgs& a) {
  if (a.num_outputs != 1) {
    return fail(Error::InvalidProgram, "TOSA %s: expected one output, got %d", a.name(),
                a.num_outputs);
  }
  switch (a.op) {
    case tosa::Op::CONV2D:
      return run_conv2d(a);
    case tosa::Op::DEPTHWISE_CONV2D:
      return run_depthwise_conv2d(a);
    case tosa::Op::MATMUL:
      return run_matmul(a);
    case tosa::Op::AVG_POOL2D:
      return run_avg_pool2d(a);
    case tosa::Op::MAX_POOL2D:
      return run_max_pool2d(a);
    case tosa::Op::ADD:
    case tosa::Op::SUB:
    case tosa::Op::MUL:
    case tosa::Op::MAXIMUM:
    case tosa::Op::MINIMUM:
      return run_binary(a);
    case tosa::Op::RESCALE:
      return run_rescale(a);
    case tosa::Op::CLAMP:
      return run_clamp(a);
    case tosa::Op::TABLE:
      return run_table(a);
    case tosa::Op::RESHAPE:
    case tosa::Op::IDENTITY:
      return run_reshape(a);
    case tosa::Op::TRANSPOSE:
      return run_transpose(a);
    case tosa::Op::PAD:
      return run_pad(a);
    case tosa::Op::RESIZE:
      return run_resize(a);
    case tosa::Op::CONCAT:
      return run_concat(a);
    case tosa::Op::SLICE:
      return run_slice(a);
    case tosa::Op::REDUCE_SUM:
    case tosa::Op::REDUCE_MAX:
    case tosa::Op::REDUCE_MIN:
      return run_reduce(a);
    default:
      return fail(Error::NotSupported, "TOSA %s: not implemented by the TOSA executor", a.name());
  }
}

Error expect_inputs(const OpArgs& a, int n_min, int n_max) {
  if (a.num_inputs < n_min || a.num_inputs > n_max) {
    return fail(Error::InvalidProgram, "TOSA %s: expected %d..%d inputs, got %d", a.name(), n_min,
                n_max, a.num_inputs);
  }
  for (int i = 0; i < a.num_inputs; ++i) {
    if (a.in(i).data == nullptr && a.in(i).numel > 0) {
      return fail(Error::InvalidProgram, "TOSA %s: input %d ('%s') has no data", a.name(), i,
                  a.in(i).name);
    }
  }
  return Error::Ok;
}

Error expect_rank(const OpArgs& a, const TosaTensor& t, int rank, const char* what) {
  if (t.rank != rank) {
    return fail(Error::InvalidProgram, "TOSA %s: %s '%s' has rank %d, expected %d", a.name(), what,
                t.name, t.rank, rank);
  }
  return Error::Ok;
}

Error expect_dtype(const OpArgs& a, const TosaTensor& t, tosa::DType d, const char* what) {
  if (t.dtype != d) {
    return fail(Error::NotSupported, "TOSA %s: %s '%s' is %s, expected %s", a.name(), what, t.name,
                tosa::EnumNameDType(t.dtype), tosa::EnumNameDType(d));
  }
  return Error::Ok;
}

Error read_zero_point(const OpArgs& a, const TosaTensor& t, const char* what, int32_t* zp) {
  if (t.numel != 1 || t.data == nullptr) {
    return fail(Error::InvalidProgram, "TOSA %s: %s '%s' must be a one-element constant", a.name(),
                what, t.name);
  }
  if (t.dtype == tosa::DType::FP32) {
    float f;
    __builtin_memcpy(&f, t.data, 4);
    if (f != 0.0f) {
      return fail(Error::InvalidProgram, "TOSA %s: float %s must be 0", a.name(), what);
    }
    *zp = 0;
    return Error::Ok;
  }
  if (!is_int_dtype(t.dtype)) {
    return fail(Error::NotSupported, "TOSA %s: %s '%s' has dtype %s", a.name(), what, t.name,
                tosa::EnumNameDType(t.dtype));
  }
  *zp = int32_t(load_int(t, 0));
  return Error::Ok;
}

Error read_int_vec(const OpArgs& a, const flatbuffers::Vector<int32_t>* v, int n, const char* what,
                   int32_t* out) {
  if (v == nullptr || int(v->size()) != n) {
    return fail(Error::InvalidProgram, "TOSA %s: attribute %s must have %d values, has %d",
                a.name(), what, n, v ? int(v->size()) : 0);
  }
  for (int i = 0; i < n; ++i) out[i] = v->Get(i);
  return Error::Ok;
}

}  // namespace pteron::tosa_rt
