// The cost model (compiler/cost/cost_model.h): which class a node is weighed as, its precision,
// the estimate from calibrated rates, the comparison a partitioner acts on, and the calibration
// file's checks. The decisions it drives in compiled programs: tests/cli/test_cost_model.py.
#include <gtest/gtest.h>

#include "compiler/compile_error.h"
#include "compiler/cost/cost_model.h"

namespace pteron::compiler::cost {
namespace {

using ir::Graph;
using ir::NodeId;
using ir::TensorRef;
using ir::ValueId;

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32(std::vector<int64_t> sizes) {
  return ir::TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}
ValueId constant(Graph& g, const std::string& name, std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return g.add_constant(name, f32(sizes),
                        ir::ConstantData::owned(std::vector<uint8_t>(n * 4, 0), name));
}

NodeId conv(Graph& g, ValueId x, const std::string& name, std::vector<int64_t> weight,
            int64_t groups, std::vector<int64_t> out) {
  const ValueId w = constant(g, name + "_w", weight);
  const std::vector<int64_t> one = {1, 1}, pad = {weight[2] / 2, weight[3] / 2}, zero = {0, 0};
  return g.add_node(
      op("aten::convolution.default"),
      {TensorRef{x}, TensorRef{w}, ir::Argument{}, one, pad, one, false, zero, groups},
      {ir::NewValue{name, f32(std::move(out))}});
}

struct Net {
  Graph g;
  NodeId dense, pointwise, depthwise, linear, relu;
};

// x [1,8,6,6] -> 3x3 conv 16 -> 1x1 conv 16 -> depthwise 3x3 -> relu; y [4,32] -> linear 10.
Net net() {
  Net n;
  const ValueId x = n.g.add_input("x", f32({1, 8, 6, 6}));
  n.dense = conv(n.g, x, "dense", {16, 8, 3, 3}, 1, {1, 16, 6, 6});
  n.pointwise = conv(n.g, n.g.node(n.dense).outputs[0], "pw", {16, 16, 1, 1}, 1, {1, 16, 6, 6});
  n.depthwise = conv(n.g, n.g.node(n.pointwise).outputs[0], "dw", {16, 1, 3, 3}, 16, {1, 16, 6, 6});
  n.relu = n.g.add_node(op("aten::relu.default"), {TensorRef{n.g.node(n.depthwise).outputs[0]}},
                        {ir::NewValue{"relu", f32({1, 16, 6, 6})}});
  const ValueId y = n.g.add_input("y", f32({4, 32}));
  const ValueId w = constant(n.g, "fc_w", {10, 32});
  n.linear = n.g.add_node(op("aten::linear.default"), {TensorRef{y}, TensorRef{w}, ir::Argument{}},
                          {ir::NewValue{"fc", f32({4, 10})}});
  n.g.set_outputs({n.g.node(n.relu).outputs[0], n.g.node(n.linear).outputs[0]});
  return n;
}

TEST(CostModel, WeighsConvolutionsByShapeAndLinearsByMultiplyAdds) {
  const Net n = net();
  const auto dense = weigh(n.g, n.g.node(n.dense));
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(dense->op_class, OpClass::kConv3x3);
  EXPECT_DOUBLE_EQ(dense->multiply_adds, 16.0 * 36 * 8 * 9);
  EXPECT_EQ(weigh(n.g, n.g.node(n.pointwise))->op_class, OpClass::kPointwise);
  // Strided or larger windows take the general path (no Winograd on the optimized kernels).
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 8, 12, 12}));
  const ValueId w = constant(g, "w", {16, 8, 3, 3});
  const std::vector<int64_t> two = {2, 2}, one = {1, 1}, zero = {0, 0};
  const NodeId strided = g.add_node(
      op("aten::convolution.default"),
      {TensorRef{x}, TensorRef{w}, ir::Argument{}, two, one, one, false, zero, int64_t{1}},
      {ir::NewValue{"s", f32({1, 16, 6, 6})}});
  EXPECT_EQ(weigh(g, g.node(strided))->op_class, OpClass::kConv);
  const NodeId wide = conv(g, x, "wide", {16, 8, 5, 5}, 1, {1, 16, 12, 12});
  EXPECT_EQ(weigh(g, g.node(wide))->op_class, OpClass::kConv);
  EXPECT_EQ(weigh(n.g, n.g.node(n.depthwise))->op_class, OpClass::kDepthwise);
  EXPECT_DOUBLE_EQ(weigh(n.g, n.g.node(n.depthwise))->multiply_adds, 16.0 * 36 * 9);
  // Depthwise windows by taps: up to 3x3, up to 5x5 (25), more (ConvNeXt's 7x7).
  const NodeId dw5 = conv(g, x, "dw5", {8, 1, 5, 5}, 8, {1, 8, 12, 12});
  EXPECT_EQ(weigh(g, g.node(dw5))->op_class, OpClass::kDepthwise5x5);
  const NodeId dw1x7 = conv(g, x, "dw1x7", {8, 1, 1, 7}, 8, {1, 8, 12, 12});
  EXPECT_EQ(weigh(g, g.node(dw1x7))->op_class, OpClass::kDepthwise);
  EXPECT_EQ(op_class_name(OpClass::kDepthwise5x5), "depthwise_5x5");
  const NodeId dw7 = conv(g, x, "dw7", {8, 1, 7, 7}, 8, {1, 8, 12, 12});
  EXPECT_EQ(weigh(g, g.node(dw7))->op_class, OpClass::kDepthwiseLarge);
  EXPECT_EQ(op_class_name(OpClass::kDepthwiseLarge), "depthwise_large");
  EXPECT_EQ(weigh(n.g, n.g.node(n.linear))->op_class, OpClass::kLinear);
  EXPECT_DOUBLE_EQ(weigh(n.g, n.g.node(n.linear))->multiply_adds, 4.0 * 10 * 32);
  EXPECT_FALSE(weigh(n.g, n.g.node(n.relu)).has_value());
  EXPECT_EQ(precision_of(n.g, n.g.node(n.dense)), "f32");
}

// A grouped convolution is a kind no calibration measures: the region holding it is not
// weighed (the int8 library, for one, has no kernel for it), so its estimate is unknown.
TEST(CostModel, AGroupedConvolutionIsNotWeighedAsAMeasuredClass) {
  Net n = net();
  const NodeId grouped =
      conv(n.g, n.g.node(n.relu).outputs[0], "grouped", {16, 4, 3, 3}, 4, {1, 16, 6, 6});
  EXPECT_EQ(weigh(n.g, n.g.node(grouped))->op_class, OpClass::kOther);
  Calibration c;
  for (OpClass k : kOpClasses) c.rates["optimized"]["f32"][std::string(op_class_name(k))] = {1, 1};
  EXPECT_TRUE(estimate_ns(c, n.g, {n.dense, n.depthwise}, "optimized").has_value());
  EXPECT_FALSE(estimate_ns(c, n.g, {n.dense, grouped}, "optimized").has_value());
}

TEST(CostModel, ANodeReadingADequantizedValueIsInt8) {
  Graph g;
  const ValueId x = g.add_input("x", ir::TensorSpec::contiguous(ScalarType::Char, {1, 8, 6, 6}));
  const NodeId dq = g.add_node(op("quantized_decomposed::dequantize_per_tensor.default"),
                               {TensorRef{x}, 0.1, int64_t{0}, int64_t{-128}, int64_t{127},
                                ScalarType::Char, ir::Argument{}},
                               {ir::NewValue{"xf", f32({1, 8, 6, 6})}});
  const NodeId c = conv(g, g.node(dq).outputs[0], "c", {8, 8, 3, 3}, 1, {1, 8, 6, 6});
  g.set_outputs({g.node(c).outputs[0]});
  EXPECT_EQ(precision_of(g, g.node(c)), "int8");
  EXPECT_EQ(kernel_engine_for(g, {dq, c}, {"cortex-m", "optimized", "portable"}), "cortex-m");
  EXPECT_EQ(kernel_engine_for(g, {dq, c}, {"optimized", "portable"}), "");
}

Calibration calibration(double xnnpack_ns, double optimized_ns) {
  Calibration c;
  c.machine = "test";
  for (OpClass k : kOpClasses) {
    c.rates["xnnpack"]["f32"][std::string(op_class_name(k))] = {100, xnnpack_ns};
    c.rates["optimized"]["f32"][std::string(op_class_name(k))] = {200, optimized_ns};
  }
  return c;
}

TEST(CostModel, EstimatesSumCallAndMultiplyAddCostsOfWeighedNodes) {
  const Net n = net();
  const Calibration c = calibration(0.5, 0.25);
  const std::vector<NodeId> nodes = {n.dense, n.pointwise, n.depthwise, n.relu};
  const double macs = 16.0 * 36 * 8 * 9 + 16.0 * 36 * 16 + 16.0 * 36 * 9;
  EXPECT_DOUBLE_EQ(*estimate_ns(c, n.g, nodes, "xnnpack"), 3 * 100 + 0.5 * macs);
  EXPECT_DOUBLE_EQ(*estimate_ns(c, n.g, nodes, "optimized"), 3 * 200 + 0.25 * macs);
  EXPECT_DOUBLE_EQ(*estimate_ns(c, n.g, {n.relu}, "xnnpack"), 0.0);
  EXPECT_FALSE(estimate_ns(c, n.g, nodes, "cortex-m").has_value());  // not measured
}

TEST(CostModel, TheRegionGoesWhereTheCalibrationSaysItIsFaster) {
  const Net n = net();
  const std::vector<NodeId> nodes = {n.dense, n.pointwise, n.depthwise, n.relu};
  const std::vector<std::string> libs = {"optimized", "portable"};
  const auto kernels_win = compare_region(calibration(0.5, 0.25), n.g, nodes, "xnnpack", libs);
  ASSERT_TRUE(kernels_win.has_value());
  EXPECT_TRUE(kernels_win->kernels_faster());
  EXPECT_EQ(kernels_win->kernels, "optimized");
  EXPECT_NE(kernels_win->describe().find("cost model: optimized kernels"), std::string::npos);
  const auto delegate_wins = compare_region(calibration(0.25, 0.5), n.g, nodes, "xnnpack", libs);
  ASSERT_TRUE(delegate_wins.has_value());
  EXPECT_FALSE(delegate_wins->kernels_faster());
  EXPECT_NE(delegate_wins->to_json().find("\"chosen\":\"xnnpack\""), std::string::npos);
  // Faster, but within the margin the model's error calls for: the region stays.
  const auto close = compare_region(calibration(0.5, 0.45), n.g, nodes, "xnnpack", libs);
  ASSERT_TRUE(close.has_value());
  EXPECT_LT(close->kernels_ns, close->delegate_ns);
  EXPECT_FALSE(close->kernels_faster());
  // Faster, but the kernels would leave ops outside their own form: what that costs counts.
  auto partial = *kernels_win;
  partial.kernels_leave = {"aten::sigmoid.default x2"};
  partial.kernels_leave_ns = partial.delegate_ns;
  EXPECT_FALSE(partial.kernels_faster());
  EXPECT_NE(partial.describe().find("would leave aten::sigmoid.default x2"), std::string::npos);
  EXPECT_NE(partial.to_json().find("\"chosen\":\"xnnpack\""), std::string::npos);
  partial.kernels_leave_ns = 1;  // a softmax over a few classes
  EXPECT_TRUE(partial.kernels_faster());
  // What the delegate's program costs beyond its layers, against the kernels', joins its side:
  // a close call within the margin tips to the kernels.
  Calibration with_programs = calibration(0.5, 0.45);
  with_programs.program_ns["xnnpack"]["f32"] = 20000;
  with_programs.program_ns["optimized"]["f32"] = 1000;
  const auto tipped = compare_region(with_programs, n.g, nodes, "xnnpack", libs);
  ASSERT_TRUE(tipped.has_value());
  EXPECT_DOUBLE_EQ(tipped->delegate_ns, close->delegate_ns + 19000);
  EXPECT_TRUE(tipped->kernels_faster());
  const Calibration back = Calibration::from_json(with_programs.to_json());
  EXPECT_EQ(back.program_ns, with_programs.program_ns);
  // Each byte of a 4-D activation crossing the region costs the delegate's program its rate
  // beyond the kernels': x [1,8,6,6] in, relu's [1,16,6,6] out (a graph output); the weights
  // and the values passed inside the region do not count.
  EXPECT_DOUBLE_EQ(boundary_bytes(n.g, nodes), (8.0 + 16.0) * 36 * 4);
  EXPECT_DOUBLE_EQ(boundary_bytes(n.g, {n.dense}), (8.0 + 16.0) * 36 * 4);
  EXPECT_DOUBLE_EQ(boundary_bytes(n.g, {n.linear}), 0);  // 2-D values cross unconverted
  Calibration with_boundaries = calibration(0.5, 0.45);
  with_boundaries.boundary_ns_per_byte["xnnpack"]["f32"] = 10;
  with_boundaries.boundary_ns_per_byte["optimized"]["f32"] = 1;
  const auto crossed = compare_region(with_boundaries, n.g, nodes, "xnnpack", libs);
  ASSERT_TRUE(crossed.has_value());
  EXPECT_DOUBLE_EQ(crossed->delegate_ns, close->delegate_ns + 9 * boundary_bytes(n.g, nodes));
  EXPECT_TRUE(crossed->kernels_faster());
  EXPECT_EQ(Calibration::from_json(with_boundaries.to_json()).boundary_ns_per_byte,
            with_boundaries.boundary_ns_per_byte);
  // Nothing weighed, or no kernel engine the model knows: no comparison.
  EXPECT_FALSE(compare_region(calibration(0.5, 0.25), n.g, {n.relu}, "xnnpack", libs));
  EXPECT_FALSE(compare_region(calibration(0.5, 0.25), n.g, nodes, "xnnpack", {"portable"}));
}

TEST(CostModel, CalibrationFilesRoundTripAndBadOnesAreOneLineErrors) {
  const Calibration c = calibration(0.5, 0.25);
  const Calibration back = Calibration::from_json(c.to_json());
  EXPECT_EQ(back.machine, "test");
  EXPECT_DOUBLE_EQ(back.rate("optimized", "f32", OpClass::kDepthwise)->ns_per_mac, 0.25);
  EXPECT_DOUBLE_EQ(back.rate("xnnpack", "f32", OpClass::kLinear)->ns_per_call, 100);
  EXPECT_FALSE(back.rate("xnnpack", "int8", OpClass::kLinear).has_value());
  const auto error = [](const std::string& text) {
    try {
      Calibration::from_json(text);
    } catch (const CompileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("not json").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error(R"({"format": 9})").find("run `pteron tune` again"), std::string::npos);
  EXPECT_NE(error(R"({"format": 2, "machine": "m"})").find("calibration:"), std::string::npos);
  const std::string negative =
      R"({"format": 2, "machine": "m", "threads": 1, "rates": {"xnnpack": {"f32": {"conv":
      {"ns_per_call": 1, "ns_per_mac": -2}}}}})";
  EXPECT_NE(error(negative).find("xnnpack f32 conv has no usable rate"), std::string::npos);
  EXPECT_NE(error(R"({"format": 2, "machine": "m", "threads": 1, "rates": {},
      "boundary_ns_per_byte": {"xnnpack": {"f32": -1}}})")
                .find("xnnpack f32 has no usable boundary cost"),
            std::string::npos);
  // A format-1 file (before the depthwise windows and boundary costs) is measured again.
  EXPECT_NE(error(R"({"format": 1})").find("run `pteron tune` again"), std::string::npos);
  for (const std::string& e : {error("not json"), error(negative)})
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

}  // namespace
}  // namespace pteron::compiler::cost
