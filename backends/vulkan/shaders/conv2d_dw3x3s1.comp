#version 450
// 3x3 depthwise convolution, stride 1 (body: conv2d_dw3x3.glsl).
#define STRIDE 1
#include "conv2d_dw3x3.glsl"
