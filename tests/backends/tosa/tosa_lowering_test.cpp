// The TOSA lowering's C++ API on hand-built graphs: TOSA's requantisation parameters, the
// serialized graph (identifier, version, I/O, NHWC layout, int8 parameters) and refusals that
// name the op and the constraint. Numerics against the reference model: test_tosa_ops.py.
#include "backends/tosa/aot/tosa_lowering.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "backends/tosa/aot/tosa_quant.h"
#include "backends/tosa/schema/tosa_generated.h"

namespace pteron::tosa_aot {
namespace {

namespace ir = compiler::ir;
using ir::Graph;
using ir::NewValue;
using ir::NodeId;
using ir::TensorRef;
using ir::ValueId;

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }

TEST(TosaScale, MultiplierAndShiftFollowTosaScale32) {
  auto one = tosa_scale32(1.0);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->multiplier, 1 << 30);
  EXPECT_EQ(one->shift, 30);
  auto quarter = tosa_scale32(0.25);
  ASSERT_TRUE(quarter);
  EXPECT_EQ(quarter->multiplier, 1 << 30);
  EXPECT_EQ(quarter->shift, 32);
  for (double bad : {0.0, -1.0, double(NAN), double(INFINITY), 1e12})
    EXPECT_FALSE(tosa_scale32(bad)) << bad;
  // Tiny factors lose multiplier bits instead of exceeding shift 62.
  auto tiny = tosa_scale32(1e-12);
  ASSERT_TRUE(tiny);
  EXPECT_LE(tiny->shift, 62);
  EXPECT_NEAR(tiny->multiplier * std::ldexp(1.0, -tiny->shift), 1e-12, 1e-15);
}

TEST(TosaScale, ApplyScaleRoundsLikeTheRealProduct) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> factor(1e-4, 100.0);
  std::uniform_int_distribution<int32_t> value(-100000, 100000);
  for (int i = 0; i < 2000; ++i) {
    const double f = factor(rng);
    const int32_t v = value(rng);
    const auto s = tosa_scale32(f);
    ASSERT_TRUE(s);
    // Rounds half up; the 31-bit multiplier's error (< 0.01 here) only matters near a tie.
    const double real = v * f;
    if (std::fabs(real - std::floor(real) - 0.5) < 0.01) continue;
    EXPECT_EQ(tosa_apply_scale32(v, *s), static_cast<int32_t>(std::floor(real + 0.5)))
        << v << " x " << f;
  }
}

const tosa::TosaBasicBlock* block_of(const std::vector<uint8_t>& bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!tosa::VerifyTosaGraphBuffer(verifier)) return nullptr;
  const tosa::TosaGraph* g = tosa::GetTosaGraph(bytes.data());
  if (g->version()->_major() != 1 || g->version()->_minor() != 0 || g->version()->_draft())
    return nullptr;
  return g->regions()->Get(0)->blocks()->Get(0);
}

bool has_op(const tosa::TosaBasicBlock* b, tosa::Op o) {
  for (const auto* op : *b->operators())
    if (op->op() == o) return true;
  return false;
}

TEST(TosaLowering, FpReluBecomesClamp) {
  Graph g;
  const ValueId x = g.add_input("x", ir::TensorSpec::contiguous(ScalarType::Float, {2, 3}));
  const NodeId relu =
      g.add_node(op("aten::relu.default"), {TensorRef{x}},
                 {NewValue{"y", ir::TensorSpec::contiguous(ScalarType::Float, {2, 3})}});
  g.set_outputs({g.node(relu).outputs[0]});
  EXPECT_TRUE(tosa_supports(g, g.node(relu), TosaProfile::Fp).supported);
  const TosaLowering l = lower_to_tosa(g, {relu}, TosaProfile::Fp);
  ASSERT_TRUE(l.ok) << l.reason;
  EXPECT_EQ(std::memcmp(l.tosa.data() + 4, "TOSA", 4), 0);
  const tosa::TosaBasicBlock* b = block_of(l.tosa);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(has_op(b, tosa::Op::CLAMP));
  ASSERT_EQ(l.inputs.size(), 1u);
  ASSERT_EQ(l.outputs.size(), 1u);
  EXPECT_EQ(l.inputs[0].value_name, "x");
  EXPECT_EQ(l.inputs[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(b->inputs()->Get(0)->str(), l.inputs[0].tosa_name);
  EXPECT_EQ(b->outputs()->Get(0)->str(), l.outputs[0].tosa_name);
}

// int8 x -> dequantize -> relu -> quantize -> int8 y, 4-D (NHWC in TOSA).
TEST(TosaLowering, IntReluIsAnInt8ClampOnNhwc) {
  Graph g;
  const std::vector<int64_t> shape = {1, 2, 3, 3};
  const ValueId x = g.add_input("x", ir::TensorSpec::contiguous(ScalarType::Char, shape));
  const NodeId dq = g.add_node(
      op("quantized_decomposed::dequantize_per_tensor.default"),
      {TensorRef{x}, 0.05, int64_t{-3}, int64_t{-128}, int64_t{127}, ScalarType::Char, ir::None{}},
      {NewValue{"xf", ir::TensorSpec::contiguous(ScalarType::Float, shape)}});
  const NodeId relu =
      g.add_node(op("aten::relu.default"), {TensorRef{g.node(dq).outputs[0]}},
                 {NewValue{"r", ir::TensorSpec::contiguous(ScalarType::Float, shape)}});
  const NodeId q = g.add_node(op("quantized_decomposed::quantize_per_tensor.default"),
                              {TensorRef{g.node(relu).outputs[0]}, 0.05, int64_t{-3}, int64_t{-128},
                               int64_t{127}, ScalarType::Char},
                              {NewValue{"y", ir::TensorSpec::contiguous(ScalarType::Char, shape)}});
  g.set_outputs({g.node(q).outputs[0]});
  for (NodeId n : {dq, relu, q})
    EXPECT_TRUE(tosa_supports(g, g.node(n), TosaProfile::Int).supported) << n;
  const TosaLowering l = lower_to_tosa(g, {dq, relu, q}, TosaProfile::Int);
  ASSERT_TRUE(l.ok) << l.reason;
  const tosa::TosaBasicBlock* b = block_of(l.tosa);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(has_op(b, tosa::Op::CLAMP));
  for (const auto* o : *b->operators()) {
    if (o->op() != tosa::Op::CLAMP) continue;
    const auto* a = o->attribute_as_ClampAttribute();
    EXPECT_EQ(static_cast<int8_t>(a->min_val()->Get(0)), -3);  // quantized 0.0
    EXPECT_EQ(static_cast<int8_t>(a->max_val()->Get(0)), 127);
  }
  ASSERT_EQ(l.inputs.size(), 1u);
  EXPECT_EQ(l.inputs[0].shape, (std::vector<int64_t>{1, 3, 3, 2}));
  EXPECT_EQ(l.inputs[0].dim_order, (std::vector<uint8_t>{0, 2, 3, 1}));
  EXPECT_TRUE(l.inputs[0].quantized);
  EXPECT_DOUBLE_EQ(l.inputs[0].scale, 0.05);
  EXPECT_EQ(l.inputs[0].zero_point, -3);
  ASSERT_EQ(l.outputs.size(), 1u);
  EXPECT_EQ(l.outputs[0].value_name, "y");
  EXPECT_EQ(l.outputs[0].dtype, ScalarType::Char);
  EXPECT_EQ(l.outputs[0].dim_order, (std::vector<uint8_t>{0, 2, 3, 1}));

  // The INT profile takes no float region inputs or quantized ops in FP.
  const TosaLowering no_dq = lower_to_tosa(g, {relu, q}, TosaProfile::Int);
  EXPECT_FALSE(no_dq.ok);
  EXPECT_NE(no_dq.reason.find("INT profile regions take int8"), std::string::npos) << no_dq.reason;
  const compiler::SupportDecision fp = tosa_supports(g, g.node(dq), TosaProfile::Fp);
  EXPECT_FALSE(fp.supported);
  EXPECT_NE(fp.reason.find("TOSA FP: "), std::string::npos) << fp.reason;
}

// dequantize -> softmax -> quantize over an int8 input: INT softmax (TABLE exp, int32
// reciprocal) lowers, so the three nodes are one region.
Graph int_unary_graph(const char* unary, NodeId* dq, NodeId* un) {
  Graph g;
  const std::vector<int64_t> shape = {2, 4};
  const ValueId x = g.add_input("x", ir::TensorSpec::contiguous(ScalarType::Char, shape));
  *dq = g.add_node(
      op("quantized_decomposed::dequantize_per_tensor.default"),
      {TensorRef{x}, 0.1, int64_t{0}, int64_t{-128}, int64_t{127}, ScalarType::Char, ir::None{}},
      {NewValue{"xf", ir::TensorSpec::contiguous(ScalarType::Float, shape)}});
  std::vector<ir::Argument> args = {TensorRef{g.node(*dq).outputs[0]}};
  if (std::string(unary) == "aten::_softmax.default") {
    args.push_back(int64_t{1});
    args.push_back(false);
  }
  *un = g.add_node(op(unary), args,
                   {NewValue{"s", ir::TensorSpec::contiguous(ScalarType::Float, shape)}});
  const NodeId q = g.add_node(op("quantized_decomposed::quantize_per_tensor.default"),
                              {TensorRef{g.node(*un).outputs[0]}, 1.0 / 256, int64_t{-128},
                               int64_t{-128}, int64_t{127}, ScalarType::Char},
                              {NewValue{"y", ir::TensorSpec::contiguous(ScalarType::Char, shape)}});
  g.set_outputs({g.node(q).outputs[0]});
  return g;
}

TEST(TosaLowering, IntSoftmaxLowers) {
  NodeId dq, sm;
  const Graph g = int_unary_graph("aten::_softmax.default", &dq, &sm);
  EXPECT_TRUE(tosa_supports(g, g.node(sm), TosaProfile::Int).supported);
  EXPECT_TRUE(tosa_supports(g, g.node(dq), TosaProfile::Int).supported);
  EXPECT_EQ(select_tosa_nodes(g, TosaProfile::Int).nodes.size(), 3u);
}

// A dequantize whose reader stays on the CPU stays with it (INT has no float region outputs).
TEST(TosaLowering, IntDequantizeFollowsItsReader) {
  NodeId dq, erf;
  const Graph g = int_unary_graph("aten::erf.default", &dq, &erf);
  const compiler::SupportDecision s = tosa_supports(g, g.node(erf), TosaProfile::Int);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("aten::erf.default has no TOSA lowering"), std::string::npos) << s.reason;
  const compiler::SupportDecision d = tosa_supports(g, g.node(dq), TosaProfile::Int);
  EXPECT_FALSE(d.supported);
  EXPECT_NE(d.reason.find("its reader node 's'"), std::string::npos) << d.reason;
  EXPECT_TRUE(select_tosa_nodes(g, TosaProfile::Int).nodes.empty());
}

TEST(TosaLowering, RefusalsNameTheOpAndConstraint) {
  Graph g;
  const auto spec = ir::TensorSpec::contiguous(ScalarType::Float, {2, 5});
  const ValueId x = g.add_input("x", spec);
  const NodeId erf = g.add_node(op("aten::erf.default"), {TensorRef{x}}, {NewValue{"g", spec}});
  const NodeId sm =
      g.add_node(op("aten::_softmax.default"),
                 {TensorRef{g.node(erf).outputs[0]}, int64_t{1}, false}, {NewValue{"s", spec}});
  g.set_outputs({g.node(sm).outputs[0]});
  const compiler::SupportDecision d = tosa_supports(g, g.node(erf), TosaProfile::Fp);
  EXPECT_FALSE(d.supported);
  EXPECT_NE(d.reason.find("aten::erf.default has no TOSA lowering"), std::string::npos) << d.reason;
  EXPECT_TRUE(tosa_supports(g, g.node(sm), TosaProfile::Fp).supported);
  const TosaSelection sel = select_tosa_nodes(g, TosaProfile::Fp);
  // erf stays on the CPU; softmax, reading it, is a region of its own.
  EXPECT_EQ(sel.nodes, std::vector<NodeId>{sm});
  ASSERT_EQ(sel.refusals.size(), 1u);
  const TosaLowering l = lower_to_tosa(g, {erf, sm}, TosaProfile::Fp);
  EXPECT_FALSE(l.ok);
  EXPECT_NE(l.reason.find("node 'g'"), std::string::npos) << l.reason;
}

}  // namespace
}  // namespace pteron::tosa_aot
