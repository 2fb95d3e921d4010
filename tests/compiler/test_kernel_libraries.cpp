// Kernel libraries as compile targets: `--backends <library>,...` chooses which libraries'
// kernels a program may call, runs the library's graph passes on what no delegate took, and the
// runtime picks kernels by library preference. Also the --backends entries themselves: backend
// options, older spellings (aliases), and the context partitioners are given.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "compiler/partition/registry.h"
#include "runtime/host/host_method.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

const ir::OpSchema& op(std::string_view name) { return *ir::OpSchemaRegistry::global().find(name); }
ir::TensorSpec f32() { return ir::TensorSpec::contiguous(ScalarType::Float, {4}); }

// A deliberately different tanh (2x) so a test can tell which library's kernel ran.
Error twice_kernel(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  for (int64_t i = 0; i < in.numel(); ++i) out.data<float>()[i] = 2 * in.data<const float>()[i];
  return Error::Ok;
}
const bool registered = [] {
  register_kernel("aten::tanh.out", twice_kernel, "test_lib", "TT");
  KernelLibrary lib{"twice", "test_lib", {}};
  lib.passes.emplace_back(
      "sigmoid-to-tanh",
      [](ir::Graph& g, const std::unordered_set<ir::NodeId>& delegated, const PartitionContext&) {
        int changed = 0;
        for (ir::NodeId n : g.nodes()) {
          if (delegated.count(n) || g.node(n).op.name != "sigmoid") continue;
          g.set_op(n, op("aten::tanh.default"), g.node(n).args);
          ++changed;
        }
        return changed;
      });
  return register_kernel_library(std::move(lib));
}();

// A backend with an option ("probe:mode=a|b") and an old spelling ("probe-b"). It claims
// nothing, and records the context its calls are given.
std::optional<PartitionContext> g_probe_context;
class ProbePartitioner : public Partitioner {
 public:
  using Partitioner::Partitioner;
  std::string name() const override { return "probe"; }
  std::string backend_id() const override { return "ProbeBackend"; }
  SupportDecision supports(const ir::Graph&, const ir::Node&,
                           const PartitionContext& context) const override {
    g_probe_context = context;
    const auto mode = options().find("mode");
    return SupportDecision::no("mode " + (mode == options().end() ? "a" : mode->second));
  }
  LoweredRegion lower(const ir::Graph&, const Region&, const PartitionContext&) const override {
    return {};
  }
};
const bool probe_registered =
    register_partitioner(
        "probe",
        [](const BackendOptions& options) { return std::make_unique<ProbePartitioner>(options); },
        {{"mode", {"a", "b"}, "which mode"}}) &&
    register_backend_alias("probe-b", "probe:mode=b");

std::string compile_error(const std::string& backend) {
  try {
    parse_backend_spec(backend);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "";
}

ir::Graph graph_of(std::initializer_list<const char*> chain) {
  ir::Graph g;
  ir::ValueId v = g.add_input("x", f32());
  int i = 0;
  for (const char* name : chain) {
    ir::NodeId n = g.add_node(op(std::string("aten::") + name + ".default"), {ir::TensorRef{v}},
                              {ir::NewValue{"v" + std::to_string(i++), f32()}});
    v = g.node(n).outputs[0];
  }
  g.set_outputs({v});
  return g;
}

std::vector<float> run(const std::vector<uint8_t>& bytes, std::string* first_kernel) {
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(program.ok()) << last_error_message();
  auto method = HostMethod::load(**program, "forward");
  EXPECT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  *first_kernel = m.instruction_name(0);
  float x[4] = {-1, 0, 0.5f, 2};
  int32_t sizes[1] = {4}, strides[1];
  uint8_t order[1] = {0};
  Tensor tx(ScalarType::Float, 1, sizes, order, strides, x);
  EXPECT_EQ(m.set_input(0, tx), Error::Ok);
  EXPECT_EQ(m.execute(), Error::Ok) << last_error_message();
  const float* y = m.output(0).tensor->data<const float>();
  return {y, y + 4};
}

TEST(KernelLibraries, SelectedLibraryRunsItsPassesAndItsKernelsArePreferred) {
  ASSERT_TRUE(registered);
  ir::Graph g = graph_of({"sigmoid"});
  CompileOptions options;
  options.backends = {"twice", "portable"};
  CompileResult compiled = compile_graph(g, options);
  bool pass_reported = false;
  for (const std::string& line : compiled.report.passes.lines) {
    pass_reported |= line.find("twice/sigmoid-to-tanh: 1 node(s)") != std::string::npos;
  }
  EXPECT_TRUE(pass_reported);

  std::string kernel;
  std::vector<float> y = run(compiled.program, &kernel);
  EXPECT_EQ(kernel, "aten::tanh.out");
  EXPECT_FLOAT_EQ(y[3], 4.f);  // test_lib's kernel, preferred over portable by default

  const char* portable_only[] = {"portable"};
  ASSERT_TRUE(set_kernel_libraries({portable_only, 1}));
  y = run(compiled.program, &kernel);
  set_kernel_libraries({});
  EXPECT_NEAR(y[3], std::tanh(2.f), 1e-6);
}

TEST(KernelLibraries, UnselectedLibraryLeavesTheGraphAlone) {
  ir::Graph g = graph_of({"sigmoid"});
  CompileOptions options;
  options.backends = {"portable"};
  CompileResult compiled = compile_graph(g, options);
  std::string kernel;
  std::vector<float> y = run(compiled.program, &kernel);
  EXPECT_EQ(kernel, "aten::sigmoid.out");
  EXPECT_NEAR(y[0], 1 / (1 + std::exp(1.f)), 1e-6);
}

TEST(KernelLibraries, OpsMissingFromTheSelectedLibrariesFailAtCompileTime) {
  ir::Graph g = graph_of({"sigmoid", "relu"});
  CompileOptions options;
  options.backends = {"twice"};  // test_lib has tanh only
  try {
    compile_graph(g, options);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(test_lib)"), std::string::npos) << what;
    EXPECT_NE(what.find("aten::relu.out"), std::string::npos) << what;
  }
}

TEST(KernelLibraries, UnknownBackendNamesListTheLibraries) {
  try {
    make_partitioners({"no-such-backend"});
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
}

TEST(BackendSpecs, OptionsFollowTheNameAndAreChecked) {
  ASSERT_TRUE(probe_registered);
  const BackendSpec spec = parse_backend_spec("probe:mode=b");
  EXPECT_EQ(spec.name, "probe");
  EXPECT_EQ(spec.options, (BackendOptions{{"mode", "b"}}));
  EXPECT_TRUE(spec.note.empty());
  EXPECT_EQ(compile_error("probe:speed=1"),
            "backend 'probe' has no option 'speed' (options: mode)");
  EXPECT_EQ(compile_error("probe:mode=c"), "backend option probe:mode takes a, b (got 'c')");
  EXPECT_EQ(compile_error("probe:mode=a:mode=b"), "backend option probe:mode is given twice");
  EXPECT_EQ(compile_error("twice:mode=a"),
            "kernel library 'twice' takes no options (got 'mode=a')");
  bool listed = false;
  for (const std::string& line : backend_option_help())
    listed |= line == "probe:mode=a|b: which mode";
  EXPECT_TRUE(listed);
}

TEST(BackendSpecs, AnOldSpellingStillWorksWithANote) {
  const BackendSpec spec = parse_backend_spec("probe-b");
  EXPECT_EQ(spec.name, "probe");
  EXPECT_EQ(spec.options, (BackendOptions{{"mode", "b"}}));
  EXPECT_EQ(spec.note, "backend 'probe-b' is now written 'probe:mode=b'");
  ir::Graph g = graph_of({"sigmoid"});
  CompileOptions options;
  options.backends = {"probe-b", "portable"};
  const CompileResult compiled = compile_graph(g, options);
  EXPECT_EQ(compiled.report.notes, std::vector<std::string>{spec.note});
  ASSERT_EQ(compiled.report.refusals.size(), 1u);
  // Reports name the partitioner with its options, as --backends writes it.
  EXPECT_NE(compiled.report.refusals[0].find("probe:mode=b: mode b"), std::string::npos)
      << compiled.report.refusals[0];
}

// Partitioners are told the target and the kernel libraries the rest runs on (a cost rule
// weighs them), by argument: the fallback plan's partitioners see the fallback's libraries.
TEST(BackendSpecs, PartitionersSeeTheCompilesTargetAndLibraries) {
  ir::Graph g = graph_of({"sigmoid"});
  CompileOptions options;
  options.backends = {"probe", "twice", "portable"};
  g_probe_context.reset();
  compile_graph(g, options);
  ASSERT_TRUE(g_probe_context.has_value());
  ASSERT_NE(g_probe_context->target, nullptr);
  EXPECT_EQ(g_probe_context->target->name, "host");
  EXPECT_EQ(g_probe_context->kernel_libraries, (std::vector<std::string>{"twice", "portable"}));

  ir::Graph g2 = graph_of({"sigmoid"});
  options.backends = {"portable"};
  options.fallback = {"probe", "portable"};
  g_probe_context.reset();
  compile_graph(g2, options);
  ASSERT_TRUE(g_probe_context.has_value());
  EXPECT_EQ(g_probe_context->kernel_libraries, std::vector<std::string>{"portable"});
}

}  // namespace
}  // namespace pteron::compiler
