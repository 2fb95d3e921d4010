#include "compiler/passes/last_token_logits.h"

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"

namespace pteron::compiler {
namespace {

bool is_view(const ir::Node& n) {
  const std::string op = n.op.str();
  return op == ops::aten::view || op == ops::aten::alias;
}

// Every dim but the last two is 1: one sequence of tokens.
bool one_sequence(const ir::TensorSpec& s) {
  if (s.rank() < 2) return false;
  for (size_t d = 0; d + 2 < s.rank(); ++d)
    if (s.sizes[d] != 1) return false;
  return true;
}

ir::ValueId add(ir::Graph& g, ir::OpName op, std::vector<ir::Argument> args, ir::TensorSpec spec,
                const std::string& name, const ir::DebugHandle& debug) {
  const ir::OpSchema* schema = ir::OpSchemaRegistry::global().find(op);
  const ir::NodeId id = g.add_node(*schema, std::move(args),
                                   {ir::NewValue{g.unique_name(name), std::move(spec)}}, debug);
  return g.node(id).outputs[0];
}

}  // namespace

int last_token_logits(ir::Graph& g) {
  if (g.outputs().empty()) return 0;
  const ir::ValueId logits = g.outputs()[0];
  const ir::TensorSpec out = g.value(logits).spec;
  if (!one_sequence(out) || !g.value(logits).is_intermediate()) return 0;
  // Back through the views to the linear (each view read only on this path).
  ir::ValueId v = logits;
  for (;;) {
    const ir::Value& value = g.value(v);
    if (!value.is_intermediate()) return 0;
    const ir::Node& p = g.node(value.producer);
    if (p.is(ops::aten::linear)) break;
    if (!is_view(p) || !p.arg("self").is_tensor()) return 0;
    v = p.arg("self").tensor();
    if (g.value(v).users.size() != 1) return 0;
  }
  const ir::Node& linear = g.node(g.value(v).producer);
  if (!linear.arg("input").is_tensor()) return 0;
  const ir::ValueId x = linear.arg("input").tensor();
  const ir::TensorSpec& xs = g.value(x).spec;
  const ir::TensorSpec& ys = g.value(v).spec;
  // The token dim of x, of the linear's result and of the output hold the same tokens.
  const size_t xt = xs.rank() - 2, ot = out.rank() - 2;
  auto symbol = [](const ir::TensorSpec& s, size_t d) {
    const ir::SymExpr* e = s.sym_size(d);
    return e != nullptr ? e->str() : std::string();
  };
  if (!one_sequence(xs) || !one_sequence(ys) || xs.sizes[xt] != out.sizes[ot] ||
      symbol(xs, xt) != symbol(out, ot) || ys.sizes.back() != out.sizes.back() ||
      xs.dtype != ScalarType::Float) {
    return 0;
  }
  const ir::DebugHandle debug = linear.debug;
  std::vector<int64_t> row = xs.sizes;
  row[xt] = 1;
  const ir::ValueId last =
      add(g, ops::aten::slice_Tensor,
          {ir::TensorRef{x}, static_cast<int64_t>(xt), int64_t{-1}, int64_t{INT64_MAX}, int64_t{1}},
          ir::TensorSpec::contiguous(xs.dtype, row), "last_token", debug);
  std::vector<int64_t> y_row = row;
  y_row.back() = ys.sizes.back();
  const ir::ValueId y =
      add(g, ops::aten::linear, {ir::TensorRef{last}, linear.arg("weight"), linear.arg("bias")},
          ir::TensorSpec::contiguous(ys.dtype, y_row), "last_token_logits", debug);
  std::vector<int64_t> out_row = out.sizes;
  out_row[ot] = 1;
  const ir::ValueId result = out_row == y_row ? y
                                              : add(g, ops::aten::view, {ir::TensorRef{y}, out_row},
                                                    ir::TensorSpec::contiguous(out.dtype, out_row),
                                                    "last_token_view", debug);
  std::vector<ir::ValueId> outputs = g.outputs();
  outputs[0] = result;
  g.set_outputs(std::move(outputs));
  remove_dead_code(g);
  return 1;
}

}  // namespace pteron::compiler
