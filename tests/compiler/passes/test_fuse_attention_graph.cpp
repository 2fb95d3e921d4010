// fuse_attention on hand-built chains (tests/compiler/test_fuse_attention.py covers the graphs
// torch exports): bmm -> scale -> mask -> softmax -> bmm with the views between becomes one
// pteron::sdpa with the right scale, heads and mask, computing what the chain computed; a chain
// whose scores are read elsewhere, whose softmax is over another dim, whose scale is not a
// constant, or with a delegated node stays.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <unordered_set>

#include "compiler/passes/fuse_attention.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;

enum class Mask { None, Float4d, Bool3d, SafeSoftmax };

struct Options {
  Mask mask = Mask::None;
  bool scores_also_output = false;
  int64_t softmax_dim = -1;
  bool scale_from_input = false;
};

// q [2, 3, 4], k_t [2, 4, 5], v [2, 5, 4]: batch 1, 2 heads, 3 queries, 5 keys, head size 4.
struct Chain {
  ir::Graph graph;
  std::vector<NodeId> nodes;  // every node of the chain
  ValueId out;
};

Chain attention(const Options& o) {
  GraphBuilder b;
  const ValueId q = b.input("q", f32({2, 3, 4}));
  const ValueId kt = b.input("k_t", f32({2, 4, 5}));
  const ValueId v = b.input("v", f32({2, 5, 4}));
  const ValueId scores =
      b.op("aten::bmm.default", {TensorRef{q}, TensorRef{kt}}, f32({2, 3, 5}), "scores");
  // As torch exports it: the scores viewed per head, then scaled, then masked.
  ValueId x = scores;
  if (o.mask == Mask::Float4d) {
    x = b.op("aten::view.default", {TensorRef{x}, std::vector<int64_t>{1, 2, 3, 5}},
             f32({1, 2, 3, 5}));
  }
  const ValueId divisor =
      o.scale_from_input ? b.input("d", f32({})) : b.constant("two", f32({}), {2.0f});
  x = b.op("aten::div.Tensor", {TensorRef{x}, TensorRef{divisor}}, b.graph().value(x).spec);
  ValueId mask = ir::kNoValue;
  if (o.mask == Mask::Float4d) {
    mask = b.input("mask", f32({1, 1, 3, 5}));
    x = b.op("aten::add.Tensor", {TensorRef{mask}, TensorRef{x}}, f32({1, 2, 3, 5}));
  } else if (o.mask == Mask::Bool3d) {
    mask = b.input("mask", spec(ScalarType::Bool, {1, 3, 5}));
    x = b.op("aten::where.self",
             {TensorRef{mask}, TensorRef{b.constant("ninf", f32({}), {-INFINITY})}, TensorRef{x}},
             f32({2, 3, 5}));
  }
  const ir::TensorSpec sspec = b.graph().value(x).spec;
  const int64_t dim = o.softmax_dim;
  ValueId p = b.op("aten::_softmax.default", {TensorRef{x}, dim, false}, sspec, "probs");
  if (o.mask == Mask::SafeSoftmax) {
    // torch's _safe_softmax guard: rows of only -inf give 0 instead of NaN.
    const ValueId eq = b.op("aten::eq.Scalar", {TensorRef{x}, ir::Scalar{-INFINITY}},
                            spec(ScalarType::Bool, {2, 3, 5}));
    const ValueId ne =
        b.op("aten::logical_not.default", {TensorRef{eq}}, spec(ScalarType::Bool, {2, 3, 5}));
    const ValueId any = b.op("aten::any.dim", {TensorRef{ne}, int64_t{-1}, true},
                             spec(ScalarType::Bool, {2, 3, 1}));
    const ValueId none =
        b.op("aten::logical_not.default", {TensorRef{any}}, spec(ScalarType::Bool, {2, 3, 1}));
    const ValueId zeros =
        b.op("aten::full_like.default", {TensorRef{p}, ir::Scalar{int64_t{0}}}, f32({2, 3, 5}));
    p = b.op("aten::where.self", {TensorRef{none}, TensorRef{zeros}, TensorRef{p}}, f32({2, 3, 5}));
  }
  if (o.mask == Mask::Float4d) {
    p = b.op("aten::view.default", {TensorRef{p}, std::vector<int64_t>{2, 3, 5}}, f32({2, 3, 5}));
  }
  const ValueId out =
      b.op("aten::bmm.default", {TensorRef{p}, TensorRef{v}}, f32({2, 3, 4}), "attn");
  std::vector<ValueId> outputs = {out};
  if (o.scores_also_output) outputs.push_back(scores);
  Chain c{b.finish(outputs), {}, out};
  c.nodes = c.graph.nodes();
  return c;
}

int fuse(Chain& c, const std::unordered_set<NodeId>& delegated = {}) {
  const auto inputs = sample_inputs(c.graph);
  const auto before = run(c.graph, inputs);
  const int n = fuse_attention(c.graph, delegated);
  c.graph.verify();
  EXPECT_LT(max_abs_diff(before, run(c.graph, inputs)), 1e-5) << ops(c.graph);
  return n;
}

TEST(FuseAttentionGraph, EachMaskFormBecomesOneSdpa) {
  struct Case {
    Mask mask;
    int64_t heads;
    bool has_mask, safe;
  } cases[] = {{Mask::None, 1, false, false},
               {Mask::Float4d, 2, true, false},
               {Mask::Bool3d, 2, true, false},
               {Mask::SafeSoftmax, 1, false, true}};
  for (const Case& k : cases) {
    Chain c = attention({.mask = k.mask});
    ASSERT_EQ(fuse(c), 1) << static_cast<int>(k.mask);
    EXPECT_EQ(ops(c.graph), "[pteron::sdpa.default]") << static_cast<int>(k.mask);
    const ir::Node& sdpa = producer(c.graph, c.out);
    EXPECT_DOUBLE_EQ(sdpa.args[4].to_double(), 0.5);
    EXPECT_EQ(sdpa.args[5].to_int(), k.heads);
    EXPECT_EQ(sdpa.args[3].is_tensor(), k.has_mask);
    EXPECT_EQ(sdpa.args[6].get<bool>(), k.safe);
  }
}

TEST(FuseAttentionGraph, LeavesChainsItCannotReplace) {
  struct Case {
    const char* what;
    Options options;
  } cases[] = {
      {"scores read elsewhere", {.scores_also_output = true}},
      {"softmax over the queries", {.softmax_dim = 1}},
      {"scale from an input", {.scale_from_input = true}},
  };
  for (Case& k : cases) {
    Chain c = attention(k.options);
    const size_t nodes = c.graph.nodes().size();
    EXPECT_EQ(fuse(c), 0) << k.what;
    c.graph.verify();
    EXPECT_EQ(c.graph.nodes().size(), nodes) << k.what;
  }
}

TEST(FuseAttentionGraph, LeavesChainsWithADelegatedNode) {
  for (size_t i = 0; i < 5; ++i) {
    Chain c = attention({.mask = Mask::Float4d});
    ASSERT_LT(i, c.nodes.size());
    EXPECT_EQ(fuse(c, {c.nodes[i]}), 0) << c.graph.node(c.nodes[i]).op.str();
    EXPECT_EQ(count(c.graph, "pteron::sdpa.default"), 0);
  }
}

}  // namespace
}  // namespace pteron::compiler::testing
