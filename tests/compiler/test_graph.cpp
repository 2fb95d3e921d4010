#include <gtest/gtest.h>

#include <cstring>

#include "compiler/compile_error.h"
#include "compiler/ir/graph.h"

namespace pteron::compiler::ir {
namespace {

const OpSchema& op(std::string_view name) { return *OpSchemaRegistry::global().find(name); }

TensorSpec f32(std::vector<int64_t> sizes) {
  return TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}

ConstantData floats(std::vector<float> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  ConstantData c = ConstantData::owned(std::move(bytes), "w");
  c.kind = ConstantKind::Parameter;
  return c;
}

// x -> add(x, w) -> relu -> output
struct SmallGraph {
  Graph g;
  ValueId x, w, y, z;
  NodeId add, relu;

  SmallGraph() {
    x = g.add_input("x", f32({2, 3}));
    w = g.add_constant("w", f32({3}), floats({1, 2, 3}));
    add = g.add_node(op("aten::add.Tensor"), {TensorRef{x}, TensorRef{w}, Scalar{int64_t{1}}},
                     {NewValue{"y", f32({2, 3})}}, DebugHandle{0, "add", "block", "m.py:3"});
    y = g.node(add).outputs[0];
    relu = g.add_node(op("aten::relu.default"), {TensorRef{y}}, {NewValue{"z", f32({2, 3})}});
    z = g.node(relu).outputs[0];
    g.set_outputs({z});
  }
};

TEST(Graph, BuildsLinkedValues) {
  SmallGraph s;
  s.g.verify();
  EXPECT_EQ(s.g.inputs(), std::vector<ValueId>{s.x});
  EXPECT_EQ(s.g.constants(), std::vector<ValueId>{s.w});
  EXPECT_EQ(s.g.nodes(), (std::vector<NodeId>{s.add, s.relu}));
  EXPECT_EQ(s.g.value(s.x).users, std::vector<NodeId>{s.add});
  EXPECT_EQ(s.g.value(s.w).users, std::vector<NodeId>{s.add});
  EXPECT_EQ(s.g.value(s.y).producer, s.add);
  EXPECT_EQ(s.g.value(s.z).producer, s.relu);
  EXPECT_TRUE(s.g.value(s.w).is_constant());
  EXPECT_EQ(s.g.find_value("y"), s.y);
  EXPECT_FALSE(s.g.find_value("nope").has_value());
  EXPECT_EQ(s.g.node(s.add).arg("alpha"), Argument(Scalar{int64_t{1}}));
  EXPECT_THROW(s.g.node(s.add).arg("beta"), CompileError);
  EXPECT_EQ(s.g.node(s.relu).debug.node_name, "z");  // defaults to the first output's name
}

TEST(Graph, PrintsOneLinePerNode) {
  SmallGraph s;
  EXPECT_EQ(s.g.to_string(),
            "graph(%x: f32[2, 3]) {\n"
            "  %w: f32[3] = parameter \"w\" (12 bytes)\n"
            "  %y: f32[2, 3] = aten::add.Tensor(self=%x, other=%w, alpha=1)  # block @ m.py:3\n"
            "  %z: f32[2, 3] = aten::relu.default(self=%y)\n"
            "  return (%z)\n"
            "}\n");
}

TEST(Graph, InsertsAndRewiresNodes) {
  SmallGraph s;
  // Insert neg(y) before relu and make everything that read y read it instead.
  const NodeId neg = s.g.add_node(op("aten::neg.default"), {TensorRef{s.y}},
                                  {NewValue{"n", f32({2, 3})}}, {}, s.relu);
  const ValueId n = s.g.node(neg).outputs[0];
  s.g.replace_all_uses(s.y, n, neg);
  s.g.verify();
  EXPECT_EQ(s.g.nodes(), (std::vector<NodeId>{s.add, neg, s.relu}));
  EXPECT_EQ(s.g.node(s.relu).args[0], Argument(TensorRef{n}));
  EXPECT_EQ(s.g.value(s.y).users, std::vector<NodeId>{neg});
  EXPECT_EQ(s.g.value(n).users, std::vector<NodeId>{s.relu});
}

TEST(Graph, RemovesOnlyUnusedNodes) {
  SmallGraph s;
  EXPECT_THROW(s.g.remove_node(s.add), CompileError);   // y feeds relu
  EXPECT_THROW(s.g.remove_node(s.relu), CompileError);  // z is a graph output
  s.g.replace_all_uses(s.z, s.y);
  s.g.remove_node(s.relu);
  s.g.verify();
  EXPECT_FALSE(s.g.has_node(s.relu));
  EXPECT_FALSE(s.g.has_value(s.z));
  EXPECT_FALSE(s.g.find_value("z").has_value());
  EXPECT_EQ(s.g.outputs(), std::vector<ValueId>{s.y});
  EXPECT_TRUE(s.g.value(s.y).users.empty());
  // Ids are never reused.
  const NodeId again =
      s.g.add_node(op("aten::relu.default"), {TensorRef{s.y}}, {NewValue{"z", f32({2, 3})}});
  EXPECT_NE(again, s.relu);
  EXPECT_NE(s.g.node(again).outputs[0], s.z);
}

TEST(Graph, SwitchesOps) {
  SmallGraph s;
  s.g.set_op(s.add, op("aten::sub.Tensor"), {TensorRef{s.w}, TensorRef{s.x}, Scalar{int64_t{2}}});
  s.g.verify();
  EXPECT_EQ(s.g.node(s.add).op.str(), "aten::sub.Tensor");
  EXPECT_THROW(s.g.set_op(s.add, op("aten::relu.default"), {TensorRef{s.x}, TensorRef{s.w}}),
               CompileError);
  s.g.set_arg(s.add, 1, TensorRef{s.w});
  s.g.verify();
  EXPECT_TRUE(s.g.value(s.x).users.empty());
}

TEST(Graph, RejectsBadNodesWithoutChangingTheGraph) {
  SmallGraph s;
  const std::string before = s.g.to_string();
  const size_t capacity = s.g.node_capacity();
  // Wrong argument count.
  EXPECT_THROW(s.g.add_node(op("aten::relu.default"), {}, {NewValue{"r", f32({2, 3})}}),
               CompileError);
  // Unknown value.
  EXPECT_THROW(s.g.add_node(op("aten::relu.default"), {TensorRef{99}}, {NewValue{"r", f32({1})}}),
               CompileError);
  // Output name taken.
  EXPECT_THROW(s.g.add_node(op("aten::relu.default"), {TensorRef{s.x}}, {NewValue{"y", f32({1})}}),
               CompileError);
  EXPECT_EQ(s.g.node_capacity(), capacity);
  EXPECT_EQ(s.g.to_string(), before);
  s.g.verify();
  // Constants must have exactly the bytes their spec needs.
  EXPECT_THROW(s.g.add_constant("bad", f32({4}), floats({1, 2})), CompileError);
}

TEST(Graph, RemovesUnusedConstantsAndNamesUniquely) {
  SmallGraph s;
  EXPECT_THROW(s.g.remove_constant(s.w), CompileError);
  const ValueId extra = s.g.add_constant("extra", f32({1}), floats({7}));
  EXPECT_EQ(s.g.unique_name("extra"), "extra_1");
  EXPECT_EQ(s.g.unique_name("fresh"), "fresh");
  s.g.remove_constant(extra);
  EXPECT_EQ(s.g.constants(), std::vector<ValueId>{s.w});
  s.g.verify();
}

TEST(Graph, ReplacesConstantData) {
  SmallGraph s;
  TensorSpec wide = f32({1, 3});
  s.g.set_constant(s.w, wide, floats({4, 5, 6}));
  EXPECT_EQ(s.g.value(s.w).spec, wide);
  EXPECT_EQ(s.g.value(s.w).constant->bytes.size(), 12u);
  EXPECT_THROW(s.g.set_constant(s.w, f32({2}), floats({1, 2, 3})), CompileError);
  EXPECT_THROW(s.g.set_constant(s.x, f32({3}), floats({1, 2, 3})), CompileError);
  EXPECT_THROW(s.g.set_spec(s.w, f32({4})), CompileError);  // 12 bytes cannot be f32[4]
  s.g.verify();
}

TEST(Graph, CopiesShareConstantBytes) {
  Graph copy;
  const uint8_t* data = nullptr;
  {
    SmallGraph s;
    copy = s.g;
    data = s.g.value(s.w).constant->bytes.data();
  }
  const ConstantData& c = *copy.value(copy.constants()[0]).constant;
  EXPECT_EQ(c.bytes.data(), data);
  float second;
  std::memcpy(&second, c.bytes.data() + 4, 4);
  EXPECT_EQ(second, 2.0f);
  copy.verify();
}

TEST(Graph, RecordsBufferMutations) {
  SmallGraph s;
  ConstantData initial = floats({0, 0, 0, 0, 0, 0});
  initial.fqn = "cache";
  initial.kind = ConstantKind::Buffer;
  const ValueId cache = s.g.add_state("cache", f32({2, 3}), initial);
  s.g.add_buffer_mutation({cache, s.z});
  EXPECT_EQ(s.g.buffer_mutations().size(), 1u);
  EXPECT_TRUE(s.g.value(cache).is_state());
  EXPECT_FALSE(s.g.value(cache).is_constant());  // no pass may fold or pack state
  EXPECT_THROW(s.g.add_buffer_mutation({s.w, s.z}), CompileError);    // weights are not buffers
  EXPECT_THROW(s.g.add_buffer_mutation({s.y, s.z}), CompileError);    // nor are intermediates
  EXPECT_THROW(s.g.add_buffer_mutation({cache, s.z}), CompileError);  // one update per buffer
  s.g.add_buffer_mutation({s.x, s.z});  // an input the model writes into (x.add_(1))
  EXPECT_EQ(s.g.buffer_mutations().size(), 2u);
  EXPECT_NE(s.g.to_string().find("mutates %cache <- %z"), std::string::npos);
  s.g.verify();
}

}  // namespace
}  // namespace pteron::compiler::ir
