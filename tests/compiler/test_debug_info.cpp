#include <gtest/gtest.h>

#include "compiler/frontend/debug_info.h"

namespace pteron::compiler::frontend {
namespace {

TEST(ModulePath, InnermostModule) {
  EXPECT_EQ(module_path_from_stack("L__self__,,__main__.MLP;L__self__fc1,fc1,torch.nn.Linear"),
            "fc1");
  EXPECT_EQ(
      module_path_from_stack("L__self__,,m.Model;L__self__layers.0,layers.0,m.Block;"
                             "L__self___layers_0_attn,layers.0.attn,torch.nn.MultiheadAttention"),
      "layers.0.attn");
  EXPECT_EQ(module_path_from_stack("L__self__,,__main__.MLP"), "");
  EXPECT_EQ(module_path_from_stack(""), "");
  // Commas inside brackets belong to the field (torch splits the same way).
  EXPECT_EQ(module_path_from_stack("k,blocks[0,1],Block"), "blocks[0,1]");
  EXPECT_EQ(module_path_from_stack("_empty_nn_module_stack_from_metadata_hook,"
                                   "_empty_nn_module_stack_from_metadata_hook,x"),
            "");
}

TEST(SourceLocation, InnermostUserFrame) {
  const std::string trace =
      "File \"/home/u/model.py\", line 5, in forward\n    return self.fc1(x)\n"
      "  File \"/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py\", line 134, in "
      "forward\n    return F.linear(input, self.weight, self.bias)";
  EXPECT_EQ(source_from_stack_trace(trace), "/home/u/model.py:5");
  const std::string nested =
      "File \"/a/model.py\", line 10, in forward\n    y = self.block(x)\n"
      "  File \"/a/blocks.py\", line 42, in forward\n    return x + 1";
  EXPECT_EQ(source_from_stack_trace(nested), "/a/blocks.py:42");
  // Only torch frames: the innermost one is still better than nothing.
  EXPECT_EQ(source_from_stack_trace(
                "File \"torch/fx/passes/runtime_assert.py\", line 24, in insert_asserts"),
            "torch/fx/passes/runtime_assert.py:24");
  EXPECT_EQ(source_from_stack_trace(""), "");
  EXPECT_EQ(source_from_stack_trace("File \"broken"), "");
}

}  // namespace
}  // namespace pteron::compiler::frontend
