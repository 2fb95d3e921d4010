// quantized_add on hosted CPUs: 16 elements a step with AVX-512, bit for bit the scalar
// reference (op_quantized_add.cpp); defined in add_avx512.cpp, called where has_avx512().
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/add_params.h"

namespace pteron::cortex_m::host {

#if defined(__x86_64__)
void add_avx512(const int8_t* a, const int8_t* b, int8_t* out, int64_t n, const AddParams& p);
#endif

}  // namespace pteron::cortex_m::host
