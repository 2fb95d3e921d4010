#include "compiler/ir/kernel_call_form.h"

#include <map>

#include "compiler/compile_error.h"

namespace pteron::compiler {

const ir::OpSchema* kernel_schema_for(const ir::Node& node) {
  const ir::OpSchema* s = node.schema;
  if (s == nullptr) return nullptr;
  if (s->is_out_variant) return s;
  // An op returning nothing (a run-time check) writes no output: it runs as itself.
  if (s->returns.empty()) return s;
  if (s->is_view && s->view_copy != nullptr) s = s->view_copy;
  return s->out_variant;
}

KernelCallForm kernel_call_form(const ir::Node& node) {
  KernelCallForm form;
  form.schema = kernel_schema_for(node);
  if (form.schema == nullptr) {
    throw CompileError(node.describe() + ": " + node.op.str() + " has no out-variant kernel form");
  }
  std::map<std::string, size_t> out_by_alias;
  size_t next_output = 0;
  for (const ir::ArgSchema& a : form.schema->args) {
    if (a.is_out) {
      if (a.type.is_list) {
        form.args.push_back({KernelArgSlot::Source::OutputList});
        next_output = node.outputs.size();
      } else {
        if (next_output >= node.outputs.size()) {
          throw CompileError(node.describe() + ": out-variant " + form.schema->op.str() +
                             " has more outputs than the node");
        }
        form.args.push_back({KernelArgSlot::Source::Output, nullptr, next_output++});
      }
      out_by_alias[a.alias] = form.args.size() - 1;
      continue;
    }
    const int index = node.schema->arg_index(a.name);
    if (index >= 0) {
      form.args.push_back({KernelArgSlot::Source::NodeArg, &node.args[static_cast<size_t>(index)]});
    } else if (a.default_value) {
      form.args.push_back({KernelArgSlot::Source::Default, &*a.default_value});
    } else {
      throw CompileError(node.describe() + ": out-variant " + form.schema->op.str() +
                         " needs argument '" + a.name + "' the node does not have");
    }
  }
  const auto& returns = form.schema->returns;
  if (returns.size() > 1) {
    form.return_form = ReturnForm::OutputTuple;
  } else if (returns.size() == 1) {
    auto it = out_by_alias.find(returns[0].alias);
    if (it != out_by_alias.end()) {
      form.return_form = ReturnForm::RepeatArg;
      form.return_arg = it->second;
    }
  } else {
    for (size_t i = 0; i < form.args.size(); ++i) {
      if (form.args[i].source == KernelArgSlot::Source::OutputList) {
        form.return_form = ReturnForm::RepeatArg;  // e.g. split_with_sizes_copy.out
        form.return_arg = i;
      }
    }
  }
  return form;
}

}  // namespace pteron::compiler
