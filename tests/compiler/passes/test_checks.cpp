// The read-only passes: activation_bounds (the clamp range quantized lowerings fold) and
// check_kernels_available (every node the kernels run has a kernel in the selected libraries).
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/compile_error.h"
#include "compiler/passes/activation_bounds.h"
#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::Scalar;
using ir::TensorRef;

TEST(ActivationBounds, ReluHardtanhAndClampWithMissingBounds) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const NodeId relu = b.node("aten::relu.default", {TensorRef{x}}, f32({4}));
  const NodeId hardtanh =
      b.node("aten::hardtanh.default", {TensorRef{x}, Scalar{0.0}, Scalar{6.0}}, f32({4}));
  const NodeId hardtanh_default = b.node("aten::hardtanh.default", {TensorRef{x}}, f32({4}));
  const NodeId clamp_lo =
      b.node("aten::clamp.default", {TensorRef{x}, Scalar{int64_t{-2}}, ir::None{}}, f32({4}));
  const NodeId clamp_hi =
      b.node("aten::clamp.default", {TensorRef{x}, ir::None{}, Scalar{1.5}}, f32({4}));
  const NodeId sigmoid = b.node("aten::sigmoid.default", {TensorRef{x}}, f32({4}));
  const ir::Graph& g = b.graph();
  const double inf = INFINITY;
  EXPECT_EQ(activation_bounds(g.node(relu)), std::make_pair(0.0, inf));
  EXPECT_EQ(activation_bounds(g.node(hardtanh)), std::make_pair(0.0, 6.0));
  EXPECT_EQ(activation_bounds(g.node(hardtanh_default)), std::make_pair(-1.0, 1.0));
  EXPECT_EQ(activation_bounds(g.node(clamp_lo)), std::make_pair(-2.0, inf));
  EXPECT_EQ(activation_bounds(g.node(clamp_hi)), std::make_pair(-inf, 1.5));
  EXPECT_FALSE(activation_bounds(g.node(sigmoid)).has_value());
}

std::string refusal(const ir::Graph& g, const std::unordered_set<NodeId>& delegated,
                    const std::vector<std::string>& libraries) {
  try {
    check_kernels_available(g, delegated, libraries);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckKernels, ListsEachMissingOpOnceWithItsCountAndFirstNode) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const ValueId w = b.constant("w", f32({4, 4}));
  const ValueId q =
      b.constant_bytes("q", spec(ScalarType::Char, {4, 4}), std::vector<uint8_t>(16, 1));
  const ValueId a = b.op("aten::relu.default", {TensorRef{x}}, f32({4}), "first_relu");
  const ValueId c = b.op("aten::relu.default", {TensorRef{a}}, f32({4}), "second_relu");
  const ValueId dq = b.op("torchao::dequantize_affine.default",
                          {TensorRef{q}, std::vector<int64_t>{1, 4},
                           TensorRef{b.constant("s", f32({4, 1}))}, ir::None{}, ScalarType::Char},
                          f32({4, 4}), "torchao_weight");
  const ValueId y = b.op("aten::mul.Tensor", {TensorRef{dq}, TensorRef{c}}, f32({4, 4}));
  const ValueId z = b.op("aten::mul.Tensor", {TensorRef{w}, TensorRef{c}}, f32({4, 4}));
  ir::Graph g = b.finish({y, z});

  // Every op here has a portable kernel, torchao's primitives included.
  EXPECT_EQ(refusal(g, {}, {"portable"}), "");
  // cortex_m has none of them: one entry per op, the count and the first node.
  const std::string all = refusal(g, {}, {"cortex_m"});
  EXPECT_NE(all.find("3 operator(s)"), std::string::npos) << all;
  EXPECT_NE(all.find("torchao::dequantize_affine.out"), std::string::npos) << all;
  EXPECT_NE(all.find("torchao_weight"), std::string::npos) << all;
  // A library without relu: both relus counted under one entry naming the first.
  const std::string no_relu = refusal(g, {g.value(dq).producer}, {"cortex_m"});
  EXPECT_NE(no_relu.find("aten::relu.out x2, first at node 'first_relu'"), std::string::npos)
      << no_relu;
  EXPECT_NE(no_relu.find("aten::mul.out x2"), std::string::npos) << no_relu;
  EXPECT_EQ(no_relu.find("torchao"), std::string::npos) << no_relu;
  // Delegated nodes need no kernel.
  std::unordered_set<NodeId> delegated;
  for (NodeId id : g.nodes()) delegated.insert(id);
  EXPECT_EQ(refusal(g, delegated, {"cortex_m"}), "");
}

}  // namespace
}  // namespace pteron::compiler::testing
