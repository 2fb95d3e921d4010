// How a graph node becomes a kernel call: the out-variant schema it runs as and, for each of
// that schema's arguments, where the value comes from. Shared by the emitter and by constant
// folding (which runs the same kernel on the host), so both agree on argument order.
#pragma once

#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct KernelArgSlot {
  enum class Source { NodeArg, Default, Output, OutputList };
  Source source;
  const ir::Argument* value = nullptr;  // NodeArg and Default
  size_t output = 0;                    // Output: index into node.outputs
};

// ExecuTorch appends the returned value after the arguments: the out argument again for one
// return (or the out list for list-returning ops), a TensorList of all outputs for several.
enum class ReturnForm { None, RepeatArg, OutputTuple };

struct KernelCallForm {
  const ir::OpSchema* schema = nullptr;  // the out-variant
  std::vector<KernelArgSlot> args;       // schema order
  ReturnForm return_form = ReturnForm::None;
  size_t return_arg = 0;  // RepeatArg: position in args
};

// Throws CompileError naming the node when there is no out-variant form.
KernelCallForm kernel_call_form(const ir::Node& node);

// The out-variant schema a node runs as (through view_copy for views; an op returning nothing
// as itself); nullptr if none.
const ir::OpSchema* kernel_schema_for(const ir::Node& node);

}  // namespace pteron::compiler
