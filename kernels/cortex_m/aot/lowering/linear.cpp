// Linear layers (linear, and core ATen's addmm/mm of a transposed weight) onto
// quantized_linear_packed, or quantized_linear when the packed form does not apply.
#include <algorithm>

#include "kernels/cortex_m/aot/lowering/lowering.h"
#include "kernels/cortex_m/util/linear_packed.h"

namespace pteron::cortex_m::aot::detail {

namespace {

// quantized_linear_packed's constants (util/linear_packed.h) for symmetric weights [N, K]:
// the weights interleaved four output rows at a time and zero-padded, and per group of four
// channels the kernel sums (bias + input_offset * sum_k w[n][k], so the kernel adds no offset
// term), multipliers and the shift split into its left and right parts. Nothing when a kernel
// sum does not fit int32 (quantized_linear then computes the offset terms at run time).
std::optional<std::pair<std::vector<int8_t>, std::vector<int32_t>>> packed_linear(
    const QuantWeight& w, const std::vector<int32_t>& bias, int64_t input_offset,
    const std::pair<std::vector<int32_t>, std::vector<int32_t>>& rq) {
  const int64_t n = w.sizes[0], k = w.sizes[1];
  const int64_t groups = linear_groups(n), chunks = linear_chunks(k);
  std::vector<int8_t> weights(static_cast<size_t>(groups * chunks * kLinearGroup * kLinearChunk));
  std::vector<int32_t> quant(static_cast<size_t>(groups * kLinearQuantFields * kLinearGroup));
  for (int64_t o = 0; o < n; ++o) {
    int64_t sum = bias.empty() ? 0 : bias[static_cast<size_t>(o)];
    for (int64_t i = 0; i < k; ++i) {
      const int8_t v = w.data[static_cast<size_t>(o * k + i)];
      weights[static_cast<size_t>(linear_packed_index(o, i, chunks))] = v;
      sum += input_offset * v;
    }
    if (sum < INT32_MIN || sum > INT32_MAX) return {};
    const int32_t shift = rq.second[static_cast<size_t>(o)];
    quant[static_cast<size_t>(linear_quant_index(o, kLinearKernelSum))] = static_cast<int32_t>(sum);
    quant[static_cast<size_t>(linear_quant_index(o, kLinearMultiplier))] =
        rq.first[static_cast<size_t>(o)];
    quant[static_cast<size_t>(linear_quant_index(o, kLinearLeftShift))] = std::max(shift, 0);
    quant[static_cast<size_t>(linear_quant_index(o, kLinearRightShift))] = std::min(shift, 0);
  }
  return std::make_pair(std::move(weights), std::move(quant));
}

}  // namespace

// Core ATen's linear: addmm(bias, x, permute(W, [1, 0])) or mm(x, permute(W, [1, 0])).
bool Lowering::matmul(const Node& n) {
  const bool addmm = n.op.name == "addmm";
  if (addmm && (n.arg("beta").to_double() != 1.0 || n.arg("alpha").to_double() != 1.0))
    return false;
  const ir::Value& wt = g_.value(n.arg("mat2").tensor());
  if (!wt.is_intermediate()) return false;
  const Node& perm = g_.node(wt.producer);
  const std::string perm_op = perm.op.str();
  if (perm_op != ops::aten::permute && perm_op != ops::aten::permute_copy) return false;
  const auto& dims = perm.arg("dims").get<std::vector<int64_t>>();
  if (dims.size() != 2 || (dims[0] != 1 && dims[0] != -1)) return false;
  const Argument bias = addmm ? n.arg("self") : Argument(ir::None{});
  if (addmm && g_.value(n.arg("self").tensor()).spec.rank() != 1) return keep("bias is not 1-D");
  return linear(n, n.arg(addmm ? "mat1" : "self"), perm.arg("self").tensor(), bias);
}

bool Lowering::linear(const Node& n, const Argument& input, ValueId weight,
                      const Argument& bias_arg_in) {
  auto x = dequantized(g_, input.tensor());
  if (!x) return false;
  auto out = quantized_output(g_, n, true);
  if (!out) return keep("output is not quantized per tensor to int8");
  auto w = quantized_weight(g_, weight);
  if (!w || w->sizes.size() != 2) return keep("weight is not a dequantized int8 constant");
  auto bias = quantized_bias(g_, bias_arg_in, x->p.scale, *w);
  if (!bias) return keep("bias is not a float or int32 constant");
  auto rq = channel_requant(x->p.scale, w->scales, out->p.scale);
  if (!rq) return keep("requantisation scale out of range");
  const ValueId q_out = g_.node(out->quant).outputs[0];
  if (w->zp == 0) {
    if (auto packed = packed_linear(*w, *bias, -x->p.zp, *rq)) {
      const std::string base = n.debug.node_name.empty() ? "linear" : n.debug.node_name;
      const int64_t groups = linear_groups(w->sizes[0]), chunks = linear_chunks(w->sizes[1]);
      const ValueId wv = add_constant(g_, base + "_weight_packed", ScalarType::Char,
                                      {groups, chunks, kLinearGroup, kLinearChunk}, packed->first);
      const ValueId qv = add_constant(g_, base + "_channel_quant", ScalarType::Int,
                                      {groups, kLinearQuantFields, kLinearGroup}, packed->second);
      const ValueId y = new_node(
          "quantized_linear_packed",
          {TensorRef{x->q}, TensorRef{wv}, TensorRef{qv}, out->p.zp, out->act_min, out->act_max},
          int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
      finish(*out, y);
      return true;
    }
  }
  const bool per_channel =
      std::any_of(w->scales.begin(), w->scales.end(), [&](double s) { return s != w->scales[0]; });
  std::vector<int32_t> mult = rq->first, shift = rq->second;
  if (!per_channel) mult.resize(1), shift.resize(1);
  const std::string base = n.debug.node_name.empty() ? "linear" : n.debug.node_name;
  const auto channels = static_cast<int64_t>(mult.size());
  const ValueId mv = add_constant(g_, base + "_multipliers", ScalarType::Int, {channels}, mult);
  const ValueId sv = add_constant(g_, base + "_shifts", ScalarType::Int, {channels}, shift);
  const ValueId wv = add_constant(g_, base + "_weight_q", ScalarType::Char, w->sizes, w->data);
  Argument bias_arg = ir::None{};
  if (!bias->empty()) {
    bias_arg = TensorRef{add_constant(g_, base + "_bias_q", ScalarType::Int, {w->sizes[0]}, *bias)};
  }
  const ValueId y =
      new_node("quantized_linear",
               {TensorRef{x->q}, TensorRef{wv}, bias_arg, ir::None{}, -x->p.zp, -w->zp, out->p.zp,
                TensorRef{mv}, TensorRef{sv}, out->act_max, out->act_min},
               int8_spec(g_.value(q_out).spec.sizes), n, out->quant);
  finish(*out, y);
  return true;
}

}  // namespace pteron::cortex_m::aot::detail
