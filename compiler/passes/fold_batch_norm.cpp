#include <cmath>
#include <cstring>

#include "compiler/ir/op_names.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

// float32 contents of a constant (or of an absent optional tensor: `fill` of length n).
std::vector<float> floats(const ir::Graph& g, const ir::Argument& a, size_t n, float fill) {
  std::vector<float> out(n, fill);
  if (a.is_none()) return out;
  const auto bytes = g.value(a.tensor()).constant->bytes;
  std::memcpy(out.data(), bytes.data(), n * sizeof(float));
  return out;
}

bool is_f32_constant(const ir::Graph& g, const ir::Argument& a, size_t n, bool optional) {
  if (a.is_none()) return optional;
  if (!a.is_tensor()) return false;
  const ir::Value& v = g.value(a.tensor());
  return v.is_constant() && v.spec.dtype == ScalarType::Float &&
         static_cast<size_t>(v.spec.numel()) == n && v.spec.is_contiguous();
}

ir::ValueId add_f32_constant(ir::Graph& g, const std::string& name, std::vector<int64_t> sizes,
                             const std::vector<float>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(float));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return g.add_constant(g.unique_name(name),
                        ir::TensorSpec::contiguous(ScalarType::Float, std::move(sizes)),
                        ir::ConstantData::owned(std::move(bytes), name));
}

}  // namespace

int fold_batch_norm(ir::Graph& graph) {
  int folded = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId bn_id : order) {
    if (!graph.has_node(bn_id)) continue;
    // Dynamic tensors too: only the weights change, the convolution keeps its output.
    const ir::Node& bn = graph.node(bn_id);
    if (!bn.is(ops::aten::_native_batch_norm_legit_no_training)) continue;
    // Only the normalised output may be used (the saved statistics are for training).
    if (bn.outputs.size() != 3 || !is_unused(graph, bn.outputs[1]) ||
        !is_unused(graph, bn.outputs[2])) {
      continue;
    }
    const ir::Value& conv_out = graph.value(bn.arg("input").tensor());
    if (!single_use_intermediate(graph, conv_out)) continue;
    const ir::Node& conv = graph.node(conv_out.producer);
    if (!conv.is(ops::aten::convolution) || conv.arg("transposed").get<bool>())
      continue;  // not transposed
    const ir::Value& weight = graph.value(conv.arg("weight").tensor());
    if (!weight.is_constant() || weight.spec.dtype != ScalarType::Float ||
        !weight.spec.is_contiguous())
      continue;
    const size_t channels = static_cast<size_t>(weight.spec.sizes[0]);
    if (!is_f32_constant(graph, conv.arg("bias"), channels, true) ||
        !is_f32_constant(graph, bn.arg("weight"), channels, true) ||
        !is_f32_constant(graph, bn.arg("bias"), channels, true) ||
        !is_f32_constant(graph, bn.arg("running_mean"), channels, false) ||
        !is_f32_constant(graph, bn.arg("running_var"), channels, false)) {
      continue;
    }
    // y = gamma * (conv(x) + b - mean) / sqrt(var + eps) + beta
    //   = conv_{W * s}(x) + (b - mean) * s + beta,   s = gamma / sqrt(var + eps)
    const double eps = bn.arg("eps").to_double();
    const std::vector<float> gamma = floats(graph, bn.arg("weight"), channels, 1.f);
    const std::vector<float> beta = floats(graph, bn.arg("bias"), channels, 0.f);
    const std::vector<float> mean = floats(graph, bn.arg("running_mean"), channels, 0.f);
    const std::vector<float> var = floats(graph, bn.arg("running_var"), channels, 1.f);
    const std::vector<float> bias = floats(graph, conv.arg("bias"), channels, 0.f);
    const size_t per_channel = static_cast<size_t>(weight.spec.numel()) / channels;
    std::vector<float> w(static_cast<size_t>(weight.spec.numel()));
    std::memcpy(w.data(), weight.constant->bytes.data(), w.size() * sizeof(float));
    std::vector<float> b(channels);
    for (size_t c = 0; c < channels; ++c) {
      const double scale = gamma[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      for (size_t k = 0; k < per_channel; ++k)
        w[c * per_channel + k] = static_cast<float>(w[c * per_channel + k] * scale);
      b[c] = static_cast<float>((bias[c] - mean[c]) * scale + beta[c]);
    }
    const ir::ValueId new_w =
        add_f32_constant(graph, weight.name + "_bn_folded", weight.spec.sizes, w);
    const ir::ValueId new_b = add_f32_constant(graph, weight.name + "_bn_folded_bias",
                                               {static_cast<int64_t>(channels)}, b);
    const ir::NodeId conv_id = conv.id;
    const ir::ValueId conv_value = conv_out.id;
    const ir::ValueId bn_value = bn.outputs[0];
    graph.set_arg(conv_id, "weight", ir::TensorRef{new_w});
    graph.set_arg(conv_id, "bias", ir::TensorRef{new_b});
    graph.replace_all_uses(bn_value, conv_value);
    graph.remove_node(bn_id);
    ++folded;
  }
  return folded;
}

}  // namespace pteron::compiler
