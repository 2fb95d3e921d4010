// conv1d_as_conv2d on hand-built graphs: 1-D convolutions become 2-D ones of height 1, the
// squeezes sink below the elementwise ops after them (relu, a residual add of two such values,
// a pad of the last dim), an unsqueeze of a squeeze cancels and a mean over time reads the 4-D
// value, so a chain of 1-D layers keeps one unsqueeze at its start and no view between layers;
// a weight two convolutions share, and a dynamic graph, stay as they are. The numbers are the
// 1-D graph's within 1e-5 (the same sums in another loop order).
#include <gtest/gtest.h>

#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::Scalar;
using ir::TensorRef;

constexpr char kConv[] = "aten::convolution.default";
constexpr char kSqueeze[] = "aten::squeeze.dims";
constexpr char kUnsqueeze[] = "aten::unsqueeze.default";

ValueId conv1d(GraphBuilder& b, ValueId x, ValueId w, int64_t cout, int64_t length, int64_t padding,
               int64_t groups = 1) {
  return b.op(kConv,
              {TensorRef{x}, TensorRef{w}, ir::None{}, std::vector<int64_t>{1},
               std::vector<int64_t>{padding}, std::vector<int64_t>{1}, false,
               std::vector<int64_t>{0}, groups},
              f32({2, cout, length}));
}

void expect_same_numbers(const ir::Graph& before, const ir::Graph& after) {
  const auto inputs = sample_inputs(before);
  const auto want = run(before, inputs), got = run(after, inputs);
  EXPECT_LT(max_abs_diff(want, got), 1e-5 * (1 + max_abs(want)));
}

// x [2, 4, 20] -> conv 3 (pad 1) -> relu -> + (conv 1x1 of x) -> pad (2, 0) -> depthwise conv 3
// -> mean over time.
ir::Graph chain() {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 4, 20}));
  const ValueId a =
      b.op("aten::relu.default",
           {TensorRef{conv1d(b, x, b.constant("w1", f32({8, 4, 3})), 8, 20, 1)}}, f32({2, 8, 20}));
  const ValueId skip = conv1d(b, x, b.constant("w2", f32({8, 4, 1})), 8, 20, 0);
  const ValueId sum = b.op("aten::add.Tensor", {TensorRef{a}, TensorRef{skip}}, f32({2, 8, 20}));
  const ValueId padded =
      b.op("aten::constant_pad_nd.default",
           {TensorRef{sum}, std::vector<int64_t>{2, 0}, Scalar{0.0}}, f32({2, 8, 22}));
  const ValueId dw = conv1d(b, padded, b.constant("w3", f32({8, 1, 3})), 8, 20, 0, 8);
  return b.finish(
      {b.op("aten::mean.dim", {TensorRef{dw}, std::vector<int64_t>{-1}, false}, f32({2, 8}))});
}

TEST(Conv1dAsConv2d, AChainOfLayersRunsTwoDimensional) {
  const ir::Graph before = chain();
  ir::Graph g = chain();
  EXPECT_GT(conv1d_as_conv2d(g), 0);
  g.verify();
  EXPECT_EQ(count(g, kConv), 3) << ops(g);
  for (NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    if (n.is(ops::aten::convolution)) {
      EXPECT_EQ(g.value(n.outputs[0]).spec.rank(), 4u) << ops(g);
      EXPECT_EQ(g.value(n.arg("weight").tensor()).spec.sizes[2], 1) << ops(g);
      EXPECT_EQ(n.arg("stride").get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 1}));
    }
    if (n.is(ops::aten::mean_dim))  // the mean reads the 4-D value: a global average pool
      EXPECT_EQ(n.arg("dim").get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 3}));
  }
  // x is unsqueezed once per convolution reading it; nothing is squeezed.
  EXPECT_EQ(count(g, kUnsqueeze), 2) << ops(g);
  EXPECT_EQ(count(g, kSqueeze), 0) << ops(g);
  expect_same_numbers(before, g);
}

TEST(Conv1dAsConv2d, ASharedWeightAndATwoDimensionalGraphStay) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 4, 20}));
  const ValueId w = b.constant("w", f32({4, 4, 3}));
  const ValueId y = conv1d(b, conv1d(b, x, w, 4, 20, 1), w, 4, 20, 1);
  ir::Graph g = b.finish({y});
  EXPECT_EQ(conv1d_as_conv2d(g), 0);
  EXPECT_EQ(count(g, kUnsqueeze), 0);

  GraphBuilder b2;
  const ValueId x2 = b2.input("x", f32({1, 3, 8, 8}));
  const ValueId y2 =
      b2.op(kConv,
            {TensorRef{x2}, TensorRef{b2.constant("w", f32({4, 3, 3, 3}))}, ir::None{},
             std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1},
             false, std::vector<int64_t>{0, 0}, int64_t{1}},
            f32({1, 4, 8, 8}));
  ir::Graph g2 = b2.finish({y2});
  EXPECT_EQ(conv1d_as_conv2d(g2), 0);
}

// The result of a 1-D convolution that is a graph output keeps its 3-D shape (one squeeze).
ir::Graph conv_relu_output() {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 4, 20}));
  return b.finish({b.op("aten::relu.default",
                        {TensorRef{conv1d(b, x, b.constant("w", f32({6, 4, 5})), 6, 20, 2)}},
                        f32({2, 6, 20}))});
}

TEST(Conv1dAsConv2d, AnOutputKeepsItsShape) {
  const ir::Graph before = conv_relu_output();
  ir::Graph g = conv_relu_output();
  EXPECT_GT(conv1d_as_conv2d(g), 0);
  g.verify();
  EXPECT_EQ(count(g, kSqueeze), 1) << ops(g);
  EXPECT_EQ(g.value(g.outputs()[0]).spec.sizes, (std::vector<int64_t>{2, 6, 20}));
  expect_same_numbers(before, g);
}

}  // namespace
}  // namespace pteron::compiler::testing
