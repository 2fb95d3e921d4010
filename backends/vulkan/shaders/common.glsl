// Bindings every pteron compute shader uses: 0 is the output, 1..3 the inputs. One descriptor
// set layout and one pipeline layout then serve every shader; unused bindings point at a
// dummy range. Parameters come as push constants (<= 128 bytes, the Vulkan minimum).
//
// Each shader is compiled three times:
//   name       fp32 storage, fp32 arithmetic
//   name_f16   PTERON_FP16: fp16 storage, fp32 arithmetic (any device with 16-bit storage)
//   name_f16a  PTERON_FP16 + PTERON_FP16_ARITH: fp16 storage and fp16 arithmetic (devices
//              with shaderFloat16; chosen at load time for vulkan:fp16=on regions)
// Types: T is the storage type, F the compute type (float16_t only in `_f16a`), A the
// accumulator of reductions. IN0..IN2 read as F, STORE rounds to T.
//
// The mixed-precision rule of the `_f16a` variants (what GPU inference stacks do):
//   * elementwise arithmetic, activations, clamps, max-pooling and every product runs in F;
//   * a sum over a reduction (the dot products of linear/matmul/conv, softmax's denominator,
//     layer norm's mean and variance, mean/average pooling, bilinear upsampling's four taps)
//     accumulates in A = float: an fp16 accumulator loses everything below 2^-11 of the
//     running sum, i.e. the last ~1000 terms of OPT's K = 3072 dot products would be rounded
//     away; products are widened to A
//     (F x F -> F, then + in A: "fp16 multiply, fp32 accumulate");
//   * tanh, erf and the exp op run at fp32 (TF below): tanh's and erf's closed forms cancel near
//     0 (e - 1 with e ~ 1) and exp(2x) overflows fp16 for x > 5.5; an fp16 exp's relative error
//     grows with |x| (Vulkan allows 1 + 2|x| ulp; lavapipe: 3e-3 at x = 7.8, 6 times the
//     storage rounding). Softmax keeps its exp in F: its arguments are <= 0 and its results
//     <= 1, so the error stays below the output's rounding.
#ifdef PTERON_FP16
#extension GL_EXT_shader_16bit_storage : require
#define T float16_t
#else
#define T float
#endif
#ifdef PTERON_FP16_ARITH
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define F float16_t
#else
#define F float
#endif
#define A float
#define TF float
layout(std430, set = 0, binding = 0) writeonly buffer Out { T out_[]; };
layout(std430, set = 0, binding = 1) readonly buffer In0 { T in0[]; };
#ifdef PTERON_IN1_INDICES
// Int64 indices (embedding), read as pairs of 32-bit words (little-endian).
layout(std430, set = 0, binding = 2) readonly buffer In1 { uint in1[]; };
#else
layout(std430, set = 0, binding = 2) readonly buffer In1 { T in1[]; };
#endif
layout(std430, set = 0, binding = 3) readonly buffer In2 { T in2[]; };
#define IN0(i) F(in0[i])
#define IN1(i) F(in1[i])
#define IN2(i) F(in2[i])
#define STORE(i, v) out_[i] = T(v)
