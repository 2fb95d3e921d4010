#include "backends/vulkan/aot/vulkan_ops.h"

#include <cmath>

#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/partition/registry.h"

namespace pteron::vulkan {

namespace ops = compiler::ops;
using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::shape_str;

const compiler::ir::OpTable<Kind>& op_kinds() {
  static const compiler::ir::OpTable<Kind> t = {
      {ops::aten::linear, Kind::Linear},
      {ops::aten::addmm, Kind::AddMm},
      {ops::aten::mm, Kind::Mm},
      {ops::aten::add_Tensor, Kind::Add},
      {ops::aten::sub_Tensor, Kind::Sub},
      {ops::aten::mul_Tensor, Kind::Mul},
      {ops::aten::relu, Kind::Relu},
      {ops::aten::clamp, Kind::Clamp},
      {ops::aten::hardtanh, Kind::Hardtanh},
      {ops::aten::_softmax, Kind::Softmax},
      {ops::aten::convolution, Kind::Conv},
      {ops::aten::native_layer_norm, Kind::LayerNorm},
      {ops::aten::mean_dim, Kind::Mean},
      {ops::aten::view, Kind::Reshape},
      {ops::aten::view_copy, Kind::Reshape},
      {ops::aten::permute, Kind::Permute},
      {ops::aten::bmm, Kind::Bmm},
      {ops::aten::permute_copy, Kind::Permute},
      {ops::aten::div_Tensor, Kind::Div},
      {ops::aten::add_Scalar, Kind::Add},
      {ops::aten::sub_Scalar, Kind::Sub},
      {ops::aten::mul_Scalar, Kind::Mul},
      {ops::aten::div_Scalar, Kind::Div},
      {ops::aten::sigmoid, Kind::Unary},
      {ops::aten::tanh, Kind::Unary},
      {ops::aten::gelu, Kind::Unary},
      {ops::aten::silu, Kind::Unary},
      {ops::aten::hardswish, Kind::Unary},
      {ops::aten::hardsigmoid, Kind::Unary},
      {ops::aten::exp, Kind::Unary},
      {ops::aten::neg, Kind::Unary},
      {ops::aten::sqrt, Kind::Unary},
      {ops::aten::rsqrt, Kind::Unary},
      {ops::aten::max_pool2d_with_indices, Kind::MaxPool},
      {ops::aten::avg_pool2d, Kind::AvgPool},
      {ops::aten::_adaptive_avg_pool2d, Kind::AdaptiveAvgPool},
      {ops::aten::cat, Kind::Cat},
      {ops::aten::slice_Tensor, Kind::Slice},
      {ops::aten::slice_copy_Tensor, Kind::Slice},
      {ops::aten::select_int, Kind::Select},
      {ops::aten::select_copy_int, Kind::Select},
      {ops::aten::embedding, Kind::Embedding},
      {ops::aten::transpose_int, Kind::Transpose},
      {ops::aten::transpose_copy_int, Kind::Transpose},
      {ops::aten::t, Kind::Transpose},
      {ops::aten::t_copy, Kind::Transpose},
      {ops::aten::unsqueeze, Kind::Reshape},
      {ops::aten::unsqueeze_copy, Kind::Reshape},
      {ops::aten::squeeze_dims, Kind::Reshape},
      {ops::aten::squeeze_copy_dims, Kind::Reshape},
      {ops::aten::squeeze_dim, Kind::Reshape},
      {ops::aten::clone, Kind::Reshape},
      {ops::aten::alias, Kind::Reshape},
      // Only the .vec forms: torch 2.13's run_decompositions turns upsample_bilinear2d.default
      // into index arithmetic, and upsample_nearest2d.default (kept only when called as
      // torch.ops.aten...default) is not in pteron's op table, so the frontend never makes it.
      {ops::aten::upsample_nearest2d_vec, Kind::UpsampleNearest},
      {ops::aten::upsample_bilinear2d_vec, Kind::UpsampleBilinear},
      {ops::aten::_upsample_bilinear2d_aa, Kind::UpsampleAntialias},
      {ops::aten::constant_pad_nd, Kind::ConstantPad},
      {ops::aten::reflection_pad1d, Kind::ReflectionPad},
      {ops::aten::reflection_pad2d, Kind::ReflectionPad},
      {ops::aten::replication_pad2d, Kind::ReplicationPad},
  };
  return t;
}

const compiler::ir::OpTable<fb::UnaryOp>& unary_ops() {
  static const compiler::ir::OpTable<fb::UnaryOp> t = {
      {ops::aten::sigmoid, fb::UnaryOp::Sigmoid},
      {ops::aten::tanh, fb::UnaryOp::Tanh},
      {ops::aten::gelu, fb::UnaryOp::Gelu},
      {ops::aten::silu, fb::UnaryOp::Silu},
      {ops::aten::hardswish, fb::UnaryOp::Hardswish},
      {ops::aten::hardsigmoid, fb::UnaryOp::Hardsigmoid},
      {ops::aten::exp, fb::UnaryOp::Exp},
      {ops::aten::neg, fb::UnaryOp::Neg},
      {ops::aten::sqrt, fb::UnaryOp::Sqrt},
      {ops::aten::rsqrt, fb::UnaryOp::Rsqrt},
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
  if (n.op.str() == ops::aten::_upsample_bilinear2d_aa) {
    const Argument& h = n.arg("scales_h");
    const Argument& w = n.arg("scales_w");
    s = {h.is_none() ? 0.0 : h.to_double(), w.is_none() ? 0.0 : w.to_double()};
  }
  const Argument* a =
      n.op.str() == ops::aten::_upsample_bilinear2d_aa ? nullptr : &n.arg("scale_factors");
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
  const bool constant = n.op.str() == ops::aten::constant_pad_nd;
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
