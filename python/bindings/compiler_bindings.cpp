// Python access to the compiler: .pt2 file in, program bytes and a report out.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "compiler/partition/registry.h"

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
  d["file_bytes"] = r.emit.file_bytes;
  d["graph_info_bytes"] = r.graph_info_bytes;
  nb::list arenas;
  for (const auto& region : r.memory.regions) {
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
    regions.append(g);
  }
  d["delegated_regions"] = regions;
  d["refusals"] = r.refusals;
  d["seconds"] = r.seconds_load + r.seconds_passes + r.seconds_plan + r.seconds_emit;
  return d;
}

nb::tuple compile_pt2(const std::string& path, const std::string& target,
                      const std::vector<std::string>& backends, bool strip_debug_info) {
  compiler::CompileResult result;
  compiler::CompileOptions options;
  options.target = target;
  options.backends = backends;
  options.strip_debug_info = strip_debug_info;
  {
    nb::gil_scoped_release release;
    result = compiler::compile_pt2(path, options);
  }
  nb::bytes program(reinterpret_cast<const char*>(result.program.data()), result.program.size());
  return nb::make_tuple(program, report_dict(result.report));
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
        "Compiles a torch.export archive; returns (program bytes, report dict). `backends` is the\n"
        "ordered backend list (\"xnnpack\", \"portable\"); empty means the target's.\n"
        "Raises CompileError.");
  m.def("available_backends", &compiler::available_backends, "Backend names --backends accepts.");
}

}  // namespace pteron::py
