// The int8 convolution (quantized_conv2d_nhwc, groups 1) on hosted CPUs: the Cortex-M kernels'
// numerics (CMSIS-NN requantisation, bit for bit the scalar reference) at the speed of the
// host's 8-bit dot-product instructions and threads, so that an int8 program lowered for the
// Cortex-M kernel set (`--backends cortex-m,portable` on the host) runs fast where it is
// compiled and tested, not only on the microcontroller.
//
// How: the filters are packed once per program into blocks of output channels laid out for the
// CPU's integer dot-product instruction (int8_tile.h: AVX-512 VNNI `vpdpbusd` on 32 channels a
// block, else AVX2 `vpmaddwd` on 16; kept in the loaded program's constant cache,
// runtime/kernel/constant_cache.h, with each filter's sum); tasks of up to 64 output pixels by
// up to 128 channels take im2col rows of their pixels in the tile's row format and run the tile
// on its rows at a time (8 or 6), on the shared thread pool.
#pragma once

#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m::host {

// Runs the convolution of `p` on this CPU's integer dot products (x86-64: AVX-512 VNNI or AVX2;
// host_isa.h)
// (input `in`, OHWI `weight`, NHWC `out`); false, having written nothing, when this CPU has no host
// path or the context has no scratch for it (the caller takes the scalar path).
// How `weight` holds w[oc][k]: OHWI rows (quantized_conv2d_nhwc), or quantized_linear_packed's
// layout (util/linear_packed.h), where the linear runs as a 1x1 convolution over its rows.
enum class WeightLayout { kRows, kLinearPacked };

bool conv2d(KernelContext& ctx, const int8_t* in, const Tensor& weight, int8_t* out,
            const ConvParams& p, WeightLayout layout = WeightLayout::kRows);

}  // namespace pteron::cortex_m::host
