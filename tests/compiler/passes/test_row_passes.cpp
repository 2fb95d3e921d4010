// select_before_linear and select_rows_early (a causal LM's last-token row computed alone) and
// the default pipeline, on hand-built graphs.
#include <gtest/gtest.h>

#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;

// x [4, 8] -> linear(W [16, 8], b) -> view [1, 4, 16] -> select(dim, index): the logits of one
// token. `linear_also_output`: the linear's full result is a graph output too.
ir::Graph logits_graph(int64_t dim, int64_t index, std::vector<int64_t> viewed = {1, 4, 16},
                       bool linear_also_output = false) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4, 8}));
  const ValueId w = b.constant("w", f32({16, 8}));
  const ValueId bias = b.constant("bias", f32({16}));
  const ValueId lin =
      b.op("aten::linear.default", {TensorRef{x}, TensorRef{w}, TensorRef{bias}}, f32({4, 16}));
  const ValueId v = b.op("aten::view.default", {TensorRef{lin}, viewed}, f32(viewed));
  std::vector<int64_t> out_sizes = viewed;
  out_sizes.erase(out_sizes.begin() + (dim < 0 ? dim + static_cast<int64_t>(viewed.size()) : dim));
  const ValueId sel = b.op("aten::select.int", {TensorRef{v}, dim, index}, f32(out_sizes));
  std::vector<ValueId> outputs = {sel};
  if (linear_also_output) outputs.push_back(lin);
  return b.finish(outputs);
}

TEST(SelectBeforeLinear, OneRowOfTheLinearBecomesALinearOfOneRow) {
  for (int64_t index : {-1, 0, 2}) {
    ir::Graph g = logits_graph(1, index);
    const auto inputs = sample_inputs(g);
    const auto before = run(g, inputs);
    EXPECT_EQ(select_before_linear(g), 1);
    remove_dead_code(g);
    g.verify();
    EXPECT_EQ(ops(g), "[aten::select.int, aten::linear.default, aten::view.default]") << index;
    const ir::Node& linear = g.node(g.nodes()[1]);
    EXPECT_EQ(g.value(linear.outputs[0]).spec.sizes, (std::vector<int64_t>{16}));
    EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6) << index;
  }
}

TEST(SelectBeforeLinear, LeavesFeatureSelectionsSharedResultsAndSeveralRows) {
  ir::Graph features = logits_graph(2, 3);  // one feature of every row
  EXPECT_EQ(select_before_linear(features), 0);
  ir::Graph shared = logits_graph(1, -1, {1, 4, 16}, /*linear_also_output=*/true);
  EXPECT_EQ(select_before_linear(shared), 0);
  ir::Graph batch = logits_graph(1, -1, {2, 2, 16});  // selects a row of each of 2 sequences
  EXPECT_EQ(select_before_linear(batch), 0);
  ir::Graph out_of_range = logits_graph(1, 4);
  EXPECT_EQ(select_before_linear(out_of_range), 0);
  for (ir::Graph* g : {&features, &shared, &batch, &out_of_range}) {
    g->verify();
    EXPECT_EQ(count(*g, "aten::linear.default"), 1);
    EXPECT_EQ(g->value(producer(*g, g->outputs()[0]).args[0].tensor()).spec.rank(), 3u);
  }
}

// A last layer: h [1, 6, 8] -> linear -> relu -> add(h, .) (residual) -> layer norm -> linear
// (vocabulary) -> select(1, -1). Every step is row-wise, so all of them can run on one row.
struct LastLayer {
  ir::Graph graph;
  ValueId residual;
};

LastLayer last_layer(bool residual_also_output) {
  GraphBuilder b;
  const ValueId h = b.input("h", f32({1, 6, 8}));
  const ValueId w1 = b.constant("w1", f32({8, 8}));
  const ValueId ffn = b.op("aten::linear.default", {TensorRef{h}, TensorRef{w1}}, f32({1, 6, 8}));
  const ValueId act = b.op("aten::relu.default", {TensorRef{ffn}}, f32({1, 6, 8}));
  const ValueId res =
      b.op("aten::add.Tensor", {TensorRef{h}, TensorRef{act}}, f32({1, 6, 8}), "residual");
  const ValueId lw = b.constant("ln_w", f32({8}));
  const NodeId ln =
      b.node("aten::native_layer_norm.default",
             {TensorRef{res}, std::vector<int64_t>{8}, TensorRef{lw}, ir::None{}, 1e-5},
             {f32({1, 6, 8}), f32({1, 6, 1}), f32({1, 6, 1})});
  const ValueId normed = b.graph().node(ln).outputs[0];
  const ValueId scale = b.constant("scale", f32({1, 1, 8}));  // the same for every row
  const ValueId scaled =
      b.op("aten::mul.Tensor", {TensorRef{normed}, TensorRef{scale}}, f32({1, 6, 8}));
  const ValueId wv = b.constant("vocab", f32({12, 8}));
  const ValueId logits =
      b.op("aten::linear.default", {TensorRef{scaled}, TensorRef{wv}}, f32({1, 6, 12}));
  const ValueId last =
      b.op("aten::select.int", {TensorRef{logits}, int64_t{1}, int64_t{-1}}, f32({1, 12}));
  std::vector<ValueId> outputs = {last};
  if (residual_also_output) outputs.push_back(res);
  return {b.finish(outputs), res};
}

int full_size_nodes(const ir::Graph& g) {
  int n = 0;
  for (NodeId id : g.nodes()) {
    for (ValueId v : g.node(id).outputs) {
      if (v != ir::kNoValue && g.value(v).spec.numel() >= 6 * 8) {
        ++n;
        break;
      }
    }
  }
  return n;
}

TEST(SelectRowsEarly, TheWholeRowWiseChainRunsOnTheLastRow) {
  LastLayer l = last_layer(false);
  ir::Graph& g = l.graph;
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  // Both linears, relu, add, layer norm and mul now have a one-row twin.
  EXPECT_EQ(select_rows_early(g), 6);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(full_size_nodes(g), 0) << g.to_string();
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-5);
}

TEST(SelectRowsEarly, AValueAlsoNeededInFullIsComputedInFull) {
  LastLayer l = last_layer(/*residual_also_output=*/true);
  ir::Graph& g = l.graph;
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  EXPECT_GT(select_rows_early(g), 0);
  remove_dead_code(g);
  g.verify();
  // The residual and what it is computed from stay full size; after it, rows only.
  EXPECT_EQ(g.value(g.outputs()[1]).spec.sizes, (std::vector<int64_t>{1, 6, 8}));
  EXPECT_EQ(count(g, "aten::native_layer_norm.default"), 1);
  for (NodeId id : g.nodes()) {
    if (g.node(id).op.str() == "aten::native_layer_norm.default") {
      EXPECT_EQ(g.value(g.node(id).outputs[0]).spec.numel(), 8) << "layer norm still full size";
    }
  }
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-5);
}

TEST(SelectRowsEarly, LeavesSelectionsOfSeveralRowsAndRowMixingOps) {
  GraphBuilder b;
  const ValueId h = b.input("h", f32({2, 6, 8}));
  const ValueId r = b.op("aten::relu.default", {TensorRef{h}}, f32({2, 6, 8}));
  const ValueId sel =
      b.op("aten::select.int", {TensorRef{r}, int64_t{1}, int64_t{-1}}, f32({2, 8}));
  // softmax over the rows mixes them: the selection cannot move above it.
  const ValueId h2 = b.input("h2", f32({1, 6, 8}));
  const ValueId s =
      b.op("aten::_softmax.default", {TensorRef{h2}, int64_t{1}, false}, f32({1, 6, 8}));
  const ValueId sel2 =
      b.op("aten::select.int", {TensorRef{s}, int64_t{1}, int64_t{0}}, f32({1, 8}));
  ir::Graph g = b.finish({sel, sel2});
  EXPECT_EQ(select_rows_early(g), 0);
  g.verify();
  EXPECT_EQ(g.nodes().size(), 4u);
}

TEST(DefaultPasses, LeaveAVerifiedGraphThatComputesTheSame) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 2, 6, 6}));
  const ValueId w = b.constant("w", f32({4, 2, 3, 3}));
  const ValueId conv = b.op("aten::convolution.default",
                            {TensorRef{x}, TensorRef{w}, ir::None{}, std::vector<int64_t>{1, 1},
                             std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}, false,
                             std::vector<int64_t>{0, 0}, int64_t{1}},
                            f32({1, 4, 4, 4}));
  const ValueId mean = b.constant("mean", f32({4}));
  const ValueId var = b.constant("var", f32({4}), {1, 2, 3, 4});
  const NodeId bn =
      b.node("aten::_native_batch_norm_legit_no_training.default",
             {TensorRef{conv}, ir::None{}, ir::None{}, TensorRef{mean}, TensorRef{var}, 0.1, 1e-5},
             {f32({1, 4, 4, 4}), f32({4}), f32({4})});
  const ValueId c =
      b.op("aten::clone.default", {TensorRef{b.graph().node(bn).outputs[0]}}, f32({1, 4, 4, 4}));
  const ValueId flat =
      b.op("aten::view.default", {TensorRef{c}, std::vector<int64_t>{1, 64}}, f32({1, 64}));
  const ValueId fc = b.constant("fc", f32({3, 64}));
  const ValueId fct =
      b.op("aten::permute.default", {TensorRef{fc}, std::vector<int64_t>{1, 0}}, f32({64, 3}));
  const ValueId y = b.op("aten::mm.default", {TensorRef{flat}, TensorRef{fct}}, f32({1, 3}));
  ir::Graph g = b.finish({y});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);

  const PassReport report = run_default_passes(g);
  EXPECT_FALSE(report.lines.empty());
  g.verify();
  EXPECT_EQ(ops(g), "[aten::convolution.default, aten::view.default, aten::linear.default]");
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-5);
}

}  // namespace
}  // namespace pteron::compiler::testing
