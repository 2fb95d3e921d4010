// quantized_max_pool2d_nhwc on hosted CPUs: 64 channels a step with AVX-512 BW, the same bytes
// as the scalar reference (op_quantized_max_pool2d.cpp); called where has_avx512().
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/pool_params.h"

namespace pteron::cortex_m::host {

#if defined(__x86_64__)
void max_pool_avx512(const int8_t* in, int8_t* out, const MaxPoolParams& p);
#endif

}  // namespace pteron::cortex_m::host
