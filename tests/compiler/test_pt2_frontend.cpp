// Frontend tests over archives torch wrote. test_pt2_frontend.py exports the models of
// pt2_models.py into a folder and runs this binary with PTERON_PT2_FIXTURES pointing at it;
// expectations.json there holds what torch knows about each graph.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/frontend/pt2_loader.h"

namespace pteron::compiler::frontend {
namespace {

using ir::Argument;
using ir::Graph;
using ir::Node;
using Json = nlohmann::json;

std::string fixture_dir() {
  const char* dir = std::getenv("PTERON_PT2_FIXTURES");
  if (dir == nullptr) {
    throw std::runtime_error("set PTERON_PT2_FIXTURES (test_pt2_frontend.py does)");
  }
  return dir;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const Json& expectations() {
  static const Json j = Json::parse(read_file(fixture_dir() + "/expectations.json"));
  return j;
}

Graph load(const std::string& model) { return load_pt2(fixture_dir() + "/" + model + ".pt2"); }

const ir::Value& value_named(const Graph& g, const std::string& name) {
  auto id = g.find_value(name);
  if (!id) throw std::runtime_error("no value " + name);
  return g.value(*id);
}

const Node& node_named(const Graph& g, const std::string& name) {
  for (ir::NodeId id : g.nodes()) {
    if (g.node(id).debug.node_name == name) return g.node(id);
  }
  throw std::runtime_error("no node " + name);
}

std::string source_line(const std::string& marker) {
  return expectations()["source_file"].get<std::string>() + ":" +
         std::to_string(expectations()["lines"][marker].get<int>());
}

void expect_spec(const ir::TensorSpec& spec, const Json& expected, const std::string& what) {
  EXPECT_EQ(spec.sizes, expected["sizes"].get<std::vector<int64_t>>()) << what;
  EXPECT_EQ(static_cast<int>(spec.dtype), expected["dtype"].get<int>()) << what;
}

TEST(Pt2Frontend, GraphsMatchTorch) {
  for (const auto& [name, model] : expectations()["models"].items()) {
    SCOPED_TRACE(name);
    const Graph g = load(name);
    g.verify();
    EXPECT_EQ(g.metadata().at("torch_version").substr(0, 4), "2.13");

    ASSERT_EQ(g.inputs().size(), model["inputs"].size());
    for (size_t i = 0; i < g.inputs().size(); ++i) {
      const ir::Value& v = g.value(g.inputs()[i]);
      EXPECT_EQ(v.name, model["inputs"][i]["name"]);
      expect_spec(v.spec, model["inputs"][i], v.name);
    }

    const Json& nodes = model["nodes"];
    ASSERT_EQ(g.nodes().size(), nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = g.node(g.nodes()[i]);
      const std::string what = name + " node " + n.debug.node_name;
      EXPECT_EQ(n.op.str(), nodes[i]["op"]) << what;
      EXPECT_EQ(n.debug.node_name, nodes[i]["name"]) << what;
      EXPECT_EQ(n.debug.id, static_cast<int>(i)) << what;
      ASSERT_EQ(n.outputs.size(), nodes[i]["outputs"].size()) << what;
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        const Json& expected = nodes[i]["outputs"][k];
        ASSERT_EQ(n.outputs[k] == ir::kNoValue, expected.is_null()) << what;
        if (!expected.is_null()) expect_spec(g.value(n.outputs[k]).spec, expected, what);
      }
    }

    ASSERT_EQ(g.outputs().size(), model["outputs"].size());
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      expect_spec(g.value(g.outputs()[i]).spec, model["outputs"][i], "output");
    }
  }
}

TEST(Pt2Frontend, ConstantsHoldTorchsBytes) {
  static const std::map<std::string, ir::ConstantKind> kKinds = {
      {"PARAMETER", ir::ConstantKind::Parameter},
      {"BUFFER", ir::ConstantKind::Buffer},
      {"CONSTANT_TENSOR", ir::ConstantKind::TensorConstant},
  };
  for (const auto& [name, model] : expectations()["models"].items()) {
    SCOPED_TRACE(name);
    const Graph g = load(name);
    size_t archive_constants = 0;
    for (ir::ValueId id : g.constants()) {
      archive_constants += g.value(id).constant->kind != ir::ConstantKind::Folded;
    }
    archive_constants += g.states().size();  // mutated buffers: state, their bytes the start
    EXPECT_EQ(archive_constants, model["constants"].size());
    for (const auto& [value_name, c] : model["constants"].items()) {
      const ir::Value& v = value_named(g, value_name);
      ASSERT_TRUE(v.is_constant() || v.is_state()) << value_name;
      const ir::ConstantData& data = v.is_state() ? *v.initial : *v.constant;
      EXPECT_EQ(data.fqn, c["fqn"]);
      EXPECT_EQ(data.kind, kKinds.at(c["kind"]));
      EXPECT_EQ(data.persistent, c["persistent"].get<bool>()) << value_name;
      expect_spec(v.spec, c, value_name);
      EXPECT_EQ(v.spec.dim_order, c["dim_order"].get<std::vector<uint8_t>>()) << value_name;
      const std::string expected = read_file(fixture_dir() + "/" + c["bin"].get<std::string>());
      ASSERT_EQ(data.bytes.size(), expected.size()) << value_name;
      EXPECT_EQ(std::memcmp(data.bytes.data(), expected.data(), expected.size()), 0) << value_name;
    }
  }
}

TEST(Pt2Frontend, SharedStorageIsMappedInPlace) {
  const Graph g = load("constants");
  // w = base[2:4] and wt = base[4:6].t() live in one storage entry: 8 floats apart, no copy.
  const auto& w = *value_named(g, "p_w").constant;
  const auto& wt = *value_named(g, "b_wt").constant;
  EXPECT_EQ(wt.bytes.data() - w.bytes.data(), 8 * 4);
  EXPECT_EQ(w.owner, wt.owner);
  // gappy (every other column) cannot be used in place: it is a contiguous copy.
  const auto& gappy = *value_named(g, "b_gappy").constant;
  EXPECT_NE(gappy.owner, w.owner);
  EXPECT_EQ(value_named(g, "b_gappy").spec.dim_order, (std::vector<uint8_t>{0, 1}));
}

TEST(Pt2Frontend, DefaultsAreFilledFromTheSchema) {
  const Graph mlp = load("mlp");
  const Node& addmm = node_named(mlp, "addmm");
  ASSERT_EQ(addmm.args.size(), 5u);  // export wrote 3; beta and alpha come from the schema
  EXPECT_EQ(addmm.arg("beta"), Argument(ir::Scalar{int64_t{1}}));
  EXPECT_EQ(addmm.arg("alpha"), Argument(ir::Scalar{int64_t{1}}));
  EXPECT_EQ(addmm.arg("mat1"), Argument(ir::TensorRef{*mlp.find_value("x")}));

  const Graph conv = load("convnet");
  for (ir::NodeId id : conv.nodes()) {
    const Node& n = conv.node(id);
    if (n.op.name == "max_pool2d_with_indices") {
      EXPECT_EQ(n.arg("padding"), Argument(std::vector<int64_t>{0, 0}));
      EXPECT_EQ(n.arg("dilation"), Argument(std::vector<int64_t>{1, 1}));
      EXPECT_EQ(n.arg("ceil_mode"), Argument(false));
      EXPECT_EQ(n.arg("stride"), Argument(std::vector<int64_t>{2, 2}));  // given
    }
    if (n.op.str() == "aten::mean.dim") {
      EXPECT_EQ(n.arg("keepdim"), Argument(false));
      EXPECT_TRUE(n.arg("dtype").is_none());
    }
    if (n.op.name == "hardtanh") EXPECT_EQ(n.arg("max_val"), Argument(ir::Scalar{int64_t{6}}));
  }

  const Graph transformer = load("transformer");
  bool saw_gelu = false;
  for (ir::NodeId id : transformer.nodes()) {
    const Node& n = transformer.node(id);
    EXPECT_EQ(n.args.size(), n.schema->args.size()) << n.describe();
    if (n.op.name == "gelu") {
      saw_gelu = true;
      EXPECT_EQ(n.arg("approximate"), Argument(std::string("tanh")));
    }
  }
  EXPECT_TRUE(saw_gelu);
}

TEST(Pt2Frontend, DebugHandlesCarryModulePathsAndSourceLines) {
  const Graph mlp = load("mlp");
  const Node& permute = mlp.node(mlp.nodes()[0]);
  EXPECT_EQ(permute.debug.module_path, "fc1");
  EXPECT_EQ(permute.debug.source, source_line("mlp.fc1"));
  const Node& relu = node_named(mlp, "relu");
  EXPECT_EQ(relu.debug.module_path, "");
  EXPECT_EQ(relu.debug.source, source_line("mlp.fc2"));
  EXPECT_NE(relu.describe().find("relu"), std::string::npos);

  const Graph transformer = load("transformer");
  size_t in_second_attention = 0;
  for (ir::NodeId id : transformer.nodes()) {
    const Node& n = transformer.node(id);
    if (n.debug.module_path != "layers.1.attn") continue;
    ++in_second_attention;
    // The innermost frame outside torch is the call in Block.forward, not torch's MHA code.
    EXPECT_EQ(n.debug.source, source_line("block.attn")) << n.describe();
  }
  EXPECT_GT(in_second_attention, 10u);

  const Graph conv = load("convnet");
  bool saw_bn = false;
  for (ir::NodeId id : conv.nodes()) {
    const Node& n = conv.node(id);
    if (n.op.name != "_native_batch_norm_legit_no_training") continue;
    saw_bn = true;
    EXPECT_EQ(n.debug.module_path, "bn");
    EXPECT_EQ(n.debug.location(), "bn @ " + source_line("convnet.bn"));
  }
  EXPECT_TRUE(saw_bn);
}

TEST(Pt2Frontend, PythonScalarsInTensorPositionsBecomeConstants) {
  const Graph g = load("constants");
  const Node& mul = node_named(g, "mul");
  const ir::Value& three = g.value(mul.arg("other").tensor());
  ASSERT_TRUE(three.is_constant());
  EXPECT_EQ(three.constant->kind, ir::ConstantKind::Folded);
  // x * 3 with a float x: the int literal is the float torch promotes it to (the kernel then
  // sees two float operands, not the mixed-dtype path an int64 0-d tensor took).
  EXPECT_EQ(three.spec, ir::TensorSpec::contiguous(ir::ScalarType::Float, {}));
  float value = 0;
  std::memcpy(&value, three.constant->bytes.data(), sizeof(value));
  EXPECT_EQ(value, 3.0f);
}

TEST(Pt2Frontend, BufferMutationsAreRecorded) {
  const Graph g = load("constants");
  ASSERT_EQ(g.buffer_mutations().size(), 1u);
  const ir::BufferMutation& m = g.buffer_mutations()[0];
  ASSERT_TRUE(g.value(m.buffer).is_state());  // a mutated buffer is state, not a constant
  EXPECT_EQ(g.value(m.buffer).initial->fqn, "steps");
  EXPECT_EQ(g.node(g.value(m.new_value).producer).op.str(), "aten::add.Tensor");
}

TEST(Pt2Frontend, QuantizeOpsKeepTheirArguments) {
  const Graph g = load("quantized");
  const Node& q = node_named(g, "quantize_per_tensor");
  EXPECT_EQ(q.op.str(), "quantized_decomposed::quantize_per_tensor.default");
  EXPECT_EQ(q.arg("scale"), Argument(0.05));
  EXPECT_EQ(q.arg("zero_point"), Argument(2));
  EXPECT_EQ(q.arg("dtype"), Argument(ir::ScalarType::Char));
  EXPECT_EQ(g.value(q.outputs[0]).spec.dtype, ir::ScalarType::Char);
  const Node& dq = node_named(g, "dequantize_per_channel");
  EXPECT_TRUE(dq.arg("out_dtype").is_none());  // default filled
  EXPECT_EQ(dq.arg("axis"), Argument(0));
  EXPECT_EQ(g.value(dq.arg("input").tensor()).constant->fqn, "weight");
  ASSERT_NE(q.schema->out_variant, nullptr);
  EXPECT_EQ(q.schema->out_variant->op.str(), "quantized_decomposed::quantize_per_tensor.out");
}

TEST(Pt2Frontend, PrintsTheGraph) {
  const std::string text = load("mlp").to_string();
  EXPECT_NE(text.find("graph(%x: f32[2, 4]) {"), std::string::npos) << text;
  EXPECT_NE(text.find("%p_fc1_weight: f32[8, 4] = parameter \"fc1.weight\" (128 bytes)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("aten::addmm.default(self=%p_fc1_bias, mat1=%x, mat2=%permute, beta=1, "
                      "alpha=1)  # fc1 @ " +
                      source_line("mlp.fc1")),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  return (%addmm_1)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace pteron::compiler::frontend
