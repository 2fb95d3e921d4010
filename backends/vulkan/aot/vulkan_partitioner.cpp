#include "backends/vulkan/aot/vulkan_partitioner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "backends/vulkan/aot/payload_builder.h"
#include "backends/vulkan/runtime/payload_verifier.h"
#include "compiler/ir/queries.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {
namespace {

using compiler::LoweredRegion;
using compiler::Region;
using compiler::SupportDecision;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::shape_str;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

enum class Kind {
  Linear,
  AddMm,
  Mm,
  Add,
  Sub,
  Mul,
  Relu,
  Clamp,
  Hardtanh,
  Softmax,
  Conv,
  LayerNorm,
  Mean,
  Reshape,
  Permute,
  Bmm,
  Div,
  Unary,
  MaxPool,
  AvgPool,
  AdaptiveAvgPool,
  Cat,
  Slice,
  Select,
  Embedding,
  Transpose,
  UpsampleNearest,
  UpsampleBilinear,
  UpsampleAntialias,
  ConstantPad,
  ReflectionPad,
  ReplicationPad,
};

// The support table: op -> what the payload runs it as. Everything fp32, contiguous.
const std::map<std::string, Kind>& table() {
  static const std::map<std::string, Kind> t = {
      {"aten::linear.default", Kind::Linear},
      {"aten::addmm.default", Kind::AddMm},
      {"aten::mm.default", Kind::Mm},
      {"aten::add.Tensor", Kind::Add},
      {"aten::sub.Tensor", Kind::Sub},
      {"aten::mul.Tensor", Kind::Mul},
      {"aten::relu.default", Kind::Relu},
      {"aten::clamp.default", Kind::Clamp},
      {"aten::hardtanh.default", Kind::Hardtanh},
      {"aten::_softmax.default", Kind::Softmax},
      {"aten::convolution.default", Kind::Conv},
      {"aten::native_layer_norm.default", Kind::LayerNorm},
      {"aten::mean.dim", Kind::Mean},
      {"aten::view.default", Kind::Reshape},
      {"aten::view_copy.default", Kind::Reshape},
      {"aten::_unsafe_view.default", Kind::Reshape},
      {"aten::reshape.default", Kind::Reshape},
      {"aten::permute.default", Kind::Permute},
      {"aten::bmm.default", Kind::Bmm},
      {"aten::permute_copy.default", Kind::Permute},
      {"aten::div.Tensor", Kind::Div},
      {"aten::add.Scalar", Kind::Add},
      {"aten::sub.Scalar", Kind::Sub},
      {"aten::mul.Scalar", Kind::Mul},
      {"aten::div.Scalar", Kind::Div},
      {"aten::sigmoid.default", Kind::Unary},
      {"aten::tanh.default", Kind::Unary},
      {"aten::gelu.default", Kind::Unary},
      {"aten::silu.default", Kind::Unary},
      {"aten::hardswish.default", Kind::Unary},
      {"aten::hardsigmoid.default", Kind::Unary},
      {"aten::exp.default", Kind::Unary},
      {"aten::neg.default", Kind::Unary},
      {"aten::sqrt.default", Kind::Unary},
      {"aten::rsqrt.default", Kind::Unary},
      {"aten::max_pool2d_with_indices.default", Kind::MaxPool},
      {"aten::max_pool2d.default", Kind::MaxPool},
      {"aten::avg_pool2d.default", Kind::AvgPool},
      {"aten::_adaptive_avg_pool2d.default", Kind::AdaptiveAvgPool},
      {"aten::adaptive_avg_pool2d.default", Kind::AdaptiveAvgPool},
      {"aten::cat.default", Kind::Cat},
      {"aten::slice.Tensor", Kind::Slice},
      {"aten::slice_copy.Tensor", Kind::Slice},
      {"aten::select.int", Kind::Select},
      {"aten::select_copy.int", Kind::Select},
      {"aten::embedding.default", Kind::Embedding},
      {"aten::transpose.int", Kind::Transpose},
      {"aten::transpose_copy.int", Kind::Transpose},
      {"aten::t.default", Kind::Transpose},
      {"aten::t_copy.default", Kind::Transpose},
      {"aten::unsqueeze.default", Kind::Reshape},
      {"aten::unsqueeze_copy.default", Kind::Reshape},
      {"aten::squeeze.dims", Kind::Reshape},
      {"aten::squeeze_copy.dims", Kind::Reshape},
      {"aten::squeeze.dim", Kind::Reshape},
      {"aten::clone.default", Kind::Reshape},
      {"aten::alias.default", Kind::Reshape},
      // Only the .vec forms: torch 2.13's run_decompositions turns upsample_bilinear2d.default
      // into index arithmetic, and upsample_nearest2d.default (kept only when called as
      // torch.ops.aten...default) is not in pteron's op table, so the frontend never makes it.
      {"aten::upsample_nearest2d.vec", Kind::UpsampleNearest},
      {"aten::upsample_bilinear2d.vec", Kind::UpsampleBilinear},
      {"aten::_upsample_bilinear2d_aa.default", Kind::UpsampleAntialias},
      {"aten::constant_pad_nd.default", Kind::ConstantPad},
      {"aten::reflection_pad1d.default", Kind::ReflectionPad},
      {"aten::reflection_pad2d.default", Kind::ReflectionPad},
      {"aten::replication_pad2d.default", Kind::ReplicationPad},
  };
  return t;
}

// Ops next to supported ones that the delegate does not run, with the reason a user needs
// (the generic "not in the support table" would not say what to change).
const std::map<std::string, std::string>& known_refusals() {
  static const std::map<std::string, std::string> t = {
      {"aten::reflection_pad3d.default",
       "reflection padding of 3 dims (the Vulkan delegate pads the last 1 or 2)"},
      {"aten::replication_pad3d.default",
       "replication padding of 3 dims (the Vulkan delegate pads the last 1 or 2)"},
  };
  return t;
}

const std::map<std::string, fb::UnaryOp>& unary_table() {
  static const std::map<std::string, fb::UnaryOp> t = {
      {"aten::sigmoid.default", fb::UnaryOp::Sigmoid},
      {"aten::tanh.default", fb::UnaryOp::Tanh},
      {"aten::gelu.default", fb::UnaryOp::Gelu},
      {"aten::silu.default", fb::UnaryOp::Silu},
      {"aten::hardswish.default", fb::UnaryOp::Hardswish},
      {"aten::hardsigmoid.default", fb::UnaryOp::Hardsigmoid},
      {"aten::exp.default", fb::UnaryOp::Exp},
      {"aten::neg.default", fb::UnaryOp::Neg},
      {"aten::sqrt.default", fb::UnaryOp::Sqrt},
      {"aten::rsqrt.default", fb::UnaryOp::Rsqrt},
  };
  return t;
}

// An int list attribute as [h, w]: one entry repeats, an empty list is `dflt`.
std::vector<int64_t> pair_of(const Argument& a, std::vector<int64_t> dflt) {
  if (a.is_none()) return dflt;
  const auto& v = a.get<std::vector<int64_t>>();
  if (v.empty()) return dflt;
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

int64_t norm_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

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

// An upsample's scale_factors [h, w] as the payload carries them: 0 where none was given (an
// output_size) or the given one is <= 0 (ATen then uses input / output too). The .vec forms
// carry a list, _upsample_bilinear2d_aa.default one optional scale per axis.
std::vector<double> upsample_scales(const Node& n) {
  std::vector<double> s = {0.0, 0.0};
  if (n.op.str() == "aten::_upsample_bilinear2d_aa.default") {
    const Argument& h = n.arg("scales_h");
    const Argument& w = n.arg("scales_w");
    s = {h.is_none() ? 0.0 : h.to_double(), w.is_none() ? 0.0 : w.to_double()};
  }
  const Argument* a =
      n.op.str() == "aten::_upsample_bilinear2d_aa.default" ? nullptr : &n.arg("scale_factors");
  if (a != nullptr && !a->is_none()) {
    const auto& v = a->get<std::vector<double>>();
    if (v.size() != 2) compiler::refuse("scale_factors must have 2 entries");
    s = v;
  }
  for (double& v : s) {
    if (!std::isfinite(v)) compiler::refuse("upsample scale factor is not finite");
    if (v < 0) v = 0;
  }
  return s;
}

// A pad node's [left, right, top, bottom] (torch's order: last dim first), or a reason in
// `why`. constant_pad_nd may list more dims as long as their pads are 0.
std::vector<int64_t> pads_of(const Graph& g, const Node& n, std::string* why) {
  const bool constant = n.op.str() == "aten::constant_pad_nd.default";
  const auto& pad = n.arg(constant ? "pad" : "padding").get<std::vector<int64_t>>();
  const int64_t rank = static_cast<int64_t>(g.value(n.args[0].tensor()).spec.rank());
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size() / 2) > rank) {
    *why = "pad list " + shape_str(pad) + " does not fit a rank-" + std::to_string(rank) + " input";
    return {};
  }
  for (int64_t p : pad) {
    if (p < INT32_MIN || p > INT32_MAX) {
      *why = "padding " + shape_str(pad) + " beyond 32 bits";
      return {};
    }
  }
  for (size_t i = 4; i < pad.size(); ++i) {
    if (pad[i] != 0) {
      *why = "padding " + shape_str(pad) +
             " pads more than the last 2 dims (the Vulkan delegate pads the last 1 or 2)";
      return {};
    }
  }
  std::vector<int64_t> out = {0, 0, 0, 0};
  for (size_t i = 0; i < pad.size() && i < 4; ++i) out[i] = pad[i];
  return out;
}

std::string check_node(const Graph& g, const Node& n) {
  const auto it = table().find(n.op.str());
  if (it == table().end()) {
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
    if (kind == Kind::Embedding && v == n.args[1].tensor()) {
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
      const TensorSpec& w = g.value(n.args[1].tensor()).spec;
      if (w.rank() != 2) return "linear weight must be 2-D, got " + shape_str(w.sizes);
      if (g.value(n.args[0].tensor()).spec.rank() < 1) return "linear input is a scalar";
      if (!n.args[2].is_none() && g.value(n.args[2].tensor()).spec.rank() != 1) {
        return "linear bias must be 1-D";
      }
      return {};
    }
    case Kind::AddMm: {
      const TensorSpec& bias = g.value(n.args[0].tensor()).spec;
      const int64_t cols = out.sizes.back();
      if (!(bias.rank() == 1 || (bias.rank() == 2 && bias.sizes[0] == 1)) ||
          bias.sizes.back() != cols) {
        return "addmm bias " + shape_str(bias.sizes) +
               " is not [N] or [1, N] (N = " + std::to_string(cols) + ")";
      }
      if (n.args[3].to_double() != 1.0 || n.args[4].to_double() != 1.0) {
        return "addmm with beta or alpha other than 1";
      }
      return {};
    }
    case Kind::Mm:
    case Kind::Bmm:
      return {};
    case Kind::Add:
    case Kind::Sub:
      if (!std::isfinite(n.args[2].to_double())) return "alpha is not finite";
      [[fallthrough]];
    case Kind::Mul:
    case Kind::Div: {
      // Outputs exactly the broadcast shape (checked again by the runtime's verifier). A scalar
      // operand becomes a one-element constant.
      if (!n.args[0].is_tensor()) return "the first operand is a scalar";
      for (int k = 0; k < 2; ++k) {
        if (!n.args[k].is_tensor()) {
          if (!std::isfinite(n.args[k].to_double())) return "a scalar operand is not finite";
          continue;
        }
        if (g.value(n.args[k].tensor()).spec.rank() > out.rank()) return "input rank > output";
      }
      if (kind == Kind::Div && n.args.size() > 2 && !n.args[2].is_none()) {
        return "div with a rounding mode";
      }
      return {};
    }
    case Kind::Unary:
      if (n.op.str() == "aten::gelu.default") {
        const std::string& a = n.args[1].get<std::string>();
        if (a != "none" && a != "tanh") return "gelu approximation '" + a + "'";
      }
      return {};
    case Kind::MaxPool:
    case Kind::AvgPool: {
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
      if (x.rank() != 4) return "pooling input is not NCHW " + shape_str(x.sizes);
      const auto k = pair_of(n.args[1], {});
      if (k.size() != 2) return "pooling kernel must have 1 or 2 entries";
      const auto st = pair_of(n.args[2], k);
      const auto pad = pair_of(n.args[3], {0, 0});
      if (st.size() != 2 || pad.size() != 2)
        return "pooling stride/padding must have 1 or 2 entries";
      for (int i = 0; i < 2; ++i) {
        if (k[i] < 1 || st[i] < 1 || pad[i] < 0 || 2 * pad[i] > k[i]) {
          return "pooling kernel/stride/padding out of range";
        }
      }
      if (kind == Kind::MaxPool && pair_of(n.args[4], {1, 1}).size() != 2) {
        return "pooling dilation must have 1 or 2 entries";
      }
      if (kind == Kind::AvgPool && !n.args[6].is_none() && n.args[6].to_int() <= 0) {
        return "avg_pool2d divisor_override <= 0";
      }
      return {};
    }
    case Kind::AdaptiveAvgPool:
      if (g.value(n.args[0].tensor()).spec.rank() != 4) return "adaptive pooling input is not NCHW";
      return {};
    case Kind::UpsampleNearest:
    case Kind::UpsampleBilinear:
    case Kind::UpsampleAntialias: {
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
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
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
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
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
      const int64_t dim = norm_dim(n.args[1].to_int(), static_cast<int64_t>(x.rank()));
      if (dim < 0 || dim >= static_cast<int64_t>(x.rank())) return "dim out of range";
      if (kind == Kind::Slice && n.args[4].to_int() < 1) return "slice step < 1";
      return {};
    }
    case Kind::Embedding: {
      const TensorSpec& w = g.value(n.args[0].tensor()).spec;
      if (w.rank() != 2) return "embedding weight is not 2-D";
      return {};
    }
    case Kind::Transpose:
      return {};
    case Kind::Relu:
      return {};
    case Kind::Clamp:
    case Kind::Hardtanh:
      for (int k = 1; k < 3; ++k) {
        if (!n.args[k].is_none() && std::isnan(n.args[k].to_double())) return "NaN bound";
      }
      if (!n.args[1].is_none() && !n.args[2].is_none() &&
          n.args[1].to_double() > n.args[2].to_double()) {
        return "min > max";
      }
      return {};
    case Kind::Conv: {
      const TensorSpec& x = g.value(n.args[0].tensor()).spec;
      if (x.rank() != 4) return "convolution is not 2-D (input " + shape_str(x.sizes) + ")";
      if (n.args[6].get<bool>()) return "transposed convolution";
      if (!g.value(n.args[1].tensor()).is_constant()) return "convolution weight is not constant";
      for (size_t k : {3, 4, 5}) {
        const auto& v = n.args[k].get<std::vector<int64_t>>();
        if (v.size() != 2) return "stride/padding/dilation must have 2 entries";
      }
      const auto& pad = n.args[4].get<std::vector<int64_t>>();
      if (pad[0] < 0 || pad[1] < 0) return "negative padding";
      return {};
    }
    case Kind::LayerNorm: {
      const auto& shape = n.args[1].get<std::vector<int64_t>>();
      if (shape.size() != 1) return "layer norm over more than the last dim";
      if (n.args[2].is_none() && !n.args[3].is_none()) return "layer norm with bias but no weight";
      return {};
    }
    case Kind::Mean: {
      if (n.args.size() > 3 && !n.args[3].is_none()) return "mean with a dtype";
      const int64_t rank = static_cast<int64_t>(g.value(n.args[0].tensor()).spec.rank());
      if (n.args[1].is_none()) return {};  // over everything
      std::vector<bool> reduced(static_cast<size_t>(rank), false);
      for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
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
      for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
        if (d < -rank || d >= rank) return "permute dim out of range";
      }
      return {};
    }
    case Kind::Softmax: {
      const int64_t dim = n.args[1].get<int64_t>();
      const int64_t rank = static_cast<int64_t>(out.rank());
      if (dim != -1 && dim != rank - 1) return "softmax over a dim other than the last";
      if (n.args[2].get<bool>()) return "softmax with half_to_float";
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
  const auto it = table().find(n.op.str());
  if (!g.is_dynamic_node(n.id) || it == table().end()) return {};  // check_node says why not
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

// A size expression in the payload's postfix form; `symbol` maps a symbol's name to its index
// (refusing one no region input carries).
void encode_size(const compiler::ir::SymExpr& e,
                 const std::function<uint32_t(const std::string&)>& symbol, SizeProgram& out) {
  using Op = compiler::ir::SymExpr::Op;
  const auto push = [&](fb::SizeOp op, int64_t arg) {
    out.ops.push_back(op);
    out.args.push_back(arg);
  };
  switch (e.op) {
    case Op::Const:
      return push(fb::SizeOp::Const, e.value);
    case Op::Symbol:
      return push(fb::SizeOp::Symbol, symbol(e.symbol));
    case Op::Pow: {  // a constant exponent in [0, 8]: repeated products
      const int64_t k = e.operands[1]->value;
      if (k == 0) return push(fb::SizeOp::Const, 1);
      for (int64_t i = 0; i < k; ++i) encode_size(*e.operands[0], symbol, out);
      if (k > 1) push(fb::SizeOp::Mul, k);
      return;
    }
    default:
      break;
  }
  for (const auto& o : e.operands) encode_size(*o, symbol, out);
  const fb::SizeOp op = e.op == Op::Add        ? fb::SizeOp::Add
                        : e.op == Op::Mul      ? fb::SizeOp::Mul
                        : e.op == Op::FloorDiv ? fb::SizeOp::FloorDiv
                        : e.op == Op::Mod      ? fb::SizeOp::Mod
                        : e.op == Op::Max      ? fb::SizeOp::Max
                                               : fb::SizeOp::Min;
  push(op, static_cast<int64_t>(e.operands.size()));
}

std::vector<uint32_t> dims_of(const Graph& g, ValueId v) {
  std::vector<uint32_t> d;
  for (int64_t s : g.value(v).spec.sizes) d.push_back(static_cast<uint32_t>(s));
  return d;
}

// Lowers one region. Throws on anything unexpected (lower() turns it into a refusal).
// fp16: every float tensor inside the region (constants included) is stored as fp16; region
// inputs and outputs stay fp32 and cross the boundary through Convert nodes.
std::vector<uint8_t> build_payload(const Graph& g, const Region& region, bool fp16,
                                   bool fp16_arithmetic) {
  PayloadBuilder b;
  b.set_fp16_arithmetic(fp16_arithmetic);
  const fb::DataType inner = fp16 ? fb::DataType::Float16 : fb::DataType::Float32;
  std::unordered_map<ValueId, uint32_t> ids;
  std::vector<std::pair<uint32_t, uint32_t>> output_converts;  // (fp16 tensor, fp32 output)
  // Bounded dynamic shapes: each symbol is read from the first region input dim that is that
  // symbol alone; every dynamic tensor gets its sizes as expressions of them.
  std::map<std::string, uint32_t> symbols;
  for (size_t i = 0; i < region.inputs.size(); ++i) {
    const TensorSpec& s = g.value(region.inputs[i]).spec;
    for (size_t d = 0; s.is_dynamic() && d < s.rank(); ++d) {
      const compiler::ir::SymExpr* e = s.sym_size(d);
      if (e == nullptr || e->op != compiler::ir::SymExpr::Op::Symbol || symbols.count(e->symbol)) {
        continue;
      }
      symbols[e->symbol] =
          b.add_symbol(static_cast<uint32_t>(i), static_cast<uint32_t>(d),
                       static_cast<uint32_t>(s.min_sizes[d]), static_cast<uint32_t>(s.sizes[d]));
    }
  }
  const auto symbol_index = [&](const std::string& name) -> uint32_t {
    const auto it = symbols.find(name);
    if (it == symbols.end()) {
      compiler::refuse("dynamic shape: size symbol " + name +
                       " is no dim of the region's inputs (the Vulkan delegate reads its sizes "
                       "from them)");
    }
    return it->second;
  };
  const auto sized = [&](ValueId v, uint32_t id) {
    const TensorSpec& s = g.value(v).spec;
    if (!s.is_dynamic()) return id;
    std::vector<SizeProgram> dims(s.rank());
    for (size_t d = 0; d < s.rank(); ++d) {
      const compiler::ir::SymExpr* e = s.sym_size(d);
      if (e == nullptr) {
        dims[d] = SizeProgram::constant(s.sizes[d]);
      } else {
        encode_size(*e, symbol_index, dims[d]);
      }
    }
    b.set_sym_dims(id, std::move(dims));
    return id;
  };
  uint32_t arg = 0;
  for (ValueId v : region.inputs) {
    const bool index = g.value(v).spec.dtype == ScalarType::Long;
    const uint32_t ext = sized(
        v, b.add_input(dims_of(g, v), arg++, index ? fb::DataType::Int64 : fb::DataType::Float32));
    ids[v] = ext;
    if (fp16 && !index) {
      ids[v] = sized(v, b.add_tensor(dims_of(g, v), inner));
      b.add_node(fb::OpType::Convert, {ext}, ids[v]);
    }
  }
  for (ValueId v : region.outputs) {
    const uint32_t ext = sized(v, b.add_output(dims_of(g, v), arg++));
    ids[v] = ext;
    if (fp16) {
      ids[v] = sized(v, b.add_tensor(dims_of(g, v), inner));
      output_converts.emplace_back(ids[v], ext);
    }
  }
  const auto tensor = [&](ValueId v) -> uint32_t {
    if (auto it = ids.find(v); it != ids.end()) return it->second;
    const Value& val = g.value(v);
    uint32_t id;
    if (val.is_constant()) {
      const auto& bytes = val.constant->bytes;
      id = b.add_constant(dims_of(g, v),
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)),
                          inner);
    } else {
      id = sized(v, b.add_tensor(dims_of(g, v), inner));
    }
    ids[v] = id;
    return id;
  };
  // A scalar operand: a one-element constant.
  const auto operand = [&](const Argument& a) -> uint32_t {
    if (a.is_tensor()) return tensor(a.tensor());
    const float value = static_cast<float>(a.to_double());
    return b.add_constant({}, std::span<const float>(&value, 1), inner);
  };
  // A [1, N] addmm bias becomes a constant [N] (same bytes); a non-constant one is refused.
  const auto bias_1d = [&](ValueId v) -> uint32_t {
    const Value& val = g.value(v);
    if (val.spec.rank() == 1) return tensor(v);
    if (!val.is_constant()) compiler::refuse("addmm bias [1, N] is not a constant");
    const auto& bytes = val.constant->bytes;
    return b.add_constant({static_cast<uint32_t>(val.spec.sizes.back())},
                          std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                                 bytes.size() / sizeof(float)),
                          inner);
  };
  const auto transposed_constant = [&](const Value& w) -> uint32_t {
    const size_t rows = static_cast<size_t>(w.spec.sizes[0]);
    const size_t cols = static_cast<size_t>(w.spec.sizes[1]);
    const float* src = reinterpret_cast<const float*>(w.constant->bytes.data());
    std::vector<float> t(rows * cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) t[c * rows + r] = src[r * cols + c];
    }
    return b.add_constant({static_cast<uint32_t>(cols), static_cast<uint32_t>(rows)}, t, inner);
  };
  const float inf = std::numeric_limits<float>::infinity();
  // relu / clamp / hardtanh of a conv or matmul output nothing else reads folds into that
  // node's clamp: one dispatch and one tensor fewer (the clamp's graph node then has no event
  // of its own; the producer's carries both).
  struct Fold {
    ValueId out;  // the clamp's output, written by the producer
    float lo, hi;
  };
  std::unordered_map<NodeId, Fold> folds;  // producer -> its folded clamp
  std::unordered_set<NodeId> folded;       // clamps folded away
  {
    std::unordered_set<NodeId> in_region(region.nodes.begin(), region.nodes.end());
    std::unordered_set<ValueId> outputs(region.outputs.begin(), region.outputs.end());
    for (NodeId id : region.nodes) {
      const Node& n = g.node(id);
      const Kind kind = table().at(n.op.str());
      if (kind != Kind::Relu && kind != Kind::Clamp && kind != Kind::Hardtanh) continue;
      const ValueId v = n.args[0].tensor();
      const Value& val = g.value(v);
      if (!val.is_intermediate() || val.users.size() != 1 || outputs.count(v) ||
          !in_region.count(val.producer) || folds.count(val.producer)) {
        continue;
      }
      const Kind pk = table().at(g.node(val.producer).op.str());
      if (pk != Kind::Conv && pk != Kind::Linear && pk != Kind::AddMm && pk != Kind::Mm &&
          pk != Kind::Bmm) {
        continue;
      }
      Fold f{n.outputs[0], 0.0f, inf};
      if (kind != Kind::Relu) {
        f.lo = n.args[1].is_none() ? -inf : static_cast<float>(n.args[1].to_double());
        f.hi = n.args[2].is_none() ? inf : static_cast<float>(n.args[2].to_double());
      }
      folds[val.producer] = f;
      folded.insert(id);
    }
  }
  for (size_t k = 0; k < region.nodes.size(); ++k) {
    const Node& n = g.node(region.nodes[k]);
    if (folded.count(region.nodes[k])) continue;
    b.set_debug_id(static_cast<int32_t>(k));  // graph info: regions[r].nodes[k]
    const Kind kind = table().at(n.op.str());
    const auto fold = folds.find(region.nodes[k]);
    const bool fused = fold != folds.end();
    const uint32_t out = tensor(fused ? fold->second.out : n.outputs[0]);
    NodeAttrs clamped;  // the folded clamp's bounds, if any
    if (fused) {
      clamped.output_min = fold->second.lo;
      clamped.output_max = fold->second.hi;
    }
    const auto in = [&](size_t k) { return tensor(n.args[k].tensor()); };
    switch (kind) {
      case Kind::Linear: {
        // A constant weight [N, K] is stored transposed, [K, N], and run as a MatMul: the
        // shaders then read W rows contiguously along N, the dimension neighbouring
        // invocations cover (contiguous vector loads instead of gathers on CPU devices).
        const Value& w = g.value(n.args[1].tensor());
        const bool transpose = w.is_constant() && !ids.count(w.id);
        std::vector<uint32_t> ins = {in(0), transpose ? transposed_constant(w) : in(1)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        b.add_node(transpose ? fb::OpType::MatMul : fb::OpType::Linear, ins, out, clamped);
        break;
      }
      case Kind::AddMm:
        b.add_node(fb::OpType::MatMul, {in(1), in(2), bias_1d(n.args[0].tensor())}, out, clamped);
        break;
      case Kind::Mm:
        b.add_node(fb::OpType::MatMul, {in(0), in(1)}, out, clamped);
        break;
      case Kind::Bmm:
        b.add_node(fb::OpType::BatchMatMul, {in(0), in(1)}, out, clamped);
        break;
      case Kind::Add:
      case Kind::Sub:
        b.add_node(kind == Kind::Add ? fb::OpType::Add : fb::OpType::Sub,
                   {in(0), operand(n.args[1])}, out,
                   {.alpha = static_cast<float>(n.args[2].to_double())});
        break;
      case Kind::Mul:
      case Kind::Div:
        b.add_node(kind == Kind::Mul ? fb::OpType::Mul : fb::OpType::Div,
                   {in(0), operand(n.args[1])}, out);
        break;
      case Kind::Unary: {
        fb::UnaryOp op = unary_table().at(n.op.str());
        if (op == fb::UnaryOp::Gelu && n.args[1].get<std::string>() == "tanh") {
          op = fb::UnaryOp::GeluTanh;
        }
        b.add_node(fb::OpType::Unary, {in(0)}, out, {.unary = op});
        break;
      }
      case Kind::MaxPool:
      case Kind::AvgPool: {
        const auto u32 = [](const std::vector<int64_t>& v) {
          return std::vector<uint32_t>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
        };
        const auto k = pair_of(n.args[1], {});
        NodeAttrs a{.stride = u32(pair_of(n.args[2], k)),
                    .padding = u32(pair_of(n.args[3], {0, 0})),
                    .dilation = {1, 1},
                    .kernel = u32(k)};
        if (kind == Kind::MaxPool) {
          a.pool = fb::PoolType::Max;
          a.dilation = u32(pair_of(n.args[4], {1, 1}));
        } else {
          a.pool = fb::PoolType::Average;
          a.count_include_pad = n.args[5].get<bool>();
          a.divisor = n.args[6].is_none() ? 0 : static_cast<uint32_t>(n.args[6].to_int());
        }
        b.add_node(fb::OpType::Pool2d, {in(0)}, out, a);
        break;
      }
      case Kind::AdaptiveAvgPool:
        b.add_node(fb::OpType::Pool2d, {in(0)}, out, {.pool = fb::PoolType::AdaptiveAverage});
        break;
      case Kind::UpsampleNearest:
      case Kind::UpsampleBilinear:
      case Kind::UpsampleAntialias: {
        NodeAttrs a{.resize = kind == Kind::UpsampleNearest    ? fb::ResizeMode::Nearest
                              : kind == Kind::UpsampleBilinear ? fb::ResizeMode::Bilinear
                                                               : fb::ResizeMode::BilinearAntialias,
                    .scales = upsample_scales(n)};
        if (kind != Kind::UpsampleNearest) a.align_corners = n.arg("align_corners").get<bool>();
        b.add_node(fb::OpType::Upsample, {in(0)}, out, a);
        break;
      }
      case Kind::ConstantPad:
      case Kind::ReflectionPad:
      case Kind::ReplicationPad: {
        std::string why;
        const auto pads = pads_of(g, n, &why);
        if (!why.empty()) throw std::runtime_error(why);
        NodeAttrs a{.pads = {},
                    .pad_mode = kind == Kind::ConstantPad     ? fb::PadMode::Constant
                                : kind == Kind::ReflectionPad ? fb::PadMode::Reflect
                                                              : fb::PadMode::Replicate};
        for (int64_t p : pads) a.pads.push_back(static_cast<int32_t>(p));
        if (kind == Kind::ConstantPad) a.pad_value = static_cast<float>(n.arg("value").to_double());
        b.add_node(fb::OpType::Pad, {in(0)}, out, a);
        break;
      }
      case Kind::Cat: {
        std::vector<uint32_t> ins;
        for (ValueId v : n.args[0].get<compiler::ir::TensorList>().ids) ins.push_back(tensor(v));
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        b.add_node(fb::OpType::Cat, ins, out,
                   {.axis = static_cast<uint32_t>(norm_dim(n.args[1].to_int(), rank))});
        break;
      }
      case Kind::Slice:
      case Kind::Select: {
        const TensorSpec& x = g.value(n.args[0].tensor()).spec;
        const int64_t dim = norm_dim(n.args[1].to_int(), static_cast<int64_t>(x.rank()));
        const int64_t size = x.sizes[static_cast<size_t>(dim)];
        int64_t start = kind == Kind::Select ? n.args[2].to_int()
                                             : (n.args[2].is_none() ? 0 : n.args[2].to_int());
        if (start < 0) start += size;
        start = std::clamp<int64_t>(start, 0, size);
        const uint32_t step = kind == Kind::Select ? 1 : static_cast<uint32_t>(n.args[4].to_int());
        NodeAttrs a{.axis = static_cast<uint32_t>(dim),
                    .start = static_cast<uint32_t>(start),
                    .step = step};
        if (kind == Kind::Slice) {
          b.add_node(fb::OpType::Slice, {in(0)}, out, a);
        } else {  // a one-wide slice, then a reshape (no copy) that drops the dim
          std::vector<uint32_t> dims = dims_of(g, n.args[0].tensor());
          dims[static_cast<size_t>(dim)] = 1;
          const uint32_t sliced = b.add_tensor(dims, inner);
          b.add_node(fb::OpType::Slice, {in(0)}, sliced, a);
          b.add_node(fb::OpType::Reshape, {sliced}, out);
        }
        break;
      }
      case Kind::Embedding:
        b.add_node(fb::OpType::Embedding, {in(0), in(1)}, out);
        break;
      case Kind::Transpose: {
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        std::vector<uint32_t> perm(static_cast<size_t>(rank));
        for (int64_t d = 0; d < rank; ++d) perm[static_cast<size_t>(d)] = static_cast<uint32_t>(d);
        if (rank == 2 && n.args.size() == 1) {
          std::swap(perm[0], perm[1]);
        } else if (rank >= 2 && n.args.size() >= 3) {
          std::swap(perm[static_cast<size_t>(norm_dim(n.args[1].to_int(), rank))],
                    perm[static_cast<size_t>(norm_dim(n.args[2].to_int(), rank))]);
        }
        b.add_node(fb::OpType::Permute, {in(0)}, out, {.perm = perm});
        break;
      }
      case Kind::Relu:
        b.add_node(fb::OpType::Clamp, {in(0)}, out, {.output_min = 0.0f, .output_max = inf});
        break;
      case Kind::Clamp:
      case Kind::Hardtanh: {
        const float lo = n.args[1].is_none() ? -inf : static_cast<float>(n.args[1].to_double());
        const float hi = n.args[2].is_none() ? inf : static_cast<float>(n.args[2].to_double());
        b.add_node(fb::OpType::Clamp, {in(0)}, out, {.output_min = lo, .output_max = hi});
        break;
      }
      case Kind::Softmax:
        b.add_node(fb::OpType::Softmax, {in(0)}, out);
        break;
      case Kind::Conv: {
        const auto pair = [&](size_t k) {
          const auto& v = n.args[k].get<std::vector<int64_t>>();
          return std::vector<uint32_t>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1])};
        };
        std::vector<uint32_t> ins = {in(0), in(1)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        b.add_node(fb::OpType::Conv2d, ins, out,
                   {.output_min = clamped.output_min,
                    .output_max = clamped.output_max,
                    .stride = pair(3),
                    .padding = pair(4),
                    .dilation = pair(5),
                    .groups = static_cast<uint32_t>(n.args[8].get<int64_t>())});
        break;
      }
      case Kind::Mean:
        b.add_node(fb::OpType::Mean, {in(0)}, out);
        break;
      case Kind::Reshape:
        b.add_node(fb::OpType::Reshape, {in(0)}, out);
        break;
      case Kind::Permute: {
        std::vector<uint32_t> perm;
        const int64_t rank = static_cast<int64_t>(g.value(n.outputs[0]).spec.rank());
        for (int64_t d : n.args[1].get<std::vector<int64_t>>()) {
          perm.push_back(static_cast<uint32_t>(d < 0 ? d + rank : d));
        }
        b.add_node(fb::OpType::Permute, {in(0)}, out, {.perm = perm});
        break;
      }
      case Kind::LayerNorm: {
        std::vector<uint32_t> ins = {in(0)};
        if (!n.args[2].is_none()) ins.push_back(in(2));
        if (!n.args[3].is_none()) ins.push_back(in(3));
        b.add_node(fb::OpType::LayerNorm, ins, out,
                   {.eps = static_cast<float>(n.args[4].to_double()),
                    .has_weight = !n.args[2].is_none(),
                    .has_bias = !n.args[3].is_none()});
        break;
      }
    }
  }
  b.set_debug_id(-1);
  for (const auto& [from, to] : output_converts) b.add_node(fb::OpType::Convert, {from}, to);
  return b.build();
}

const bool g_registered = compiler::register_partitioner(
    "vulkan",
    [](const compiler::BackendOptions& options) {
      return std::make_unique<VulkanPartitioner>(options);
    },
    {{"fp16",
      {"off", "on", "storage"},
      "store the regions' tensors and weights as fp16 (inputs and outputs stay fp32); on: "
      "compute in fp16 where the device has shaderFloat16, storage: always in fp32"}});
const bool g_registered_aliases =
    compiler::register_backend_alias("vulkan-fp16", "vulkan:fp16=on") &&
    compiler::register_backend_alias("vulkan-fp16-storage", "vulkan:fp16=storage");

}  // namespace

VulkanPartitioner::VulkanPartitioner(const compiler::BackendOptions& options)
    : Partitioner(options) {
  const auto fp16 = options.find("fp16");
  fp16_ = fp16 != options.end() && fp16->second != "off";
  fp16_arithmetic_ = fp16 == options.end() || fp16->second != "storage";
}

std::string VulkanPartitioner::backend_id() const { return kBackendId; }

SupportDecision VulkanPartitioner::supports(const Graph& graph, const Node& node,
                                            const compiler::PartitionContext&) const {
  std::string why = check_dynamic(graph, node);
  if (why.empty()) why = check_node(graph, node);
  return why.empty() ? SupportDecision::yes() : SupportDecision::no(why);
}

double region_work(const Graph& graph, const Region& region) {
  double work = 0.0;
  for (NodeId id : region.nodes) {
    const Node& n = graph.node(id);
    const TensorSpec& out = graph.value(n.outputs[0]).spec;
    const double numel = static_cast<double>(out.numel());
    const std::string op = n.op.str();
    if (op == "aten::linear.default" || op == "aten::mm.default" || op == "aten::addmm.default" ||
        op == "aten::bmm.default") {
      const size_t a = op == "aten::addmm.default" ? 1 : 0;
      work += numel * static_cast<double>(graph.value(n.args[a].tensor()).spec.sizes.back());
    } else if (op == "aten::convolution.default") {
      const TensorSpec& w = graph.value(n.args[1].tensor()).spec;  // [OC, C / groups, KH, KW]
      work += numel * static_cast<double>(w.numel() / w.sizes[0]);
    } else {
      work += numel;
    }
  }
  return work;
}

SupportDecision VulkanPartitioner::worth_delegating(const Graph& graph, const Region& region,
                                                    const compiler::PartitionContext&) const {
  const double work = region_work(graph, region);
  if (work >= kMinRegionWork) return SupportDecision::yes();
  char why[160];
  snprintf(why, sizeof(why),
           "region of %zu node(s) does %.0f multiply-adds/elements, under the %.0f that repay a "
           "GPU submit and its copies",
           region.nodes.size(), work, kMinRegionWork);
  return SupportDecision::no(why);
}

LoweredRegion VulkanPartitioner::lower(const Graph& graph, const Region& region,
                                       const compiler::PartitionContext&) const {
  LoweredRegion r;
  r.payload = build_payload(graph, region, fp16_, fp16_arithmetic_);
  // A dynamic region's size expressions are bounded by interval arithmetic at load time; one
  // that torch bounds more tightly than that would be refused by the runtime, so it is refused
  // here, with the runtime's reason.
  const fb::Payload* verified = nullptr;
  if (verify_payload(Span<const uint8_t>(r.payload.data(), r.payload.size()), &verified) !=
      Error::Ok) {
    compiler::refuse(std::string("dynamic shape: ") + last_error_message());
  }
  r.ok = true;
  return r;
}

}  // namespace pteron::vulkan
