// MethodEmitter (method_emitter.h): control-flow nodes (pteron::cond, while_loop, scan) as
// ExecuTorch's JumpFalse instructions around their subgraphs' instructions, inlined.
#include "compiler/compile_error.h"
#include "compiler/emit/method_emitter.h"

namespace pteron::compiler::detail {

const std::vector<MethodToEmit>& MethodEmitter::subgraphs(const ir::Node& node, size_t count,
                                                          size_t inputs) const {
  for (const ControlFlowToEmit& x : m_.control_flow) {
    if (x.node != node.id) continue;
    bool fits = x.graphs.size() == count;
    for (const MethodToEmit& g : x.graphs) fits = fits && g.graph->inputs().size() == inputs;
    if (!fits) does_not_fit(node);
    return x.graphs;
  }
  throw CompileError("internal: " + node.describe() + " has no compiled subgraphs");
}

void MethodEmitter::does_not_fit(const ir::Node& node) const {
  throw CompileError("internal: " + node.describe() + "'s subgraph does not fit its node");
}

std::unique_ptr<MethodEmitter> MethodEmitter::inline_graph(
    const MethodToEmit& sub, const std::vector<int32_t>& inputs,
    std::vector<Offset<fb::Instruction>>& out) {
  auto e = std::unique_ptr<MethodEmitter>(
      new MethodEmitter(b_, sub, constants_, mutables_, first_segment_, t_));
  for (size_t i = 0; i < inputs.size(); ++i) e->tensor_index_[sub.graph->inputs()[i]] = inputs[i];
  e->emit_instructions(out);
  return e;
}

std::vector<int32_t> MethodEmitter::tensor_values(const std::vector<ir::ValueId>& ids) {
  std::vector<int32_t> out;
  for (ir::ValueId v : ids) {
    if (v == ir::kNoValue) throw CompileError("internal: a control-flow value is missing");
    out.push_back(tensor_value(v));
  }
  return out;
}

void MethodEmitter::cond(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out) {
  const std::vector<int32_t> operands = tensor_values(node.args[1].get<ir::TensorList>().ids);
  const std::vector<MethodToEmit>& branches = subgraphs(node, 2, operands.size());
  const int32_t pred = tensor_value(node.args[0].tensor());
  const std::vector<int32_t> outputs = tensor_values(node.outputs);
  for (const MethodToEmit& b : branches) {
    if (b.graph->outputs().size() != outputs.size()) does_not_fit(node);
  }
  for (size_t k = 0; k < 2; ++k) {
    const size_t at = out.size();
    out.push_back(0);  // its JumpFalse, written once the destination is known
    auto e = inline_graph(branches[k], operands, out);
    for (size_t i = 0; i < outputs.size(); ++i)
      out.push_back(copy_call(e->tensor_value(branches[k].graph->outputs()[i]), outputs[i]));
    // After the true branch: past the false branch's instructions (the next JumpFalse).
    out[at] =
        k == 0 ? jump_false(pred, out.size() + 1) : jump_false(literal_bool(false), out.size());
  }
}

void MethodEmitter::while_loop(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out) {
  const std::vector<int32_t> carried = tensor_values(node.args[0].get<ir::TensorList>().ids);
  const std::vector<int32_t> additional = tensor_values(node.args[1].get<ir::TensorList>().ids);
  const std::vector<int32_t> state = tensor_values(node.outputs);
  std::vector<int32_t> inputs = state;
  inputs.insert(inputs.end(), additional.begin(), additional.end());
  const std::vector<MethodToEmit>& graphs = subgraphs(node, 2, inputs.size());
  if (carried.size() != state.size() || graphs[0].graph->outputs().size() != 1 ||
      graphs[1].graph->outputs().size() != state.size())
    does_not_fit(node);
  for (size_t i = 0; i < state.size(); ++i) out.push_back(copy_call(carried[i], state[i]));
  const size_t loop = out.size();
  auto cond = inline_graph(graphs[0], inputs, out);
  const int32_t pred = cond->tensor_value(graphs[0].graph->outputs()[0]);
  const size_t exit = out.size();
  out.push_back(0);  // JumpFalse(pred) past the loop, written once its end is known
  auto body = inline_graph(graphs[1], inputs, out);
  // A subgraph's outputs have memory of their own (no pass makes one alias an input), so the
  // copies cannot overwrite a result still to be copied.
  for (size_t i = 0; i < state.size(); ++i)
    out.push_back(copy_call(body->tensor_value(graphs[1].graph->outputs()[i]), state[i]));
  out.push_back(jump_false(literal_bool(false), loop));
  out[exit] = jump_false(pred, out.size());
}

void MethodEmitter::scan(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out) {
  const std::vector<int32_t> init = tensor_values(node.args[0].get<ir::TensorList>().ids);
  const std::vector<ir::ValueId>& xs_ids = node.args[1].get<ir::TensorList>().ids;
  const std::vector<int32_t> xs = tensor_values(xs_ids);
  const std::vector<int32_t> additional = tensor_values(node.args[2].get<ir::TensorList>().ids);
  if (xs.empty() || node.outputs.size() < init.size() + xs.size()) does_not_fit(node);
  for (size_t k = init.size(); k + xs.size() < node.outputs.size(); ++k)
    resized_.insert(node.outputs[k]);
  const std::vector<int32_t> outputs = tensor_values(node.outputs);
  const size_t stacked = outputs.size() - init.size() - xs.size();
  const std::vector<int32_t> carry(outputs.begin(), outputs.begin() + init.size());
  const std::vector<int32_t> rows(outputs.end() - xs.size(), outputs.end());
  std::vector<int32_t> inputs = carry;
  inputs.insert(inputs.end(), rows.begin(), rows.end());
  inputs.insert(inputs.end(), additional.begin(), additional.end());
  const MethodToEmit& step = subgraphs(node, 1, inputs.size())[0];
  if (step.graph->outputs().size() != init.size() + stacked) does_not_fit(node);
  const int32_t count = argument(node.args.at(4), node, "rows");  // a literal, or read per call
  for (size_t i = 0; i < init.size(); ++i) out.push_back(copy_call(init[i], carry[i]));
  const int32_t index = add_int(0);  // written by the loop: never a shared literal
  const int32_t done = add(fb::KernelTypes::Bool, fb::CreateBool(b_, false).Union());
  out.push_back(prim_call("executorch_prim::mul", index, literal_int(0), index));  // 0 at each call
  const size_t loop = out.size();
  for (size_t j = 0; j < xs.size(); ++j) {
    const std::vector<int32_t> args = {xs[j], literal_int(0), index, rows[j], rows[j]};
    out.push_back(call("aten::select_copy", "int_out", args));
  }
  auto body = inline_graph(step, inputs, out);
  for (size_t i = 0; i < init.size(); ++i)
    out.push_back(copy_call(body->tensor_value(step.graph->outputs()[i]), carry[i]));
  for (size_t k = 0; k < stacked; ++k) {
    const int32_t result = body->tensor_value(step.graph->outputs()[init.size() + k]);
    const std::vector<int32_t> args = {outputs[init.size() + k], result, index};
    out.push_back(call("executorch_prim::et_copy_index", "tensor", args));
  }
  out.push_back(prim_call("executorch_prim::add", index, literal_int(1), index));
  out.push_back(prim_call("executorch_prim::ge", index, count, done));
  out.push_back(jump_false(done, loop));
}

}  // namespace pteron::compiler::detail
