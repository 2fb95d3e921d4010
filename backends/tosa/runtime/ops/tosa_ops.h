// The executor's operator implementations. Each takes the operator's flatbuffer record (for
// its attribute) and its input and output tensors, checks what it relies on, and returns an
// error naming the op otherwise (a malformed graph never crashes the executor).
#pragma once

#include <cstdint>

#include "backends/tosa/runtime/tosa_tensor.h"
#include "runtime/core/error.h"

namespace pteron::tosa_rt {

struct OpArgs {
  tosa::Op op;
  const tosa::TosaOperator* fb;
  TosaTensor* tensors;
  const int32_t* in_ids;
  int32_t num_inputs;
  const int32_t* out_ids;
  int32_t num_outputs;

  TosaTensor& in(int i) const { return tensors[in_ids[i]]; }
  TosaTensor& out(int i) const { return tensors[out_ids[i]]; }
  const char* name() const { return tosa::EnumNameOp(op); }
};

// True for the operators run_op implements (CONST and CONST_SHAPE included).
bool op_supported(tosa::Op op);

Error run_op(const OpArgs& a);

// Per-family entry points (ops/*.cpp).
Error run_conv2d(const OpArgs& a);
Error run_depthwise_conv2d(const OpArgs& a);
Error run_matmul(const OpArgs& a);
Error run_avg_pool2d(const OpArgs& a);
Error run_max_pool2d(const OpArgs& a);
Error run_binary(const OpArgs& a);  // ADD, SUB, MUL, MAXIMUM, MINIMUM
Error run_rescale(const OpArgs& a);
Error run_clamp(const OpArgs& a);
Error run_table(const OpArgs& a);
Error run_reshape(const OpArgs& a);  // RESHAPE, IDENTITY
Error run_transpose(const OpArgs& a);
Error run_pad(const OpArgs& a);
Error run_resize(const OpArgs& a);  // NEAREST, BILINEAR (int8, fp32)
Error run_concat(const OpArgs& a);
Error run_slice(const OpArgs& a);
Error run_reduce(const OpArgs& a);  // REDUCE_SUM, REDUCE_MAX, REDUCE_MIN

// Shared checks.
Error expect_inputs(const OpArgs& a, int n_min, int n_max);
Error expect_rank(const OpArgs& a, const TosaTensor& t, int rank, const char* what);
Error expect_dtype(const OpArgs& a, const TosaTensor& t, tosa::DType d, const char* what);
// Reads a zero-point tensor ([1] of an integer dtype, or FP32 which must be 0).
Error read_zero_point(const OpArgs& a, const TosaTensor& t, const char* what, int32_t* zp);
// A fixed-size int32 vector attribute of exactly n values.
Error read_int_vec(const OpArgs& a, const flatbuffers::Vector<int32_t>* v, int n, const char* what,
                   int32_t* out);

}  // namespace pteron::tosa_rt
