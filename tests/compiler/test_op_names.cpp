// The generated op identifiers (compiler/ir/op_names.h) and the Node API that takes them.
#include <gtest/gtest.h>

#include "compiler/compile_error.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/op_names.h"

namespace pteron::compiler::ir {
namespace {

TEST(OpName, SplitsTheQualifiedName) {
  constexpr OpName add = ops::aten::add_Tensor;
  static_assert(add.str() == "aten::add.Tensor");
  static_assert(add.ns() == "aten" && add.name() == "add" && add.overload() == "Tensor");
  static_assert(ops::aten::addmm.str() == "aten::addmm.default");  // default: the bare name
  static_assert(ops::aten::add_out.overload() == "out");
  static_assert(ops::quantized_decomposed::quantize_per_tensor.ns() == "quantized_decomposed");
  EXPECT_EQ(OpRef::of(add), (OpRef{"aten", "add", "Tensor"}));
  EXPECT_TRUE(OpRef::parse("aten::add.Tensor") == add);
  EXPECT_FALSE(OpRef::parse("aten::add.Scalar") == add);
  EXPECT_TRUE(add == std::string("aten::add.Tensor"));
}

// Every identifier names a schema of the table: the generator read the same file.
TEST(OpName, NamesSchemasOfTheTable) {
  for (OpName op : {ops::aten::convolution, ops::aten::add_Tensor, ops::aten::view_copy_out,
                    ops::aten::_native_batch_norm_legit_no_training,
                    ops::dim_order_ops::_clone_dim_order, ops::executorch_prim::add_Scalar}) {
    const OpSchema* s = OpSchemaRegistry::global().find(op);
    ASSERT_NE(s, nullptr) << op.str();
    EXPECT_EQ(s->op.str(), op.str());
  }
}

TEST(OpName, NodeMatchesAndReadsArgumentsByName) {
  Graph g;
  const TensorSpec f32 = TensorSpec::contiguous(ScalarType::Float, {2, 3});
  const ValueId x = g.add_input("x", f32);
  const NodeId id =
      g.add_node(*OpSchemaRegistry::global().find(ops::aten::add_Tensor),
                 {TensorRef{x}, TensorRef{x}, Scalar{int64_t{2}}}, {NewValue{"y", f32}});
  const Node& n = g.node(id);
  EXPECT_TRUE(n.is(ops::aten::add_Tensor));
  EXPECT_FALSE(n.is(ops::aten::add_Scalar));
  EXPECT_EQ(n.arg_index("alpha"), 2u);
  EXPECT_EQ(n.arg("alpha"), Argument(Scalar{int64_t{2}}));
  EXPECT_THROW(n.arg_index("weight"), CompileError);  // not in aten::add.Tensor's schema
}

}  // namespace
}  // namespace pteron::compiler::ir
