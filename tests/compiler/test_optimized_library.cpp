// check_kernels_available with kernel libraries: an op only the "optimized" library has
// (pteron::sdpa) is accepted when "optimized" is selected and reported, with its node, when
// only "portable" is. Links both libraries, as the compiler process does.
#include <gtest/gtest.h>

#include <string>

#include "compiler/compile_error.h"
#include "compiler/passes/fuse_attention.h"
#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

using ir::NewValue;
using ir::TensorRef;
using ir::ValueId;

ir::TensorSpec f32(std::vector<int64_t> sizes) {
  return ir::TensorSpec::contiguous(ScalarType::Float, std::move(sizes));
}

ir::Graph attention_graph() {
  ir::Graph g;
  const ValueId q = g.add_input("q", f32({2, 3, 4}));
  const ValueId kt = g.add_input("k_t", f32({2, 4, 5}));
  const ValueId v = g.add_input("v", f32({2, 5, 4}));
  const ir::NodeId n =
      g.add_node(sdpa_schema(),
                 {TensorRef{q}, TensorRef{kt}, TensorRef{v}, ir::None{}, 0.5, int64_t{2}, false},
                 {NewValue{"attn", f32({2, 3, 4})}});
  g.set_outputs({g.node(n).outputs[0]});
  return g;
}

TEST(OptimizedLibrary, SdpaNeedsOptimizedSelected) {
  const ir::Graph g = attention_graph();
  EXPECT_NO_THROW(check_kernels_available(g, {}, {"optimized", "portable"}));
  try {
    check_kernels_available(g, {}, {"portable"});
    FAIL() << "pteron::sdpa.out accepted for portable";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("pteron::sdpa.out"), std::string::npos) << what;
    EXPECT_NE(what.find("attn"), std::string::npos) << what;
    EXPECT_NE(what.find("portable"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace pteron::compiler
