// An input the model writes into (torch.export's user input mutation) keeps its bytes to the end
// of the call: the new value is copied (or computed) there, and no tensor made after the input's
// last read may take those bytes, which the caller reads back.
#include <gtest/gtest.h>

#include "compiler/compile_error.h"
#include "compiler/memory/graph_memory.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {64}); }

// x -> relu (x's new value) -> neg -> exp -> out: after relu nothing reads x, so without the
// mutation neg or exp could take x's bytes.
ir::Graph writes_into_input(ir::ValueId* x, std::vector<ir::ValueId>* made) {
  ir::Graph g;
  *x = g.add_input("x", f32());
  ir::ValueId v = *x;
  for (const char* name : {"aten::relu.default", "aten::neg.default", "aten::exp.default"}) {
    const ir::NodeId n =
        g.add_node(op(name), {ir::TensorRef{v}}, {ir::NewValue{g.unique_name("v"), f32()}});
    v = g.node(n).outputs[0];
    made->push_back(v);
  }
  g.add_buffer_mutation({*x, made->front()});
  g.set_outputs({v});
  return g;
}

bool overlap(const TensorPlacement& a, const TensorPlacement& b, uint64_t bytes) {
  return a.mem_id == b.mem_id && a.offset < b.offset + bytes && b.offset < a.offset + bytes;
}

TEST(GraphMemory, AWrittenInputKeepsItsBytesAndTakesTheNewValue) {
  ir::ValueId x = ir::kNoValue;
  std::vector<ir::ValueId> made;
  ir::Graph g = writes_into_input(&x, &made);
  g.verify();
  std::vector<Step> steps;
  EXPECT_EQ(insert_state_write_backs(g, steps, {}), 1);  // relu writes a new tensor: a copy
  const ir::ValueId written = g.buffer_mutations()[0].new_value;
  EXPECT_EQ(g.node(g.value(written).producer).op.str(), "aten::copy.default");
  const GraphMemoryPlan plan = plan_graph_memory(g, {{"host", 1, 0}}, 16, steps);
  EXPECT_EQ(plan.placements.at(written).offset, plan.placements.at(x).offset);
  for (ir::ValueId v : made) {
    EXPECT_FALSE(overlap(plan.placements.at(v), plan.placements.at(x), f32().nbytes()))
        << g.value(v).name << " takes the input's bytes";
  }
  try {
    plan_graph_memory(g, {{"host", 1, 0}}, 16, steps, {}, /*plan_inputs=*/false);
    FAIL() << "inputs left in the caller's buffers cannot take the new value";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("writes into its input 'x' in place"), std::string::npos);
  }
}

// A row written in place (a cache the caller passes, cache.index_copy_(0, pos, row)): the
// new value is the input's bytes from index_put on, so the tensors made after it stay apart
// though nothing reads the input itself again.
TEST(GraphMemory, AnInputWrittenInPlaceKeepsItsBytesToTheEnd) {
  ir::Graph g;
  const ir::ValueId cache = g.add_input("cache", f32());
  const ir::ValueId pos =
      g.add_input("pos", ir::TensorSpec::contiguous(ScalarType::Long, std::vector<int64_t>{1}));
  const ir::ValueId row =
      g.add_input("row", ir::TensorSpec::contiguous(ScalarType::Float, std::vector<int64_t>{1}));
  const ir::NodeId put =
      g.add_node(op("aten::index_put.default"),
                 {ir::TensorRef{cache}, ir::OptionalTensorList{{pos}}, ir::TensorRef{row}, false},
                 {ir::NewValue{"written", f32()}});
  ir::ValueId v = g.node(put).outputs[0];
  g.add_buffer_mutation({cache, v});
  std::vector<ir::ValueId> made;
  for (const char* name : {"aten::neg.default", "aten::exp.default"}) {
    const ir::NodeId n =
        g.add_node(op(name), {ir::TensorRef{v}}, {ir::NewValue{g.unique_name("v"), f32()}});
    v = g.node(n).outputs[0];
    made.push_back(v);
  }
  g.set_outputs({v});
  std::vector<Step> steps;
  EXPECT_EQ(insert_state_write_backs(g, steps, {}), 0);  // in place: no copy
  const GraphMemoryPlan plan = plan_graph_memory(g, {{"host", 1, 0}}, 16, steps);
  EXPECT_EQ(plan.placements.at(g.node(put).outputs[0]).offset, plan.placements.at(cache).offset);
  for (ir::ValueId m : made) {
    EXPECT_FALSE(overlap(plan.placements.at(m), plan.placements.at(cache), f32().nbytes()))
        << g.value(m).name << " takes the cache's bytes";
  }
}

}  // namespace
}  // namespace pteron::compiler
