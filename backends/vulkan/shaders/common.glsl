// Bindings every pteron compute shader uses: 0 is the output, 1..3 the inputs. One descriptor
// set layout and one pipeline layout then serve every shader; unused bindings point at a
// dummy range. Parameters come as push constants (<= 128 bytes, the Vulkan minimum).
layout(std430, set = 0, binding = 0) writeonly buffer Out { float out_[]; };
layout(std430, set = 0, binding = 1) readonly buffer In0 { float in0[]; };
layout(std430, set = 0, binding = 2) readonly buffer In1 { float in1[]; };
layout(std430, set = 0, binding = 3) readonly buffer In2 { float in2[]; };
