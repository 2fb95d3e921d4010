#version 450
// The fp16 region boundary: out = in0 converted from float16_t to float (round to nearest even).
// Compiled once (not in an fp32/fp16 pair).
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { float out_[]; };
layout(std430, set = 0, binding = 1) readonly buffer In0 { float16_t in0[]; };
#define PTERON_CONVERT_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) out_[i] = float(in0[i]);
}
