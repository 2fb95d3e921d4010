// A program with delegated regions runs end to end: a test partitioner claims relu nodes, the
// emitter writes DelegateCalls with payload segments, and the runtime routes them to a test
// backend, while the rest runs on portable kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "compiler/compile.h"
#include "runtime/backend/backend.h"
#include "runtime/host/host_method.h"
#include "runtime/host/trace_files.h"
#include "runtime/trace/event_tracer.h"
#include "schema/etdump_generated.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {6}); }

// Claims relu; its payload is the text "relu" (checked by the backend at init).
class ReluPartitioner : public Partitioner {
 public:
  std::string name() const override { return "test-relu"; }
  std::string backend_id() const override { return "TestReluBackend"; }
  SupportDecision supports(const ir::Graph&, const ir::Node& node,
                           const PartitionContext&) const override {
    return node.op.name == "relu" ? SupportDecision::yes() : SupportDecision::no("only relu");
  }
  LoweredRegion lower(const ir::Graph&, const Region& region,
                      const PartitionContext&) const override {
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
  Result<DelegateHandle*> init(BackendInitContext&, Span<const uint8_t> payload,
                               Span<const CompileSpecView>) override {
    if (payload.size() != 4 || std::memcmp(payload.data(), "relu", 4) != 0) {
      return fail(Error::InvalidProgram, "TestReluBackend: bad payload");
    }
    ++inits;
    return static_cast<DelegateHandle*>(this);
  }
  Error execute(BackendExecuteContext& ctx, DelegateHandle*, Span<EValue*> args) override {
    // Reports its one node to the event tracer, as a backend with per-node timing does.
    const int32_t event = ctx.observer ? ctx.observer->begin_delegate_event("relu", 7) : -1;
    if (ctx.observer) ctx.observer->end_delegate_event(event);
    const Tensor& in = *args[0]->tensor;
    Tensor& out = *args[1]->tensor;
    for (int64_t i = 0; i < in.numel(); ++i)
      out.data<float>()[i] = std::max(0.f, in.data<const float>()[i]);
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

// A clock that advances one tick per reading, so event times are exact.
uint64_t g_ticks = 0;
uint64_t fake_now() { return ++g_ticks; }

TEST(DelegateProgram, EventTracerSeesEveryInstructionAndTheBackendsOwnNodes) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", f32());
  for (const char* name : {"relu", "sigmoid", "relu"}) {
    ir::NodeId n = g.add_node(op(std::string("aten::") + name + ".default"), {ir::TensorRef{v}},
                              {ir::NewValue{std::string(name) + std::to_string(v), f32()}});
    v = g.node(n).outputs[0];
  }
  g.set_outputs({v});
  ReluPartitioner partitioner;
  CompileResult compiled = compile_graph(g, {"host", {}}, {&partitioner});
  auto program = HostProgram::from_bytes(compiled.program.data(), compiled.program.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  float x[6] = {-2, -1, 0, 1, 2, 3};
  int32_t sizes[1] = {6}, strides[1];
  uint8_t order[1] = {0};
  Tensor tx(ScalarType::Float, 1, sizes, order, strides, x);
  ASSERT_EQ(m.set_input(0, tx), Error::Ok);

  TraceEvent buffer[64];
  EventTracer tracer({buffer, 64}, TraceClock{&fake_now, 1000000000ull});
  tracer.attach(m);
  m.set_observer(&tracer);
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  m.set_observer(nullptr);

  // Per run: execute, delegate call (with its node inside), sigmoid kernel, delegate call (+ node).
  using K = TraceEvent::Kind;
  const K expected[] = {K::Execute, K::DelegateCall, K::DelegateNode,
                        K::Kernel,  K::DelegateCall, K::DelegateNode};
  Span<const TraceEvent> events = tracer.events();
  ASSERT_EQ(events.size(), 12u);
  EXPECT_EQ(tracer.dropped(), 0u);
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    EXPECT_EQ(e.kind, expected[i % 6]) << i;
    EXPECT_EQ(e.run, i / 6) << i;
    EXPECT_LT(e.start, e.end) << i;
    if (e.kind == K::DelegateNode) {
      EXPECT_STREQ(e.name, "relu");
      EXPECT_EQ(e.delegate_debug_id, 7);
      // Nested inside its delegate call, and attributed to it.
      EXPECT_EQ(e.instruction, events[i - 1].instruction);
      EXPECT_GT(e.start, events[i - 1].start);
      EXPECT_LT(e.end, events[i - 1].end);
    }
  }
  EXPECT_STREQ(events[3].name, "aten::sigmoid.out");
  EXPECT_EQ(events[3].instruction, 1);

  // ETDump: verifies, one RunData per run, names as ExecuTorch's Inspector expects.
  std::vector<uint8_t> dump = etdump_bytes(tracer);
  flatbuffers::Verifier verifier(dump.data(), dump.size());
  ASSERT_TRUE(etdump::VerifySizePrefixedETDumpBuffer(verifier));
  const etdump::ETDump* root = etdump::GetSizePrefixedETDump(dump.data());
  ASSERT_EQ(root->run_data()->size(), 2u);
  const auto* run0 = root->run_data()->Get(0)->events();
  ASSERT_EQ(run0->size(), 6u);
  EXPECT_EQ(run0->Get(0)->profile_event()->name()->str(), "Method::execute");
  EXPECT_EQ(run0->Get(1)->profile_event()->name()->str(), "DELEGATE_CALL");
  EXPECT_EQ(run0->Get(2)->profile_event()->delegate_debug_id_int(), 7);
  EXPECT_EQ(run0->Get(3)->profile_event()->name()->str(), "aten::sigmoid.out");

  // Chrome trace: complete events with durations, delegate calls named by backend id.
  nlohmann::json chrome = nlohmann::json::parse(chrome_trace_json(tracer));
  ASSERT_EQ(chrome["traceEvents"].size(), 12u);
  EXPECT_EQ(chrome["traceEvents"][1]["name"], "TestReluBackend");
  EXPECT_EQ(chrome["traceEvents"][1]["ph"], "X");

  // A full buffer drops events and counts them; execution is unaffected.
  TraceEvent small[3];
  EventTracer tiny({small, 3}, TraceClock{&fake_now, 1000000000ull});
  m.set_observer(&tiny);
  ASSERT_EQ(m.execute(), Error::Ok);
  m.set_observer(nullptr);
  EXPECT_EQ(tiny.events().size(), 3u);
  EXPECT_EQ(tiny.dropped(), 3u);
}

}  // namespace
}  // namespace pteron::compiler
