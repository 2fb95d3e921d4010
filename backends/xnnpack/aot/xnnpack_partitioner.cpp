#include "backends/xnnpack/aot/xnnpack_partitioner.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <unordered_map>

#include "backends/xnnpack/aot/xnnpack_lowering.h"
#include "backends/xnnpack/aot/xnnpack_op_info.h"
#include "compiler/cost/cost_model.h"
#include "compiler/ir/kernel_call_form.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/ir/work.h"
#include "compiler/partition/library_coverage.h"
#include "compiler/partition/registry.h"
#include "compiler/target/target.h"
#include "runtime/kernel/kernel.h"

namespace pteron::xnnpack {
namespace {

using namespace aot;  // NOLINT: the op facts this file's rules are written in
namespace ops = compiler::ops;
using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::ScalarType;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

// ---- support rules ----

std::string check_float_activation(const Graph& g, ValueId v, const char* what) {
  const TensorSpec& s = g.value(v).spec;
  if (s.dtype != ScalarType::Float) {
    return std::string(what) + " is " + compiler::ir::dtype_name(s.dtype) +
           " (XNNPACK fp32 path takes f32)";
  }
  if (s.rank() > 6)
    return std::string(what) + " has rank " + std::to_string(s.rank()) + " (XNNPACK: at most 6)";
  for (int64_t d : s.sizes) {
    if (d < 1) return std::string(what) + " has an empty dimension " + shape_str(s.sizes);
  }
  return {};
}

std::string check_qdq(const Graph& g, const Node& n);

// A weight or bias the lowering reads at compile time: an fp32 constant, or a constant that a
// dequantize this partitioner claims turns into one (PT2E's int8 weights and int32 biases).
std::string check_constant(const Graph& g, const Argument& a, const char* what) {
  if (a.is_none()) return {};
  const Value& v = g.value(a.tensor());
  if (const Node* dq = weight_dequantize(g, v.id)) {
    if (std::string why = check_qdq(g, *dq); !why.empty())
      return std::string(what) + " is dequantized as the region cannot be: " + why;
    return {};
  }
  if (!v.is_constant())
    return std::string(what) + " is not a constant (XNNPACK needs static weights)";
  if (v.spec.dtype != ScalarType::Float)
    return std::string(what) + " is " + compiler::ir::dtype_name(v.spec.dtype) + ", not f32";
  return {};
}

// A flatten [N, C, H, W] -> [N, C*H*W] whose every reader is a linear layer with a constant
// weight: in NHWC the flattened order is (h, w, c), which the lowering absorbs by permuting
// the weight's input columns at compile time (no transpose at run time).
bool is_flatten_into_linears(const Graph& g, const Node& n) {
  const TensorSpec& in = g.value(n.inputs()[0]).spec;
  const ValueId y = n.outputs[0];
  const TensorSpec& out = g.value(y).spec;
  if (in.rank() != 4 || out.rank() != 2 || out.sizes[0] != in.sizes[0]) return false;
  const Value& v = g.value(y);
  if (v.users.empty() || std::find(g.outputs().begin(), g.outputs().end(), y) != g.outputs().end())
    return false;
  for (NodeId u : v.users) {
    const Node& user = g.node(u);
    const Kind k = info_of(user).kind;
    if (k != Kind::kLinear && k != Kind::kAddmm && k != Kind::kMm) return false;
    if (user.arg(linear_input_name(k)).tensor() != y) return false;
    if (!g.value(user.arg(linear_weight_name(k)).tensor()).is_constant()) return false;
  }
  return true;
}

// quantize / dequantize of int8 (PT2E form): activations per tensor; weights (constants) per
// tensor or per output channel; and the dequantize of an int32 constant (a PT2E bias, quantized
// with input scale x weight scale), which the lowering reads at compile time as a weight.
std::string check_qdq(const Graph& g, const Node& n) {
  const Value& x = g.value(n.arg("input").tensor());
  const std::string op = n.op.str();
  const ScalarType dtype = n.arg("dtype").get<ScalarType>();
  const bool int32_constant = op != kQuantize && dtype == ScalarType::Int && x.is_constant();
  if (dtype != ScalarType::Char && !int32_constant)
    return "quantization to a dtype other than int8 (int32: dequantized constants only)";
  if (!int32_constant && (n.arg("quant_min").to_int() < -128 || n.arg("quant_max").to_int() > 127))
    return "quantization range beyond int8";
  if (op == kDequantizeChannel) {
    if (!x.is_constant())
      return "per-channel dequantize of an activation (XNNPACK: per-channel weights only)";
    if (!g.value(n.arg("scales").tensor()).is_constant())
      return "per-channel scales are not constant";
    if (!n.arg("zero_points").is_none() && !g.value(n.arg("zero_points").tensor()).is_constant())
      return "zero points not constant";
    if (n.arg("axis").to_int() != 0)
      return "per-channel dequantize along axis " + std::to_string(n.arg("axis").to_int()) +
             " (0 only)";
  }
  if (op != kQuantize && !n.arg("out_dtype").is_none() &&
      n.arg("out_dtype").get<ScalarType>() != ScalarType::Float) {
    return "dequantize to a dtype other than f32";
  }
  if (x.spec.dtype != (op == kQuantize ? ScalarType::Float : dtype))
    return "unexpected input dtype";
  if (x.spec.rank() == 0 || x.spec.rank() > 6) return "rank " + std::to_string(x.spec.rank());
  return {};
}

std::string check_node(const Graph& g, const Node& n) {
  const OpInfo info = info_of(n);
  const std::string op = n.op.str();
  if (info.kind == Kind::kUnsupported) {
    if (compiler::ir::any_overload_of(
            n, {ops::aten::permute, ops::aten::permute_copy, ops::aten::transpose_int,
                ops::aten::transpose_copy_int})) {
      return op + ": this XNNPACK snapshot has no transpose";
    }
    if (op == kQuantize || op == kDequantize || op == kDequantizeChannel) return check_qdq(g, n);
    if (op.rfind("quantized_decomposed::", 0) == 0)
      return op + ": only per-tensor int8 activations and int8 weights";
    return op + " is not among the operators this XNNPACK snapshot runs";
  }
  if (n.outputs.empty() || n.outputs[0] == compiler::ir::kNoValue) return "no output";
  const ValueId out = n.outputs[0];
  if (std::string why = check_float_activation(g, out, "output"); !why.empty()) return why;
  const TensorSpec& os = g.value(out).spec;
  if (os.rank() == 0) return "0-d output";
  for (size_t i = 1; i < n.outputs.size(); ++i) {
    const ValueId extra = n.outputs[i];
    if (extra == compiler::ir::kNoValue) continue;
    const Value& v = g.value(extra);
    const bool graph_output =
        std::find(g.outputs().begin(), g.outputs().end(), extra) != g.outputs().end();
    if (!v.users.empty() || graph_output)
      return "output " + std::to_string(i) + " (e.g. pool indices) is used";
  }
  // Every non-constant tensor input is an fp32 activation (or a dequantized weight).
  for (ValueId v : n.inputs()) {
    if (is_static(g, v)) continue;
    if (std::string why = check_float_activation(g, v, "input"); !why.empty()) return why;
    // XNNPACK holds a 0-d value as [1]; the delegate binds boundary tensors by exact sizes.
    if (g.value(v).spec.rank() == 0) return "0-d input";
  }
  switch (info.kind) {
    case Kind::kConv: {
      const Value& x = input_value(g, n, "input");
      const Value& w = input_value(g, n, "weight");
      if (x.spec.rank() != 4 || w.spec.rank() != 4)
        return "only 2-D convolution (4-D input and weight)";
      if (n.arg("transposed").get<bool>()) return "transposed convolution is not lowered";
      if (std::string why = check_constant(g, n.arg("weight"), "weight"); !why.empty()) return why;
      if (std::string why = check_constant(g, n.arg("bias"), "bias"); !why.empty()) return why;
      const int64_t groups = n.arg("groups").to_int();
      if (groups < 1 || x.spec.sizes[1] % groups != 0 || w.spec.sizes[0] % groups != 0)
        return "bad groups";
      return {};
    }
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm: {
      const char* in_name =
          info.kind == Kind::kLinear ? "input" : (info.kind == Kind::kAddmm ? "mat1" : "self");
      const char* w_name = info.kind == Kind::kLinear ? "weight" : "mat2";
      const Value& x = input_value(g, n, in_name);
      if (x.spec.rank() < 2 || x.spec.rank() == 4) {
        return "linear input of rank " + std::to_string(x.spec.rank()) +
               " (XNNPACK keeps 4-D values NHWC; ranks 2, 3, 5, 6 only)";
      }
      if (std::string why = check_constant(g, n.arg(w_name), "weight"); !why.empty()) return why;
      if (g.value(n.arg(w_name).tensor()).spec.rank() != 2) return "weight is not 2-D";
      if (info.kind == Kind::kLinear) return check_constant(g, n.arg("bias"), "bias");
      if (info.kind == Kind::kAddmm) {
        if (n.arg("beta").to_double() != 1.0 || n.arg("alpha").to_double() != 1.0)
          return "addmm with alpha/beta != 1";
        if (std::string why = check_constant(g, n.arg("self"), "bias"); !why.empty()) return why;
        const auto& bs = g.value(n.arg("self").tensor()).spec.sizes;
        const int64_t cols = g.value(n.arg("mat2").tensor()).spec.sizes[1];
        if (numel(bs) != cols || (bs.size() == 2 && bs[0] != 1))
          return "addmm bias is not one value per output column";
      }
      return {};
    }
    case Kind::kBinary: {
      if (info.scalar_other || op == ops::aten::add_Tensor || op == ops::aten::sub_Tensor) {
        if (compiler::ir::any_overload_of(n, {ops::aten::add_Tensor, ops::aten::sub_Tensor})) {
          const bool other_constant =
              info.scalar_other || g.value(n.arg("other").tensor()).is_constant();
          if (n.arg("alpha").to_double() != 1.0 && !other_constant)
            return "alpha != 1 with a non-constant other";
        }
      }
      if (info.scalar_other) return {};
      for (const char* name : {"self", "other"}) {
        const Value& v = input_value(g, n, name);
        if (v.is_constant()) {
          if (v.spec.dtype != ScalarType::Float)
            return std::string(name) + " constant is " + compiler::ir::dtype_name(v.spec.dtype);
          continue;
        }
        if (os.rank() == 4 && v.spec.rank() != 4) {
          return std::string("broadcasts a ") + std::to_string(v.spec.rank()) +
                 "-D activation against a 4-D one (4-D values are NHWC inside XNNPACK)";
        }
      }
      return {};
    }
    case Kind::kClampLike: {
      const OutputRange r = clamp_range(n);
      if (!(r.min <= r.max)) return "clamp with min > max";
      return {};
    }
    case Kind::kUnary:
      return {};
    case Kind::kLeakyRelu:
    case Kind::kHardsigmoid:
      return {};
    case Kind::kElu:
      if (n.arg("scale").to_double() != 1.0 || n.arg("input_scale").to_double() != 1.0) {
        return "elu with scale or input_scale != 1";
      }
      return {};
    case Kind::kSoftmax: {
      int64_t dim = n.arg("dim").to_int();
      const int64_t r = int64_t(os.rank());
      if (dim < 0) dim += r;
      if (n.arg("half_to_float").get<bool>()) return "softmax with half_to_float";
      const int64_t innermost = r == 4 ? 1 : r - 1;
      if (dim != innermost) {
        return "softmax over dim " + std::to_string(dim) + " (XNNPACK: innermost dim only" +
               (r == 4 ? "; 4-D values are NHWC, so only dim 1)" : ")");
      }
      return {};
    }
    case Kind::kSquare:
      if (n.arg("exponent").to_double() != 2.0) return "pow with an exponent other than 2";
      return {};
    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      const Value& x = input_value(g, n, "self");
      if (x.spec.rank() != 4)
        return "pool on a " + std::to_string(x.spec.rank()) + "-D tensor (4-D only)";
      const auto k = int_list(n, "kernel_size");
      if (pair_at(k, 0, 1) * pair_at(k, 1, 1) < 2) return "pool of a single element";
      const bool ceil = n.arg("ceil_mode").get<bool>();
      const auto pad = int_list(n, "padding");
      if (info.kind == Kind::kMaxPool) {
        const auto dil = int_list(n, "dilation");
        if (ceil && (pair_at(dil, 0, 1) != 1 || pair_at(dil, 1, 1) != 1))
          return "dilation with ceil_mode";
        return {};
      }
      if (!n.arg("divisor_override").is_none()) return "avg_pool2d with divisor_override";
      const bool pads = pair_at(pad, 0, 0) || pair_at(pad, 1, 0);
      if (pads && n.arg("count_include_pad").get<bool>()) {
        return "avg_pool2d with padding and count_include_pad=True (XNNPACK divides by input "
               "pixels only)";
      }
      if (ceil) {
        const auto s = int_list(n, "stride");
        for (size_t i = 0; i < 2; ++i) {
          const int64_t in = x.spec.sizes[2 + i], kk = pair_at(k, i, 1), st = pair_at(s, i, kk),
                        p = pair_at(pad, i, 0);
          if ((in + 2 * p - kk) / st + 1 != os.sizes[2 + i])
            return "avg_pool2d ceil_mode changes the output size";
        }
      }
      return {};
    }
    case Kind::kGlobalPool: {
      const Value& x = input_value(g, n, "self");
      if (x.spec.rank() != 4)
        return "mean over a " + std::to_string(x.spec.rank()) + "-D tensor (only 4-D H,W)";
      if (op == ops::aten::mean_dim) {
        std::vector<int64_t> dims = int_list(n, "dim");
        for (int64_t& d : dims) d = d < 0 ? d + 4 : d;
        std::sort(dims.begin(), dims.end());
        if (dims != std::vector<int64_t>{2, 3}) return "mean over dims other than H,W";
        if (!n.arg("dtype").is_none()) return "mean with dtype";
        return {};
      }
      const auto size = int_list(n, "output_size");
      if (size.size() != 2 || size[0] != 1 || size[1] != 1)
        return "adaptive_avg_pool2d with output size other than 1x1";
      return {};
    }
    case Kind::kPad: {
      const auto pad = int_list(n, "pad");
      for (int64_t p : pad) {
        if (p < 0) return "negative padding (cropping)";
      }
      if (pad.size() % 2 || pad.size() / 2 > g.value(n.arg("self").tensor()).spec.rank())
        return "bad pad list";
      return {};
    }
    case Kind::kReshape: {
      const Value& x = g.value(n.inputs()[0]);
      std::string why = reshape_reason(x.spec.sizes, os.sizes);
      if (!why.empty() && is_flatten_into_linears(g, n)) return {};
      return why;
    }
    case Kind::kResize: {
      const Value& x = g.value(n.inputs()[0]);
      if (x.spec.rank() != 4) return "upsample on a non-4-D tensor";
      if (op == ops::aten::upsample_bilinear2d_vec && !n.arg("scale_factors").is_none()) {
        const auto& sf = n.arg("scale_factors").get<std::vector<double>>();
        for (size_t i = 0; i < sf.size() && i < 2; ++i) {
          if (double(x.spec.sizes[2 + i]) * sf[i] != double(os.sizes[2 + i]))
            return "upsample with a non-integral scale factor";
        }
      }
      return {};
    }
    case Kind::kResizeNearest: {
      const Value& x = g.value(n.inputs()[0]);
      if (x.spec.rank() != 4) return "upsample on a non-4-D tensor";
      double scales[2] = {0.0, 0.0};
      if (op == ops::aten::upsample_nearest2d_vec) {
        if (!n.arg("scale_factors").is_none()) {
          const auto& sf = n.arg("scale_factors").get<std::vector<double>>();
          for (size_t i = 0; i < sf.size() && i < 2; ++i) scales[i] = sf[i];
        }
      } else {
        for (int i = 0; i < 2; ++i) {
          const auto& a = n.arg(i == 0 ? "scales_h" : "scales_w");
          if (!a.is_none()) scales[i] = a.to_double();
        }
      }
      for (int i = 0; i < 2; ++i) {
        std::string why = nearest_upsample_reason(x.spec.sizes[2 + i], os.sizes[2 + i], scales[i]);
        if (!why.empty()) return why;
      }
      return {};
    }
    case Kind::kConvert:
      return "dtype conversions are not delegated (fp32 path)";
    default:
      return op + " is not among the operators this XNNPACK snapshot runs";
  }
}

// ---- cost rule: the optimized kernel library ----

// Whether `n` computes in int8 terms: it reads a dequantized value or feeds a quantize (PT2E
// form). Such nodes stay in XNNPACK's int8 regions whatever the kernel libraries.
bool in_quantized_context(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs()) {
    const NodeId p = g.value(v).producer;
    if (p == compiler::ir::kNoNode) continue;
    const std::string op = g.node(p).op.str();
    if (op == kDequantize || op == kDequantizeChannel) return true;
  }
  for (ValueId out : n.outputs) {
    if (out == compiler::ir::kNoValue) continue;
    for (NodeId u : g.value(out).users) {
      if (g.node(u).op.str() == kQuantize) return true;
    }
  }
  return false;
}

std::string optimized_kernel_faster(const Graph& g, const Node& n,
                                    const compiler::PartitionContext& context);

// Debian's XNNPACK (2022) runs every f32 add/sub/mul/div, convolution, linear and pool through
// its clamped (min/max) kernels: the snapshot has unclamped binary kernels for WebAssembly
// only, so output_min = -inf, output_max = +inf still clamp. On x86 the clamp is SSE/AVX
// maxps(y, min), which returns min when y is NaN: a NaN comes out as -inf where torch gives
// NaN. NEON's fmax propagates NaN, so Arm targets keep it.
//
// Where a NaN enters: a value XNNPACK's clamp produced holds none (it became -inf already), so
// arithmetic on such values changes nothing more (up to inf - inf). Arithmetic on any other
// value (a graph input, a kernel-library result, a view or unclamped op of one) could receive a
// NaN and would silently lose it: on x86 that arithmetic stays on the kernel libraries, which
// keep NaN as torch does. So residual adds after convolutions stay inside XNNPACK's regions.
using NanFreeMemo = std::unordered_map<ValueId, bool>;
bool nan_free_in_xnnpack(const Graph& g, ValueId v, const compiler::PartitionContext& context,
                         NanFreeMemo& memo);

bool inputs_nan_free(const Graph& g, const Node& n, const compiler::PartitionContext& context,
                     NanFreeMemo& memo) {
  for (ValueId in : n.inputs()) {
    if (!is_static(g, in) && !nan_free_in_xnnpack(g, in, context, memo)) return false;
  }
  return true;
}

// Whether `v` is produced inside XNNPACK with no NaN left: by a node XNNPACK runs whose kernel
// clamps (convolution, linear, pools, clamp, arithmetic kept there), or by a reshape, pad or
// resize XNNPACK runs over such values.
bool nan_free_in_xnnpack(const Graph& g, ValueId v, const compiler::PartitionContext& context,
                         NanFreeMemo& memo) {
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  bool result = false;
  const NodeId id = g.value(v).producer;
  if (id != compiler::ir::kNoNode) {
    const Node& p = g.node(id);
    if (check_node(g, p).empty() && optimized_kernel_faster(g, p, context).empty()) {
      switch (info_of(p).kind) {
        case Kind::kConv:
        case Kind::kLinear:
        case Kind::kAddmm:
        case Kind::kMm:
        case Kind::kMaxPool:
        case Kind::kAvgPool:
        case Kind::kGlobalPool:
        case Kind::kClampLike:
        case Kind::kResizeNearest:  // a depthwise deconvolution: clamped
          result = true;
          break;
        case Kind::kUnary:
          // Sigmoid maps every non-NaN value (infinities too) into [0, 1], so a gate over
          // clamped values has no NaN to lose: SiLU's x * sigmoid(x) and squeeze-excite's
          // x * sigmoid(s) stay in the region. (This XNNPACK's x86 sigmoid was measured giving
          // NaN for some huge finite inputs, +-1e30, where torch gives 1 and 0: such a value is
          // wrong before any multiply, kept in the region or not.)
          result = info_of(p).unary == UnaryOp::kSigmoid && inputs_nan_free(g, p, context, memo);
          break;
        case Kind::kBinary:       // clamped, where this rule keeps it in XNNPACK
        case Kind::kHardsigmoid:  // a clamped multiply and add, under the same rule
        case Kind::kReshape:
        case Kind::kPad:
        case Kind::kResize:
          result = inputs_nan_free(g, p, context, memo);
          break;
        default:
          break;
      }
    }
  }
  memo[v] = result;
  return result;
}

// Whether the program's runtime runs XNNPACK's x86 kernels: the target's arch, or the compiling
// machine's for "native" (the host target) and outside a compile.
bool target_runs_x86(const compiler::PartitionContext& context) {
  const compiler::Target* t = context.target;
  const std::string arch = t ? t->cpu_arch : "native";
  if (arch == "native") {
#if defined(__x86_64__) || defined(__i386__)
    return true;
#else
    return false;
#endif
  }
  return arch.rfind("x86", 0) == 0 || arch == "amd64" || arch.rfind("i686", 0) == 0;
}

std::string x86_nan_refusal(const Graph& g, const Node& n,
                            const compiler::PartitionContext& context) {
  const OpInfo info = info_of(n);
  if ((info.kind != Kind::kBinary && info.kind != Kind::kHardsigmoid &&
       info.kind != Kind::kSoftmax) ||
      in_quantized_context(g, n) || !target_runs_x86(context))
    return {};
  const BinaryOp b = info.binary;
  if (info.kind == Kind::kBinary && b != BinaryOp::kAdd && b != BinaryOp::kSubtract &&
      b != BinaryOp::kMultiply && b != BinaryOp::kDivide)
    return {};
  NanFreeMemo memo;
  if (inputs_nan_free(g, n, context, memo)) return {};
  // Softmax: a row holding NaN, or all -inf (a fully masked row: torch.masked.softmax, a -inf
  // attention mask), is NaN in torch; this XNNPACK's x86 softmax gives -inf there.
  if (info.kind == Kind::kSoftmax)
    return "x86: a row may hold NaN or be all -inf (a fully masked row), where torch's softmax "
           "gives NaN and this XNNPACK's x86 softmax -inf; the kernel libraries give NaN";
  return "x86: an input may hold NaN, which this XNNPACK's clamped arithmetic turns into -inf "
         "(SSE/AVX max); the kernel libraries keep NaN as torch does";
}

// When the compile's kernels include the optimized library: why `n` (which XNNPACK could run)
// is faster there, or "" to keep it. Measured in bench/results/xnnpack_vs_optimized.md.
std::string optimized_kernel_faster(const Graph& g, const Node& n,
                                    const compiler::PartitionContext& context) {
  if (!context.has_kernel_library("optimized")) return {};
  if (in_quantized_context(g, n)) return {};
  const OpInfo info = info_of(n);
  switch (info.kind) {
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm: {
      const TensorSpec& x = input_value(g, n, linear_input_name(info.kind)).spec;
      const int64_t k = x.sizes.back();
      const int64_t rows = k > 0 ? x.numel() / k : 0;
      if (rows < kMinRowsForOptimizedLinear) return {};  // XNNPACK's GEMV path is as fast
      const int64_t cols = g.value(n.outputs[0]).spec.sizes.back();
      return "optimized kernel faster: SGEMM " + std::to_string(rows) + "x" + std::to_string(k) +
             "x" + std::to_string(cols) + " (" + std::to_string(rows) +
             " rows >= " + std::to_string(kMinRowsForOptimizedLinear) +
             "; this XNNPACK's fp32 GEMM is 1.1-2x slower there)";
    }
    case Kind::kSoftmax:
      // XNNPACK takes a 4-D softmax over channels (dim 1, NHWC inside), which the optimized
      // kernel would hand to the portable one: only the last-dim softmax moves.
      if (g.value(n.outputs[0]).spec.rank() == 4) return {};
      return "optimized kernel faster: softmax over the last dim (and the optimized library "
             "fuses attention's bmm, scale, mask and softmax into pteron::sdpa, which XNNPACK "
             "would split)";
    default:
      return {};
  }
}

// Whether the optimized library has a kernel for `n` (views cost nothing on either side).
bool optimized_library_runs(const Node& n) {
  if (info_of(n).kind == Kind::kReshape) return true;
  const compiler::KernelLibrary* lib = compiler::find_kernel_library("optimized");
  const compiler::ir::OpSchema* schema = compiler::kernel_schema_for(n);
  if (lib == nullptr || schema == nullptr) return false;
  const std::string qualified = schema->op.ns + "::" + schema->op.name + "." + schema->op.overload;
  for (const KernelEntry& e : registered_kernels()) {
    if (qualified == e.name && lib->runtime_library == e.library) return true;
  }
  return false;
}

// With the optimized library among the kernels, a region without convolution or pool whose
// every node that library runs (small linears, elementwise ops, views) is given back: its
// linears are GEMV-sized (fewer than kMinRowsForOptimizedLinear rows), where the SGEMM is as
// fast, so the region would only add its two boundaries. "" keeps the region.
std::string optimized_covers_region(const Graph& g, const Region& region,
                                    const compiler::PartitionContext& context) {
  if (!context.has_kernel_library("optimized")) return {};
  for (NodeId id : region.nodes) {
    const Node& n = g.node(id);
    switch (info_of(n).kind) {
      case Kind::kConv:
      case Kind::kMaxPool:
      case Kind::kAvgPool:
      case Kind::kGlobalPool:
        return {};
      default:
        break;
    }
    if (in_quantized_context(g, n) || !optimized_library_runs(n)) return {};
  }
  return "region of " + std::to_string(region.nodes.size()) +
         " node(s) without conv or pool, all of which the optimized kernels run as fast "
         "(linears of fewer than " +
         std::to_string(kMinRowsForOptimizedLinear) +
         " rows, elementwise ops, views): not worth its boundary";
}

// ---- cost rule: the boundary ----

double node_flops(const Graph& g, const Node& n) {
  const OpInfo info = info_of(n);
  const TensorSpec& out = g.value(n.outputs[0]).spec;
  const double o = double(out.numel());
  switch (info.kind) {
    case Kind::kConv:
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm:
      return 2.0 * double(compiler::multiply_adds(g, n));
    case Kind::kMaxPool:
    case Kind::kAvgPool: {
      const auto k = int_list(n, "kernel_size");
      return o * double(pair_at(k, 0, 1) * pair_at(k, 1, 1));
    }
    case Kind::kGlobalPool:
      return double(input_value(g, n, "self").spec.numel());
    case Kind::kReshape:
      return 0.0;
    default:
      return o;
  }
}

bool is_heavy(const Node& n) {
  switch (info_of(n).kind) {
    case Kind::kConv:
    case Kind::kLinear:
    case Kind::kAddmm:
    case Kind::kMm:
    case Kind::kMaxPool:
    case Kind::kAvgPool:
    case Kind::kGlobalPool:
      return true;
    default:
      return false;
  }
}

// The cost model's comparison of the region with the kernels it would run on otherwise;
// nullopt without a calibration or when the model cannot weigh the region.
std::optional<compiler::cost::RegionCost> region_cost(const Graph& g, const Region& region,
                                                      const compiler::PartitionContext& context) {
  if (context.calibration == nullptr) return std::nullopt;
  std::optional<compiler::cost::RegionCost> cost = compiler::cost::compare_region(
      *context.calibration, g, region.nodes, "xnnpack", context.kernel_libraries);
  // The int8 library takes what its lowering has patterns for; the rest of the region would run
  // float with conversions and transposes around it, weighed per element (checked only where
  // the kernels would win without it).
  if (cost && cost->kernels == "cortex-m" && cost->kernels_ns * cost->kMargin < cost->delegate_ns) {
    if (const compiler::KernelLibrary* library = compiler::find_kernel_library(cost->kernels)) {
      const compiler::LeftByLibrary left =
          compiler::left_by_library(g, region.nodes, *library, context);
      cost->kernels_leave = left.ops;
      cost->kernels_leave_ns = left.elements * cost->kLeftNsPerElement;
    }
  }
  return cost;
}

const bool g_registered = compiler::register_partitioner(
    "xnnpack",
    [](const compiler::BackendOptions&) { return std::make_unique<XnnpackPartitioner>(); });

}  // namespace

SupportDecision XnnpackPartitioner::supports(const Graph& graph, const Node& node,
                                             const compiler::PartitionContext& context) const {
  std::string why = check_node(graph, node);
  if (why.empty()) why = x86_nan_refusal(graph, node, context);
  if (why.empty()) why = optimized_kernel_faster(graph, node, context);
  return why.empty() ? SupportDecision::yes() : SupportDecision::no(why);
}

namespace {

// The fixed rules: the optimized kernels' cover of the region, then whether its work repays the
// boundary.
SupportDecision fixed_rules(const Graph& graph, const Region& region,
                            const compiler::PartitionContext& context) {
  if (std::string why = optimized_covers_region(graph, region, context); !why.empty())
    return SupportDecision::no(why);
  double flops = 0.0;
  bool heavy = false;
  for (NodeId n : region.nodes) {
    const Node& node = graph.node(n);
    heavy = heavy || is_heavy(node);
    flops += node_flops(graph, node);
  }
  if (heavy) return SupportDecision::yes();
  double bytes = 0.0;
  for (ValueId v : region.inputs) bytes += double(graph.value(v).spec.nbytes());
  for (ValueId v : region.outputs) bytes += double(graph.value(v).spec.nbytes());
  if (bytes == 0.0 || flops / bytes >= kMinFlopsPerBoundaryByte) return SupportDecision::yes();
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "region of %zu node(s) without conv, linear or pool does %.0f FLOPs for %.0f boundary "
      "bytes (%.2f FLOPs/byte < %.1f): cheaper on the kernels",
      region.nodes.size(), flops, bytes, flops / bytes, kMinFlopsPerBoundaryByte);
  return SupportDecision::no(buf);
}

}  // namespace

SupportDecision XnnpackPartitioner::worth_delegating(
    const Graph& graph, const Region& region, const compiler::PartitionContext& context) const {
  // With this machine's calibration, a region whose convolutions and matrix products the
  // model estimates faster on the kernels goes back to them. Otherwise the fixed rules decide:
  // they also weigh the region's boundary, which the model does not (a one-row linear
  // estimated the same on both sides is not worth two boundaries). A kept region carries the
  // estimates to its report.
  const std::optional<compiler::cost::RegionCost> cost = region_cost(graph, region, context);
  if (cost && cost->kernels_faster()) return SupportDecision::no(cost->describe());
  SupportDecision keep = fixed_rules(graph, region, context);
  if (keep.supported && cost) keep.report_json = cost->to_json();
  return keep;
}

LoweredRegion XnnpackPartitioner::lower(const Graph& graph, const Region& region,
                                        const compiler::PartitionContext& context) const {
  LoweredRegion lowered = aot::lower_region(graph, region);
  lowered.report_json = region.kept_because;  // the estimates, for `pteron inspect --delegation`
  return lowered;
}

bool xnnpack_partitioner_registered() { return g_registered; }

}  // namespace pteron::xnnpack
