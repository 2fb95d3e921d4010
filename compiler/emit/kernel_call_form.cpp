#include "compiler/emit/kernel_call_form.h"

#include <map>

#include "compiler/compile_error.h"

namespace pteron::compiler {

const ir::OpSchema* kernel_schema_for(const ir::Node& node) {
  const ir::OpSchema* s = node.schema;
  if (s == nullptr) return nullptr;
  if (s->is_out_variant) return s;
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
      throw CompileError(node.describe() + ": out-variant " + form.schema->op.str() + " needs argument '" +
                         a.name + "' the node does not have");
    }
  }
  for (const ir::ReturnSchema& r : form.schema->returns) {
    auto it = out_by_alias.find(r.alias);
    if (it != out_by_alias.end() && !r.type.is_list) form.returns.push_back(it->second);
  }
  return form;
}

}  // namespace pteron::compiler
