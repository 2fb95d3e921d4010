// pteron debug's core on a real .pt2 (PTERON_PT2_FIXTURES, written by test_numerics_debug.py):
// a program that matches its model reports no mismatch; with a deliberately perturbed relu
// kernel preferred over the portable one, the first node beyond tolerance is that relu, with
// its source line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "compiler/compile.h"
#include "compiler/debug/numerics_debug.h"
#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "runtime/host/host_method.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

std::filesystem::path fixtures() {
  const char* dir = std::getenv("PTERON_PT2_FIXTURES");
  return dir ? dir : "";
}

// relu, off by 0.01 everywhere: a kernel bug a user would hunt for.
Error perturbed_relu(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  for (int64_t i = 0; i < in.numel(); ++i) {
    out.data<float>()[i] = std::max(0.f, in.data<const float>()[i]) + 0.01f;
  }
  return Error::Ok;
}

struct Compiled {
  std::vector<uint8_t> program;
  std::string graph_info;
};

Compiled compile_mlp() {
  CompileOptions options;
  options.backends = {"portable"};
  CompileResult r = compile_pt2((fixtures() / "mlp.pt2").string(), options);
  auto program = HostProgram::from_bytes(r.program.data(), r.program.size());
  EXPECT_TRUE(program.ok());
  std::optional<std::string> info = read_named_data((*program)->program(), kGraphInfoKey);
  EXPECT_TRUE(info.has_value());
  return {std::move(r.program), info.value_or("")};
}

CalibrationData mlp_input() {
  CalibrationInput x;
  x.shape = {1, 2, 4};
  std::vector<float> v(8);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  for (float& f : v) f = normal(rng);
  x.data.resize(v.size() * 4);
  std::memcpy(x.data.data(), v.data(), x.data.size());
  return {x};
}

TEST(NumericsDebug, FindsTheFirstNodeAPerturbedKernelComputes) {
  ASSERT_FALSE(fixtures().empty()) << "run through test_numerics_debug.py (PTERON_PT2_FIXTURES)";
  Compiled c = compile_mlp();
  const std::string pt2 = (fixtures() / "mlp.pt2").string();

  NumericsReport clean = debug_numerics(c.program, c.graph_info, pt2, mlp_input(), {});
  ASSERT_GE(clean.checks.size(), 3u);  // fc1, relu, fc2
  EXPECT_EQ(clean.first_beyond, -1);
  for (const IntermediateCheck& check : clean.checks)
    EXPECT_LE(check.max_abs_error, 1e-5) << check.node;

  ASSERT_TRUE(register_kernel("aten::relu.out", perturbed_relu, "perturbed", "TT"));
  NumericsReport bad = debug_numerics(c.program, c.graph_info, pt2, mlp_input(), {});
  ASSERT_GE(bad.first_beyond, 0);
  const IntermediateCheck& first = bad.checks[bad.first_beyond];
  EXPECT_NE(first.op.find("relu"), std::string::npos) << first.op;
  EXPECT_NEAR(first.max_abs_error, 0.01, 1e-4);
  EXPECT_NE(first.source.find("pt2_models.py"), std::string::npos) << first.source;
  // Everything before it still matched: the report points at the culprit, not its consumers.
  for (int i = 0; i < bad.first_beyond; ++i)
    EXPECT_TRUE(bad.checks[i].within) << bad.checks[i].node;
}

}  // namespace
}  // namespace pteron::compiler
