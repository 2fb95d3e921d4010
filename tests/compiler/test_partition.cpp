// Partitioning: regions never form cycles, partitioner order is honoured, small regions go
// back with a reason, and every unclaimed node says why each partitioner refused it.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "compiler/partition/partitioner.h"

namespace pteron::compiler {
namespace {

using ir::Graph;
using ir::NewValue;
using ir::NodeId;
using ir::TensorRef;
using ir::ValueId;

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {4}); }

// Claims the ops it is given by name.
class OpsPartitioner : public Partitioner {
 public:
  OpsPartitioner(std::string name, std::set<std::string> ops, size_t min_nodes = 1)
      : name_(std::move(name)), ops_(std::move(ops)), min_nodes_(min_nodes) {}
  std::string name() const override { return name_; }
  std::string backend_id() const override { return name_; }
  LoweredRegion lower(const Graph&, const Region&, const PartitionContext&) const override {
    return {true, {}, {1}, {}};
  }
  SupportDecision supports(const Graph&, const ir::Node& node,
                           const PartitionContext&) const override {
    if (ops_.count(node.op.name)) return SupportDecision::yes();
    return SupportDecision::no("op " + node.op.str() + " is not supported");
  }
  SupportDecision worth_delegating(const Graph&, const Region& r,
                                   const PartitionContext&) const override {
    if (r.nodes.size() >= min_nodes_) return SupportDecision::yes();
    return SupportDecision::no("region of " + std::to_string(r.nodes.size()) +
                               " node(s) is below " + std::to_string(min_nodes_));
  }

 private:
  std::string name_;
  std::set<std::string> ops_;
  size_t min_nodes_;
};

NodeId unary(Graph& g, const char* name, ValueId in, const std::string& out) {
  return g.add_node(op(std::string("aten::") + name + ".default"), {TensorRef{in}},
                    {NewValue{out, f32()}});
}
NodeId binary(Graph& g, ValueId a, ValueId b, const std::string& out) {
  return g.add_node(op("aten::add.Tensor"), {TensorRef{a}, TensorRef{b}, ir::Scalar{int64_t{1}}},
                    {NewValue{out, f32()}});
}
ValueId out(const Graph& g, NodeId n) { return g.node(n).outputs[0]; }

// Checks that contracting every region leaves an acyclic graph and that the contracted order
// is a valid schedule of every node.
void expect_acyclic(const Graph& g, const PartitionResult& r) {
  const std::vector<NodeId> order = contracted_order(g, r);
  std::set<size_t> regions_seen;
  std::set<NodeId> done;
  for (NodeId first : order) {
    std::vector<NodeId> unit = {first};
    if (auto it = r.region_of.find(first); it != r.region_of.end()) {
      ASSERT_TRUE(regions_seen.insert(it->second).second);
      unit = r.regions[it->second].nodes;
    }
    for (NodeId n : unit) {
      for (ValueId v : g.node(n).inputs()) {
        const ir::Value& value = g.value(v);
        if (!value.is_intermediate()) continue;
        const bool inside = std::find(unit.begin(), unit.end(), value.producer) != unit.end();
        EXPECT_TRUE(inside || done.count(value.producer))
            << "node " << n << " runs before its input";
      }
    }
    done.insert(unit.begin(), unit.end());
  }
  EXPECT_EQ(done.size(), g.nodes().size());
}

TEST(Partition, UnsupportedOpInTheMiddleSplitsRegions) {
  // x -> relu -> sigmoid(unsupported) -> relu -> out
  Graph g;
  ValueId x = g.add_input("x", f32());
  NodeId a = unary(g, "relu", x, "a");
  NodeId b = unary(g, "sigmoid", out(g, a), "b");
  NodeId c = unary(g, "relu", out(g, b), "c");
  g.set_outputs({out(g, c)});
  OpsPartitioner p("fake", {"relu"});
  PartitionResult r = partition(g, {&p}, PartitionContext{});
  ASSERT_EQ(r.regions.size(), 2u);
  EXPECT_EQ(r.refusals.at(b),
            std::vector<std::string>{"fake: op aten::sigmoid.default is not supported"});
  EXPECT_EQ(r.regions[0].inputs, std::vector<ValueId>{x});
  EXPECT_EQ(r.regions[0].outputs, std::vector<ValueId>{out(g, a)});
  expect_acyclic(g, r);
}

TEST(Partition, RefusesMergesThatWouldFormACycle) {
  // a = relu(x); b = sigmoid(a) [unsupported]; c = add(a, b): merging c with a would make the
  // region {a, c} feed b and read it back.
  Graph g;
  ValueId x = g.add_input("x", f32());
  NodeId a = unary(g, "relu", x, "a");
  NodeId b = unary(g, "sigmoid", out(g, a), "b");
  NodeId c = binary(g, out(g, a), out(g, b), "c");
  g.set_outputs({out(g, c)});
  OpsPartitioner p("fake", {"relu", "add"});
  PartitionResult r = partition(g, {&p}, PartitionContext{});
  EXPECT_EQ(r.regions.size(), 2u);
  EXPECT_NE(r.region_of.at(a), r.region_of.at(c));
  expect_acyclic(g, r);
}

TEST(Partition, OrderIsPriorityAndSmallRegionsGoBack) {
  Graph g;
  ValueId x = g.add_input("x", f32());
  NodeId a = unary(g, "relu", x, "a");
  NodeId b = unary(g, "relu", out(g, a), "b");
  NodeId c = unary(g, "sigmoid", out(g, b), "c");
  g.set_outputs({out(g, c)});
  OpsPartitioner first("first", {"relu", "sigmoid"}, /*min_nodes=*/4);  // gives everything back
  OpsPartitioner second("second", {"relu"});
  PartitionResult r = partition(g, {&first, &second}, PartitionContext{});
  ASSERT_EQ(r.regions.size(), 1u);
  EXPECT_EQ(r.regions[0].partitioner, 1u);
  EXPECT_EQ(r.regions[0].nodes, (std::vector<NodeId>{a, b}));
  // c was refused by both, each with its own reason.
  ASSERT_EQ(r.refusals.at(c).size(), 2u);
  EXPECT_EQ(r.refusals.at(c)[0], "first: region of 3 node(s) is below 4");
  EXPECT_EQ(r.refusals.at(c)[1], "second: op aten::sigmoid.default is not supported");
}

// Partitioners see the compile's kernel libraries through the context they are given (a
// fallback plan's partitioners get its own); an empty list reads as portable only.
TEST(Partition, ContextNamesTheKernelLibraries) {
  PartitionContext context;
  EXPECT_FALSE(context.has_kernel_library("optimized"));
  context.kernel_libraries = {"optimized", "portable"};
  EXPECT_TRUE(context.has_kernel_library("optimized"));
  EXPECT_TRUE(context.has_kernel_library("portable"));
  EXPECT_FALSE(context.has_kernel_library("cortex-m"));
}

TEST(Partition, RandomGraphsStayAcyclic) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    Graph g;
    std::vector<ValueId> values = {g.add_input("x", f32())};
    for (int i = 0; i < 30; ++i) {
      const std::string name = "v" + std::to_string(i);
      ValueId a = values[rng() % values.size()];
      NodeId n;
      switch (rng() % 3) {
        case 0:
          n = unary(g, "relu", a, name);
          break;
        case 1:
          n = unary(g, "sigmoid", a, name);
          break;
        default:
          n = binary(g, a, values[rng() % values.size()], name);
          break;
      }
      values.push_back(out(g, n));
    }
    g.set_outputs({values.back()});
    OpsPartitioner p("fake", {"relu", "add"});
    PartitionResult r = partition(g, {&p}, PartitionContext{});
    expect_acyclic(g, r);
    for (NodeId n : g.nodes())
      EXPECT_TRUE(r.region_of.count(n) || r.refusals.count(n)) << "node " << n;
  }
}

}  // namespace
}  // namespace pteron::compiler
