// Python access to the compiler: .pt2 file in, program bytes and a report out.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "compiler/cost/host_calibration.h"
#include "compiler/partition/registry.h"
#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "compiler/version.h"
#include "python/bindings/tensor_convert.h"
#if defined(PTERON_HAVE_THREADS)
#include "runtime/threads/threadpool.h"
#endif

namespace nb = nanobind;

namespace pteron::py {
namespace {

nb::dict report_dict(const compiler::CompileReport& r) {
  nb::dict d;
  d["target"] = r.target.name;
  d["nodes_in"] = r.nodes_in;
  d["kernel_calls"] = r.nodes_out;
  d["passes"] = r.passes.lines;
  d["constant_bytes"] = r.emit.constant_bytes;
  d["constants"] = r.emit.constants;
  d["deduplicated_constants"] = r.emit.deduplicated;
  d["delegate_named_bytes"] = r.emit.delegate_named_bytes;
  d["delegate_named_shared"] = r.emit.named_shared;
  d["file_bytes"] = r.emit.file_bytes;
  d["graph_info_bytes"] = r.graph_info_bytes;
  d["constant_methods"] = r.constant_methods;
  d["backends"] = r.backends;
  d["default_backends"] = r.default_backends;
  d["backends_left_out"] = r.backends_left_out;
  d["notes"] = r.notes;
  d["calibration"] = r.calibration;
  nb::list arenas;
  for (const auto& region : r.memory.arenas) {
    nb::dict a;
    a["name"] = region.name;
    a["memory_id"] = region.mem_id;
    a["bytes"] = region.used;
    a["capacity"] = region.capacity;
    arenas.append(a);
  }
  d["arenas"] = arenas;
  d["planned_bytes"] = r.memory.total_arena_bytes;
  d["planned_lower_bound_bytes"] = r.memory.peak_live_bytes;
  d["memory_report"] = compiler::describe_memory_plan(r.memory);
  nb::list regions;
  for (const auto& region : r.regions) {
    nb::dict g;
    g["backend"] = region.backend;
    g["nodes"] = region.nodes;
    g["inputs"] = region.inputs;
    g["outputs"] = region.outputs;
    if (!region.report_json.empty()) g["report_json"] = region.report_json;
    regions.append(g);
  }
  d["delegated_regions"] = regions;
  d["refusals"] = r.refusals;
  if (r.quantize) {
    nb::dict q;
    q["scheme"] = r.quantize->scheme;
    q["observer"] = r.quantize->observer;
    q["samples"] = r.quantize->samples;
    q["quantized_ops"] = r.quantize->quantized_ops;
    q["quantized_activations"] = r.quantize->quantized_values;
    q["weight_bytes"] = r.quantize->weight_bytes;
    q["lines"] = r.quantize->lines;
    for (const auto* list : {&r.quantize->inputs, &r.quantize->outputs}) {
      nb::list io;
      for (const auto& e : *list) {
        nb::dict item;
        item["index"] = e.index;
        item["name"] = e.name;
        item["scale"] = e.qparams.scale;
        item["zero_point"] = e.qparams.zp;
        io.append(item);
      }
      q[list == &r.quantize->inputs ? "int8_inputs" : "int8_outputs"] = io;
    }
    d["quantize"] = q;
  }
  d["seconds"] = r.seconds_load + r.seconds_passes + r.seconds_plan + r.seconds_emit;
  return d;
}

// One constant of a constant_methods value: bool before int (Python's bool is an int).
compiler::ConstantScalar constant_scalar(nb::handle h, const std::string& name) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) return o == Py_True;
  if (PyLong_Check(o) || (!PyFloat_Check(o) && PyIndex_Check(o))) {  // int, numpy ints
    nb::object index = nb::steal(PyNumber_Index(o));
    if (!index.is_valid()) throw nb::python_error();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) {
      throw compiler::CompileError("constant method '" + name + "': " + nb::str(h).c_str() +
                                   " is beyond int64");
    }
    return static_cast<int64_t>(v);
  }
  if (PyFloat_Check(o)) return PyFloat_AsDouble(o);
  if (PyUnicode_Check(o)) return nb::cast<std::string>(h);
  throw compiler::CompileError("constant method '" + name + "': a value of type " +
                               nb::type_name(h.type()).c_str() +
                               " is not supported (an int, bool, float or str, or a list of them)");
}

// ExecuTorch's constant_methods: {name: value or list of values}.
std::vector<compiler::ConstantMethod> constant_methods_from(const nb::dict& methods) {
  std::vector<compiler::ConstantMethod> out;
  for (auto [key, value] : methods) {
    if (!PyUnicode_Check(key.ptr())) {
      throw compiler::CompileError(std::string("constant method names are strings, not ") +
                                   nb::type_name(key.type()).c_str());
    }
    compiler::ConstantMethod m;
    m.name = nb::cast<std::string>(key);
    if (PyList_Check(value.ptr()) || PyTuple_Check(value.ptr())) {
      m.list = true;
      for (nb::handle item : value) m.values.push_back(constant_scalar(item, m.name));
    } else {
      m.values.push_back(constant_scalar(value, m.name));
    }
    out.push_back(std::move(m));
  }
  return out;
}

// What every compile entry point shares: target, backends, the constant methods, and for the
// host target this machine's cost-model calibration as `pteron compile` reads it (held in
// `calibration`, which must outlive the compile).
compiler::CompileOptions base_options(const std::string& target,
                                      const std::vector<std::string>& backends,
                                      const nb::dict& constant_methods, bool llm_metadata,
                                      bool last_token_logits,
                                      compiler::cost::HostCalibration& calibration) {
  compiler::CompileOptions options;
#if defined(PTERON_HAVE_THREADS)
  const int threads = num_threads();
#else
  const int threads = 1;
#endif
  if (target == "host") calibration = compiler::cost::host_calibration(threads);
  if (calibration.loaded) options.calibration = &calibration.loaded->calibration;
  options.calibration_note = calibration.note;
  options.target = target;
  options.backends = backends;
  options.constant_methods = constant_methods_from(constant_methods);
  options.llm_metadata = llm_metadata;
  options.last_token_logits = last_token_logits;
  return options;
}

nb::tuple compile_pt2(const std::string& path, const std::string& target,
                      const std::vector<std::string>& backends, bool strip_debug_info,
                      const nb::dict& constant_methods, bool llm_metadata, bool last_token_logits) {
  compiler::CompileResult result;
  compiler::cost::HostCalibration calibration;
  compiler::CompileOptions options = base_options(target, backends, constant_methods, llm_metadata,
                                                  last_token_logits, calibration);
  options.strip_debug_info = strip_debug_info;
  {
    nb::gil_scoped_release release;
    result = compiler::compile_pt2(path, options);
  }
  nb::bytes program(reinterpret_cast<const char*>(result.program.data()), result.program.size());
  return nb::make_tuple(program, report_dict(result.report));
}

// Several methods in one program, sharing state by buffer name.
nb::tuple compile_pt2_methods(const std::vector<std::string>& names,
                              const std::vector<std::string>& paths, const std::string& target,
                              const std::vector<std::string>& backends,
                              const nb::dict& constant_methods, bool llm_metadata,
                              bool last_token_logits) {
  if (names.size() != paths.size()) throw std::invalid_argument("one path per method name");
  std::vector<std::pair<std::string, std::string>> methods;
  for (size_t i = 0; i < names.size(); ++i) methods.emplace_back(names[i], paths[i]);
  compiler::cost::HostCalibration calibration;
  compiler::CompileOptions options = base_options(target, backends, constant_methods, llm_metadata,
                                                  last_token_logits, calibration);
  compiler::CompileResult result;
  {
    nb::gil_scoped_release release;
    result = compiler::compile_pt2_methods(methods, options);
  }
  nb::bytes program(reinterpret_cast<const char*>(result.program.data()), result.program.size());
  return nb::make_tuple(program, report_dict(result.report));
}

// Quantized compile: `calibration` holds one C-contiguous array per model input with the
// samples on axis 0. Progress goes to stderr ("calibrating: 10/100 samples").
nb::tuple compile_pt2_quantized(
    const std::string& path, const std::string& target, const std::string& scheme,
    const std::vector<nb::ndarray<nb::c_contig, nb::device::cpu>>& calibration, bool int8_io,
    const std::string& observer, double percentile, bool progress,
    const std::vector<std::string>& backends, const nb::dict& constant_methods, bool llm_metadata,
    bool last_token_logits) {
  compiler::QuantizeOptions q;
  q.scheme = compiler::parse_quant_scheme(scheme);
  if (!observer.empty()) q.observer = compiler::parse_quant_observer(observer);
  q.int8_io = int8_io;
  q.percentile = percentile;
  for (const auto& a : calibration) {
    compiler::CalibrationInput in;
    in.dtype = dtype_from_dlpack(a.dtype());
    for (size_t d = 0; d < a.ndim(); ++d) in.shape.push_back(static_cast<int64_t>(a.shape(d)));
    const auto* bytes = static_cast<const uint8_t*>(a.data());
    in.data.assign(bytes, bytes + a.nbytes());
    q.calibration.push_back(std::move(in));
  }
  if (progress) {
    q.progress = [](int pass, int passes, size_t done, size_t total) {
      std::fprintf(stderr, "\rcalibrating (pass %d/%d): %zu/%zu samples%s", pass, passes, done,
                   total, done == total && pass == passes ? "\n" : "");
    };
  }
  // Partitioners see the quantized (Q/DQ) graph.
  compiler::cost::HostCalibration machine;  // the cost model's, not the samples
  compiler::CompileOptions options =
      base_options(target, backends, constant_methods, llm_metadata, last_token_logits, machine);
  options.quantize = &q;
  compiler::CompileResult result;
  {
    nb::gil_scoped_release release;
    result = compiler::compile_pt2(path, options);
  }
  nb::bytes program(reinterpret_cast<const char*>(result.program.data()), result.program.size());
  return nb::make_tuple(program, report_dict(result.report));
}

// LLM weight quantization (llm-8da4w, llm-int8, llm-int4) and compile; no calibration.
nb::tuple compile_pt2_llm(const std::string& path, const std::string& target,
                          const std::string& scheme, int64_t group_size,
                          const std::vector<std::string>& backends,
                          const nb::dict& constant_methods, bool llm_metadata,
                          bool last_token_logits) {
  compiler::LlmQuantizeOptions q;
  q.scheme = compiler::parse_llm_scheme(scheme);
  q.group_size = group_size;
  compiler::cost::HostCalibration calibration;
  compiler::CompileOptions options = base_options(target, backends, constant_methods, llm_metadata,
                                                  last_token_logits, calibration);
  options.llm_quantize = &q;
  compiler::CompileResult result;
  {
    nb::gil_scoped_release release;
    result = compiler::compile_pt2(path, options);
  }
  nb::bytes program(reinterpret_cast<const char*>(result.program.data()), result.program.size());
  return nb::make_tuple(program, report_dict(result.report));
}

// The quantizer's compile-time weight quantization, for tests against torch's observers.
nb::tuple quantize_weights_per_channel(nb::ndarray<float, nb::c_contig, nb::device::cpu> weights) {
  if (weights.ndim() < 1) throw std::invalid_argument("weights need at least one dimension");
  const compiler::PerChannelWeights q =
      compiler::quantize_weights_per_channel(std::span<const float>(weights.data(), weights.size()),
                                             static_cast<int64_t>(weights.shape(0)));
  nb::bytes values(reinterpret_cast<const char*>(q.values.data()), q.values.size());
  return nb::make_tuple(values, q.scales);
}

}  // namespace

void bind_compiler(nb::module_& m) {
  nb::exception<compiler::CompileError>(m, "CompileError", PyExc_RuntimeError);
  m.def("delegation_report", &compiler::delegation_report, nb::arg("graph_info"),
        "The delegation report (JSON text) of a program's graph info (JSON text).");
  m.def("delegation_summary", &compiler::delegation_summary, nb::arg("report"),
        "A readable table of delegation_report()'s JSON.");
  m.def("graph_view", &compiler::graph_view, nb::arg("graph_info"),
        "The lowered graph in execution order with its delegate regions, as text.");
  m.attr("GRAPH_INFO_KEY") = compiler::kGraphInfoKey;
  m.attr("NO_GRAPH_INFO") = compiler::kNoGraphInfo;
  m.def("compile_pt2", &compile_pt2, nb::arg("path"), nb::arg("target") = "host",
        nb::arg("backends") = std::vector<std::string>{}, nb::arg("strip_debug_info") = false,
        nb::arg("constant_methods") = nb::dict(), nb::arg("llm_metadata") = true,
        nb::arg("last_token_logits") = false,
        "Compiles a torch.export archive; returns (program bytes, report dict). `backends` is the\n"
        "ordered list of partitioners then kernel libraries (\"xnnpack\", \"optimized\",\n"
        "\"portable\"); empty means the target's. `constant_methods` {name: value} are written as\n"
        "ExecuTorch's; `llm_metadata` adds what a KV-cache decoder implies. Raises CompileError.");
  m.def("compile_pt2_methods", &compile_pt2_methods, nb::arg("names"), nb::arg("paths"),
        nb::arg("target") = "host", nb::arg("backends") = std::vector<std::string>{},
        nb::arg("constant_methods") = nb::dict(), nb::arg("llm_metadata") = true,
        nb::arg("last_token_logits") = false,
        "Compiles several torch.export archives into one program, one method each (names[i]\n"
        "from paths[i]); buffers are shared by name (state one method writes, the others see).");
  m.def(
      "host_calibration_to_measure",
      [](int threads) -> std::optional<std::string> {
        const compiler::cost::HostCalibration h = compiler::cost::host_calibration(threads);
        if (h.loaded || h.cache_path.empty()) return std::nullopt;
        return h.cache_path;
      },
      nb::arg("threads"),
      "This machine's calibration cache file when a host compile would find no usable "
      "calibration there (none yet, another pteron version's, a damaged one) and "
      "$PTERON_CALIBRATION names none; None otherwise.");
  m.def(
      "version", [] { return std::string(compiler::pteron_version()); },
      "This pteron's version (pteron.__version__).");
  m.def("available_backends", &compiler::available_backends, "Backend names --backends accepts.");
  m.def("compile_pt2_quantized", &compile_pt2_quantized, nb::arg("path"), nb::arg("target"),
        nb::arg("scheme"), nb::arg("calibration"), nb::arg("int8_io") = false,
        nb::arg("observer") = "", nb::arg("percentile") = 99.99, nb::arg("progress") = true,
        nb::arg("backends") = std::vector<std::string>{}, nb::arg("constant_methods") = nb::dict(),
        nb::arg("llm_metadata") = true, nb::arg("last_token_logits") = false,
        "Quantizes (int8, PT2E Q/DQ form) and compiles; calibration is one array per input, "
        "samples on axis 0.");
  m.def("compile_pt2_llm", &compile_pt2_llm, nb::arg("path"), nb::arg("target"), nb::arg("scheme"),
        nb::arg("group_size") = 0, nb::arg("backends") = std::vector<std::string>{},
        nb::arg("constant_methods") = nb::dict(), nb::arg("llm_metadata") = true,
        nb::arg("last_token_logits") = false,
        "LLM weight quantization (llm-8da4w, llm-int8, llm-int4) and compile.");
  m.def("quantize_weights_per_channel", &quantize_weights_per_channel, nb::arg("weights"),
        "Symmetric int8 per-channel (axis 0) weights as the quantizer writes them: (int8 bytes, "
        "scales).");
}

}  // namespace pteron::py
