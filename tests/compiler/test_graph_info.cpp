// Graph info stored in programs and the delegation report computed from it: regions and their
// nodes, reasons for every node left on the kernels, instruction -> node map, boundaries,
// exact FLOPs of linear and convolution, and the program still loading without it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/compile.h"
#include "compiler/ir/work.h"
#include "compiler/passes/fuse_conv_relu.h"
#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "runtime/host/host_method.h"

namespace pteron::compiler {
namespace {

using nlohmann::json;

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32(std::vector<int64_t> sizes) {
  return ir::TensorSpec::contiguous(ScalarType::Float, sizes);
}

// Claims relu and sigmoid; payloads are not run in these tests.
class ActivationPartitioner : public Partitioner {
 public:
  std::string name() const override { return "test-act"; }
  std::string backend_id() const override { return "TestActBackend"; }
  SupportDecision supports(const ir::Graph&, const ir::Node& node,
                           const PartitionContext&) const override {
    if (node.op.name == "relu" || node.op.name == "sigmoid") return SupportDecision::yes();
    return SupportDecision::no("only relu and sigmoid");
  }
  LoweredRegion lower(const ir::Graph&, const Region&, const PartitionContext&) const override {
    return {true, {}, {1, 2, 3}, {}};
  }
};

ir::ConstantData zeros(size_t bytes) {
  return ir::ConstantData::owned(std::vector<uint8_t>(bytes, 0));
}

// x[2, 8] -> linear(W[4, 8]) -> relu -> sigmoid -> add(., .) -> relu -> out
ir::Graph mixed_graph() {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", f32({2, 8}));
  ir::ValueId w = g.add_constant("w", f32({4, 8}), zeros(4 * 8 * 4));
  ir::NodeId lin =
      g.add_node(op("aten::linear.default"), {ir::TensorRef{x}, ir::TensorRef{w}, ir::Argument{}},
                 {ir::NewValue{"lin", f32({2, 4})}}, {0, "linear_1", "fc", "model.py:3"});
  ir::ValueId v = g.node(lin).outputs[0];
  for (const char* name : {"relu", "sigmoid"}) {
    ir::NodeId n = g.add_node(op(std::string("aten::") + name + ".default"), {ir::TensorRef{v}},
                              {ir::NewValue{name, f32({2, 4})}});
    v = g.node(n).outputs[0];
  }
  ir::NodeId add = g.add_node(op("aten::add.Tensor"),
                              {ir::TensorRef{v}, ir::TensorRef{v}, ir::Scalar{int64_t{1}}},
                              {ir::NewValue{"sum", f32({2, 4})}});
  ir::NodeId last = g.add_node(op("aten::relu.default"), {ir::TensorRef{g.node(add).outputs[0]}},
                               {ir::NewValue{"out", f32({2, 4})}});
  g.set_outputs({g.node(last).outputs[0]});
  return g;
}

std::string graph_info_of(const std::vector<uint8_t>& program) {
  auto loaded = HostProgram::from_bytes(program.data(), program.size());
  EXPECT_TRUE(loaded.ok()) << last_error_message();
  auto info = read_named_data((*loaded)->program(), kGraphInfoKey);
  EXPECT_TRUE(info.has_value());
  return info.value_or("{}");
}

TEST(GraphInfo, DescribesRegionsReasonsAndInstructions) {
  ir::Graph g = mixed_graph();
  ActivationPartitioner partitioner;
  CompileResult compiled = compile_graph(g, {"host", {"test-act", "portable"}}, {&partitioner});
  const json info = json::parse(graph_info_of(compiled.program));
  EXPECT_EQ(info["version"], 1);
  EXPECT_EQ(info["backends"], json::array({"test-act", "portable"}));
  const json& nodes = info["nodes"];
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(nodes[0]["name"], "lin");
  EXPECT_EQ(nodes[0]["from"], "linear_1");
  EXPECT_EQ(nodes[0]["module"], "fc");
  EXPECT_EQ(nodes[0]["source"], "model.py:3");
  EXPECT_EQ(nodes[0]["runs_on"], "portable");
  EXPECT_EQ(nodes[0]["reasons"], json::array({"test-act: only relu and sigmoid"}));
  EXPECT_EQ(nodes[0]["flops"], 2 * 2 * 4 * 8);  // 2 * out.numel * K
  EXPECT_EQ(nodes[0]["outputs"][0]["shape"], json::array({2, 4}));
  EXPECT_EQ(nodes[1]["region"], 0);
  EXPECT_EQ(nodes[2]["region"], 0);
  EXPECT_EQ(nodes[4]["region"], 1);
  ASSERT_EQ(info["regions"].size(), 2u);
  EXPECT_EQ(info["regions"][0]["backend"], "test-act");
  EXPECT_EQ(info["regions"][0]["backend_id"], "TestActBackend");
  EXPECT_EQ(info["regions"][0]["nodes"], json::array({1, 2}));
  EXPECT_EQ(info["regions"][0]["inputs"][0]["bytes"], 2 * 4 * 4);
  // linear, region 0, add, region 1: one instruction each, mapped back to their nodes.
  const json& ins = info["instructions"];
  ASSERT_EQ(ins.size(), compiled.report.emit.instructions);
  EXPECT_EQ(ins[0]["nodes"], json::array({0}));
  EXPECT_EQ(ins[1]["nodes"], json::array({1, 2}));
  EXPECT_EQ(ins[1]["region"], 0);
  EXPECT_EQ(ins[2]["nodes"], json::array({3}));
  EXPECT_EQ(ins[3]["region"], 1);
}

TEST(DelegationReport, CountsAddUpAndBoundariesFollowTheExecutionPath) {
  ir::Graph g = mixed_graph();
  ActivationPartitioner partitioner;
  CompileResult compiled = compile_graph(g, {"host", {"test-act", "portable"}}, {&partitioner});
  const json r = json::parse(delegation_report(graph_info_of(compiled.program)));
  EXPECT_EQ(r["nodes"], 5);
  EXPECT_EQ(r["delegated_nodes"], 3);
  EXPECT_EQ(r["kernel_nodes"], 2);
  size_t per_op = 0;
  for (const auto& o : r["ops"])
    per_op += o["delegated"].get<size_t>() + o["not_delegated"].get<size_t>();
  EXPECT_EQ(per_op, 5u);
  EXPECT_EQ(r["regions"]["count"], 2);
  EXPECT_EQ(r["regions"]["per_backend"]["test-act"], 2);
  // kernels -> region 0 -> kernels -> region 1 -> caller: 4 crossings.
  EXPECT_EQ(r["boundaries"]["crossings"], 4);
  EXPECT_EQ(r["boundaries"]["bytes"], 4 * (2 * 4 * 4));
  const uint64_t linear = 2 * 2 * 4 * 8, elementwise = 2 * 4;
  EXPECT_EQ(r["flops"]["total"], linear + 4 * elementwise);
  EXPECT_EQ(r["flops"]["delegated"], 3 * elementwise);
  EXPECT_EQ(r["flops"]["portable"], linear + elementwise);
  ASSERT_EQ(r["portable_nodes"].size(), 2u);
  EXPECT_EQ(r["portable_nodes"][1]["op"], "aten::add.Tensor");
  EXPECT_EQ(r["portable_nodes"][1]["reasons"], json::array({"test-act: only relu and sigmoid"}));
  const std::string text = delegation_summary(r.dump());
  EXPECT_NE(text.find("delegate regions: 2 (test-act 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("only relu and sigmoid"), std::string::npos) << text;
  const std::string view = graph_view(graph_info_of(compiled.program));
  EXPECT_NE(view.find("region #0 [test-act] (lin) -> (sigmoid): 2 node(s) {"), std::string::npos)
      << view;
}

TEST(GraphInfo, StrippedProgramsHaveNoneAndStillRun) {
  ir::Graph g = mixed_graph();
  CompileOptions options{"host", {"portable"}};
  options.strip_debug_info = true;
  CompileResult compiled = compile_graph(g, options, {});
  EXPECT_EQ(compiled.report.graph_info_bytes, 0u);
  auto loaded = HostProgram::from_bytes(compiled.program.data(), compiled.program.size());
  ASSERT_TRUE(loaded.ok()) << last_error_message();
  EXPECT_FALSE(read_named_data((*loaded)->program(), kGraphInfoKey).has_value());
  EXPECT_TRUE(HostMethod::load(**loaded, "forward").ok()) << last_error_message();
}

TEST(Flops, ConvolutionCountsMultiplyAddsOfEveryOutput) {
  ir::Graph g;
  ir::ValueId x = g.add_input("x", f32({1, 4, 8, 8}));
  ir::ValueId w = g.add_constant("w", f32({6, 2, 3, 3}), zeros(6 * 2 * 9 * 4));  // groups = 2
  ir::NodeId conv =
      g.add_node(op("aten::convolution.default"),
                 {ir::TensorRef{x}, ir::TensorRef{w}, ir::Argument{}, std::vector<int64_t>{1, 1},
                  std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}, false,
                  std::vector<int64_t>{0, 0}, int64_t{2}},
                 {ir::NewValue{"y", f32({1, 6, 8, 8})}});
  EXPECT_EQ(multiply_adds(g, g.node(conv)), (6u * 8 * 8) * (2 * 3 * 3));
  EXPECT_EQ(estimate_flops(g, g.node(conv)), 2u * (6 * 8 * 8) * (2 * 3 * 3));
  // The optimized library's fused forms (the convolution's nine arguments) count the same: the
  // profile's and inspect's FLOPs of a MobileNetV3 program had left out its 20 hardswish ones.
  const std::vector<ir::Argument> args = g.node(conv).args;
  for (const ir::OpSchema* fused :
       {&convolution_relu_schema(), &convolution_silu_schema(), &convolution_hardswish_schema()}) {
    g.set_op(conv, *fused, args);
    EXPECT_EQ(multiply_adds(g, g.node(conv)), (6u * 8 * 8) * (2 * 3 * 3)) << fused->op.name;
  }
}

// What the Vulkan and VGF cost rules weigh: multiply-adds where a node has them, else the
// elements it outputs (a view too: it is a copy inside a delegate).
TEST(Flops, RegionWorkIsMultiplyAddsElseElements) {
  ir::Graph g = mixed_graph();
  const std::vector<ir::NodeId> nodes = g.nodes();
  EXPECT_EQ(multiply_adds(g, g.node(nodes[0])), 2u * 4 * 8);    // linear [2, 8] x [4, 8]^T
  EXPECT_EQ(multiply_adds(g, g.node(nodes[1])), 0u);            // relu
  EXPECT_EQ(region_work(g, nodes), 2.0 * 4 * 8 + 4 * (2 * 4));  // relu, sigmoid, add, relu
  EXPECT_EQ(estimate_flops(g, g.node(nodes[0])), 2u * 2 * 4 * 8);
}

}  // namespace
}  // namespace pteron::compiler
