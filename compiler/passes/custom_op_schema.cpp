#include "compiler/passes/custom_op_schema.h"

namespace pteron::compiler {
namespace {

ir::ArgSchema arg(const char* name, const char* type, bool out = false) {
  ir::ArgSchema a;
  a.name = name;
  a.type = ir::ArgType::parse(type);
  if (out) {
    a.alias = "a!";
    a.kwarg_only = true;
  }
  return a;
}

}  // namespace

const ir::OpSchema& register_single_output_op(
    const std::string& name, const std::vector<std::pair<const char*, const char*>>& args) {
  std::vector<ir::ArgSchema> schema_args;
  std::string signature;
  for (const auto& [arg_name, type] : args) {
    schema_args.push_back(arg(arg_name, type));
    signature += (signature.empty() ? "" : ", ") + std::string(type) + " " + arg_name;
  }
  ir::OpSchemaRegistry& registry = ir::OpSchemaRegistry::global();
  ir::OpSchema out;
  out.op = ir::OpRef::parse(name + ".out");
  out.text = name + ".out(" + signature + ", *, Tensor(a!) out) -> Tensor(a!)";
  out.args = schema_args;
  out.args.push_back(arg("out", "Tensor", /*out=*/true));
  out.returns.push_back({"", ir::ArgType::parse("Tensor"), "a!"});
  out.is_out_variant = true;
  registry.add(out);
  ir::OpSchema functional;
  functional.op = ir::OpRef::parse(name + ".default");
  functional.text = name + "(" + signature + ") -> Tensor";
  functional.args = schema_args;
  functional.returns.push_back({"", ir::ArgType::parse("Tensor"), ""});
  return registry.add(functional, name + ".out");
}

}  // namespace pteron::compiler
