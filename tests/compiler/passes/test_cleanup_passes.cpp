// remove_dead_code and fold_constants on hand-built graphs.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;

TEST(RemoveDeadCode, RemovesDeadChainsAndTheirConstantsInOneSweep) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const ValueId w = b.constant("w", f32({4}));
  const ValueId kept = b.constant("kept", f32({4}));
  const ValueId d1 = b.op("aten::mul.Tensor", {TensorRef{x}, TensorRef{w}}, f32({4}));
  b.op("aten::relu.default", {TensorRef{d1}}, f32({4}));
  const ValueId y = b.op("aten::add.Tensor", {TensorRef{x}, TensorRef{kept}}, f32({4}));
  ir::Graph g = b.finish({y});

  EXPECT_EQ(remove_dead_code(g), 2);
  g.verify();
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_FALSE(g.has_value(w));
  EXPECT_TRUE(g.has_value(kept));
  EXPECT_EQ(remove_dead_code(g), 0);
}

TEST(RemoveDeadCode, KeepsNodesWithAnyLiveOutputStateUpdatesAndConstantOutputs) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 2, 4}));
  const ValueId lw = b.constant("ln_w", f32({4}));
  // native_layer_norm: only the normalised output is read; the node stays for it.
  const NodeId ln = b.node("aten::native_layer_norm.default",
                           {TensorRef{x}, std::vector<int64_t>{4}, TensorRef{lw}, ir::None{}, 1e-5},
                           {f32({1, 2, 4}), f32({1, 2, 1}), f32({1, 2, 1})});
  const ValueId normed = b.graph().node(ln).outputs[0];
  std::vector<uint8_t> zeros(4 * sizeof(float), 0);
  const ValueId cache =
      b.graph().add_state("cache", f32({4}), ir::ConstantData::owned(zeros, "cache"));
  const ValueId step = b.op("aten::add.Tensor", {TensorRef{cache}, TensorRef{lw}}, f32({4}));
  b.graph().add_buffer_mutation({cache, step});
  const ValueId c = b.constant("c", f32({2}));
  ir::Graph g = b.finish({normed, c});

  EXPECT_EQ(remove_dead_code(g), 0);
  g.verify();
  EXPECT_TRUE(g.has_node(ln));
  EXPECT_TRUE(g.has_value(c));
  EXPECT_EQ(count(g, "aten::add.Tensor"), 1);
}

float first_float(const ir::Graph& g, ValueId v) {
  float f;
  std::memcpy(&f, g.value(v).constant->bytes.data(), sizeof(f));
  return f;
}

TEST(FoldConstants, FoldsChainsOfConstantOnlyNodes) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 3}));
  const ValueId w = b.constant("w", f32({3, 2}), {1, 2, 3, 4, 5, 6});
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({2, 3}));
  const ValueId w2 = b.op("aten::mul.Tensor", {TensorRef{wt}, TensorRef{wt}}, f32({2, 3}));
  const ValueId y = b.op("aten::add.Tensor", {TensorRef{x}, TensorRef{w2}}, f32({2, 3}));
  ir::Graph g = b.finish({y});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);

  EXPECT_EQ(fold_constants(g), 2);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(ops(g), "[aten::add.Tensor]");
  const ir::Value& folded = g.value(producer(g, y).args[1].tensor());
  ASSERT_TRUE(folded.is_constant());
  EXPECT_EQ(folded.constant->kind, ir::ConstantKind::Folded);
  EXPECT_EQ(first_float(g, folded.id), 1.0f);  // w^T[0][0]^2
  EXPECT_EQ(max_abs_diff(before, run(g, inputs)), 0.0);
}

TEST(FoldConstants, LeavesInputsQuantizedWeightsGraphOutputsAndBlowUps) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const ValueId w = b.constant("w", f32({4}));
  const ValueId on_input = b.op("aten::mul.Tensor", {TensorRef{x}, TensorRef{w}}, f32({4}));
  // int8 weights stay behind their dequantize (4x smaller; backends match dq -> op -> q).
  const ValueId q = b.constant_bytes("q", spec(ScalarType::Char, {4}), {1, 2, 3, 4});
  const ValueId dq = b.op(
      "quantized_decomposed::dequantize_per_tensor.default",
      {TensorRef{q}, 0.5, int64_t{0}, int64_t{-128}, int64_t{127}, ScalarType::Char}, f32({4}));
  const ValueId y = b.op("aten::add.Tensor", {TensorRef{on_input}, TensorRef{dq}}, f32({4}));
  // A graph output computed from constants keeps its own node.
  const ValueId out_of_constants = b.op("aten::relu.default", {TensorRef{w}}, f32({4}));
  // A broadcast far larger than its input is cheaper on the device than in the program.
  const ValueId one = b.constant("one", f32({1, 1}));
  const ValueId big = b.op("aten::expand.default",
                           {TensorRef{one}, std::vector<int64_t>{1024, 512}}, f32({1024, 512}));
  const ValueId s = b.op("aten::sum.default", {TensorRef{big}}, f32({}));
  ir::Graph g = b.finish({y, out_of_constants, s});

  EXPECT_EQ(fold_constants(g), 0) << ops(g);
  g.verify();
  EXPECT_EQ(g.nodes().size(), 6u);
}

}  // namespace
}  // namespace pteron::compiler::testing
