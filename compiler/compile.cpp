#include "compiler/compile.h"

#include <chrono>

#include "compiler/frontend/pt2_loader.h"
#include "compiler/memory/graph_memory.h"

namespace pteron::compiler {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options) {
  CompileResult result;
  CompileReport& r = result.report;
  r.target = load_target(options.target);
  r.nodes_in = graph.nodes().size();

  auto t = std::chrono::steady_clock::now();
  r.passes = run_default_passes(graph);
  r.seconds_passes = since(t);

  t = std::chrono::steady_clock::now();
  GraphMemoryPlan memory = plan_graph_memory(graph, r.target.memory, r.target.tensor_alignment);
  r.memory = memory.plan;
  r.seconds_plan = since(t);

  t = std::chrono::steady_clock::now();
  MethodToEmit method;
  method.graph = &graph;
  method.placements = std::move(memory.placements);
  method.arena_sizes = memory.arena_sizes;
  result.program = emit_program({method}, &r.emit);
  r.nodes_out = r.emit.instructions;
  r.seconds_emit = since(t);
  return result;
}

CompileResult compile_pt2(const std::string& path, const CompileOptions& options) {
  const auto t = std::chrono::steady_clock::now();
  ir::Graph graph = frontend::load_pt2(path);
  const double load = since(t);
  CompileResult result = compile_graph(graph, options);
  result.report.seconds_load = load;
  return result;
}

}  // namespace pteron::compiler
