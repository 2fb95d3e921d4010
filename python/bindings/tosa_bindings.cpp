// Python access to the TOSA lowering (backends/tosa): a .pt2 in, the TOSA graph of what the
// profile takes out, with the region's I/O and, for tests, the region's input and output
// values computed by pteron's own graph on the host kernels (the reference the TOSA reference
// model's results are checked against).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <unordered_map>

#include "backends/tosa/aot/tosa_lowering.h"
#include "compiler/frontend/pt2_loader.h"
#include "compiler/passes/host_runner.h"
#include "compiler/passes/passes.h"
#include "compiler/quantize/quantize.h"
#include "python/bindings/tensor_convert.h"

namespace nb = nanobind;

namespace pteron::py {
namespace {

using compiler::ir::Graph;
using compiler::ir::ValueId;

compiler::CalibrationData arrays_to_data(
    const std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>>& arrays) {
  compiler::CalibrationData data;
  for (const auto& a : arrays) {
    compiler::CalibrationInput in;
    in.dtype = dtype_from_dlpack(a.dtype());
    for (size_t d = 0; d < a.ndim(); ++d) in.shape.push_back(static_cast<int64_t>(a.shape(d)));
    const auto* bytes = static_cast<const uint8_t*>(a.data());
    in.data.assign(bytes, bytes + a.nbytes());
    data.push_back(std::move(in));
  }
  return data;
}

// Every value of `graph` for one sample (one array per graph input, without a samples axis).
std::vector<std::vector<uint8_t>> run_on_host(const Graph& graph,
                                              const compiler::CalibrationData& sample) {
  if (sample.size() != graph.inputs().size())
    throw std::invalid_argument("sample needs one array per graph input");
  std::vector<std::vector<uint8_t>> values(graph.value_capacity());
  for (size_t i = 0; i < sample.size(); ++i) {
    const ValueId v = graph.inputs()[i];
    if (sample[i].data.size() != graph.value(v).spec.nbytes())
      throw std::invalid_argument("sample input " + std::to_string(i) + " has the wrong size");
    values[v] = sample[i].data;
  }
  for (compiler::ir::NodeId id : graph.nodes()) {
    const auto& node = graph.node(id);
    auto outs = compiler::run_node_on_host(graph, node, [&](ValueId v) -> std::span<const uint8_t> {
      const auto& value = graph.value(v);
      if (value.constant) return value.constant->bytes;
      return values[v];
    });
    for (size_t k = 0; k < outs.size(); ++k)
      if (node.outputs[k] != compiler::ir::kNoValue) values[node.outputs[k]] = std::move(outs[k]);
  }
  return values;
}

nb::dict io_dict(const Graph& graph, const tosa_aot::TosaIo& io,
                 const std::vector<std::vector<uint8_t>>* values) {
  nb::dict d;
  d["tosa_name"] = io.tosa_name;
  d["value"] = io.value_name;
  d["shape"] = io.shape;
  d["dim_order"] = std::vector<int>(io.dim_order.begin(), io.dim_order.end());
  d["dtype"] = io.dtype == ScalarType::Char ? "int8" : "float32";
  d["quantized"] = io.quantized;
  d["scale"] = io.scale;
  d["zero_point"] = io.zero_point;
  const auto& spec = graph.value(io.value).spec;
  d["logical_shape"] = spec.sizes;
  d["value_dim_order"] = std::vector<int>(spec.dim_order.begin(), spec.dim_order.end());
  if (values) {
    const auto& bytes = (*values)[io.value];
    d["host_bytes"] = nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return d;
}

nb::dict tosa_lower_pt2(const std::string& path, const std::string& profile,
                        const std::string& scheme,
                        const std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>>& calibration,
                        bool int8_io,
                        const std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>>& sample) {
  tosa_aot::TosaProfile p;
  if (profile == "INT") {
    p = tosa_aot::TosaProfile::Int;
  } else if (profile == "FP") {
    p = tosa_aot::TosaProfile::Fp;
  } else {
    throw std::invalid_argument("profile is INT or FP");
  }
  Graph graph = compiler::frontend::load_pt2(path);
  compiler::run_default_passes(graph);
  if (!scheme.empty()) {
    compiler::QuantizeOptions q;
    q.scheme = compiler::parse_quant_scheme(scheme);
    q.int8_io = int8_io;
    q.calibration = arrays_to_data(calibration);
    compiler::quantize_graph(graph, q);
    compiler::remove_dead_code(graph);
  }
  const tosa_aot::TosaSelection sel = tosa_aot::select_tosa_nodes(graph, p);
  const tosa_aot::TosaLowering l = tosa_aot::lower_to_tosa(graph, sel.nodes, p);
  std::vector<std::vector<uint8_t>> values;
  if (!sample.empty() && l.ok) values = run_on_host(graph, arrays_to_data(sample));
  const auto* vp = values.empty() ? nullptr : &values;
  nb::dict d;
  d["ok"] = l.ok;
  d["reason"] = l.reason;
  d["tosa"] = nb::bytes(reinterpret_cast<const char*>(l.tosa.data()), l.tosa.size());
  d["tosa_ops"] = l.tosa_ops;
  d["nodes"] = sel.nodes.size();
  d["graph_nodes"] = graph.nodes().size();
  d["refusals"] = sel.refusals;
  nb::list ins, outs;
  for (const auto& io : l.inputs) ins.append(io_dict(graph, io, vp));
  for (const auto& io : l.outputs) outs.append(io_dict(graph, io, vp));
  d["inputs"] = ins;
  d["outputs"] = outs;
  return d;
}

}  // namespace

void bind_tosa(nb::module_& m) {
  m.def("tosa_lower_pt2", &tosa_lower_pt2, nb::arg("path"), nb::arg("profile"),
        nb::arg("scheme") = "", nb::arg("calibration") = nb::list(), nb::arg("int8_io") = false,
        nb::arg("sample") = nb::list(),
        "Loads a .pt2, runs the default passes (and quantizes with `scheme`), lowers the nodes\n"
        "the TOSA profile (\"INT\" | \"FP\") takes to one TOSA graph; returns a dict (ok, reason,\n"
        "tosa bytes, inputs, outputs, refusals). With `sample` (one array per graph input),\n"
        "each input/output also carries host_bytes: the value pteron's host kernels compute.");
}

}  // namespace pteron::py
