// recompose_hard_activations on hand-built graphs of torch.export's decompositions: hardswish
// (div(mul(x, clamp(add(x, 3), 0, 6)), 6)) and hardsigmoid (div(clamp(add(x, 3), 0, 6), 6)) in
// the spellings export and users produce become one aten::hardswish / aten::hardsigmoid, and
// the numbers stay within 1e-6 of the decomposed graph's (a product by 1/6 where torch divides);
// chains computing something else, or whose intermediates are read elsewhere, stay.
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::Scalar;
using ir::TensorRef;

// Which spelling of each step the graph uses.
struct Spelling {
  bool long_three = true;  // add.Tensor(x, <int64 0-d constant 3>) (export's); else add.Scalar
  int clamps = 2;          // 2: clamp(min 0) then clamp(max 6); -2: max first; 1: clamp(0, 6)
  bool hardtanh = false;   // hardtanh(0, 6) instead of the clamp(s)
  bool x_first = true;     // mul(x, clamp) or mul(clamp, x)
  double add = 3.0, lo = 0.0, hi = 6.0, divisor = 6.0;
};

ValueId long_constant(GraphBuilder& b, int64_t v) {
  std::vector<uint8_t> bytes(sizeof v);
  std::memcpy(bytes.data(), &v, sizeof v);
  return b.constant_bytes("three", spec(ScalarType::Long, {}), bytes);
}

ValueId clamp_zero_six(GraphBuilder& b, ValueId v, const Spelling& s, const TensorSpec& shape) {
  if (s.hardtanh)
    return b.op("aten::hardtanh.default", {TensorRef{v}, Scalar{s.lo}, Scalar{s.hi}}, shape);
  if (s.clamps == 1)
    return b.op("aten::clamp.default", {TensorRef{v}, Scalar{s.lo}, Scalar{s.hi}}, shape);
  const ir::Argument none = ir::None{};
  if (s.clamps == 2) {
    v = b.op("aten::clamp.default", {TensorRef{v}, Scalar{s.lo}, none}, shape);
    return b.op("aten::clamp.default", {TensorRef{v}, none, Scalar{s.hi}}, shape);
  }
  v = b.op("aten::clamp.default", {TensorRef{v}, none, Scalar{s.hi}}, shape);
  return b.op("aten::clamp.default", {TensorRef{v}, Scalar{s.lo}, none}, shape);
}

// x = input * 5 (so values reach past -3 and 3, where the clamps bite), then the activation;
// `also_output` makes the clamped value a graph output too.
ir::Graph hard_activation(bool swish, const Spelling& s = {}, bool also_output = false) {
  GraphBuilder b;
  const TensorSpec shape = f32({2, 37});
  const ValueId in = b.input("in", shape);
  const ValueId x =
      b.op("aten::mul.Tensor", {TensorRef{in}, TensorRef{b.constant("k", f32({}), {5.0f})}}, shape);
  const ValueId shifted =
      s.long_three ? b.op("aten::add.Tensor",
                          {TensorRef{x}, TensorRef{long_constant(b, int64_t(s.add))}}, shape)
                   : b.op("aten::add.Scalar", {TensorRef{x}, Scalar{s.add}}, shape);
  const ValueId relu6 = clamp_zero_six(b, shifted, s, shape);
  ValueId top = relu6;
  if (swish) {
    top = s.x_first ? b.op("aten::mul.Tensor", {TensorRef{x}, TensorRef{relu6}}, shape)
                    : b.op("aten::mul.Tensor", {TensorRef{relu6}, TensorRef{x}}, shape);
  }
  const ValueId y = b.op(
      "aten::div.Tensor",
      {TensorRef{top}, TensorRef{b.constant("six", f32({}), {float(s.divisor)})}}, shape, "act");
  std::vector<ValueId> outputs = {y};
  if (also_output) outputs.push_back(relu6);
  return b.finish(outputs);
}

// Runs the pass; checks verify and the numbers.
int recompose(ir::Graph& g) {
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  const int changed = recompose_hard_activations(g);
  g.verify();
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-6) << ops(g);
  return changed;
}

TEST(RecomposeHardActivations, ExportsHardswishBecomesOneOp) {
  ir::Graph g = hard_activation(/*swish=*/true);
  EXPECT_EQ(recompose(g), 1);
  EXPECT_EQ(ops(g), "[aten::mul.Tensor, aten::hardswish.default]");
  EXPECT_EQ(g.value(g.outputs()[0]).name, "act");  // the value keeps its name (numerics debug)
}

TEST(RecomposeHardActivations, ExportsHardsigmoidBecomesOneOp) {
  ir::Graph g = hard_activation(/*swish=*/false);
  EXPECT_EQ(recompose(g), 1);
  EXPECT_EQ(ops(g), "[aten::mul.Tensor, aten::hardsigmoid.default]");
}

TEST(RecomposeHardActivations, TakesEverySpellingOfTheSameFunction) {
  for (bool swish : {true, false}) {
    for (const Spelling& s :
         {Spelling{.long_three = false}, Spelling{.clamps = 1}, Spelling{.clamps = -2},
          Spelling{.hardtanh = true}, Spelling{.x_first = false}}) {
      ir::Graph g = hard_activation(swish, s);
      EXPECT_EQ(recompose(g), 1) << ops(g);
      EXPECT_EQ(count(g, swish ? "aten::hardswish.default" : "aten::hardsigmoid.default"), 1);
    }
  }
}

TEST(RecomposeHardActivations, LeavesOtherFunctionsAndSharedIntermediates) {
  for (bool swish : {true, false}) {
    for (const Spelling& s :
         {Spelling{.add = 2.0}, Spelling{.long_three = false, .add = 2.0}, Spelling{.lo = -1.0},
          Spelling{.hi = 5.0}, Spelling{.divisor = 5.0}, Spelling{.clamps = 1, .hi = 7.0}}) {
      ir::Graph g = hard_activation(swish, s);
      EXPECT_EQ(recompose(g), 0) << ops(g);
    }
    ir::Graph shared = hard_activation(swish, {}, /*also_output=*/true);
    EXPECT_EQ(recompose(shared), 0) << ops(shared);
  }
}

TEST(RecomposeHardActivations, LeavesAnAddOfThreeReadByAnyOtherOp) {
  // linear(x + 3, W): the add's reader has no "self" argument; the pass must look at its op
  // before its arguments, and leave it.
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 8}));
  const ValueId shifted = b.op("aten::add.Scalar", {TensorRef{x}, Scalar{3.0}}, f32({3, 8}));
  const ValueId y =
      b.op("aten::linear.default",
           {TensorRef{shifted}, TensorRef{b.constant("w", f32({4, 8}))}, ir::None{}}, f32({3, 4}));
  ir::Graph g = b.finish({y});
  EXPECT_EQ(recompose(g), 0) << ops(g);
}

TEST(RecomposeHardActivations, LeavesAProductWithAnotherTensor) {
  // y * relu6(x + 3) / 6 is not a hardswish of x.
  GraphBuilder b;
  const TensorSpec shape = f32({3, 8});
  const ValueId x = b.input("x", shape), other = b.input("y", shape);
  const ValueId shifted = b.op("aten::add.Scalar", {TensorRef{x}, Scalar{3.0}}, shape);
  const ValueId relu6 =
      b.op("aten::hardtanh.default", {TensorRef{shifted}, Scalar{0.0}, Scalar{6.0}}, shape);
  const ValueId product = b.op("aten::mul.Tensor", {TensorRef{other}, TensorRef{relu6}}, shape);
  const ValueId y =
      b.op("aten::div.Tensor", {TensorRef{product}, TensorRef{b.constant("six", f32({}), {6.0f})}},
           shape);
  ir::Graph g = b.finish({y});
  EXPECT_EQ(recompose(g), 0) << ops(g);
}

}  // namespace
}  // namespace pteron::compiler::testing
