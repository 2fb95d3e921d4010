// The "optimized" kernel library for `--backends optimized,portable`: its kernels register under
// "optimized" in the runtime (kernels/optimized), and its passes rewrite graphs into the ops only
// it has (pteron::sdpa, fused linear+relu, Winograd convolution, ...). The passes live in
// compiler/passes, where the pattern helpers they share are.
#include "compiler/partition/registry.h"
#include "compiler/passes/attention_kv.h"
#include "compiler/passes/fuse_attention.h"
#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/passes/fuse_linear_relu.h"
#include "compiler/passes/fuse_rms_norm.h"
#include "compiler/passes/fuse_silu_mul.h"
#include "compiler/passes/quantized_linear.h"
#include "compiler/passes/winograd_conv.h"

namespace pteron::optimized::aot {
namespace {

// quantized_linear first: it rewrites torchao's aten::linear / embedding patterns, which the
// fusions after it would otherwise see as float linears; attention_kv after fuse_attention,
// whose pteron::sdpa it rewrites.
const bool registered = compiler::register_kernel_library(compiler::KernelLibrary{
    "optimized",
    "optimized",
    {{"quantized_linear", compiler::context_free(compiler::quantized_linear)},
     {"fuse_attention", compiler::context_free(compiler::fuse_attention)},
     {"attention_kv", compiler::context_free(compiler::attention_kv)},
     {"fuse_linear_relu", compiler::context_free(compiler::fuse_linear_relu)},
     {"fuse_silu_mul", compiler::context_free(compiler::fuse_silu_mul)},
     {"fuse_rms_norm", compiler::context_free(compiler::fuse_rms_norm)},
     {"fuse_conv_relu", compiler::context_free(compiler::fuse_conv_relu)},
     {"winograd_conv", compiler::context_free(compiler::winograd_conv)}}});

}  // namespace
}  // namespace pteron::optimized::aot
