// Python access to the compiler: .pt2 file in, program bytes and a report out.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "compiler/compile.h"
#include "compiler/compile_error.h"

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
  d["seconds"] = r.seconds_load + r.seconds_passes + r.seconds_plan + r.seconds_emit;
  return d;
}

nb::tuple compile_pt2(const std::string& path, const std::string& target,
                      const std::vector<std::string>& backends) {
  compiler::CompileResult result;
  compiler::CompileOptions options;
  options.target = target;
  options.backends = backends;
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
  m.def("compile_pt2", &compile_pt2, nb::arg("path"), nb::arg("target") = "host",
        nb::arg("backends") = std::vector<std::string>{},
        "Compiles a torch.export archive; returns (program bytes, report dict). `backends` lists "
        "partitioners then kernel libraries (\"optimized\", \"portable\"), default the "
        "target's. Raises CompileError.");
}

}  // namespace pteron::py
