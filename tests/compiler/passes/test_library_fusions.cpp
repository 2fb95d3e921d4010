// The optimized library's elementwise fusions on hand-built graphs: fuse_linear_relu,
// fuse_conv_relu (and relu_fusion.h they share), fuse_silu_mul, fuse_rms_norm. Each fuses where
// the fused kernel computes the same thing, and leaves a chain alone when an intermediate is
// read elsewhere, shapes or dtypes differ, or a node is delegated. Results are compared on the
// optimized kernels (linked into this test) against the unfused graph.
#include <gtest/gtest.h>

#include <unordered_set>

#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/passes/fuse_linear_relu.h"
#include "compiler/passes/fuse_rms_norm.h"
#include "compiler/passes/fuse_silu_mul.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/relu_fusion.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;
using Delegated = std::unordered_set<NodeId>;

// Runs a library pass with `delegated`; checks verify and the numbers (within `tolerance`).
template <typename Pass>
int apply(ir::Graph& g, Pass pass, const Delegated& delegated = {}, double tolerance = 1e-5) {
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  const int changed = pass(g, delegated);
  g.verify();
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), tolerance) << ops(g);
  return changed;
}

// ---- linear + relu --------------------------------------------------------------------------

struct LinearRelu {
  ir::Graph graph;
  NodeId linear, relu;
  ValueId out;
};

LinearRelu linear_relu(bool bias, bool linear_also_output = false) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 8}));
  const ValueId w = b.constant("w", f32({5, 8}));
  const ir::Argument bias_arg =
      bias ? ir::Argument(TensorRef{b.constant("b", f32({5}))}) : ir::Argument(ir::None{});
  const NodeId lin =
      b.node("aten::linear.default", {TensorRef{x}, TensorRef{w}, bias_arg}, f32({3, 5}));
  const ValueId l = b.graph().node(lin).outputs[0];
  const NodeId relu = b.node("aten::relu.default", {TensorRef{l}}, f32({3, 5}), "act");
  const ValueId y = b.graph().node(relu).outputs[0];
  std::vector<ValueId> outputs = {y};
  if (linear_also_output) outputs.push_back(l);
  return {b.finish(outputs), lin, relu, y};
}

TEST(FuseLinearRelu, LinearThenReluBecomesOneCall) {
  for (bool bias : {true, false}) {
    LinearRelu c = linear_relu(bias);
    EXPECT_EQ(apply(c.graph, fuse_linear_relu), 1);
    EXPECT_EQ(ops(c.graph), "[pteron::linear_relu.default]");
    // The fused value keeps relu's name (numerics debugging matches values by name) and its
    // node keeps the linear's debug handle.
    const ValueId out = c.graph.outputs()[0];
    EXPECT_EQ(c.graph.value(out).name, "act");
    EXPECT_EQ(producer(c.graph, out).id, c.linear);
  }
}

TEST(FuseLinearRelu, LeavesSharedResultsAndDelegatedNodes) {
  LinearRelu shared = linear_relu(true, /*linear_also_output=*/true);
  EXPECT_EQ(apply(shared.graph, fuse_linear_relu), 0);
  LinearRelu relu_delegated = linear_relu(true);
  EXPECT_EQ(apply(relu_delegated.graph, fuse_linear_relu, {relu_delegated.relu}), 0);
  LinearRelu linear_delegated = linear_relu(true);
  EXPECT_EQ(apply(linear_delegated.graph, fuse_linear_relu, {linear_delegated.linear}), 0);
  for (LinearRelu* c : {&shared, &relu_delegated, &linear_delegated}) {
    EXPECT_EQ(count(c->graph, "aten::relu.default"), 1);
  }
}

TEST(ReluFusion, TheInputMustBeAFloatSingleUseIntermediate) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const NodeId on_input = b.node("aten::relu.default", {TensorRef{x}}, f32({4}));
  const ValueId i = b.input("i", spec(ScalarType::Int, {4}));
  const ValueId ni = b.op("aten::neg.default", {TensorRef{i}}, spec(ScalarType::Int, {4}));
  const NodeId on_int = b.node("aten::relu.default", {TensorRef{ni}}, spec(ScalarType::Int, {4}));
  const ValueId n = b.op("aten::neg.default", {TensorRef{x}}, f32({4}));
  const NodeId fusable = b.node("aten::relu.default", {TensorRef{n}}, f32({4}));
  ir::Graph g = b.finish({b.graph().node(on_input).outputs[0], b.graph().node(on_int).outputs[0],
                          b.graph().node(fusable).outputs[0]});
  EXPECT_EQ(relu_fusion_input(g, {}, on_input), nullptr);
  EXPECT_EQ(relu_fusion_input(g, {}, on_int), nullptr);
  ASSERT_NE(relu_fusion_input(g, {}, fusable), nullptr);
  EXPECT_EQ(relu_fusion_input(g, {}, fusable)->id, n);
  EXPECT_EQ(relu_fusion_input(g, {fusable}, fusable), nullptr);
  EXPECT_EQ(relu_fusion_input(g, {g.value(n).producer}, fusable), nullptr);
}

// ---- convolution + relu ---------------------------------------------------------------------

ValueId conv(GraphBuilder& b, ValueId x, int64_t cin, int64_t cout, int64_t groups = 1,
             bool transposed = false) {
  const ValueId w =
      b.constant("w", transposed ? f32({cin, cout, 3, 3}) : f32({cout, cin / groups, 3, 3}));
  const ValueId bias = b.constant("bias", f32({cout}));
  return b.op("aten::convolution.default",
              {TensorRef{x}, TensorRef{w}, TensorRef{bias}, std::vector<int64_t>{1, 1},
               std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, transposed,
               std::vector<int64_t>{0, 0}, groups},
              f32({1, cout, 5, 5}), "conv");
}

TEST(FuseConvRelu, ConvolutionReluAndTheResidualEnding) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  const ValueId c1 = conv(b, x, 4, 4);
  const ValueId r1 = b.op("aten::relu.default", {TensorRef{c1}}, f32({1, 4, 5, 5}), "r1");
  const ValueId c2 = conv(b, r1, 4, 4);
  // resnet's block ending: relu(conv + identity), the convolution either operand of the add.
  const ValueId sum = b.op("aten::add.Tensor", {TensorRef{x}, TensorRef{c2}}, f32({1, 4, 5, 5}));
  const ValueId r2 = b.op("aten::relu.default", {TensorRef{sum}}, f32({1, 4, 5, 5}), "r2");
  ir::Graph g = b.finish({r2});
  EXPECT_EQ(apply(g, fuse_conv_relu), 2);
  EXPECT_EQ(ops(g), "[pteron::convolution_relu.default, pteron::convolution_add_relu.default]");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "r2");
}

// A grouped convolution of several input channels a group fuses (the kernel runs an SGEMM per
// group); one input channel a group (a depthwise channel multiplier) does not.
TEST(FuseConvRelu, GroupedConvolutionsOfSeveralChannelsAGroup) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  const ValueId grouped = conv(b, x, 4, 4, /*groups=*/2);
  const ValueId r = b.op("aten::relu.default", {TensorRef{grouped}}, f32({1, 4, 5, 5}), "r");
  ir::Graph g = b.finish({r});
  EXPECT_EQ(apply(g, fuse_conv_relu), 1);
  EXPECT_EQ(ops(g), "[pteron::convolution_relu.default]");
}

TEST(FuseConvRelu, LeavesGroupedTransposedScaledAndBroadcastCases) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  const ValueId multiplier = conv(b, x, 4, 8, /*groups=*/4);
  const ValueId r1 = b.op("aten::relu.default", {TensorRef{multiplier}}, f32({1, 8, 5, 5}));
  const ValueId transposed = conv(b, x, 4, 4, 1, /*transposed=*/true);
  const ValueId r2 = b.op("aten::relu.default", {TensorRef{transposed}}, f32({1, 4, 5, 5}));
  const ValueId c3 = conv(b, x, 4, 4);
  const ValueId scaled = b.op(
      "aten::add.Tensor", {TensorRef{c3}, TensorRef{x}, ir::Scalar{int64_t{2}}}, f32({1, 4, 5, 5}));
  const ValueId r3 = b.op("aten::relu.default", {TensorRef{scaled}}, f32({1, 4, 5, 5}));
  const ValueId c4 = conv(b, x, 4, 4);
  const ValueId per_channel = b.constant("per_channel", f32({1, 4, 1, 1}));
  const ValueId broadcast =
      b.op("aten::add.Tensor", {TensorRef{c4}, TensorRef{per_channel}}, f32({1, 4, 5, 5}));
  const ValueId r4 = b.op("aten::relu.default", {TensorRef{broadcast}}, f32({1, 4, 5, 5}));
  const ValueId c5 = conv(b, x, 4, 4);
  const ValueId r5 = b.op("aten::relu.default", {TensorRef{c5}}, f32({1, 4, 5, 5}));
  ir::Graph g = b.finish({r1, r2, r3, r4, r5, c5});  // c5 is read twice
  EXPECT_EQ(apply(g, fuse_conv_relu), 0) << ops(g);
  EXPECT_EQ(count(g, "aten::relu.default"), 5);
}

TEST(FuseConvRelu, LeavesDelegatedConvolutions) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  const ValueId c = conv(b, x, 4, 4);
  const ValueId r = b.op("aten::relu.default", {TensorRef{c}}, f32({1, 4, 5, 5}));
  const ValueId c2 = conv(b, x, 4, 4);
  const ValueId s = b.op("aten::add.Tensor", {TensorRef{c2}, TensorRef{r}}, f32({1, 4, 5, 5}));
  const ValueId r2 = b.op("aten::relu.default", {TensorRef{s}}, f32({1, 4, 5, 5}));
  ir::Graph g = b.finish({r2});
  const Delegated delegated = {g.value(c).producer, g.value(c2).producer};
  EXPECT_EQ(apply(g, fuse_conv_relu, delegated), 0);
  EXPECT_EQ(count(g, "aten::convolution.default"), 2);
}

// A SiLU (fuse_silu_mul's, no gate) after an ungrouped, depthwise or grouped convolution
// becomes one convolution_silu; a gated one, one whose convolution is read elsewhere and one
// whose convolution is delegated stay.
TEST(FuseConvRelu, ConvolutionSiluOnlyWhenTheSiluIsTheSoleReader) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  auto silu = [&](ValueId v, std::optional<ValueId> gate = std::nullopt) {
    const ir::Argument other = gate ? ir::Argument(TensorRef{*gate}) : ir::Argument(ir::None{});
    return b.op("pteron::silu_mul.default", {TensorRef{v}, other}, f32({1, 4, 5, 5}));
  };
  silu_mul_schema();
  const ValueId s1 = silu(conv(b, x, 4, 4));
  const ValueId s2 = silu(conv(b, s1, 4, 4, /*groups=*/4));
  const ValueId gated = silu(conv(b, s2, 4, 4), x);
  const ValueId s3 = silu(conv(b, gated, 4, 4, /*groups=*/2));
  const ValueId shared = conv(b, s3, 4, 4);
  const ValueId s4 = silu(shared);
  const ValueId delegated_conv = conv(b, s4, 4, 4);
  const ValueId s5 = silu(delegated_conv);
  ir::Graph g = b.finish({s5, shared});
  EXPECT_EQ(apply(g, fuse_conv_relu, {g.value(delegated_conv).producer}), 3);
  EXPECT_EQ(count(g, "pteron::convolution_silu.default"), 3);
  EXPECT_EQ(count(g, "pteron::silu_mul.default"), 3);
  EXPECT_EQ(ops(g),
            "[pteron::convolution_silu.default, pteron::convolution_silu.default, "
            "aten::convolution.default, pteron::silu_mul.default, "
            "pteron::convolution_silu.default, aten::convolution.default, "
            "pteron::silu_mul.default, aten::convolution.default, pteron::silu_mul.default]");
}

// A per-channel gate [1, C, 1, 1] multiplied into an ungrouped convolution's input (either
// operand order) folds into convolution_scaled; a full-shape product, a gate before a depthwise
// convolution and a product read twice stay.
TEST(FuseConvRelu, ChannelGateFoldsIntoTheConvolution) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, 4, 5, 5}));
  const ValueId gate = b.input("gate", f32({1, 4, 1, 1}));
  const ValueId full = b.input("full", f32({1, 4, 5, 5}));
  auto mul = [&](ValueId a, ValueId c) {
    return b.op("aten::mul.Tensor", {TensorRef{a}, TensorRef{c}}, f32({1, 4, 5, 5}));
  };
  const ValueId c1 = conv(b, mul(x, gate), 4, 4);
  const ValueId c2 = conv(b, mul(gate, c1), 4, 4);
  const ValueId c3 = conv(b, mul(c2, full), 4, 4);
  const ValueId c4 = conv(b, mul(c3, gate), 4, 4, /*groups=*/4);
  const ValueId twice = mul(c4, gate);
  const ValueId c5 = conv(b, twice, 4, 4);
  ir::Graph g = b.finish({c5, twice});
  EXPECT_EQ(apply(g, fuse_conv_relu), 2);
  EXPECT_EQ(ops(g),
            "[pteron::convolution_scaled.default, pteron::convolution_scaled.default, "
            "aten::mul.Tensor, aten::convolution.default, aten::mul.Tensor, "
            "aten::convolution.default, aten::mul.Tensor, aten::convolution.default]");
  EXPECT_EQ(producer(g, c1).args.back().tensor(), gate);
  EXPECT_EQ(producer(g, c1).args[0].tensor(), x);
}

// ---- silu * up --------------------------------------------------------------------------------

TEST(FuseSiluMul, SiluAndTheGatedProductBecomeOneCall) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 16}));
  const ValueId up = b.input("up", f32({2, 16}));
  const ValueId s = b.op("aten::sigmoid.default", {TensorRef{x}}, f32({2, 16}));
  const ValueId silu = b.op("aten::mul.Tensor", {TensorRef{s}, TensorRef{x}}, f32({2, 16}));
  const ValueId gated = b.op("aten::mul.Tensor", {TensorRef{up}, TensorRef{silu}}, f32({2, 16}));
  // A SiLU whose product is read twice fuses alone.
  const ValueId s2 = b.op("aten::sigmoid.default", {TensorRef{up}}, f32({2, 16}));
  const ValueId silu2 = b.op("aten::mul.Tensor", {TensorRef{up}, TensorRef{s2}}, f32({2, 16}));
  const ValueId twice =
      b.op("aten::add.Tensor", {TensorRef{silu2}, TensorRef{silu2}}, f32({2, 16}));
  ir::Graph g = b.finish({gated, twice});
  EXPECT_EQ(apply(g, fuse_silu_mul), 2);
  EXPECT_EQ(ops(g), "[pteron::silu_mul.default, pteron::silu_mul.default, aten::add.Tensor]");
  EXPECT_EQ(producer(g, gated).args[1].tensor(), up);
  EXPECT_TRUE(producer(g, silu2).args[1].is_none());
}

TEST(FuseSiluMul, LeavesOtherInputsSharedSigmoidsBroadcastsAndDelegatedNodes) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 16}));
  const ValueId z = b.input("z", f32({2, 16}));
  const ValueId s = b.op("aten::sigmoid.default", {TensorRef{x}}, f32({2, 16}));
  const ValueId not_silu = b.op("aten::mul.Tensor", {TensorRef{z}, TensorRef{s}}, f32({2, 16}));
  const ValueId s2 = b.op("aten::sigmoid.default", {TensorRef{z}}, f32({2, 16}));
  const ValueId shared = b.op("aten::mul.Tensor", {TensorRef{z}, TensorRef{s2}}, f32({2, 16}));
  const ValueId row = b.input("row", f32({16}));
  const ValueId s3 = b.op("aten::sigmoid.default", {TensorRef{row}}, f32({16}));
  const ValueId broadcast = b.op("aten::mul.Tensor", {TensorRef{row}, TensorRef{s3}}, f32({16}));
  const ValueId gate_broadcast =
      b.op("aten::mul.Tensor", {TensorRef{broadcast}, TensorRef{x}}, f32({2, 16}));
  ir::Graph g = b.finish({not_silu, shared, s2, gate_broadcast});
  const NodeId silu_of_row = g.value(broadcast).producer;
  // The SiLU of `row` fuses; the product by x broadcasts, so it stays a separate mul.
  EXPECT_EQ(apply(g, fuse_silu_mul), 1);
  EXPECT_EQ(producer(g, broadcast).op.str(), "pteron::silu_mul.default");
  EXPECT_EQ(producer(g, gate_broadcast).op.str(), "aten::mul.Tensor");
  EXPECT_EQ(count(g, "aten::sigmoid.default"), 2);
  (void)silu_of_row;

  GraphBuilder d;
  const ValueId dx = d.input("x", f32({4}));
  const NodeId sig = d.node("aten::sigmoid.default", {TensorRef{dx}}, f32({4}));
  const ValueId m = d.op("aten::mul.Tensor",
                         {TensorRef{dx}, TensorRef{d.graph().node(sig).outputs[0]}}, f32({4}));
  ir::Graph dg = d.finish({m});
  EXPECT_EQ(apply(dg, fuse_silu_mul, {sig}), 0);
  EXPECT_EQ(apply(dg, fuse_silu_mul, {dg.value(m).producer}), 0);
}

// ---- RMSNorm ---------------------------------------------------------------------------------

struct RmsChain {
  ir::Graph graph;
  ValueId normed, out;
};

// w * (x * rsqrt(mean(pow(x, 2), [-1], keepdim) + eps)) as torch exports LlamaRMSNorm.
// `weight`: multiply by w [8]; `eps_tensor`: eps as a one-element constant (add.Tensor);
// `mean_dim`: the reduced dim; `normed_also_output`: the unweighted value is read too.
RmsChain rms_chain(bool weight, bool eps_tensor = false, int64_t mean_dim = -1,
                   bool normed_also_output = false, std::vector<int64_t> w_sizes = {8}) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 3, 8}));
  const ValueId sq =
      b.op("aten::pow.Tensor_Scalar", {TensorRef{x}, ir::Scalar{int64_t{2}}}, f32({2, 3, 8}));
  std::vector<int64_t> reduced = {2, 3, 8};
  reduced[static_cast<size_t>(mean_dim < 0 ? mean_dim + 3 : mean_dim)] = 1;
  const ValueId mean =
      b.op("aten::mean.dim", {TensorRef{sq}, std::vector<int64_t>{mean_dim}, true}, f32(reduced));
  const ValueId plus =
      eps_tensor
          ? b.op("aten::add.Tensor",
                 {TensorRef{mean}, TensorRef{b.constant("eps", f32({}), {1e-6f})}}, f32(reduced))
          : b.op("aten::add.Scalar", {TensorRef{mean}, ir::Scalar{1e-6}}, f32(reduced));
  const ValueId r = b.op("aten::rsqrt.default", {TensorRef{plus}}, f32(reduced));
  const ValueId normed =
      b.op("aten::mul.Tensor", {TensorRef{x}, TensorRef{r}}, f32({2, 3, 8}), "normed");
  ValueId out = normed;
  if (weight) {
    const ValueId w = b.constant("w", f32(w_sizes));
    out = b.op("aten::mul.Tensor", {TensorRef{w}, TensorRef{normed}}, f32({2, 3, 8}), "weighted");
  }
  std::vector<ValueId> outputs = {out};
  if (normed_also_output && weight) outputs.push_back(normed);
  return {b.finish(outputs), normed, out};
}

TEST(FuseRmsNorm, TheChainAndItsWeightBecomeOneCall) {
  for (bool eps_tensor : {false, true}) {
    RmsChain c = rms_chain(true, eps_tensor);
    EXPECT_EQ(apply(c.graph, fuse_rms_norm), 1);
    EXPECT_EQ(ops(c.graph), "[pteron::rms_norm.default]");
    const ir::Node& n = producer(c.graph, c.out);
    EXPECT_TRUE(n.args[1].is_tensor());
    EXPECT_NEAR(n.args[2].to_double(), 1e-6, 1e-12);
  }
  RmsChain unweighted = rms_chain(false, false, /*mean_dim=*/2);
  EXPECT_EQ(apply(unweighted.graph, fuse_rms_norm), 1);
  EXPECT_TRUE(producer(unweighted.graph, unweighted.out).args[1].is_none());
}

TEST(FuseRmsNorm, AWeightThatIsNotPerFeatureOrAReadNormStaysAMul) {
  // The normalised value is read twice: fused without the weight, the weight mul stays.
  RmsChain read = rms_chain(true, false, -1, /*normed_also_output=*/true);
  EXPECT_EQ(apply(read.graph, fuse_rms_norm), 1);
  EXPECT_EQ(count(read.graph, "aten::mul.Tensor"), 1);
  EXPECT_TRUE(producer(read.graph, read.normed).args[1].is_none());
  // A [3, 8] weight is not RMSNorm's [D] weight.
  RmsChain wide = rms_chain(true, false, -1, false, /*w_sizes=*/{3, 8});
  EXPECT_EQ(apply(wide.graph, fuse_rms_norm), 1);
  EXPECT_EQ(count(wide.graph, "aten::mul.Tensor"), 1);
}

TEST(FuseRmsNorm, LeavesOtherReductionsAndDelegatedChains) {
  RmsChain other_dim = rms_chain(true, false, /*mean_dim=*/1);
  EXPECT_EQ(apply(other_dim.graph, fuse_rms_norm), 0);
  EXPECT_EQ(count(other_dim.graph, "aten::rsqrt.default"), 1);
  RmsChain delegated = rms_chain(true);
  const NodeId rsqrt = [&] {
    for (NodeId id : delegated.graph.nodes()) {
      if (delegated.graph.node(id).op.str() == "aten::rsqrt.default") return id;
    }
    return ir::kNoNode;
  }();
  EXPECT_EQ(apply(delegated.graph, fuse_rms_norm, {rsqrt}), 0);
  EXPECT_EQ(delegated.graph.nodes().size(), 6u);
}

}  // namespace
}  // namespace pteron::compiler::testing
