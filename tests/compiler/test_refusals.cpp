// Only a Refusal counts as a refusal: a partitioner throwing one (from any depth of supports()
// or lower()) gives the node or region back with its reason, and the program runs on the
// kernels; any other exception is a bug in the backend and fails the compile with one line
// naming the node, rather than silently becoming CPU fallback.
#include <gtest/gtest.h>

#include <stdexcept>

#include "compiler/compile.h"
#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {6}); }

enum class Fault { RefuseInSupports, BugInSupports, RefuseInLower, BugInLower };

// Claims relu; on sigmoid (supports) or on its region (lower) it fails as `fault` says, from
// a helper below the virtual, as a real lowering would.
void check_deep(Fault fault, Fault when, const char* what) {
  if (fault != when) return;
  if (fault == Fault::RefuseInSupports || fault == Fault::RefuseInLower) refuse(what);
  throw std::logic_error(what);
}

class FaultyPartitioner : public Partitioner {
 public:
  explicit FaultyPartitioner(Fault fault) : fault_(fault) {}
  std::string name() const override { return "faulty"; }
  std::string backend_id() const override { return "FaultyBackend"; }
  SupportDecision supports(const ir::Graph&, const ir::Node& node,
                           const PartitionContext&) const override {
    if (node.op.name == "sigmoid") {
      check_deep(fault_, Fault::RefuseInSupports, "sigmoid needs a lookup table here");
      check_deep(fault_, Fault::BugInSupports, "argument index 7 out of range");
    }
    return node.op.name == "relu" ? SupportDecision::yes() : SupportDecision::no("only relu");
  }
  LoweredRegion lower(const ir::Graph&, const Region&, const PartitionContext&) const override {
    check_deep(fault_, Fault::RefuseInLower, "the payload would exceed 64 KiB");
    check_deep(fault_, Fault::BugInLower, "tensor id 12 is not in the payload");
    return {true, {}, {1}, {}};
  }

 private:
  Fault fault_;
};

// x -> relu -> sigmoid -> out
ir::Graph relu_sigmoid(ir::NodeId* relu, ir::NodeId* sigmoid) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", f32());
  *relu = g.add_node(op("aten::relu.default"), {ir::TensorRef{v}}, {ir::NewValue{"r", f32()}});
  *sigmoid = g.add_node(op("aten::sigmoid.default"), {ir::TensorRef{g.node(*relu).outputs[0]}},
                        {ir::NewValue{"s", f32()}});
  g.set_outputs({g.node(*sigmoid).outputs[0]});
  return g;
}

std::string compile_error(Fault fault, std::string* described) {
  ir::NodeId relu, sigmoid;
  ir::Graph g = relu_sigmoid(&relu, &sigmoid);
  *described = g.node(fault == Fault::BugInSupports ? sigmoid : relu).describe();
  FaultyPartitioner p(fault);
  try {
    compile_graph(g, {"host", {"portable"}}, {&p});
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

TEST(Refusals, ARefusalInSupportsFallsBackWithItsReason) {
  ir::NodeId relu, sigmoid;
  ir::Graph g = relu_sigmoid(&relu, &sigmoid);
  const std::string sigmoid_node = g.node(sigmoid).describe();
  FaultyPartitioner p(Fault::RefuseInSupports);
  const CompileResult r = compile_graph(g, {"host", {"portable"}}, {&p});
  ASSERT_EQ(r.report.regions.size(), 1u);  // the relu
  EXPECT_EQ(r.report.refusals,
            std::vector<std::string>{sigmoid_node + ": faulty: sigmoid needs a lookup table here"});
}

TEST(Refusals, ARefusalInLowerGivesTheRegionBack) {
  ir::NodeId relu, sigmoid;
  ir::Graph g = relu_sigmoid(&relu, &sigmoid);
  const std::string relu_node = g.node(relu).describe();
  FaultyPartitioner p(Fault::RefuseInLower);
  const CompileResult r = compile_graph(g, {"host", {"portable"}}, {&p});
  EXPECT_TRUE(r.report.regions.empty());
  EXPECT_EQ(r.report.nodes_out, 2u);  // both nodes on the kernels
  bool reason = false;
  for (const std::string& line : r.report.refusals)
    reason |= line == relu_node + ": faulty: the payload would exceed 64 KiB";
  EXPECT_TRUE(reason) << testing::PrintToString(r.report.refusals);
}

TEST(Refusals, AnInternalErrorInSupportsFailsTheCompileNamingTheNode) {
  std::string node;
  const std::string what = compile_error(Fault::BugInSupports, &node);
  EXPECT_EQ(what, node +
                      ": faulty: support check failed (an internal error, not a refusal): "
                      "argument index 7 out of range");
  EXPECT_EQ(what.find('\n'), std::string::npos);
}

TEST(Refusals, AnInternalErrorInLowerFailsTheCompileNamingTheNode) {
  std::string node;
  const std::string what = compile_error(Fault::BugInLower, &node);
  EXPECT_EQ(what, node +
                      ": faulty: lowering its region of 1 node(s) failed: tensor id 12 is not "
                      "in the payload");
}

}  // namespace
}  // namespace pteron::compiler
