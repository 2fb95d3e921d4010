#include "backends/vulkan/aot/vulkan_ops.h"

#include <cmath>

#include "compiler/ir/queries.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {

using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::shape_str;

const std::map<std::string, Kind>& op_kinds() {
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

const std::map<std::string, fb::UnaryOp>& unary_ops() {
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

std::vector<int64_t> pair_of(const Argument& a, std::vector<int64_t> dflt) {
  if (a.is_none()) return dflt;
  const auto& v = a.get<std::vector<int64_t>>();
  if (v.empty()) return dflt;
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

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

std::vector<int64_t> pads_of(const Graph& g, const Node& n, std::string* why) {
  const bool constant = n.op.str() == "aten::constant_pad_nd.default";
  const auto& pad = n.arg(constant ? "pad" : "padding").get<std::vector<int64_t>>();
  const int64_t rank = static_cast<int64_t>(g.value(n.arg("self").tensor()).spec.rank());
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

}  // namespace pteron::vulkan
