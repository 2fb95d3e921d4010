// The quantizer's output form on a hand-built graph: what backends pattern-match (PT2E's
// dequantize -> op -> quantize) must be exactly there, per scheme and with int8 I/O.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compiler/compile_error.h"
#include "compiler/quantize/quantize.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }

ir::TensorSpec f32(std::vector<int64_t> sizes) {
  return ir::TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}

ir::ValueId constant(ir::Graph& g, const std::string& name, std::vector<int64_t> sizes,
                     float seed) {
  const ir::TensorSpec spec = f32(std::move(sizes));
  std::vector<float> values(static_cast<size_t>(spec.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = seed * static_cast<float>((i * 7 % 11)) - 0.3f;
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return g.add_constant(name, spec, ir::ConstantData::owned(std::move(bytes), name));
}

// x[1,2,4,4] -> conv(3x3, pad 1, 4 channels) -> relu -> max_pool 2 -> view [1,16] -> linear 3
ir::Graph small_cnn() {
  ir::Graph g;
  const ir::ValueId x = g.add_input("x", f32({1, 2, 4, 4}));
  const ir::ValueId w = constant(g, "w", {4, 2, 3, 3}, 0.05f);
  const ir::ValueId b = constant(g, "b", {4}, 0.1f);
  const ir::ValueId fw = constant(g, "fw", {3, 16}, 0.02f);
  const ir::ValueId fb = constant(g, "fb", {3}, 0.1f);
  const std::vector<int64_t> one = {1, 1}, zero = {0, 0};
  auto out = [](const char* name, std::vector<int64_t> sizes) {
    return std::optional<ir::NewValue>(ir::NewValue{name, f32(std::move(sizes))});
  };
  const ir::NodeId conv = g.add_node(op("aten::convolution.default"),
                                     {ir::TensorRef{x}, ir::TensorRef{w}, ir::TensorRef{b}, one,
                                      one, one, false, zero, int64_t{1}},
                                     {out("conv", {1, 4, 4, 4})});
  const ir::NodeId relu =
      g.add_node(op("aten::relu.default"), {ir::TensorRef{g.node(conv).outputs[0]}},
                 {out("relu", {1, 4, 4, 4})});
  const std::vector<int64_t> two = {2, 2};
  const ir::NodeId pool = g.add_node(
      op("aten::max_pool2d_with_indices.default"),
      {ir::TensorRef{g.node(relu).outputs[0]}, two, two, zero, one, false},
      {out("pool", {1, 4, 2, 2}),
       ir::NewValue{"indices", ir::TensorSpec::contiguous(ScalarType::Long, {1, 4, 2, 2})}});
  const ir::NodeId view =
      g.add_node(op("aten::view_copy.default"),
                 {ir::TensorRef{g.node(pool).outputs[0]}, std::vector<int64_t>{1, 16}},
                 {out("flat", {1, 16})});
  const ir::NodeId fc =
      g.add_node(op("aten::linear.default"),
                 {ir::TensorRef{g.node(view).outputs[0]}, ir::TensorRef{fw}, ir::TensorRef{fb}},
                 {out("logits", {1, 3})});
  g.set_outputs({g.node(fc).outputs[0]});
  return g;
}

CalibrationData samples(size_t n) {
  CalibrationInput in{ScalarType::Float, {static_cast<int64_t>(n), 1, 2, 4, 4}, {}};
  std::vector<float> v(n * 32);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 4.0f;
  in.data.resize(v.size() * sizeof(float));
  std::memcpy(in.data.data(), v.data(), in.data.size());
  return {in};
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> names;
  for (ir::NodeId id : g.nodes()) names.push_back(g.node(id).op.name);
  return names;
}

const ir::Node& producer(const ir::Graph& g, const ir::Argument& a) {
  return g.node(g.value(a.tensor()).producer);
}

const ir::Node& only(const ir::Graph& g, std::string_view name) {
  for (ir::NodeId id : g.nodes()) {
    if (g.node(id).op.name == name) return g.node(id);
  }
  throw CompileError("no " + std::string(name));
}

TEST(QuantizePass, ConvReluPoolViewLinearInPt2eForm) {
  ir::Graph g = small_cnn();
  QuantizeOptions o;
  o.scheme = QuantScheme::CortexM;
  o.calibration = samples(3);
  size_t progress_calls = 0;
  o.progress = [&](int pass, int passes, size_t done, size_t total) {
    EXPECT_EQ(passes, 1);  // cortex-m: min/max, one pass
    EXPECT_EQ(total, 3u);
    ++progress_calls;
  };
  const QuantizeReport r = quantize_graph(g, o);
  EXPECT_EQ(progress_calls, 3u);
  EXPECT_EQ(r.samples, 3u);
  EXPECT_EQ(r.observer, "minmax");

  const ir::Node& conv = only(g, "convolution");
  // Input: dequantize(quantize(x)); weight: int8 constant through dequantize_per_channel;
  // bias: int32 constant through dequantize_per_channel (cortex-m).
  const ir::Node& x_dq = producer(g, conv.args[0]);
  EXPECT_EQ(x_dq.op.str(), "quantized_decomposed::dequantize_per_tensor.default");
  EXPECT_EQ(producer(g, x_dq.args[0]).op.name, "quantize_per_tensor");
  const ir::Node& w_dq = producer(g, conv.args[1]);
  EXPECT_EQ(w_dq.op.str(), "quantized_decomposed::dequantize_per_channel.default");
  EXPECT_EQ(g.value(w_dq.args[0].tensor()).spec.dtype, ScalarType::Char);
  EXPECT_TRUE(g.value(w_dq.args[0].tensor()).is_constant());
  EXPECT_EQ(w_dq.args[4].to_int(), -127);
  const ir::Node& b_dq = producer(g, conv.args[2]);
  EXPECT_EQ(g.value(b_dq.args[0].tensor()).spec.dtype, ScalarType::Int);
  // The relu is fused: conv's output goes straight to it, unquantized; relu's output is.
  const ir::Value& conv_out = g.value(conv.outputs[0]);
  ASSERT_EQ(conv_out.users.size(), 1u);
  const ir::Node& relu = g.node(conv_out.users[0]);
  EXPECT_EQ(relu.op.name, "relu");
  const ir::Value& relu_out = g.value(relu.outputs[0]);
  ASSERT_EQ(relu_out.users.size(), 1u);
  const ir::Node& relu_q = g.node(relu_out.users[0]);
  EXPECT_EQ(relu_q.op.name, "quantize_per_tensor");
  EXPECT_EQ(relu_q.args[2].to_int(), -128);  // post-ReLU range [0, max]: zero point at qmin
  // Max pool and view reuse the relu's parameters (no requantization).
  const ir::Node& pool = only(g, "max_pool2d_with_indices");
  const ir::Node& pool_q = g.node(g.value(pool.outputs[0]).users[0]);
  EXPECT_EQ(pool_q.args[1], relu_q.args[1]);
  EXPECT_EQ(pool_q.args[2], relu_q.args[2]);
  // The float output is the dequantized linear output.
  EXPECT_EQ(g.node(g.value(g.outputs()[0]).producer).op.name, "dequantize_per_tensor");
  EXPECT_EQ(g.value(g.outputs()[0]).spec.dtype, ScalarType::Float);
  // Float weights are gone.
  EXPECT_FALSE(g.find_value("w").has_value());
  EXPECT_FALSE(g.find_value("b").has_value());
}

TEST(QuantizePass, XnnpackKeepsFloatBias) {
  ir::Graph g = small_cnn();
  QuantizeOptions o;
  o.scheme = QuantScheme::Xnnpack;
  o.calibration = samples(2);
  int passes_seen = 0;
  o.progress = [&](int, int passes, size_t, size_t) { passes_seen = passes; };
  quantize_graph(g, o);
  EXPECT_EQ(passes_seen, 2);  // percentile: min/max pass, then histogram pass
  const ir::Node& conv = only(g, "convolution");
  EXPECT_TRUE(g.value(conv.args[2].tensor()).is_constant());
  EXPECT_EQ(g.value(conv.args[2].tensor()).spec.dtype, ScalarType::Float);
}

TEST(QuantizePass, Int8IoLeavesNoFloatAtTheBoundary) {
  ir::Graph g = small_cnn();
  QuantizeOptions o;
  o.scheme = QuantScheme::EthosU;
  o.calibration = samples(2);
  o.int8_io = true;
  const QuantizeReport r = quantize_graph(g, o);
  EXPECT_EQ(g.value(g.inputs()[0]).spec.dtype, ScalarType::Char);
  EXPECT_EQ(g.value(g.outputs()[0]).spec.dtype, ScalarType::Char);
  ASSERT_EQ(r.inputs.size(), 1u);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.inputs[0].name, "x");
  // The input is read only through dequantize; the output comes from a quantize.
  for (ir::NodeId user : g.value(g.inputs()[0]).users) {
    EXPECT_EQ(g.node(user).op.name, "dequantize_per_tensor");
  }
  const ir::Node& last = g.node(g.value(g.outputs()[0]).producer);
  EXPECT_EQ(last.op.name, "quantize_per_tensor");
  EXPECT_DOUBLE_EQ(last.args[1].to_double(), r.outputs[0].qparams.scale);
}

TEST(QuantizePass, RejectsBadCalibrationAndQuantizedGraphs) {
  {
    ir::Graph g = small_cnn();
    QuantizeOptions o;
    o.calibration = samples(2);
    o.calibration[0].shape = {2, 2, 4, 4};
    EXPECT_THROW(
        {
          try {
            quantize_graph(g, o);
          } catch (const CompileError& e) {
            EXPECT_STREQ(e.what(),
                         "calibration input 0 ('x'): shape [2, 2, 4, 4], expected [N, 1, 2, 4, 4] "
                         "(N samples on a leading axis)");
            throw;
          }
        },
        CompileError);
  }
  ir::Graph g = small_cnn();
  QuantizeOptions o;
  o.calibration = samples(1);
  quantize_graph(g, o);
  EXPECT_THROW(quantize_graph(g, o), CompileError);  // already quantized
  EXPECT_THROW(parse_quant_scheme("tflite"), CompileError);
}

}  // namespace
}  // namespace pteron::compiler
