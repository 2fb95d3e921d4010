#version 450
// 3x3 depthwise convolution, stride 2 (body: conv2d_dw3x3.glsl).
#define STRIDE 2
#include "conv2d_dw3x3.glsl"
