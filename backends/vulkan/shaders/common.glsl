// Bindings every pteron compute shader uses: 0 is the output, 1..3 the inputs. One descriptor
// set layout and one pipeline layout then serve every shader; unused bindings point at a
// dummy range. Parameters come as push constants (<= 128 bytes, the Vulkan minimum).
//
// Each shader is compiled twice: fp32 storage, and with PTERON_FP16 fp16 storage (the
// `_f16` variants, run inside regions compiled with vulkan-fp16). Shaders read through
// IN0..IN2 (to float) and write through STORE (rounded to the storage type), so arithmetic
// is fp32 in both variants and only the storage halves.
#ifdef PTERON_FP16
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#else
#define T float
#endif
layout(std430, set = 0, binding = 0) writeonly buffer Out { T out_[]; };
layout(std430, set = 0, binding = 1) readonly buffer In0 { T in0[]; };
#ifdef PTERON_IN1_INDICES
// Int64 indices (embedding), read as pairs of 32-bit words (little-endian).
layout(std430, set = 0, binding = 2) readonly buffer In1 { uint in1[]; };
#else
layout(std430, set = 0, binding = 2) readonly buffer In1 { T in1[]; };
#endif
layout(std430, set = 0, binding = 3) readonly buffer In2 { T in2[]; };
#define IN0(i) float(in0[i])
#define IN1(i) float(in1[i])
#define IN2(i) float(in2[i])
#define STORE(i, v) out_[i] = T(v)
