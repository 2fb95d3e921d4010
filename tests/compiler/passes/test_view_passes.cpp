// remove_noops, simplify_views and normalize_dim_orders on hand-built graphs: each rewrite where
// it is exact, none where it would change a shape, a layout, or a graph output's memory; the
// graph verifies and computes the same numbers afterwards.
#include <gtest/gtest.h>

#include "compiler/passes/passes.h"
#include "tests/compiler/passes/graph_builder.h"

namespace pteron::compiler::testing {
namespace {

using ir::TensorRef;

// Runs `pass`, checks the graph still verifies and computes what it computed before.
template <typename Pass>
int apply(ir::Graph& g, Pass pass) {
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);
  const int changed = pass(g);
  g.verify();
  EXPECT_EQ(max_abs_diff(before, run(g, inputs)), 0.0) << ops(g);
  return changed;
}

TEST(RemoveNoops, RemovesCopiesThatKeepTheSpec) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 3}));
  const ValueId c = b.op("aten::clone.default", {TensorRef{x}}, f32({2, 3}));
  const ValueId a = b.op("aten::alias.default", {TensorRef{c}}, f32({2, 3}));
  const ValueId v =
      b.op("aten::view.default", {TensorRef{a}, std::vector<int64_t>{2, 3}}, f32({2, 3}));
  const ValueId p =
      b.op("aten::permute.default", {TensorRef{v}, std::vector<int64_t>{0, 1}}, f32({2, 3}));
  const ValueId n =
      b.op("aten::permute.default", {TensorRef{p}, std::vector<int64_t>{-2, -1}}, f32({2, 3}));
  const ValueId t = b.op("aten::_to_copy.default", {TensorRef{n}}, f32({2, 3}));
  const ValueId y = b.op("aten::relu.default", {TensorRef{t}}, f32({2, 3}));
  ir::Graph g = b.finish({y});

  EXPECT_EQ(apply(g, remove_noops), 6);
  EXPECT_EQ(g.nodes().size(), 1u) << ops(g);
  EXPECT_EQ(g.node(g.nodes()[0]).args[0].tensor(), x);
}

TEST(RemoveNoops, KeepsOpsThatChangeShapeLayoutOrDtype) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 3}));
  const ValueId v =
      b.op("aten::view.default", {TensorRef{x}, std::vector<int64_t>{3, 2}}, f32({3, 2}));
  const ValueId p =
      b.op("aten::permute.default", {TensorRef{v}, std::vector<int64_t>{1, 0}}, f32({2, 3}));
  ir::TensorSpec channels_last = f32({1, 2, 2, 2});
  channels_last.dim_order = {0, 2, 3, 1};
  const ValueId x4 = b.input("x4", f32({1, 2, 2, 2}));
  const ValueId cl = b.op("aten::clone.default", {TensorRef{x4}}, channels_last);
  const ValueId h = b.op("aten::_to_copy.default", {TensorRef{p}, ScalarType::Double},
                         spec(ScalarType::Double, {2, 3}));
  const ValueId back =
      b.op("aten::_to_copy.default", {TensorRef{h}, ScalarType::Float}, f32({2, 3}));
  const ValueId y = b.op("aten::relu.default", {TensorRef{back}}, f32({2, 3}));
  const ValueId z = b.op("aten::relu.default", {TensorRef{cl}}, channels_last);
  ir::Graph g = b.finish({y, z});

  EXPECT_EQ(apply(g, remove_noops), 0) << ops(g);
  EXPECT_EQ(count(g, "aten::view.default"), 1);
  EXPECT_EQ(count(g, "aten::permute.default"), 1);
  EXPECT_EQ(count(g, "aten::clone.default"), 1);
  EXPECT_EQ(count(g, "aten::_to_copy.default"), 2);
}

TEST(RemoveNoops, AGraphOutputKeepsItsOwnMemory) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({4}));
  const ValueId r = b.op("aten::relu.default", {TensorRef{x}}, f32({4}));
  const ValueId c = b.op("aten::clone.default", {TensorRef{r}}, f32({4}));
  ir::Graph g = b.finish({r, c});
  EXPECT_EQ(apply(g, remove_noops), 0);
  EXPECT_EQ(count(g, "aten::clone.default"), 1);
}

TEST(RemoveNoops, DynamicCopyGoesOnlyWhenTheSymbolicSizesAreKnown) {
  for (bool symbols_known : {false, true}) {
    ir::TensorSpec dyn = f32({2, 8});
    dyn.min_sizes = {2, 1};
    if (symbols_known) dyn.sym_sizes = {nullptr, ir::SymExpr::sym("s0")};
    GraphBuilder b;
    const ValueId x = b.input("x", dyn);
    const ValueId c = b.op("aten::clone.default", {TensorRef{x}}, dyn);
    const ValueId y = b.op("aten::relu.default", {TensorRef{c}}, dyn);
    ir::Graph g = b.finish({y});
    EXPECT_EQ(remove_noops(g), symbols_known ? 1 : 0);
    g.verify();
  }
}

TEST(SimplifyViews, ComposesViewOfViewAndPermuteOfPermute) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 3, 4}));
  const ValueId v1 =
      b.op("aten::view.default", {TensorRef{x}, std::vector<int64_t>{6, 4}}, f32({6, 4}));
  const ValueId v2 =
      b.op("aten::view.default", {TensorRef{v1}, std::vector<int64_t>{4, 6}}, f32({4, 6}));
  const ValueId p1 =
      b.op("aten::permute.default", {TensorRef{x}, std::vector<int64_t>{2, 0, 1}}, f32({4, 2, 3}));
  const ValueId p2 = b.op("aten::permute.default", {TensorRef{p1}, std::vector<int64_t>{0, 2, -2}},
                          f32({4, 3, 2}));
  ir::Graph g = b.finish({v2, p2});

  EXPECT_EQ(apply(g, simplify_views), 2);
  EXPECT_EQ(producer(g, v2).args[0].tensor(), x);
  EXPECT_EQ(producer(g, p2).args[0].tensor(), x);
  // x.permute(2, 0, 1).permute(0, 2, 1) == x.permute(2, 1, 0)
  EXPECT_EQ(producer(g, p2).args[1].get<std::vector<int64_t>>(), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(remove_dead_code(g), 2);  // the inner view and permute
  g.verify();
}

TEST(SimplifyViews, AnInnerViewStillReadElsewhereStays) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 6}));
  const ValueId v1 =
      b.op("aten::view.default", {TensorRef{x}, std::vector<int64_t>{12}}, f32({12}));
  const ValueId v2 =
      b.op("aten::view.default", {TensorRef{v1}, std::vector<int64_t>{3, 4}}, f32({3, 4}));
  const ValueId r = b.op("aten::relu.default", {TensorRef{v1}}, f32({12}));
  ir::Graph g = b.finish({v2, r});
  EXPECT_EQ(apply(g, simplify_views), 1);
  EXPECT_EQ(remove_dead_code(g), 0);
  EXPECT_EQ(count(g, "aten::view.default"), 2);
  g.verify();
}

TEST(SimplifyViews, LeavesMixedChainsAlone) {
  GraphBuilder b;
  const ValueId x = b.input("x", f32({2, 6}));
  const ValueId p =
      b.op("aten::permute.default", {TensorRef{x}, std::vector<int64_t>{1, 0}}, f32({6, 2}));
  const ValueId v = b.op("aten::view.default", {TensorRef{p}, std::vector<int64_t>{12}}, f32({12}));
  const ValueId r = b.op("aten::relu.default", {TensorRef{x}}, f32({2, 6}));
  const ValueId v2 =
      b.op("aten::view.default", {TensorRef{r}, std::vector<int64_t>{12}}, f32({12}));
  ir::Graph g = b.finish({v, v2});
  EXPECT_EQ(apply(g, simplify_views), 0);
}

TEST(NormalizeDimOrders, ConstantsAreRearrangedAndIntermediatesRelabelled) {
  GraphBuilder b;
  ir::TensorSpec transposed = f32({2, 3});
  transposed.dim_order = {1, 0};
  // Element [i][j] of a [2, 3] tensor stored column-major sits at j * 2 + i.
  const ValueId w = b.constant("w", transposed, {0, 3, 1, 4, 2, 5});
  const ValueId x = b.input("x", f32({2, 3}));
  const ValueId s = b.op("aten::add.Tensor", {TensorRef{x}, TensorRef{w}}, transposed);
  const ValueId y = b.op("aten::mul.Tensor", {TensorRef{s}, TensorRef{w}}, f32({2, 3}));
  ir::Graph g = b.finish({y});
  const auto inputs = sample_inputs(g);
  const auto before = run(g, inputs);

  EXPECT_EQ(normalize_dim_orders(g), 2);  // the constant and the add's output
  g.verify();
  EXPECT_TRUE(g.value(w).spec.is_contiguous());
  EXPECT_TRUE(g.value(s).spec.is_contiguous());
  const float* data = reinterpret_cast<const float*>(g.value(w).constant->bytes.data());
  EXPECT_EQ(std::vector<float>(data, data + 6), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(max_abs_diff(before, run(g, inputs)), 0.0);
  EXPECT_EQ(normalize_dim_orders(g), 0);  // idempotent
}

TEST(NormalizeDimOrders, InputsKeepTheLayoutTheCallerPasses) {
  GraphBuilder b;
  ir::TensorSpec channels_last = f32({1, 2, 3, 3});
  channels_last.dim_order = {0, 2, 3, 1};
  const ValueId x = b.input("x", channels_last);
  const ValueId y = b.op("aten::relu.default", {TensorRef{x}}, channels_last);
  ir::Graph g = b.finish({y});
  EXPECT_EQ(normalize_dim_orders(g), 1);
  g.verify();
  EXPECT_EQ(g.value(x).spec.dim_order, (std::vector<uint8_t>{0, 2, 3, 1}));
  EXPECT_TRUE(g.value(y).spec.is_contiguous());
}

}  // namespace
}  // namespace pteron::compiler::testing
