// A program with delegated regions runs end to end: a test partitioner claims relu nodes, the
// emitter writes DelegateCalls with payload segments, and the runtime routes them to a test
// backend, while the rest runs on portable kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compiler/compile.h"
#include "runtime/backend/backend.h"
#include "runtime/host/host_method.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {6}); }

// Claims relu; its payload is the text "relu" (checked by the backend at init).
class ReluPartitioner : public Partitioner {
 public:
  std::string name() const override { return "test-relu"; }
  std::string backend_id() const override { return "TestReluBackend"; }
  SupportDecision supports(const ir::Graph&, const ir::Node& node) const override {
    return node.op.name == "relu" ? SupportDecision::yes() : SupportDecision::no("only relu");
  }
  LoweredRegion lower(const ir::Graph&, const Region& region) const override {
    LoweredRegion out;
    out.ok = region.inputs.size() == 1 && region.outputs.size() == 1;
    out.reason = "regions must have one input and one output";
    out.payload = {'r', 'e', 'l', 'u'};
    return out;
  }
};

// Runtime side: applies relu once per claimed node (a chain of relus is still relu).
class ReluBackend : public BackendInterface {
 public:
  bool is_available() const override { return true; }
  Result<DelegateHandle*> init(BackendInitContext&, Span<const uint8_t> payload, Span<const CompileSpecView>) override {
    if (payload.size() != 4 || std::memcmp(payload.data(), "relu", 4) != 0) {
      return fail(Error::InvalidProgram, "TestReluBackend: bad payload");
    }
    ++inits;
    return static_cast<DelegateHandle*>(this);
  }
  Error execute(BackendExecuteContext&, DelegateHandle*, Span<EValue*> args) override {
    const Tensor& in = *args[0]->tensor;
    Tensor& out = *args[1]->tensor;
    for (int64_t i = 0; i < in.numel(); ++i) out.data<float>()[i] = std::max(0.f, in.data<const float>()[i]);
    ++calls;
    return Error::Ok;
  }
  int inits = 0, calls = 0;
};
ReluBackend g_backend;
PTERON_REGISTER_BACKEND("TestReluBackend", g_backend);

TEST(DelegateProgram, RegionsRunOnTheirBackendAndTheRestOnKernels) {
  // x -> relu -> relu -> sigmoid -> relu -> out : two relu regions around a portable sigmoid
  ir::Graph g;
  ir::ValueId v = g.add_input("x", f32());
  const char* chain[] = {"relu", "relu", "sigmoid", "relu"};
  int i = 0;
  for (const char* name : chain) {
    ir::NodeId n = g.add_node(op(std::string("aten::") + name + ".default"), {ir::TensorRef{v}},
                              {ir::NewValue{"v" + std::to_string(i++), f32()}});
    v = g.node(n).outputs[0];
  }
  g.set_outputs({v});
  ReluPartitioner partitioner;
  CompileResult compiled = compile_graph(g, {"host", {}}, {&partitioner});
  ASSERT_EQ(compiled.report.regions.size(), 2u);
  EXPECT_EQ(compiled.report.regions[0].nodes, 2u);
  EXPECT_EQ(compiled.report.emit.delegate_calls, 2u);
  ASSERT_EQ(compiled.report.refusals.size(), 1u);
  EXPECT_NE(compiled.report.refusals[0].find("test-relu: only relu"), std::string::npos);

  auto program = HostProgram::from_bytes(compiled.program.data(), compiled.program.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  EXPECT_EQ(m.num_instructions(), 3u);
  EXPECT_TRUE(m.instruction_is_delegate(0));
  EXPECT_STREQ(m.instruction_name(1), "aten::sigmoid.out");
  float x[6] = {-2, -1, 0, 1, 2, 3};
  int32_t sizes[1] = {6}, strides[1];
  uint8_t order[1] = {0};
  Tensor tx(ScalarType::Float, 1, sizes, order, strides, x);
  ASSERT_EQ(m.set_input(0, tx), Error::Ok);
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  EXPECT_EQ(g_backend.calls, 2);
  const float* y = m.output(0).tensor->data<const float>();
  for (int k = 0; k < 6; ++k) {
    const float expected = 1.f / (1.f + std::exp(-std::max(0.f, x[k])));
    EXPECT_NEAR(y[k], expected, 1e-6) << k;
  }
}

}  // namespace
}  // namespace pteron::compiler
