// The optimized library's weight rewrites on hand-built graphs: winograd_conv (3x3 stride-1
// convolutions with pretransformed weights) and quantized_linear (torchao's quantized weights
// into pteron's int8/int4 kernels). Results compared with the float graph on the optimized
// kernels linked into this test.
#include <gtest/gtest.h>

#include <cstring>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/passes/quantized_linear.h"
#include "compiler/passes/winograd_conv.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::Scalar;
using ir::TensorRef;

// ---- winograd_conv ----------------------------------------------------------------------------

struct ConvOptions {
  int64_t channels = 128;  // 36 * 128 * 128 floats: above the pass's pretransform threshold
  int64_t size = 8;        // input and (padding 1) output height and width
  int64_t kernel = 3, stride = 1, dilation = 1, groups = 1;
};

ValueId conv(GraphBuilder& b, ValueId x, ValueId w, const ConvOptions& o,
             const char* name = "conv") {
  const int64_t pad = o.dilation * (o.kernel - 1) / 2;
  const int64_t out = (o.size + 2 * pad - o.dilation * (o.kernel - 1) - 1) / o.stride + 1;
  return b.op(
      "aten::convolution.default",
      {TensorRef{x}, TensorRef{w}, TensorRef{b.constant("bias", f32({o.channels}))},
       std::vector<int64_t>{o.stride, o.stride}, std::vector<int64_t>{pad, pad},
       std::vector<int64_t>{o.dilation, o.dilation}, false, std::vector<int64_t>{0, 0}, o.groups},
      f32({1, o.channels, out, out}), name);
}

ir::Graph single_conv(const ConvOptions& o) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({1, o.channels, o.size, o.size}));
  const ValueId w = b.constant("w", f32({o.channels, o.channels / o.groups, o.kernel, o.kernel}));
  return b.finish({conv(b, x, w, o)});
}

int rewrite(ir::Graph& g, const std::unordered_set<NodeId>& delegated = {}) {
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  const int n = winograd_conv(g, delegated);
  g.verify();
  // F(4x4, 3x3) computes each output from transformed tiles: float32 rounding relative to the
  // largest magnitude (sums of 1152 products).
  EXPECT_LT(max_abs_diff(before, run(g, inputs)), 1e-5 * max_abs(before)) << ops(g);
  return n;
}

TEST(WinogradConv, RewritesALargeThreeByThreeConvolutionInPlace) {
  ir::Graph g = single_conv({});
  const ValueId w = producer(g, g.outputs()[0]).args[1].tensor();
  EXPECT_EQ(rewrite(g), 1);
  const ir::Node& n = producer(g, g.outputs()[0]);
  EXPECT_EQ(n.op.str(), "pteron::conv2d_winograd.default");
  // The only reader of the weights: they are replaced by their transform, not duplicated.
  EXPECT_EQ(n.args[1].tensor(), w);
  EXPECT_EQ(g.value(w).spec.sizes, (std::vector<int64_t>{36, 128, 128}));
  EXPECT_FALSE(n.args[5].get<bool>());
}

TEST(WinogradConv, SharedWeightsGetATransformedCopy) {
  GraphBuilder b;
  const ConvOptions o;
  const ValueId x = b.input("x", f32({1, 128, 8, 8}));
  const ValueId w = b.constant("w", f32({128, 128, 3, 3}));
  const ValueId c1 = conv(b, x, w, o);
  const ValueId c2 = conv(b, c1, w, o);
  ir::Graph g = b.finish({c2});
  EXPECT_EQ(rewrite(g), 2);
  // One transform both read; the original weights, read by nothing now, are gone.
  const ValueId u = producer(g, c1).args[1].tensor();
  EXPECT_EQ(producer(g, c2).args[1].tensor(), u);
  EXPECT_EQ(g.value(u).spec.sizes, (std::vector<int64_t>{36, 128, 128}));
  EXPECT_FALSE(g.has_value(w));
}

TEST(WinogradConv, TakesTheFusedReluAndResidualForms) {
  GraphBuilder b;
  const ConvOptions o;
  const ValueId x = b.input("x", f32({1, 128, 8, 8}));
  const ValueId c1 = conv(b, x, b.constant("w1", f32({128, 128, 3, 3})), o);
  const ValueId r1 = b.op("aten::relu.default", {TensorRef{c1}}, f32({1, 128, 8, 8}));
  const ValueId c2 = conv(b, r1, b.constant("w2", f32({128, 128, 3, 3})), o);
  const ValueId s = b.op("aten::add.Tensor", {TensorRef{c2}, TensorRef{x}}, f32({1, 128, 8, 8}));
  const ValueId r2 = b.op("aten::relu.default", {TensorRef{s}}, f32({1, 128, 8, 8}));
  ir::Graph g = b.finish({r2});
  ASSERT_EQ(fuse_conv_relu(g), 2);
  EXPECT_EQ(rewrite(g), 2);
  EXPECT_EQ(count(g, "pteron::conv2d_winograd.default"), 2);
  const ir::Node& last = producer(g, g.outputs()[0]);
  EXPECT_TRUE(last.args[5].get<bool>());
  ASSERT_TRUE(last.args[3].is_tensor());
  EXPECT_EQ(last.args[3].tensor(), x);
}

TEST(WinogradConv, LeavesConvolutionsOutsideItsShape) {
  struct Case {
    const char* what;
    ConvOptions options;
  } cases[] = {
      {"stride 2", {.stride = 2}},
      {"1x1", {.kernel = 1}},
      {"dilation 2", {.size = 10, .dilation = 2}},
      {"grouped", {.groups = 2}},
      {"weights too small to pretransform", {.channels = 16}},
      {"output below 8x8", {.size = 7}},
  };
  for (const Case& c : cases) {
    ir::Graph g = single_conv(c.options);
    EXPECT_EQ(rewrite(g), 0) << c.what;
    EXPECT_EQ(count(g, "aten::convolution.default"), 1) << c.what;
  }
  ir::Graph delegated = single_conv({});
  EXPECT_EQ(rewrite(delegated, {delegated.nodes()[0]}), 0);
}

// ---- quantized_linear -------------------------------------------------------------------------

// Integer weights with a spread of values in [qmin, qmax].
std::vector<int8_t> int_weights(int64_t n, int qmin, int qmax) {
  std::vector<int8_t> q(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    q[static_cast<size_t>(i)] = static_cast<int8_t>(qmin + (i * 7 + i / 5) % (qmax - qmin + 1));
  return q;
}

std::vector<float> group_scales(int64_t n) {
  std::vector<float> s(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[static_cast<size_t>(i)] = 0.01f * static_cast<float>(1 + i % 5);
  return s;
}

std::vector<uint8_t> bytes(const std::vector<int8_t>& q) {
  return std::vector<uint8_t>(q.begin(), q.end());
}

// dequantize_affine(Wq [rows, cols], [1, group], scales, zero_points?, int8, qmin, qmax) and the
// float weights it stands for (for the reference graph).
struct TorchaoWeight {
  ValueId dequantized;
  std::vector<float> reference;
};

TorchaoWeight torchao_weight(GraphBuilder& b, int64_t rows, int64_t cols, int64_t group, int bits,
                             bool zero_points = false, int nonzero_zero_point = 0) {
  const int qmin = bits == 4 ? -8 : -128, qmax = bits == 4 ? 7 : 127;
  const std::vector<int8_t> q = int_weights(rows * cols, qmin, qmax);
  const std::vector<float> s = group_scales(rows * (cols / group));
  const ValueId wq = b.constant_bytes("wq", spec(ScalarType::Char, {rows, cols}), bytes(q));
  const ValueId scales = b.constant("scales", f32({rows, cols / group}), s);
  ir::Argument zp = ir::None{};
  if (zero_points) {
    std::vector<int8_t> z(static_cast<size_t>(rows * (cols / group)), 0);
    z[0] = static_cast<int8_t>(nonzero_zero_point);
    zp = TensorRef{b.constant_bytes("zp", spec(ScalarType::Char, {rows, cols / group}), bytes(z))};
  }
  const ValueId dq =
      b.op("torchao::dequantize_affine.default",
           {TensorRef{wq}, std::vector<int64_t>{1, group}, TensorRef{scales}, zp, ScalarType::Char,
            Scalar{int64_t{qmin}}, Scalar{int64_t{qmax}}, ScalarType::Float},
           f32({rows, cols}));
  std::vector<float> w(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t r = i / static_cast<size_t>(cols), k = i % static_cast<size_t>(cols);
    w[i] = static_cast<float>(q[i]) *
           s[r * static_cast<size_t>(cols / group) + k / static_cast<size_t>(group)];
  }
  return {dq, w};
}

// x [3, 64] -> linear(torchao weight [16, 64]) plus the same linear with float weights.
struct QuantizedLinear {
  ir::Graph graph, reference;
};

QuantizedLinear weight_only(int bits, int64_t group) {
  GraphBuilder b, r;
  const ValueId x = b.input("x", f32({3, 64}));
  const TorchaoWeight w = torchao_weight(b, 16, 64, group, bits);
  const ValueId bias = b.constant("bias", f32({16}));
  const ValueId y = b.op("aten::linear.default",
                         {TensorRef{x}, TensorRef{w.dequantized}, TensorRef{bias}}, f32({3, 16}));
  const ValueId rx = r.input("x", f32({3, 64}));
  const ValueId rw = r.constant("w", f32({16, 64}), w.reference);
  const ValueId rb = r.constant("bias", f32({16}));  // the same pseudo-random bias: the same seed
  const ValueId ry =
      r.op("aten::linear.default", {TensorRef{rx}, TensorRef{rw}, TensorRef{rb}}, f32({3, 16}));
  return {b.finish({y}), r.finish({ry})};
}

double diff_from_reference(const QuantizedLinear& q) {
  const auto inputs = sample_inputs(q.reference);
  return max_abs_diff(run(q.graph, inputs), run(q.reference, inputs));
}

TEST(QuantizedLinear, WeightOnlyInt8AndInt4BecomeThePackedKernels) {
  struct Case {
    int bits;
    int64_t group;
    const char* op;
  } cases[] = {{8, 64, "pteron::linear_q8w.default"},
               {8, 16, "pteron::linear_q8w.default"},
               {4, 32, "pteron::linear_q4w.default"}};
  for (const Case& c : cases) {
    QuantizedLinear q = weight_only(c.bits, c.group);
    EXPECT_EQ(quantized_linear(q.graph), 1) << c.op;
    q.graph.verify();
    EXPECT_EQ(ops(q.graph), "[" + std::string(c.op) + "]");
    // The int8 weights and the torchao chain are gone; the int4 ones are packed two per byte.
    const ir::Value& packed =
        q.graph.value(producer(q.graph, q.graph.outputs()[0]).args[1].tensor());
    EXPECT_EQ(packed.spec.nbytes(), static_cast<size_t>(16 * 64 * c.bits / 8)) << c.op;
    EXPECT_LT(diff_from_reference(q), 1e-4) << c.op;
  }
}

TEST(QuantizedLinear, EmbeddingTablesBecomeTheQuantizedLookup) {
  GraphBuilder b;
  const TorchaoWeight table = torchao_weight(b, 6, 32, 32, 4);
  const ValueId ids = b.input("ids", spec(ScalarType::Long, {1, 5}));
  const ValueId y = b.op("aten::embedding.default", {TensorRef{table.dequantized}, TensorRef{ids}},
                         f32({1, 5, 32}));
  ir::Graph g = b.finish({y});
  EXPECT_EQ(quantized_linear(g), 1);
  g.verify();
  EXPECT_EQ(ops(g), "[pteron::embedding_q4w.default]");
  // ids are i % 4: row r of the table for position r.
  const std::vector<float> out = run(g, sample_inputs(g))[0];
  ASSERT_EQ(out.size(), 5u * 32u);
  for (size_t pos = 0; pos < 5; ++pos) {
    for (size_t k = 0; k < 32; ++k) {
      EXPECT_FLOAT_EQ(out[pos * 32 + k], table.reference[(pos % 4) * 32 + k]) << pos << "," << k;
    }
  }
}

TEST(QuantizedLinear, DynamicInt8ActivationsWithInt4WeightsBecome8da4w) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 64}));
  const NodeId cq = b.node(
      "torchao::choose_qparams_affine.default",
      {TensorRef{x}, std::string("ASYMMETRIC"), std::vector<int64_t>{1, 64}, ScalarType::Char,
       Scalar{int64_t{-128}}, Scalar{int64_t{127}}, 1e-6, ScalarType::Float},
      {f32({3, 1}), spec(ScalarType::Char, {3, 1})});
  const ValueId s = b.graph().node(cq).outputs[0], z = b.graph().node(cq).outputs[1];
  const ValueId q = b.op("torchao::quantize_affine.default",
                         {TensorRef{x}, std::vector<int64_t>{1, 64}, TensorRef{s}, TensorRef{z},
                          ScalarType::Char, Scalar{int64_t{-128}}, Scalar{int64_t{127}}},
                         spec(ScalarType::Char, {3, 64}));
  const ValueId xdq =
      b.op("torchao::dequantize_affine.default",
           {TensorRef{q}, std::vector<int64_t>{1, 64}, TensorRef{s}, TensorRef{z}, ScalarType::Char,
            Scalar{int64_t{-128}}, Scalar{int64_t{127}}, ScalarType::Float},
           f32({3, 64}));
  const TorchaoWeight w = torchao_weight(b, 16, 64, 32, 4);
  const ValueId y =
      b.op("aten::linear.default", {TensorRef{xdq}, TensorRef{w.dequantized}}, f32({3, 16}));
  ir::Graph g = b.finish({y});
  EXPECT_EQ(quantized_linear(g), 1);
  g.verify();
  EXPECT_EQ(ops(g), "[pteron::linear_8da4w.default]");
  const ir::Node& n = producer(g, y);
  EXPECT_EQ(n.args[0].tensor(), x);
  EXPECT_DOUBLE_EQ(n.args[6].to_double(), 1e-6);

  // Against float weights and activations: per-token int8 activations (step (max - min) / 255
  // <= 2 / 255 for inputs in [-1, 1]) change each of the 64 products by at most half a step
  // times |w| <= 7 * 0.05.
  GraphBuilder r;
  const ValueId rx = r.input("x", f32({3, 64}));
  const ValueId rw = r.constant("w", f32({16, 64}), w.reference);
  ir::Graph reference =
      r.finish({r.op("aten::linear.default", {TensorRef{rx}, TensorRef{rw}}, f32({3, 16}))});
  const auto inputs = sample_inputs(reference);
  EXPECT_LT(max_abs_diff(run(g, inputs), run(reference, inputs)), 64 * (1.0 / 255) * 7 * 0.05);
}

void expect_refused(ir::Graph& g, const std::string& why) {
  try {
    quantized_linear(g);
    FAIL() << "accepted: " << why;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dequantize_affine"), std::string::npos) << e.what();
  }
}

TEST(QuantizedLinear, RefusesWeightsTheKernelsCannotRunNamingTheNode) {
  {
    GraphBuilder b;
    const ValueId x = b.input("x", f32({3, 64}));
    const TorchaoWeight w = torchao_weight(b, 16, 64, 16, 4);
    ir::Graph g = b.finish(
        {b.op("aten::linear.default", {TensorRef{x}, TensorRef{w.dequantized}}, f32({3, 16}))});
    expect_refused(g, "int4 group size 16 is not a multiple of 32");
  }
  {
    GraphBuilder b;
    const ValueId x = b.input("x", f32({3, 64}));
    const TorchaoWeight w = torchao_weight(b, 16, 64, 32, 8, /*zero_points=*/true, /*nonzero=*/3);
    ir::Graph g = b.finish(
        {b.op("aten::linear.default", {TensorRef{x}, TensorRef{w.dequantized}}, f32({3, 16}))});
    expect_refused(g, "asymmetric weights");
  }
}

TEST(QuantizedLinear, LeavesDelegatedLinearsAndRuntimeWeights) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({3, 64}));
  const TorchaoWeight w =
      torchao_weight(b, 16, 64, 32, 8, /*zero_points=*/true);  // all 0: symmetric
  const NodeId lin =
      b.node("aten::linear.default", {TensorRef{x}, TensorRef{w.dequantized}}, f32({3, 16}));
  // Integer weights that arrive at run time: nothing to pack at compile time.
  const ValueId wq = b.input("wq", spec(ScalarType::Char, {16, 64}));
  const ValueId dq = b.op("torchao::dequantize_affine.default",
                          {TensorRef{wq}, std::vector<int64_t>{1, 32},
                           TensorRef{b.constant("s", f32({16, 2}))}, ir::None{}, ScalarType::Char,
                           Scalar{int64_t{-128}}, Scalar{int64_t{127}}, ScalarType::Float},
                          f32({16, 64}));
  const ValueId y2 = b.op("aten::linear.default", {TensorRef{x}, TensorRef{dq}}, f32({3, 16}));
  ir::Graph g = b.finish({b.graph().node(lin).outputs[0], y2});
  EXPECT_EQ(quantized_linear(g, {lin}), 0);
  g.verify();
  EXPECT_EQ(count(g, "aten::linear.default"), 2);
  EXPECT_EQ(quantized_linear(g), 1);  // once not delegated, the constant one is rewritten
  g.verify();
  EXPECT_EQ(count(g, "aten::linear.default"), 1);
}

}  // namespace
}  // namespace pteron::compiler::testing
