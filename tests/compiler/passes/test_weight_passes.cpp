// fold_batch_norm and fuse_linear on hand-built graphs: the weights they compute give the same
// results as the ops they replace, and the patterns they must not touch stay.
#include <gtest/gtest.h>

#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;

struct ConvBn {
  ir::Graph graph;
  ValueId conv_out, bn_out;
};

// x [1, 2, 5, 5] -> convolution(3x3, 3 channels) -> batch norm (no training) -> outputs.
// `gamma`: the batch norm has a weight; `extra_conv_use`: the conv's output is also a graph
// output; `stats_used`: the batch norm's saved mean is a graph output.
ConvBn conv_bn(bool gamma, bool extra_conv_use = false, bool stats_used = false,
               bool transposed = false, bool weight_is_input = false) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 2, 5, 5}));
  const ValueId w = weight_is_input
                        ? b.input("w", f32({3, 2, 3, 3}))
                        : b.constant("w", transposed ? f32({2, 3, 3, 3}) : f32({3, 2, 3, 3}));
  const ValueId bias = b.constant("bias", f32({3}));
  const ValueId conv =
      b.op("aten::convolution.default",
           {TensorRef{x}, TensorRef{w}, TensorRef{bias}, std::vector<int64_t>{1, 1},
            std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, transposed,
            std::vector<int64_t>{0, 0}, int64_t{1}},
           f32({1, 3, 5, 5}), "conv");
  const ValueId mean = b.constant("mean", f32({3}), {0.1f, -0.2f, 0.3f});
  const ValueId var = b.constant("var", f32({3}), {0.5f, 1.5f, 2.0f});
  const ValueId beta = b.constant("beta", f32({3}), {0.0f, 1.0f, -1.0f});
  const ir::Argument weight =
      gamma ? ir::Argument(TensorRef{b.constant("gamma", f32({3}), {2.0f, 0.5f, -1.0f})})
            : ir::Argument(ir::None{});
  const NodeId bn =
      b.node("aten::_native_batch_norm_legit_no_training.default",
             {TensorRef{conv}, weight, TensorRef{beta}, TensorRef{mean}, TensorRef{var}, 0.1, 1e-5},
             {f32({1, 3, 5, 5}), f32({3}), f32({3})}, "bn");
  const ir::Node& n = b.graph().node(bn);
  std::vector<ValueId> outputs = {n.outputs[0]};
  if (extra_conv_use) outputs.push_back(conv);
  if (stats_used) outputs.push_back(n.outputs[1]);
  const ValueId bn_out = n.outputs[0];
  return {b.finish(outputs), conv, bn_out};
}

TEST(FoldBatchNorm, FoldsIntoTheConvolutionWeightsAndBias) {
  for (bool gamma : {true, false}) {
    ConvBn c = conv_bn(gamma);
    ir::Graph& g = c.graph;
    const auto inputs = sample_inputs(g);
    const auto before = run(g, inputs);
    EXPECT_EQ(fold_batch_norm(g), 1);
    remove_dead_code(g);
    g.verify();
    EXPECT_EQ(ops(g), "[aten::convolution.default]");
    EXPECT_EQ(g.outputs()[0], c.conv_out);
    EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-5) << "gamma " << gamma;
  }
}

TEST(FoldBatchNorm, LeavesWhatItCannotFold) {
  struct Case {
    const char* what;
    ConvBn graph;
  } cases[] = {
      {"convolution output read elsewhere", conv_bn(true, /*extra_conv_use=*/true)},
      {"saved statistics read", conv_bn(true, false, /*stats_used=*/true)},
      {"weights not constant", conv_bn(true, false, false, false, /*weight_is_input=*/true)},
  };
  for (Case& c : cases) {
    EXPECT_EQ(fold_batch_norm(c.graph.graph), 0) << c.what;
    c.graph.graph.verify();
    EXPECT_EQ(count(c.graph.graph, "aten::_native_batch_norm_legit_no_training.default"), 1)
        << c.what;
  }
}

TEST(FoldBatchNorm, LeavesTransposedConvolutions) {
  ConvBn c = conv_bn(true, false, false, /*transposed=*/true);
  EXPECT_EQ(fold_batch_norm(c.graph), 0);
  c.graph.verify();
}

// x [3, 4] @ W^T with W [5, 4] constant, as export writes a linear without its own op.
TEST(FuseLinear, AddmmAndMmOfATransposedConstantBecomeLinear) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 4}));
  const ValueId w = b.constant("w", f32({5, 4}));
  const ValueId bias = b.constant("bias", f32({5}));
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
  const ValueId y1 =
      b.op("aten::addmm.default", {TensorRef{bias}, TensorRef{x}, TensorRef{wt}}, f32({3, 5}));
  const ValueId y2 = b.op("aten::mm.default", {TensorRef{x}, TensorRef{wt}}, f32({3, 5}));
  ir::Graph g = b.finish({y1, y2});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);

  EXPECT_EQ(fuse_linear(g), 2);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(ops(g), "[aten::linear.default, aten::linear.default]");
  EXPECT_EQ(producer(g, y1).args[1].tensor(), w);  // the weight as stored: no transpose
  EXPECT_EQ(producer(g, y1).args[2].tensor(), bias);
  EXPECT_TRUE(producer(g, y2).args[2].is_none());
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6);
}

TEST(FuseLinear, KeepsScaledProductsRuntimeWeightsAndBroadcastBiases) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 4}));
  const ValueId w = b.constant("w", f32({5, 4}));
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
  const ValueId bias = b.constant("bias", f32({5}));
  const ValueId scaled =
      b.op("aten::addmm.default",
           {TensorRef{bias}, TensorRef{x}, TensorRef{wt}, ir::Scalar{int64_t{2}}}, f32({3, 5}));
  const ValueId row_bias = b.constant("row_bias", f32({3, 1}));
  const ValueId broadcast =
      b.op("aten::addmm.default", {TensorRef{row_bias}, TensorRef{x}, TensorRef{wt}}, f32({3, 5}));
  const ValueId wi = b.input("w_in", f32({5, 4}));
  const ValueId wit =
      b.op("aten::permute.default", {TensorRef{wi}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
  const ValueId runtime = b.op("aten::mm.default", {TensorRef{x}, TensorRef{wit}}, f32({3, 5}));
  const ValueId plain = b.constant("plain", f32({4, 5}));  // already [K, N]: no permute to drop
  const ValueId untransposed =
      b.op("aten::mm.default", {TensorRef{x}, TensorRef{plain}}, f32({3, 5}));
  ir::Graph g = b.finish({scaled, broadcast, runtime, untransposed});
  EXPECT_EQ(fuse_linear(g), 0) << ops(g);
  g.verify();
}

TEST(FuseLinear, APermuteStillReadElsewhereStays) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 4}));
  const ValueId w = b.constant("w", f32({5, 4}));
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
  const ValueId y = b.op("aten::mm.default", {TensorRef{x}, TensorRef{wt}}, f32({3, 5}));
  ir::Graph g = b.finish({y, wt});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  EXPECT_EQ(fuse_linear(g), 1);
  EXPECT_EQ(remove_dead_code(g), 0);
  g.verify();
  EXPECT_EQ(count(g, "aten::permute.default"), 1);
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6);
}

// torch's matmul of a transposed [B, M, K] input by W^T: bmm with the weight expanded over the
// batch (nn.MultiheadAttention's in-projection with batch_first). It becomes linear(x, W), the
// weight read once; an expand that is not a batch broadcast of W^T stays.
TEST(FuseLinear, TakesAWeightBroadcastOverABatch) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 2, 4}));
  const ValueId w = b.constant("w", f32({5, 4}));
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
  const ValueId we =
      b.op("aten::expand.default", {TensorRef{wt}, std::vector<int64_t>{3, 4, 5}}, f32({3, 4, 5}));
  const ValueId y = b.op("aten::bmm.default", {TensorRef{x}, TensorRef{we}}, f32({3, 2, 5}));
  const ValueId r = b.input("r", f32({3, 4, 5}));  // a runtime mat2: stays a bmm
  const ValueId z = b.op("aten::bmm.default", {TensorRef{x}, TensorRef{r}}, f32({3, 2, 5}));
  ir::Graph g = b.finish({y, z});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  EXPECT_EQ(fuse_linear(g), 1);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(ops(g), "[aten::linear.default, aten::bmm.default]");
  EXPECT_EQ(producer(g, y).args[1].tensor(), w);
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6);
}

// nn.MultiheadAttention as cross-attention (a query other than the key) splits in_proj_weight
// into the q and kv weights, and each projection is bmm(x, expand(permute(split part))): the
// part is not a constant until fold_constants runs, after this pass, and is taken all the same
// (the perceiver's 2048-token kv projection copied its weight 2048 times first: 38 ms). A
// split of a runtime tensor stays a bmm.
TEST(FuseLinear, TakesAWeightSplitOutOfAConstant) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 2, 4}));
  const ValueId in_proj = b.constant("in_proj", f32({9, 4}));
  const ValueId runtime = b.input("runtime", f32({9, 4}));
  std::vector<ValueId> results;
  for (ValueId source : {in_proj, runtime}) {
    const NodeId split =
        b.node("aten::split_with_sizes.default", {TensorRef{source}, std::vector<int64_t>{4, 5}},
               std::vector<TensorSpec>{f32({4, 4}), f32({5, 4})});
    const ValueId kv = b.graph().node(split).outputs[1];
    const ValueId wt =
        b.op("aten::permute.default", {TensorRef{kv}, std::vector<int64_t>{1, 0}}, f32({4, 5}));
    const ValueId we = b.op("aten::expand.default", {TensorRef{wt}, std::vector<int64_t>{3, 4, 5}},
                            f32({3, 4, 5}));
    results.push_back(b.op("aten::bmm.default", {TensorRef{x}, TensorRef{we}}, f32({3, 2, 5})));
  }
  ir::Graph g = b.finish(results);
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  EXPECT_EQ(fuse_linear(g), 1);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(producer(g, results[0]).op.str(), "aten::linear.default");
  EXPECT_EQ(producer(g, results[1]).op.str(), "aten::bmm.default");
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6);
}

TEST(FuseLinear, TakesADequantizedConstantWeight) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 4}));
  const ValueId q = b.constant_bytes("wq", spec(ScalarType::Char, {3, 4}),
                                     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const ValueId w = b.op(
      "quantized_decomposed::dequantize_per_tensor.default",
      {TensorRef{q}, 0.25, int64_t{0}, int64_t{-127}, int64_t{127}, ScalarType::Char}, f32({3, 4}));
  const ValueId wt =
      b.op("aten::permute.default", {TensorRef{w}, std::vector<int64_t>{1, 0}}, f32({4, 3}));
  const ValueId y = b.op("aten::mm.default", {TensorRef{x}, TensorRef{wt}}, f32({2, 3}));
  ir::Graph g = b.finish({y});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  EXPECT_EQ(fuse_linear(g), 1);
  remove_dead_code(g);
  g.verify();
  EXPECT_EQ(producer(g, y).args[1].tensor(), w);
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6);
}

}  // namespace
}  // namespace pteron::compiler::testing
