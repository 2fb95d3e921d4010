#include "backends/vulkan/aot/vulkan_support.h"

#include <algorithm>
#include <cmath>

#include "backends/vulkan/aot/vulkan_ops.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {
namespace {

namespace ops = compiler::ops;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::shape_str;
using compiler::ir::TensorSpec;
using compiler::ir::ValueId;

// Ops next to supported ones that the delegate does not run, with the reason a user needs
// (the generic "not in the support table" would not say what to change).
const compiler::ir::OpTable<std::string>& known_refusals() {
  static const compiler::ir::OpTable<std::string> t = {
      {ops::aten::reflection_pad3d,
       "reflection padding of 3 dims (the Vulkan delegate pads the last 1 or 2)"},
      {ops::aten::replication_pad3d,
       "replication padding of 3 dims (the Vulkan delegate pads the last 1 or 2)"},
  };
  return t;
}

// fp32, contiguous, 1..6 dims of size >= 1 (rank 0 allowed), small enough for 32-bit indices.
std::string check_tensor(const Graph& g, ValueId v, const char* what) {
  const TensorSpec& s = g.value(v).spec;
  if (s.dtype != ScalarType::Float) {
    return std::string(what) + " is " + compiler::ir::dtype_name(s.dtype) +
           " (the Vulkan delegate runs fp32 only)";
  }
  if (s.rank() > kMaxDims) {
    return std::string(what) + " has rank " + std::to_string(s.rank()) + " (at most 6)";
  }
  for (int64_t d : s.sizes) {
    if (d < 1) return std::string(what) + " has an empty dimension " + shape_str(s.sizes);
  }
  if (!s.is_contiguous()) {
    return std::string(what) + " is not contiguous (the Vulkan delegate takes row-major tensors)";
  }
  if (s.nbytes() > (uint64_t{1} << 27)) {
    return std::string(what) + " is larger than 128 MiB (a storage buffer's range on lavapipe)";
  }
  return {};
}

std::string check_node(const Graph& g, const Node& n) {
  const auto it = op_kinds().find(n.op.str());
  if (it == op_kinds().end()) {
    const auto known = known_refusals().find(n.op.str());
    if (known != known_refusals().end()) return known->second;
    return "op " + n.op.str() + " is not in the Vulkan support table";
  }
  const Kind kind = it->second;
  if (n.outputs.empty() || n.outputs[0] == compiler::ir::kNoValue) return "no output";
  // Extra outputs (layer norm's mean and rstd) must be unused: the delegate does not make them.
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    const ValueId v = n.outputs[k];
    if (v == compiler::ir::kNoValue) continue;
    const auto& outs = g.outputs();
    if (!g.value(v).users.empty() || std::find(outs.begin(), outs.end(), v) != outs.end()) {
      return "output " + std::to_string(k) + " is used (the delegate computes only output 0)";
    }
  }
  for (ValueId v : n.inputs()) {
    // Embedding indices are i64 region inputs (read as such by the shader).
    if (kind == Kind::Embedding && v == n.arg("indices").tensor()) {
      const TensorSpec& s = g.value(v).spec;
      if (s.dtype != ScalarType::Long) return "embedding indices are not i64";
      if (g.value(v).is_constant())
        return "embedding indices are a constant (the delegate takes "
               "them as an input)";
      if (s.rank() + 1 > kMaxDims) return "embedding indices have too many dims";
      continue;
    }
    if (std::string why = check_tensor(g, v, "an input"); !why.empty()) return why;
  }
  if (std::string why = check_tensor(g, n.outputs[0], "the output"); !why.empty()) return why;
  const TensorSpec& out = g.value(n.outputs[0]).spec;
  switch (kind) {
    case Kind::Linear: {
      const TensorSpec& w = g.value(n.arg("weight").tensor()).spec;
      if (w.rank() != 2) return "linear weight must be 2-D, got " + shape_str(w.sizes);
      if (g.value(n.arg("input").tensor()).spec.rank() < 1) return "linear input is a scalar";
      const Argument& bias = n.arg("bias");
      if (!bias.is_none() && g.value(bias.tensor()).spec.rank() != 1) {
        return "linear bias must be 1-D";
      }
      return {};
    }
    case Kind::AddMm: {
      const TensorSpec& bias = g.value(n.arg("self").tensor()).spec;
      const int64_t cols = out.sizes.back();
      if (!(bias.rank() == 1 || (bias.rank() == 2 && bias.sizes[0] == 1)) ||
          bias.sizes.back() != cols) {
        return "addmm bias " + shape_str(bias.sizes) +
               " is not [N] or [1, N] (N = " + std::to_string(cols) + ")";
      }
      if (n.arg("beta").to_double() != 1.0 || n.arg("alpha").to_double() != 1.0) {
        return "addmm with beta or alpha other than 1";
      }
      return {};
    }
    case Kind::Mm:
    case Kind::Bmm:
      return {};
    case Kind::Add:
    case Kind::Sub:
      if (!std::isfinite(n.arg("alpha").to_double())) return "alpha is not finite";
      [[fallthrough]];
    case Kind::Mul:
    case Kind::Div: {
      // Outputs exactly the broadcast shape (checked again by the runtime's verifier). A scalar
      // operand becomes a one-element constant.
      if (!n.arg("self").is_tensor()) return "the first operand is a scalar";
      for (const char* operand : {"self", "other"}) {
        const Argument& a = n.arg(operand);
        if (!a.is_tensor()) {
          if (!std::isfinite(a.to_double())) return "a scalar operand is not finite";
          continue;
        }
        if (g.value(a.tensor()).spec.rank() > out.rank()) return "input rank > output";
      }
      if (kind == Kind::Div && has_arg(n, "rounding_mode") && !n.arg("rounding_mode").is_none()) {
        return "div with a rounding mode";
      }
      return {};
    }
    case Kind::Unary:
      if (n.op.str() == ops::aten::gelu) {
        const std::string& a = n.arg("approximate").get<std::string>();
        if (a != "none" && a != "tanh") return "gelu approximation '" + a + "'";
      }
      return {};
    case Kind::MaxPool:
    case Kind::AvgPool: {
      const TensorSpec& x = g.value(n.arg("self").tensor()).spec;
      if (x.rank() != 4) return "pooling input is not NCHW " + shape_str(x.sizes);
      const auto k = pair_of(n.arg("kernel_size"), {});
      if (k.size() != 2) return "pooling kernel must have 1 or 2 entries";
      const auto st = pair_of(n.arg("stride"), k);
      const auto pad = pair_of(n.arg("padding"), {0, 0});
      if (st.size() != 2 || pad.size() != 2)
        return "pooling stride/padding must have 1 or 2 entries";
      for (int i = 0; i < 2; ++i) {
        if (k[i] < 1 || st[i] < 1 || pad[i] < 0 || 2 * pad[i] > k[i]) {
          return "pooling kernel/stride/padding out of range";
        }
      }
      if (kind == Kind::MaxPool && pair_of(n.arg("dilation"), {1, 1}).size() != 2) {
        return "pooling dilation must have 1 or 2 entries";
      }
      if (kind == Kind::AvgPool && !n.arg("divisor_override").is_none() &&
          n.arg("divisor_override").to_int() <= 0) {
        return "avg_pool2d divisor_override <= 0";
      }
      return {};
    }
    case Kind::AdaptiveAvgPool:
      if (g.value(n.arg("self").tensor()).spec.rank() != 4)
        return "adaptive pooling input is not NCHW";
      return {};
    case Kind::UpsampleNearest:
    case Kind::UpsampleBilinear:
    case Kind::UpsampleAntialias: {
      const TensorSpec& x = g.value(n.inputs().front()).spec;  // "input", or "self" (_aa)
      if (x.rank() != 4) return "upsample input is not NCHW " + shape_str(x.sizes);
      if (out.rank() != 4 || out.sizes[0] != x.sizes[0] || out.sizes[1] != x.sizes[1]) {
        return "upsample output " + shape_str(out.sizes) + " is not [N, C, OH, OW]";
      }
      upsample_scales(n);  // refuses scale factors the payload cannot carry
      return {};
    }
    case Kind::ConstantPad:
    case Kind::ReflectionPad:
    case Kind::ReplicationPad: {
      const TensorSpec& x = g.value(n.arg("self").tensor()).spec;
      if (x.rank() < 1) return "padding a 0-D tensor";
      std::string why;
      const auto pads = pads_of(g, n, &why);
      if (!why.empty()) return why;
      std::vector<int64_t> want = x.sizes;
      for (size_t k = 0; k < 2 && k < want.size(); ++k) {
        const size_t d = want.size() - 1 - k;
        want[d] += pads[2 * k] + pads[2 * k + 1];
        if (kind == Kind::ReflectionPad &&
            (pads[2 * k] >= x.sizes[d] || pads[2 * k + 1] >= x.sizes[d])) {
          return "reflection padding " + shape_str(pads) + " not smaller than the input " +
                 shape_str(x.sizes);
        }
      }
      if (x.rank() == 1 && (pads[2] != 0 || pads[3] != 0)) return "padding 2 dims of a 1-D tensor";
      if (want != out.sizes) {
        return "pad output " + shape_str(out.sizes) + " is not the input plus the pads " +
               shape_str(want);
      }
      return {};
    }
    case Kind::Cat:
      if (out.rank() < 1) return "cat of scalars";
      return {};
    case Kind::Slice:
    case Kind::Select: {
      const TensorSpec& x = g.value(n.arg("self").tensor()).spec;
      const int64_t dim = norm_dim(n.arg("dim").to_int(), static_cast<int64_t>(x.rank()));
      if (dim < 0 || dim >= static_cast<int64_t>(x.rank())) return "dim out of range";
      if (kind == Kind::Slice && n.arg("step").to_int() < 1) return "slice step < 1";
      return {};
    }
    case Kind::Embedding: {
      const TensorSpec& w = g.value(n.arg("weight").tensor()).spec;
      if (w.rank() != 2) return "embedding weight is not 2-D";
      return {};
    }
    case Kind::Transpose:
      return {};
    case Kind::Relu:
      return {};
    case Kind::Clamp:
    case Kind::Hardtanh: {
      const Argument& lo = n.arg(kind == Kind::Clamp ? "min" : "min_val");
      const Argument& hi = n.arg(kind == Kind::Clamp ? "max" : "max_val");
      for (const Argument* bound : {&lo, &hi}) {
        if (!bound->is_none() && std::isnan(bound->to_double())) return "NaN bound";
      }
      if (!lo.is_none() && !hi.is_none() && lo.to_double() > hi.to_double()) return "min > max";
      return {};
    }
    case Kind::Conv: {
      const TensorSpec& x = g.value(n.arg("input").tensor()).spec;
      if (x.rank() != 4) return "convolution is not 2-D (input " + shape_str(x.sizes) + ")";
      if (n.arg("transposed").get<bool>()) return "transposed convolution";
      if (!g.value(n.arg("weight").tensor()).is_constant())
        return "convolution weight is not constant";
      for (const char* name : {"stride", "padding", "dilation"}) {
        const auto& v = n.arg(name).get<std::vector<int64_t>>();
        if (v.size() != 2) return "stride/padding/dilation must have 2 entries";
      }
      const auto& pad = n.arg("padding").get<std::vector<int64_t>>();
      if (pad[0] < 0 || pad[1] < 0) return "negative padding";
      return {};
    }
    case Kind::LayerNorm: {
      const auto& shape = n.arg("normalized_shape").get<std::vector<int64_t>>();
      if (shape.size() != 1) return "layer norm over more than the last dim";
      if (n.arg("weight").is_none() && !n.arg("bias").is_none()) {
        return "layer norm with bias but no weight";
      }
      return {};
    }
    case Kind::Mean: {
      if (!n.arg("dtype").is_none()) return "mean with a dtype";
      const int64_t rank = static_cast<int64_t>(g.value(n.arg("self").tensor()).spec.rank());
      if (n.arg("dim").is_none()) return {};  // over everything
      std::vector<bool> reduced(static_cast<size_t>(rank), false);
      for (int64_t d : n.arg("dim").get<std::vector<int64_t>>()) {
        const int64_t dd = d < 0 ? d + rank : d;
        if (dd < 0 || dd >= rank) return "mean dim out of range";
        reduced[static_cast<size_t>(dd)] = true;
      }
      // The reduced dims must be trailing (a contiguous block per output element).
      bool seen = false;
      for (int64_t d = 0; d < rank; ++d) {
        if (seen && !reduced[static_cast<size_t>(d)]) return "mean over dims that are not trailing";
        seen = seen || reduced[static_cast<size_t>(d)];
      }
      return {};
    }
    case Kind::Reshape:
      return {};
    case Kind::Permute: {
      const int64_t rank = static_cast<int64_t>(out.rank());
      for (int64_t d : n.arg("dims").get<std::vector<int64_t>>()) {
        if (d < -rank || d >= rank) return "permute dim out of range";
      }
      return {};
    }
    case Kind::Softmax: {
      const int64_t dim = n.arg("dim").get<int64_t>();
      const int64_t rank = static_cast<int64_t>(out.rank());
      if (dim != -1 && dim != rank - 1) return "softmax over a dim other than the last";
      if (n.arg("half_to_float").get<bool>()) return "softmax with half_to_float";
      return {};
    }
  }
  return "unhandled op";
}

// Bounded dynamic shapes: the ops whose dispatches the runtime plans again at each call's
// sizes (dynamic_sizes.cpp), what a dynamic-sequence transformer and a dynamic-batch CNN need.
// Their sizes reach the payload as expressions of the region inputs' dims; a reshape's size
// list may be symbolic (the payload takes its output's sizes), no other argument.
std::string check_dynamic(const Graph& g, const Node& n) {
  const auto it = op_kinds().find(n.op.str());
  if (!g.is_dynamic_node(n.id) || it == op_kinds().end()) return {};  // check_node says why not
  const Kind kind = it->second;
  const char* const refused =
      "dynamic shape: the Vulkan delegate resizes linear/matmul, elementwise, softmax, layer "
      "norm, mean, view/permute and batch-dynamic conv/pool at execute, not ";
  switch (kind) {
    case Kind::Linear:
    case Kind::AddMm:
    case Kind::Mm:
    case Kind::Bmm:
    case Kind::Add:
    case Kind::Sub:
    case Kind::Mul:
    case Kind::Div:
    case Kind::Relu:
    case Kind::Clamp:
    case Kind::Hardtanh:
    case Kind::Unary:
    case Kind::Softmax:
    case Kind::LayerNorm:
    case Kind::Mean:
    case Kind::Reshape:
    case Kind::Permute:
    case Kind::Transpose:
    case Kind::Conv:
    case Kind::MaxPool:
    case Kind::AvgPool:
    case Kind::AdaptiveAvgPool:
      break;
    default:
      return refused + n.op.str();
  }
  for (const Argument& a : n.args) {
    if (a.is_symbolic() && kind != Kind::Reshape) {
      return "dynamic shape: a symbolic (run-time) argument of " + n.op.str();
    }
  }
  std::vector<ValueId> values = n.inputs();
  for (ValueId v : n.outputs) {
    if (v != compiler::ir::kNoValue) values.push_back(v);
  }
  const bool spatial = kind == Kind::Conv || kind == Kind::MaxPool || kind == Kind::AvgPool ||
                       kind == Kind::AdaptiveAvgPool;
  for (ValueId v : values) {
    const TensorSpec& s = g.value(v).spec;
    if (!s.is_dynamic()) continue;
    if (!s.has_sym_sizes()) return "dynamic shape: a tensor whose sizes were not recorded";
    for (size_t d = spatial ? 1 : s.rank(); d < s.rank(); ++d) {
      if (s.min_sizes[d] != s.sizes[d]) {
        return "dynamic shape: " + n.op.str() +
               " with a dynamic channel, height or width (the Vulkan delegate resizes its batch "
               "only)";
      }
    }
  }
  return {};
}

}  // namespace

std::string vulkan_refusal(const Graph& g, const Node& n) {
  std::string why = check_dynamic(g, n);
  if (why.empty()) why = check_node(g, n);
  return why;
}

}  // namespace pteron::vulkan
