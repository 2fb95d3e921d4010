#version 450
// One input of a cat: the input viewed as [outer, block_in] is copied into the output viewed
// as [outer, block_out] at column `offset` (block = the axis size times the inner elements).
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_COPY_BLOCK_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    STORE((i / p.block_in) * p.block_out + p.offset + i % p.block_in, IN0(i));
  }
}
