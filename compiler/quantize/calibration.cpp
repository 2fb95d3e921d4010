#include "compiler/quantize/calibration.h"

#include <cstring>
#include <string>

#include "compiler/compile_error.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/host_runner.h"

namespace pteron::compiler {
namespace {

std::string join(std::span<const int64_t> shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace

size_t check_calibration_data(const ir::Graph& graph, const CalibrationData& data) {
  const auto& inputs = graph.inputs();
  if (data.size() != inputs.size()) {
    throw CompileError("calibration data has " + std::to_string(data.size()) +
                       " input(s), the model takes " + std::to_string(inputs.size()));
  }
  size_t samples = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = graph.value(inputs[i]);
    const CalibrationInput& c = data[i];
    const std::string what = "calibration input " + std::to_string(i) + " ('" + v.name + "')";
    if (!v.spec.is_contiguous()) throw CompileError(what + ": the model input is not contiguous");
    if (c.dtype != v.spec.dtype) {
      throw CompileError(what + ": dtype " + ir::dtype_name(c.dtype) + ", the model expects " +
                         ir::dtype_name(v.spec.dtype));
    }
    std::vector<int64_t> expected = {c.shape.empty() ? 0 : c.shape[0]};
    expected.insert(expected.end(), v.spec.sizes.begin(), v.spec.sizes.end());
    if (c.shape != expected) {
      throw CompileError(what + ": shape [" + join(c.shape) + "], expected [N" +
                         (v.spec.sizes.empty() ? "" : ", " + join(v.spec.sizes)) +
                         "] (N samples on a leading axis)");
    }
    const size_t n = static_cast<size_t>(c.shape[0]);
    if (n == 0) throw CompileError(what + ": no samples");
    if (i > 0 && n != samples) {
      throw CompileError(what + ": " + std::to_string(n) + " samples, input 0 has " +
                         std::to_string(samples));
    }
    samples = n;
    if (c.data.size() != n * v.spec.nbytes()) {
      throw CompileError(what + ": " + std::to_string(c.data.size()) + " bytes for " +
                         std::to_string(n) + " samples of " + std::to_string(v.spec.nbytes()));
    }
  }
  if (inputs.empty()) throw CompileError("calibration needs a model with inputs");
  return samples;
}

void run_calibration(const ir::Graph& graph, const CalibrationData& data,
                     const std::vector<bool>& wanted, const CalibrationVisitor& visit,
                     const SampleDone& progress) {
  const size_t samples = check_calibration_data(graph, data);
  for (ir::NodeId n : graph.nodes()) {
    if (ir::is_control_flow(graph.node(n))) {
      throw CompileError(graph.node(n).describe() +
                         ": control flow runs in compiled programs only; the host's run of the "
                         "graph node by node (int8 calibration, pteron debug) does not run its "
                         "subgraphs");
    }
  }
  // Free each intermediate after the last node that reads it (graph outputs are never read).
  std::vector<size_t> last_use(graph.value_capacity(), 0);
  const std::vector<ir::NodeId>& order = graph.nodes();
  for (size_t i = 0; i < order.size(); ++i) {
    for (ir::ValueId v : graph.node(order[i]).inputs()) last_use[v] = i;
  }
  auto observe = [&](ir::ValueId v, std::span<const uint8_t> bytes) {
    if (v >= wanted.size() || !wanted[v] || graph.value(v).spec.dtype != ScalarType::Float) return;
    visit(v, std::span<const float>(reinterpret_cast<const float*>(bytes.data()),
                                    bytes.size() / sizeof(float)));
  };
  std::vector<std::vector<uint8_t>> values(graph.value_capacity());
  for (size_t s = 0; s < samples; ++s) {
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      const ir::ValueId v = graph.inputs()[i];
      const size_t n = graph.value(v).spec.nbytes();
      values[v].assign(data[i].data.begin() + static_cast<std::ptrdiff_t>(s * n),
                       data[i].data.begin() + static_cast<std::ptrdiff_t>((s + 1) * n));
      observe(v, values[v]);
    }
    for (size_t i = 0; i < order.size(); ++i) {
      const ir::Node& node = graph.node(order[i]);
      std::vector<std::vector<uint8_t>> outs =
          run_node_on_host(graph, node, [&](ir::ValueId v) -> std::span<const uint8_t> {
            const ir::Value& value = graph.value(v);
            if (value.constant) return value.constant->bytes;
            return values[v];
          });
      for (size_t k = 0; k < outs.size(); ++k) {
        const ir::ValueId out = node.outputs[k];
        if (out == ir::kNoValue) continue;
        observe(out, outs[k]);
        values[out] = std::move(outs[k]);
      }
      for (ir::ValueId v : node.inputs()) {
        if (last_use[v] == i && !graph.value(v).is_constant())
          std::vector<uint8_t>().swap(values[v]);
      }
    }
    for (auto& v : values) std::vector<uint8_t>().swap(v);
    if (progress) progress(s + 1, samples);
  }
}

}  // namespace pteron::compiler
