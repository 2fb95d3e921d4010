// Data movement on int8 values: permutes, pads and views, and moving dequantizes past views.
#include "compiler/passes/passes.h"
#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {

bool Lowering::permute(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
  const size_t rank = g_.value(x->q).spec.rank();
  if (rank > 4 || rank == 0) return keep("more than 4 dims");
  std::vector<int64_t> perm = n.arg("dims").get<std::vector<int64_t>>();
  for (int64_t& p : perm)
    if (p < 0) p += static_cast<int64_t>(rank);
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y = new_node("transpose", {TensorRef{x->q}, perm},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

bool Lowering::pad(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
  const auto& pads = n.arg("pad").get<std::vector<int64_t>>();
  const size_t rank = g_.value(x->q).spec.rank();
  if (rank > 4 || rank == 0 || pads.size() % 2 || pads.size() / 2 > rank)
    return keep("unsupported padding");
  std::vector<int64_t> pre(rank, 0), post(rank, 0);
  for (size_t i = 0; i < pads.size() / 2; ++i) {
    if (pads[2 * i] < 0 || pads[2 * i + 1] < 0) return keep("negative padding (cropping)");
    pre[rank - 1 - i] = pads[2 * i];
    post[rank - 1 - i] = pads[2 * i + 1];
  }
  const int64_t value = quantize_bound(n.arg("value").to_double(), x->p);
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const ValueId y = new_node("pad", {TensorRef{x->q}, pre, post, value},
                             int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

// A reshape between quantized ops moves int8 bytes: the portable view_copy takes the int8
// value directly and the Q/DQ pair around it goes.
bool Lowering::view(const Node& n) {
  auto x = dequantized(g_, n.arg("self").tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, false);
  if (!out) return keep("output is not quantized per tensor to int8");
  if (!same_qparams(x->p, out->p)) return keep("input and output qparams differ");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  const NodeId id = g_.add_node(*n.schema, {TensorRef{x->q}, n.arg("size")},
                                {NewValue{g_.unique_name(g_.value(q_out).name + "_int8"),
                                          int8_spec(g_.value(q_out).spec.sizes)}},
                                n.debug, out->quant);
  finish(*out, g_.node(id).outputs[0]);
  return true;
}

// view(dequantize(q)) == dequantize(view(q)) per tensor: quantizers leave reshapes (flatten
// before a linear layer) without their own Q/DQ, so the view moves onto the int8 value and
// the dequantize follows it, where the next op's pattern finds it.
int Lowering::move_dequantize_past_views() {
  int moved = 0;
  for (NodeId id : std::vector<NodeId>(g_.nodes())) {
    if (!g_.has_node(id) || delegated_.count(id) || near_delegated(id)) continue;
    if (g_.is_dynamic_node(id)) continue;
    const Node n = g_.node(id);
    if (!is_view(n)) continue;
    auto x = dequantized(g_, n.arg("self").tensor());
    if (!x) continue;
    const ir::Node dq = g_.node(g_.value(n.arg("self").tensor()).producer);
    const ValueId result = n.outputs[0];
    const std::vector<int64_t> sizes = g_.value(result).spec.sizes;
    const NodeId view = g_.add_node(
        n.schema ? *n.schema : *ir::OpSchemaRegistry::global().find(ops::aten::view_copy),
        {TensorRef{x->q}, n.arg("size")},
        {NewValue{g_.unique_name(g_.value(result).name + "_int8"), int8_spec(sizes)}}, n.debug, id);
    std::vector<Argument> dq_args = dq.args;
    dq_args[0] = TensorRef{g_.node(view).outputs[0]};
    const NodeId new_dq = g_.add_node(*dq.schema, std::move(dq_args),
                                      {NewValue{g_.unique_name(g_.value(result).name + "_dq"),
                                                TensorSpec::contiguous(ScalarType::Float, sizes)}},
                                      n.debug, id);
    g_.replace_all_uses(result, g_.node(new_dq).outputs[0]);
    ++moved;
  }
  compiler::remove_dead_code(g_);
  return moved;
}

}  // namespace pteron::cortex_m::aot::detail
