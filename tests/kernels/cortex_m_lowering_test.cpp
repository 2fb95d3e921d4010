// The cortex_m lowering on graphs quantized by hand in PT2E form (quantize -> dequantize around
// every op, per-channel int8 weights through dequantize_per_channel, float biases): the
// quantized ops become cortex_m kernels, an op the library cannot take stays float with its
// Q/DQ, NHWC transposes between int8 ops cancel, and the lowered graph run on the host kernels
// matches the fake-quantized float graph within quantisation error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <unordered_set>

#include "compiler/compile.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/registry.h"
#include "compiler/passes/host_runner.h"
#include "kernels/cortex_m/aot/cortex_m_schemas.h"
#include "kernels/cortex_m/aot/lower_cortex_m.h"
#include "kernels/cortex_m/in_place.h"
#include "runtime/host/host_method.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m::aot {
namespace {

namespace ir = compiler::ir;
using ir::Argument;
using ir::Graph;
using ir::NewValue;
using ir::TensorRef;
using ir::TensorSpec;
using ir::ValueId;

const ir::OpSchema& op(std::string_view name) {
  const ir::OpSchema* s = ir::OpSchemaRegistry::global().find(name);
  if (s == nullptr) throw std::runtime_error("no schema " + std::string(name));
  return *s;
}
TensorSpec f32(std::vector<int64_t> s) {
  return TensorSpec::contiguous(ScalarType::Float, std::move(s));
}
TensorSpec i8(std::vector<int64_t> s) {
  return TensorSpec::contiguous(ScalarType::Char, std::move(s));
}

std::mt19937 g_rng(5);

template <typename T>
ValueId constant(Graph& g, const std::string& name, TensorSpec spec, const std::vector<T>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(T));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return g.add_constant(name, std::move(spec), ir::ConstantData::owned(std::move(bytes)));
}

ValueId node(Graph& g, std::string_view name, std::vector<Argument> args, TensorSpec spec,
             const std::string& out) {
  return g.node(g.add_node(op(name), std::move(args), {NewValue{out, std::move(spec)}})).outputs[0];
}

// x -> quantize -> dequantize (PT2E's pair on every quantized edge).
ValueId qdq(Graph& g, ValueId x, double scale, int64_t zp, const std::string& name) {
  const auto sizes = g.value(x).spec.sizes;
  const ValueId q = node(g, "quantized_decomposed::quantize_per_tensor.default",
                         {TensorRef{x}, scale, zp, int64_t{-128}, int64_t{127}, ScalarType::Char},
                         i8(sizes), name + "_q");
  return node(g, "quantized_decomposed::dequantize_per_tensor.default",
              {TensorRef{q}, scale, zp, int64_t{-128}, int64_t{127}, ScalarType::Char, ir::None{}},
              f32(sizes), name + "_dq");
}

// A per-channel symmetric int8 weight (random float weights quantized) behind its dequantize.
ValueId weight(Graph& g, const std::string& name, std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  const int64_t channels = sizes[0], per = n / channels;
  std::normal_distribution<float> dist(0.0f, 0.4f);
  std::vector<float> w(n);
  for (float& x : w) x = dist(g_rng);
  std::vector<int8_t> q(n);
  std::vector<float> scales(channels);
  std::vector<int64_t> zps(channels, 0);
  for (int64_t c = 0; c < channels; ++c) {
    float m = 1e-6f;
    for (int64_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w[c * per + i]));
    scales[c] = m / 127.0f;
    for (int64_t i = 0; i < per; ++i) {
      q[c * per + i] = static_cast<int8_t>(
          std::clamp(std::nearbyint(w[c * per + i] / scales[c]), -127.0f, 127.0f));
    }
  }
  const ValueId wq = constant(g, name + "_q", i8(sizes), q);
  const ValueId s = constant(g, name + "_scales", f32({channels}), scales);
  const ValueId z =
      constant(g, name + "_zps", TensorSpec::contiguous(ScalarType::Long, {channels}), zps);
  return node(g, "quantized_decomposed::dequantize_per_channel.default",
              {TensorRef{wq}, TensorRef{s}, TensorRef{z}, int64_t{0}, int64_t{-127}, int64_t{127},
               ScalarType::Char, ir::None{}},
              f32(sizes), name);
}

ValueId bias(Graph& g, const std::string& name, int64_t n) {
  std::normal_distribution<float> dist(0.0f, 0.2f);
  std::vector<float> b(n);
  for (float& x : b) x = dist(g_rng);
  return constant(g, name, f32({n}), b);
}

ValueId conv(Graph& g, ValueId x, ValueId w, ValueId b, int64_t pad, int64_t groups,
             std::vector<int64_t> out_sizes, const std::string& name) {
  return node(g, "aten::convolution.default",
              {TensorRef{x}, TensorRef{w}, TensorRef{b}, std::vector<int64_t>{1, 1},
               std::vector<int64_t>{pad, pad}, std::vector<int64_t>{1, 1}, false,
               std::vector<int64_t>{0, 0}, groups},
              f32(std::move(out_sizes)), name);
}

// conv3x3+relu -> maxpool -> depthwise 3x3 -> add(maxpool) -> relu6 -> sigmoid (a table) -> global
// mean -> view -> linear -> softmax.
Graph build_graph() {
  g_rng.seed(5);  // the same weights every time
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 3, 8, 8}));
  ValueId h = qdq(g, x, 0.02, 3, "x");
  h = conv(g, h, weight(g, "w1", {8, 3, 3, 3}), bias(g, "b1", 8), 1, 1, {1, 8, 8, 8}, "conv1");
  h = node(g, "aten::relu.default", {TensorRef{h}}, f32({1, 8, 8, 8}), "relu1");
  h = qdq(g, h, 0.03, -128, "relu1");
  // export's max pool: values and (unused) indices.
  h = g.node(g.add_node(op("aten::max_pool2d_with_indices.default"),
                        {TensorRef{h}, std::vector<int64_t>{2, 2}, std::vector<int64_t>{2, 2},
                         std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}, false},
                        {NewValue{"pool1", f32({1, 8, 4, 4})},
                         NewValue{"pool1_indices",
                                  TensorSpec::contiguous(ScalarType::Long, {1, 8, 4, 4})}}))
          .outputs[0];
  const ValueId pooled = qdq(g, h, 0.03, -128, "pool1");
  h = conv(g, pooled, weight(g, "w2", {8, 1, 3, 3}), bias(g, "b2", 8), 1, 8, {1, 8, 4, 4}, "dw");
  h = qdq(g, h, 0.05, 1, "dw");
  h = node(g, "aten::add.Tensor", {TensorRef{h}, TensorRef{pooled}, ir::Scalar{int64_t{1}}},
           f32({1, 8, 4, 4}), "add");
  h = node(g, "aten::hardtanh.default", {TensorRef{h}, ir::Scalar{0.0}, ir::Scalar{6.0}},
           f32({1, 8, 4, 4}), "relu6");
  h = qdq(g, h, 0.04, -128, "relu6");
  h = node(g, "aten::sigmoid.default", {TensorRef{h}}, f32({1, 8, 4, 4}),
           "sigmoid");  // becomes a table
  h = qdq(g, h, 1.0 / 256, -128, "sigmoid");
  h = node(g, "aten::mean.dim", {TensorRef{h}, std::vector<int64_t>{-1, -2}, true, ir::None{}},
           f32({1, 8, 1, 1}), "mean");
  h = qdq(g, h, 1.0 / 256, -128, "mean");
  h = node(g, "aten::view_copy.default", {TensorRef{h}, std::vector<int64_t>{1, 8}}, f32({1, 8}),
           "flat");
  h = qdq(g, h, 1.0 / 256, -128, "flat");
  // Core ATen's linear, as export decomposes it: addmm(bias, x, permute(W)).
  const ValueId w3t =
      node(g, "aten::permute.default",
           {TensorRef{weight(g, "w3", {5, 8})}, std::vector<int64_t>{1, 0}}, f32({8, 5}), "w3_t");
  h = node(g, "aten::addmm.default",
           {TensorRef{bias(g, "b3", 5)}, TensorRef{h}, TensorRef{w3t}, ir::Scalar{int64_t{1}},
            ir::Scalar{int64_t{1}}},
           f32({1, 5}), "fc");
  h = qdq(g, h, 0.01, 0, "fc");
  h = node(g, "aten::_softmax.default", {TensorRef{h}, int64_t{-1}, false}, f32({1, 5}), "softmax");
  h = qdq(g, h, 1.0 / 256, -128, "probs");
  g.set_outputs({h});
  g.verify();
  return g;
}

// Runs the graph node by node: quantized_decomposed ops here (fake quantization, as PT2E
// defines them), everything else on the registered host kernels.
std::vector<float> run(const Graph& g, const std::vector<float>& input) {
  std::map<ValueId, std::vector<uint8_t>> values;
  auto bytes_of = [&](ValueId v) -> std::span<const uint8_t> {
    const ir::Value& value = g.value(v);
    if (value.is_constant()) return value.constant->bytes;
    auto it = values.find(v);
    return it == values.end() ? std::span<const uint8_t>() : std::span<const uint8_t>(it->second);
  };
  auto& in = values[g.inputs()[0]];
  in.resize(input.size() * 4);
  std::memcpy(in.data(), input.data(), in.size());
  for (ir::NodeId id : g.nodes()) {
    const ir::Node& n = g.node(id);
    const std::string name = n.op.str();
    if (name.starts_with("quantized_decomposed::")) {
      const auto src = bytes_of(n.args[0].tensor());
      auto& dst = values[n.outputs[0]];
      const int64_t count = g.value(n.outputs[0]).spec.numel();
      if (name == "quantized_decomposed::quantize_per_tensor.default") {
        const float inv = static_cast<float>(1.0 / n.args[1].get<double>());
        const int64_t zp = n.args[2].get<int64_t>();
        dst.resize(count);
        for (int64_t i = 0; i < count; ++i) {
          float x;
          std::memcpy(&x, src.data() + 4 * i, 4);
          const float q = std::clamp(std::nearbyint(x * inv) + zp, -128.0f, 127.0f);
          dst[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
        }
      } else if (name == "quantized_decomposed::dequantize_per_tensor.default") {
        const float scale = static_cast<float>(n.args[1].get<double>());
        const int64_t zp = n.args[2].get<int64_t>();
        dst.resize(count * 4);
        for (int64_t i = 0; i < count; ++i) {
          const float x = static_cast<float>(static_cast<int8_t>(src[i]) - zp) * scale;
          std::memcpy(dst.data() + 4 * i, &x, 4);
        }
      } else {  // dequantize_per_channel, axis 0, symmetric
        const auto scales = bytes_of(n.args[1].tensor());
        const int64_t channels = g.value(n.args[1].tensor()).spec.numel(), per = count / channels;
        dst.resize(count * 4);
        for (int64_t i = 0; i < count; ++i) {
          float s;
          std::memcpy(&s, scales.data() + 4 * (i / per), 4);
          const float x = static_cast<float>(static_cast<int8_t>(src[i])) * s;
          std::memcpy(dst.data() + 4 * i, &x, 4);
        }
      }
      continue;
    }
    auto outs = compiler::run_node_on_host(g, n, bytes_of);
    for (size_t i = 0; i < outs.size(); ++i) values[n.outputs[i]] = std::move(outs[i]);
  }
  const auto out = bytes_of(g.outputs()[0]);
  const ir::TensorSpec& spec = g.value(g.outputs()[0]).spec;
  std::vector<float> result(spec.numel());
  if (spec.dtype == ScalarType::Float) {
    std::memcpy(result.data(), out.data(), out.size());
  } else {
    ADD_FAILURE() << "output is not float";
  }
  return result;
}

std::map<std::string, int> op_counts(const Graph& g) {
  std::map<std::string, int> counts;
  for (ir::NodeId id : g.nodes()) ++counts[g.node(id).op.str()];
  return counts;
}

TEST(CortexMLowering, QuantizedOpsBecomeCortexMKernels) {
  Graph g = build_graph();
  const CortexMLoweringReport report = lower_to_cortex_m(g);
  const auto counts = op_counts(g);
  for (const std::string& line : report.kept) ADD_FAILURE() << line;
  auto count = [&](const char* name) {
    auto it = counts.find(name);
    return it == counts.end() ? 0 : it->second;
  };
  SCOPED_TRACE(g.to_string());
  EXPECT_EQ(count("cortex_m::quantized_conv2d_nhwc.default"), 1);
  EXPECT_EQ(count("cortex_m::quantized_depthwise_conv2d_nhwc.default"), 1);
  EXPECT_EQ(count("cortex_m::quantized_max_pool2d_nhwc.default"), 1);
  EXPECT_EQ(count("cortex_m::quantized_add.default"), 1);
  EXPECT_EQ(count("cortex_m::quantized_avg_pool2d_nhwc.default"), 1);
  EXPECT_EQ(count("cortex_m::quantized_linear_packed.default"), 1);  // symmetric weights
  EXPECT_EQ(count("cortex_m::softmax.default"), 1);
  EXPECT_EQ(count("aten::view_copy.default"), 1);  // on int8 values now
  // The sigmoid between its dequantize and quantize: the table of its 256 results.
  EXPECT_EQ(count("cortex_m::quantized_lut.default"), 1);
  EXPECT_EQ(count("aten::sigmoid.default"), 0);
  EXPECT_EQ(report.lowered, 9);
  EXPECT_GE(count("cortex_m::dequantize_per_tensor.default"), 1);
  EXPECT_GE(count("cortex_m::quantize_per_tensor.default"), 1);
  for (const auto& [name, count] : counts)
    EXPECT_FALSE(name.starts_with("quantized_decomposed::")) << name;
  // conv -> pool -> depthwise stay NHWC: only the entry and the exits to the add (NCHW) remain.
  EXPECT_GT(report.transposes_removed, 0);
  EXPECT_GT(cortex_m_scratch_bytes(g), 0u);
  // The convolutions' MVE scratch is a planned tensor (cortex_m::scratch_buffer) each reads as
  // its scratch argument, so the memory plan reserves it and nothing is allocated at run time.
  EXPECT_EQ(count("cortex_m::scratch_buffer.default"), 2);  // the conv and the depthwise conv
  size_t largest = 0;
  for (pteron::compiler::ir::NodeId id : g.nodes()) {
    const auto& n = g.node(id);
    const std::string op = n.op.str();
    const size_t arg = op == "cortex_m::quantized_conv2d_nhwc.default"             ? 12
                       : op == "cortex_m::quantized_depthwise_conv2d_nhwc.default" ? 13
                                                                                   : 0;
    if (arg == 0) continue;
    ASSERT_TRUE(n.args[arg].is_tensor()) << op;
    const auto& buffer = g.value(n.args[arg].tensor());
    EXPECT_EQ(g.node(buffer.producer).op.str(), "cortex_m::scratch_buffer.default");
    largest = std::max(largest, static_cast<size_t>(buffer.spec.sizes[0]));
  }
  EXPECT_GT(largest, cortex_m_scratch_bytes(g));  // the largest need plus alignment slack
}

TEST(CortexMLowering, LoweredGraphMatchesFakeQuantizedFloat) {
  const Graph reference = build_graph();
  Graph lowered = build_graph();
  lower_to_cortex_m(lowered);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::mt19937 inputs(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> x(3 * 8 * 8);
    for (float& v : x) v = dist(inputs);
    const auto want = run(reference, x), got = run(lowered, x);
    ASSERT_EQ(want.size(), got.size());
    // Probabilities on a 1/256 grid; each int8 stage may round one step differently from the
    // float reference (requantisation vs float rounding), which later stages carry on: 3 steps.
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 3.0 / 256) << "trial " << trial;
  }
}

// Runs a compiled program's "forward" on one float input.
std::vector<float> run_program(const std::vector<uint8_t>& bytes, const std::vector<float>& x) {
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  EXPECT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  int32_t sizes[4] = {1, 3, 8, 8}, strides[4];
  uint8_t order[4] = {0, 1, 2, 3};
  Tensor tx(ScalarType::Float, 4, sizes, order, strides, const_cast<float*>(x.data()));
  EXPECT_EQ(m.set_input(0, tx), Error::Ok) << last_error_message();
  EXPECT_EQ(m.execute(), Error::Ok) << last_error_message();
  const Tensor& out = *m.output(0).tensor;
  const float* y = out.data<const float>();
  return {y, y + out.numel()};
}

TEST(CortexMLowering, CompileWithTheCortexMLibraryRunsTheLoweredProgram) {
  Graph g = build_graph();
  compiler::CompileOptions options;
  options.backends = {"cortex-m", "portable"};
  compiler::CompileResult compiled = compiler::compile_graph(g, options);
  bool reported = false;
  for (const std::string& line : compiled.report.passes.lines) {
    reported |= line.starts_with("cortex-m/lower_to_cortex_m:");
  }
  EXPECT_TRUE(reported);
  // The program calls the cortex_m kernels and gives what the lowered graph gives on the host.
  Graph lowered = build_graph();
  lower_to_cortex_m(lowered);
  std::mt19937 inputs(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(3 * 8 * 8);
  for (float& v : x) v = dist(inputs);
  const std::vector<float> got = run_program(compiled.program, x), want = run(lowered, x);
  EXPECT_EQ(got, want);
}

TEST(CortexMLowering, QuantizeMultiplierMatchesTflite) {
  EXPECT_EQ(quantize_multiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(0.5).shift, 0);
  EXPECT_EQ(quantize_multiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(quantize_multiplier(1.0).shift, 1);
  const Requant r = quantize_multiplier(0.0123);
  EXPECT_NEAR(r.multiplier * std::ldexp(1.0, r.shift - 31), 0.0123, 1e-9);
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
}

// The memory planner's in-place decisions on int8 element-wise kernels (the ops the cortex-m
// library declares in_place_ops): x -> requantize -> a -> clamp -> b, then either b is the
// output (every step may write over its input) or add(b, a) follows, so a is still live when
// the clamp runs and the clamp must not write over it.
// The rules the "cortex-m" kernel library declares.
compiler::InPlaceRules cortex_m_in_place_rules() {
  const compiler::KernelLibrary* library = compiler::find_kernel_library("cortex-m");
  EXPECT_NE(library, nullptr);
  return library
             ? compiler::InPlaceRules(library->in_place_ops.begin(), library->in_place_ops.end())
             : compiler::InPlaceRules{};
}

struct ChainGraph {
  Graph g;
  ValueId x, a, b, c = ir::kNoValue;
};
ChainGraph chain(bool reuse_a) {
  register_cortex_m_schemas();  // the lowering registers them; these graphs are built directly
  ChainGraph c;
  c.x = c.g.add_input("x", i8({1, 64}));
  c.a = node(c.g, "cortex_m::requantize.default",
             {TensorRef{c.x}, 3, -2, int64_t{1} << 30, -1, -128, 127}, i8({1, 64}), "a");
  c.b =
      node(c.g, "cortex_m::quantized_clamp.default", {TensorRef{c.a}, -100, 100}, i8({1, 64}), "b");
  ValueId out = c.b;
  if (reuse_a) {
    const int64_t m = int64_t{1} << 30;
    c.c = node(c.g, "cortex_m::quantized_add.default",
               {TensorRef{c.b}, 0, m, 0, TensorRef{c.a}, 0, m, 0, 0, m, -20, -128, 127},
               i8({1, 64}), "c");
    out = c.c;
  }
  c.g.set_outputs({out});
  return c;
}

const std::vector<compiler::MemoryArena> kOneArena = {{"ram", 1, 0}};

TEST(CortexMInPlace, DeadInputsAreOverwrittenAlongTheChain) {
  ChainGraph c = chain(false);
  const auto plan = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, true, nullptr,
                                                cortex_m_in_place_rules());
  ASSERT_EQ(plan.in_place.size(), 2u);
  EXPECT_EQ(plan.in_place.at(c.a), c.x);  // a planned graph input, read only here
  EXPECT_EQ(plan.in_place.at(c.b), c.a);
  EXPECT_EQ(plan.placements.at(c.b).offset, plan.placements.at(c.x).offset);
  EXPECT_EQ(plan.arena_sizes[0], 64);  // one buffer for the three values
  // Without the rule (or with the caller's input buffers) nothing is shared.
  const auto apart = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, true);
  EXPECT_TRUE(apart.in_place.empty());
  EXPECT_EQ(apart.arena_sizes[0], 128);
  const auto zero_copy = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, false, nullptr,
                                                     cortex_m_in_place_rules());
  EXPECT_EQ(zero_copy.in_place.size(), 1u);
  EXPECT_FALSE(zero_copy.in_place.count(c.a));  // x is the caller's buffer
}

TEST(CortexMInPlace, InputStillLiveLaterIsNotOverwritten) {
  ChainGraph c = chain(true);
  const auto plan = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, true, nullptr,
                                                cortex_m_in_place_rules());
  EXPECT_FALSE(plan.in_place.count(c.b));  // add reads a after the clamp: refused
  const auto& pa = plan.placements.at(c.a);
  const auto& pb = plan.placements.at(c.b);
  EXPECT_TRUE(pa.offset + 64 <= pb.offset || pb.offset + 64 <= pa.offset);
  // The add is the last reader of both b and a: it may write over either.
  ASSERT_TRUE(plan.in_place.count(c.c));
  EXPECT_TRUE(plan.in_place.at(c.c) == c.b || plan.in_place.at(c.c) == c.a);
  EXPECT_EQ(plan.arena_sizes[0], 128);  // a and b apart, x and c over them
  EXPECT_EQ(plan.in_place.at(c.a), c.x);
}

// A residual block as the cortex_m lowering leaves it: x -> conv -> y -> conv -> z, then either
// z is the output (each convolution is its input's last reader) or add(z, x) follows, so x is
// still live while both convolutions run. 3x3, stride 1, padding 1 on 16x16x16.
struct ConvChain {
  Graph g;
  ValueId x, y, z;
};
ConvChain conv_chain(bool residual) {
  register_cortex_m_schemas();
  ConvChain c;
  const std::vector<int64_t> shape = {1, 16, 16, 16};
  c.x = c.g.add_input("x", i8(shape));
  auto conv = [&](ValueId in, const std::string& name) {
    const ValueId w = constant(c.g, name + "_w", i8({16, 3, 3, 16}), std::vector<int8_t>(2304, 1));
    const ValueId mult = constant(c.g, name + "_m", TensorSpec::contiguous(ScalarType::Int, {16}),
                                  std::vector<int32_t>(16, 1 << 30));
    const ValueId shift = constant(c.g, name + "_s", TensorSpec::contiguous(ScalarType::Int, {16}),
                                   std::vector<int32_t>(16, -8));
    return node(c.g, "cortex_m::quantized_conv2d_nhwc.default",
                {TensorRef{in}, TensorRef{w}, ir::None{}, std::vector<int64_t>{1, 1},
                 std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, 0, 0, TensorRef{mult},
                 TensorRef{shift}, -128, 127, ir::None{}},
                i8(shape), name);
  };
  c.y = conv(c.x, "y");
  c.z = conv(c.y, "z");
  ValueId out = c.z;
  if (residual) {
    const int64_t m = int64_t{1} << 30;
    out = node(c.g, "cortex_m::quantized_add.default",
               {TensorRef{c.z}, 0, m, 0, TensorRef{c.x}, 0, m, 0, 0, m, -20, -128, 127}, i8(shape),
               "sum");
  }
  c.g.set_outputs({out});
  return c;
}

TEST(CortexMInPlace, AConvolutionWritesItsOutputOverItsDeadInputAFewRowsAhead) {
  ConvChain c = conv_chain(false);
  const auto plan = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, true, nullptr,
                                                cortex_m_in_place_rules());
  ASSERT_EQ(plan.in_place.size(), 2u);
  EXPECT_EQ(plan.in_place.at(c.y), c.x);
  EXPECT_EQ(plan.in_place.at(c.z), c.y);
  // Each output starts the kernels' lag before its input (in_place.h: the last reader of an
  // input pixel is one row and one pixel later, 17 pixels, plus a tile of 24 pixels in flight:
  // 41 pixels of 16 bytes, 656 bytes): three 4 KiB tensors in 4 KiB + 2 x 656 bytes.
  const int64_t lag = 656;
  EXPECT_EQ(plan.placements.at(c.x).offset - plan.placements.at(c.y).offset, lag);
  EXPECT_EQ(plan.placements.at(c.y).offset - plan.placements.at(c.z).offset, lag);
  EXPECT_EQ(plan.arena_sizes[0], 4096 + 2 * lag);
}

TEST(CortexMInPlace, AConvolutionKeepsApartFromAnInputReadLater) {
  ConvChain c = conv_chain(true);
  const auto plan = compiler::plan_graph_memory(c.g, kOneArena, 16, {}, {}, true, nullptr,
                                                cortex_m_in_place_rules());
  EXPECT_FALSE(plan.in_place.count(c.y));  // x is read again by the add: refused
  EXPECT_EQ(plan.in_place.at(c.z), c.y);   // y dies at the second convolution
  const uint64_t x = plan.placements.at(c.x).offset, z = plan.placements.at(c.z).offset;
  EXPECT_TRUE(x + 4096 <= z || z + 4096 <= x);  // z is written while x is live
}

// An image input's NCHW -> NHWC transpose (the first node of an --int8-io vision model, often
// its RAM peak) writes its output over the input once each output row's bytes are read: on
// 3x16x16 it starts 528 bytes before the input, not a whole tensor apart.
TEST(CortexMInPlace, AnImageInputsTransposeOverlapsItsInput) {
  register_cortex_m_schemas();
  Graph g;
  const ValueId x = g.add_input("x", i8({1, 3, 16, 16}));
  const ValueId y = node(g, "cortex_m::transpose.default",
                         {TensorRef{x}, std::vector<int64_t>{0, 2, 3, 1}}, i8({1, 16, 16, 3}), "y");
  g.set_outputs({y});
  const auto plan = compiler::plan_graph_memory(g, kOneArena, 16, {}, {}, true, nullptr,
                                                cortex_m_in_place_rules());
  ASSERT_EQ(plan.in_place.size(), 1u);
  EXPECT_EQ(plan.in_place.at(y), x);
  const int64_t sizes[4] = {1, 3, 16, 16}, perm[4] = {0, 2, 3, 1};
  const int64_t lag = cortex_m::transpose_in_place_lag(4, sizes, perm);
  // The last output row ends at byte 768, when only plane 0's first 15 rows (240 bytes) have
  // had their last read.
  EXPECT_EQ(lag, 768 - 240);
  EXPECT_EQ(plan.placements.at(x).offset - plan.placements.at(y).offset, (lag + 15) / 16 * 16);
  EXPECT_LT(plan.arena_sizes[0], 2 * 768);
}

// A delegate's region (here the first convolution with its weight's dequantize, relu and the
// quantize after it) keeps its nodes, their arguments and the values they read and write; the
// rest is lowered as before.
TEST(CortexMLowering, DelegatedNodesAndTheirValuesAreLeftAlone) {
  Graph g = build_graph();
  std::unordered_set<ir::NodeId> delegated;
  for (ir::NodeId id : g.nodes()) {
    const std::string& out = g.value(g.node(id).outputs[0]).name;
    if (out == "w1" || out == "conv1" || out == "relu1" || out == "relu1_q") delegated.insert(id);
  }
  ASSERT_EQ(delegated.size(), 4u);
  std::map<ir::NodeId, std::pair<std::string, std::vector<Argument>>> before;
  std::map<ValueId, TensorSpec> touched;
  for (ir::NodeId id : delegated) {
    const ir::Node& n = g.node(id);
    before[id] = {n.op.str(), n.args};
    for (ValueId v : n.inputs()) touched[v] = g.value(v).spec;
    for (ValueId v : n.outputs) touched[v] = g.value(v).spec;
  }
  const CortexMLoweringReport report = lower_to_cortex_m(g, delegated);
  g.verify();
  for (const auto& [id, op_args] : before) {
    ASSERT_TRUE(g.has_node(id));
    EXPECT_EQ(g.node(id).op.str(), op_args.first);
    EXPECT_EQ(g.node(id).args, op_args.second) << op_args.first;
  }
  for (const auto& [v, spec] : touched) {
    ASSERT_TRUE(g.has_value(v));
    EXPECT_EQ(g.value(v).spec, spec) << g.value(v).name;
  }
  const auto counts = op_counts(g);
  EXPECT_EQ(counts.count("cortex_m::quantized_conv2d_nhwc.default"), 0u);
  EXPECT_EQ(counts.count("cortex_m::quantized_depthwise_conv2d_nhwc.default"), 1u);
  EXPECT_GT(report.lowered, 0);
  EXPECT_LT(report.lowered, 9);
}

// Runs a graph of int8 kernels on int8 input bytes, node by node on the host kernels.
std::vector<uint8_t> run_int8(const Graph& g, const std::vector<uint8_t>& input) {
  std::map<ValueId, std::vector<uint8_t>> values{{g.inputs()[0], input}};
  auto bytes_of = [&](ValueId v) -> std::span<const uint8_t> {
    const ir::Value& value = g.value(v);
    if (value.is_constant()) return value.constant->bytes;
    return values.at(v);
  };
  for (ir::NodeId id : g.nodes()) {
    auto outs = compiler::run_node_on_host(g, g.node(id), bytes_of);
    values[g.node(id).outputs[0]] = std::move(outs[0]);
  }
  return values.at(g.outputs()[0]);
}

// An int8 function of one value that several kernels compute (a table, two clamps and a
// requantize, then the multiply of the value by that: a hardswish as PT2E quantizes it) becomes
// one table, giving bit for bit the kernels' bytes for every int8 input.
TEST(CortexMLowering, KernelsOfOneInt8ValueFoldIntoOneTable) {
  register_cortex_m_schemas();  // the lowering registers them; this graph is built directly
  Graph g;
  const ValueId x = g.add_input("x", i8({2, 256}));
  std::vector<int8_t> shift(256);
  for (int c = 0; c < 256; ++c) shift[c] = static_cast<int8_t>(std::clamp(c - 128 + 37, -128, 127));
  const ValueId table = constant(g, "table", i8({256}), shift);
  ValueId y = node(g, "cortex_m::quantized_lut.default", {TensorRef{x}, TensorRef{table}},
                   i8({2, 256}), "lut");
  y = node(g, "cortex_m::quantized_clamp.default", {TensorRef{y}, int64_t{-100}, int64_t{90}},
           i8({2, 256}), "clamp");
  y = node(g, "cortex_m::requantize.default",
           {TensorRef{y}, int64_t{3}, int64_t{-5}, int64_t{1518500250}, int64_t{-1}, int64_t{-128},
            int64_t{127}},
           i8({2, 256}), "requantize");
  y = node(g, "cortex_m::quantized_mul.default",
           {TensorRef{x}, int64_t{-7}, TensorRef{y}, int64_t{4}, int64_t{2}, int64_t{1395864371},
            int64_t{-9}},
           i8({2, 256}), "mul");
  g.set_outputs({node(g, "cortex_m::quantized_clamp.default",
                      {TensorRef{y}, int64_t{-128}, int64_t{100}}, i8({2, 256}), "relu")});
  std::vector<uint8_t> codes(512);
  for (int i = 0; i < 512; ++i) codes[i] = static_cast<uint8_t>(i * 37 % 256);  // every code
  const std::vector<uint8_t> want = run_int8(g, codes);
  lower_to_cortex_m(g);
  const auto counts = op_counts(g);
  EXPECT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.count("cortex_m::quantized_lut.default"), 1u);
  EXPECT_EQ(run_int8(g, codes), want);
}

TEST(CortexMLowering, UnquantizedGraphIsLeftAlone) {
  Graph g;
  const ValueId x = g.add_input("x", f32({1, 4}));
  const ValueId y = node(g, "aten::relu.default", {TensorRef{x}}, f32({1, 4}), "relu");
  g.set_outputs({y});
  const CortexMLoweringReport report = lower_to_cortex_m(g);
  EXPECT_EQ(report.lowered, 0);
  EXPECT_EQ(g.nodes().size(), 1u);
}

}  // namespace
}  // namespace pteron::cortex_m::aot
