// quantized_add's and quantized_mul's arguments after checking (op_quantized_add.cpp,
// op_quantized_mul.cpp), shared with their host paths.
#pragma once

#include <cstdint>

namespace pteron::cortex_m {

constexpr int32_t kAddLeftShift = 20;  // headroom bits for int8 inputs, as TFLite and CMSIS-NN

struct AddParams {
  int32_t zp1, mult1, shift1, zp2, mult2, shift2, out_zp, out_mult, out_shift, act_min, act_max;
};

struct MulParams {
  int32_t zp1, zp2, out_zp, out_mult, out_shift;
};

}  // namespace pteron::cortex_m
