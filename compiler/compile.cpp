#include "compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/frontend/pt2_archive.h"
#include "compiler/frontend/pt2_loader.h"
#include "compiler/ir/queries.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/registry.h"
#include "compiler/pipeline/pipeline.h"
#include "compiler/report/graph_info.h"
#include "runtime/executor/plan_choice.h"  // kFallbackPlanSuffix

namespace pteron::compiler {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A per-input-dimension int32 table for the runtime's set_input check (Method::
// read_input_dim_table): little endian, per input its rank then one word per dim.
template <typename Word>
std::vector<uint8_t> input_dim_table(const ir::Graph& graph, Word word) {
  std::vector<int32_t> words;
  for (ir::ValueId v : graph.inputs()) {
    const ir::TensorSpec& spec = graph.value(v).spec;
    words.push_back(static_cast<int32_t>(spec.rank()));
    for (size_t d = 0; d < spec.rank(); ++d) words.push_back(static_cast<int32_t>(word(spec, d)));
  }
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());  // hosts are little endian
  return bytes;
}

// Dynamic programs: the inputs' lower bounds (ExecuTorch's Tensor records only the upper
// bound). Empty for a static program.
std::vector<uint8_t> input_min_sizes(const ir::Graph& graph) {
  bool dynamic = false;
  for (ir::ValueId v : graph.inputs()) dynamic = dynamic || graph.value(v).spec.is_dynamic();
  if (!dynamic) return {};
  return input_dim_table(graph, [](const ir::TensorSpec& spec, size_t d) {
    return spec.is_dynamic() ? spec.min_sizes[d] : spec.sizes[d];
  });
}

// What a size of each input dimension must step by, for inputs with torch.export's derived
// dims (h = 32 * _h: the program computes _h = h // 32, so h = 80 would run as 64); 1 for any
// size. Empty when every step is 1.
std::vector<uint8_t> input_size_steps(const ir::Graph& graph) {
  bool stepped = false;
  std::vector<uint8_t> table =
      input_dim_table(graph, [&](const ir::TensorSpec& spec, size_t d) -> int64_t {
        const ir::SymExpr* size = spec.sym_size(d);
        const std::optional<ir::AffineSymbol> affine =
            size != nullptr ? ir::affine_symbol(*size) : std::nullopt;
        const int64_t step = affine && affine->scale <= INT32_MAX ? affine->scale : 1;
        stepped = stepped || step > 1;
        return step;
      });
  return stepped ? table : std::vector<uint8_t>{};
}

// The graph's metadata entry `key`, or "".
std::string metadata_text(const ir::Graph& graph, const char* key) {
  auto it = graph.metadata().find(key);
  return it != graph.metadata().end() ? it->second : "";
}

// The inputs the model writes into (a mutation of an input): int32 little endian indices,
// ascending; the runtime writes them back to the caller. Empty when the model writes none.
std::vector<uint8_t> written_inputs(const ir::Graph& graph) {
  std::vector<uint8_t> table;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    for (const ir::BufferMutation& m : graph.buffer_mutations()) {
      if (m.buffer != graph.inputs()[i]) continue;
      const int32_t index = static_cast<int32_t>(i);
      const auto* bytes = reinterpret_cast<const uint8_t*>(&index);
      table.insert(table.end(), bytes, bytes + 4);
    }
  }
  return table;
}

// The constant methods a program from `graph` carries: the derived LLM metadata (but not
// where the program has a method of that name), then the given ones; checked against the
// program's method names.
std::vector<ConstantMethod> program_constant_methods(const ir::Graph& graph,
                                                     const CompileOptions& options,
                                                     const std::vector<std::string>& methods,
                                                     CompileReport& r) {
  std::vector<ConstantMethod> derived;
  if (options.llm_metadata) {
    // A method the program already has (an exported get_max_seq_len) wins over a derived one.
    for (ConstantMethod& m : derive_llm_metadata(graph)) {
      if (std::find(methods.begin(), methods.end(), m.name) == methods.end())
        derived.push_back(std::move(m));
    }
  }
  std::vector<ConstantMethod> out =
      merge_constant_methods(std::move(derived), options.constant_methods);
  check_constant_methods(out, methods);
  for (const ConstantMethod& m : out)
    r.constant_methods.push_back(describe_constant_method(m) + (m.derived ? " (derived)" : ""));
  return out;
}

CompileResult compile_method(ir::Graph& graph, const CompileOptions& options,
                             const std::vector<const Partitioner*>& partitioners,
                             MethodToEmit* capture, MethodToEmit* extra);

// Moves every placement of `m` (its subgraphs' too) `base[i]` bytes into arena i + 1.
void shift_placements(MethodToEmit& m, const std::vector<int64_t>& base) {
  for (auto& [v, p] : m.placements) {
    if (p.mem_id >= 1 && p.mem_id <= base.size())
      p.offset += static_cast<uint64_t>(base[p.mem_id - 1]);
  }
  for (ControlFlowToEmit& c : m.control_flow) {
    for (MethodToEmit& sub : c.graphs) shift_placements(sub, base);
  }
}

// The subgraphs of each control-flow node of `method`'s graph (torch.cond's branches, a
// while_loop's cond and body, a scan's function), compiled as methods of their own with
// the same backends: a subgraph is a model the partitioners and kernel libraries see whole.
// Their memory goes after the method's in each arena, all from the same offset (one runs at a
// time); the arenas grow to hold the largest.
void compile_control_flow(ir::Graph& graph, const CompileOptions& options,
                          const std::vector<const Partitioner*>& partitioners, CompileReport& r,
                          MethodToEmit& method) {
  CompileOptions sub_options;
  sub_options.target = options.target;
  sub_options.backends = options.backends;
  sub_options.llm_quantize = options.llm_quantize;
  sub_options.strip_debug_info = true;
  sub_options.llm_metadata = false;
  sub_options.calibration = options.calibration;
  const uint64_t align = std::max<uint64_t>(r.target.tensor_alignment, 1);
  std::vector<int64_t> base;
  for (int64_t size : method.arena_sizes)
    base.push_back(static_cast<int64_t>((static_cast<uint64_t>(size) + align - 1) / align * align));
  for (const Step& step : method.steps) {
    if (step.delegate >= 0 || !ir::is_control_flow(graph.node(step.node))) continue;
    ControlFlowToEmit flow;
    flow.node = step.node;
    for (size_t arg : ir::subgraph_args(graph.node(step.node))) {
      ir::Graph& sub = graph.branch(static_cast<size_t>(graph.node(step.node).args[arg].to_int()));
      MethodToEmit compiled;
      CompileResult one = compile_method(sub, sub_options, partitioners, &compiled, nullptr);
      for (const RegionSummary& region : one.report.regions) r.regions.push_back(region);
      r.refusals.insert(r.refusals.end(), one.report.refusals.begin(), one.report.refusals.end());
      shift_placements(compiled, base);
      for (size_t i = 0; i < compiled.arena_sizes.size(); ++i) {
        const int64_t end = (i < base.size() ? base[i] : 0) + compiled.arena_sizes[i];
        if (i >= method.arena_sizes.size()) method.arena_sizes.push_back(0);
        method.arena_sizes[i] = std::max(method.arena_sizes[i], end);
      }
      flow.graphs.push_back(std::move(compiled));
    }
    method.control_flow.push_back(std::move(flow));
  }
  if (method.control_flow.empty()) return;
  uint64_t total = 0;
  for (ArenaUsage& arena : r.memory.arenas) {
    const size_t i = arena.mem_id - 1;
    if (arena.mem_id >= 1 && i < method.arena_sizes.size())
      arena.used = static_cast<uint64_t>(method.arena_sizes[i]);
    if (arena.capacity != 0 && arena.used > arena.capacity) {
      throw CompileError("memory plan does not fit the target: arena '" + arena.name + "' needs " +
                         std::to_string(arena.used) +
                         " bytes with the control flow's subgraphs, it has " +
                         std::to_string(arena.capacity));
    }
    total += arena.used;
  }
  r.memory.total_arena_bytes = total;
}

// Compiles `graph` into one method: the pipeline's stages (compiler/pipeline/pipeline.h) in
// order, then emission. With `capture` set the method is handed back there instead of emitted
// (it refers to `graph`); `extra` is a method emitted after it (the fallback plan).
CompileResult compile_method(ir::Graph& graph, const CompileOptions& options,
                             const std::vector<const Partitioner*>& partitioners,
                             MethodToEmit* capture, MethodToEmit* extra) {
  CompileResult result;
  CompileReport& r = result.report;
  // Checked first: a bad value fails before the slow stages.
  std::vector<ConstantMethod> constants;
  if (capture == nullptr) {
    std::vector<std::string> names = {MethodToEmit{}.name};
    if (extra != nullptr) names.push_back(extra->name);
    constants = program_constant_methods(graph, options, names, r);
  }
  r.target = load_target(options.target);
  r.nodes_in = graph.nodes().size();
  const std::vector<const KernelLibrary*> libraries =
      selected_libraries(options.backends, r.target);

  auto t = std::chrono::steady_clock::now();
  PreparedGraph prepared = prepare_graph(
      graph, {options.last_token_logits, options.quantize, options.llm_quantize}, libraries);
  r.passes = std::move(prepared.passes);
  r.quantize = std::move(prepared.quantize);

  // Partitioners see the target and the kernel libraries the rest will run on (their cost
  // rules weigh them); so do the libraries' passes.
  PartitionContext context;
  context.target = &r.target;
  context.calibration = options.calibration;
  if (options.calibration != nullptr) {
    r.calibration = options.calibration->machine + ", measured " + options.calibration->created;
  }
  if (!options.calibration_note.empty()) r.notes.push_back(options.calibration_note);
  for (const KernelLibrary* lib : libraries) context.kernel_libraries.push_back(lib->name);
  LoweredGraph lowered = partition_and_lower(graph, partitioners, context);
  r.regions = lowered.summaries;

  const PassReport library_passes =
      run_library_passes(graph, libraries, lowered.delegated, context);
  r.passes.lines.insert(r.passes.lines.end(), library_passes.lines.begin(),
                        library_passes.lines.end());

  MethodSchedule schedule = schedule_method(graph, lowered, libraries);
  r.refusals = std::move(schedule.refusals);
  if (schedule.state_copies > 0) {
    r.passes.lines.push_back("state write-backs: " + std::to_string(schedule.state_copies) +
                             " buffer update(s) copied into the buffer at the end");
  }
  r.seconds_passes = since(t);

  t = std::chrono::steady_clock::now();
  MethodMemory memory = plan_method_memory(graph, std::move(schedule.steps), lowered.delegates,
                                           r.target, libraries, options.state_layout);
  if (!memory.views.empty()) {
    r.passes.lines.push_back(
        "memory views: " + std::to_string(memory.views.size()) +
        " view node(s) share their input's memory (no instruction" +
        (memory.dynamic_views > 0
             ? "; " + std::to_string(memory.dynamic_views) + " dynamic: an et_view each)"
             : ")"));
  }
  r.memory = memory.plan.plan;
  r.seconds_plan = since(t);
  if (memory.allocation_only > 0) {
    r.passes.lines.push_back("allocation-only nodes: " + std::to_string(memory.allocation_only) +
                             " planned buffer(s) without an instruction");
  }

  t = std::chrono::steady_clock::now();
  MethodToEmit method;
  method.graph = &graph;
  method.input_spec = metadata_text(graph, frontend::kInputPytreeSpec);
  method.output_spec = metadata_text(graph, frontend::kOutputPytreeSpec);
  method.steps = std::move(memory.steps);
  method.delegates = std::move(lowered.delegates);
  method.placements = std::move(memory.plan.placements);
  method.arena_sizes = memory.plan.arena_sizes;
  for (const auto& [v, view] : memory.views) {
    if (!view.dynamic) method.view_sources[v] = view.source;
  }
  compile_control_flow(graph, options, partitioners, r, method);
  std::vector<NamedDataToEmit> named;
  if (!options.strip_debug_info) {
    GraphInfoInput info;
    info.graph = &graph;
    info.had_partitioners = !partitioners.empty();
    for (const Partitioner* p : partitioners) info.backends.push_back(p->label());
    for (const std::string& name : options.backends) {
      if (is_kernel_library(name)) info.kernel_libraries.push_back(name);
    }
    if (info.kernel_libraries.empty()) info.kernel_libraries = r.target.kernels;
    info.backends.insert(info.backends.end(), info.kernel_libraries.begin(),
                         info.kernel_libraries.end());
    info.regions = &lowered.kept;
    info.region_backend = lowered.region_backend;
    info.region_backend_id = lowered.region_backend_id;
    for (const RegionSummary& s : r.regions) info.region_report.push_back(s.report_json);
    info.refusals = &lowered.refusals;
    for (const auto& [v, view] : memory.views) info.memory_views.insert(view.node);
    info.instructions = instruction_origins(method);
    const std::string text = graph_info_json(info);
    named.push_back({kGraphInfoKey, std::vector<uint8_t>(text.begin(), text.end())});
    r.graph_info_bytes = text.size();
  }
  if (std::vector<uint8_t> bounds = input_min_sizes(graph); !bounds.empty())
    named.push_back({"pteron.min_sizes." + method.name, std::move(bounds)});
  if (std::vector<uint8_t> steps = input_size_steps(graph); !steps.empty())
    named.push_back({"pteron.size_steps." + method.name, std::move(steps)});
  if (std::vector<uint8_t> written = written_inputs(graph); !written.empty())
    named.push_back({"pteron.written_inputs." + method.name, std::move(written)});
  // Which leaves of the input spec are constants, and their values: what a caller passing the
  // model's own arguments must give there (Python's InputLayout checks and drops them).
  if (const std::string c = metadata_text(graph, frontend::kConstantArguments);
      !c.empty() && !method.input_spec.empty())
    named.push_back({"pteron.constant_arguments." + method.name, {c.begin(), c.end()}});
  if (capture != nullptr) {
    *capture = std::move(method);
    return result;
  }
  std::vector<MethodToEmit> methods;
  methods.push_back(std::move(method));
  if (extra != nullptr) methods.push_back(std::move(*extra));
  if (options.output_path.empty()) {
    result.program = emit_program(methods, &r.emit, named, constants);
  } else {
    try {
      FileSink sink(options.output_path.c_str());
      emit_program(methods, sink, &r.emit, named, constants);
      sink.close();
    } catch (...) {
      std::remove(options.output_path.c_str());  // never leave half a program behind
      throw;
    }
  }
  r.nodes_out = r.emit.instructions;
  r.seconds_emit = since(t);
  return result;
}

// `options` with the constant methods the .pt2 at `path` states (extra/constant_methods.json,
// written by torch.export.save(..., extra_files=...)) before the given ones, which win.
CompileOptions with_archive_constant_methods(const std::string& path,
                                             const CompileOptions& options) {
  constexpr const char* kEntry = "extra/constant_methods.json";
  const frontend::Pt2Archive archive = frontend::Pt2Archive::open(path);
  if (!archive.has(kEntry)) return options;
  CompileOptions out = options;
  out.constant_methods = merge_constant_methods(
      constant_methods_from_json(archive.read_text(kEntry), archive.full_name(kEntry)),
      options.constant_methods);
  return out;
}

}  // namespace

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options,
                            const std::vector<const Partitioner*>& partitioners) {
  if (options.fallback.empty())
    return compile_method(graph, options, partitioners, nullptr, nullptr);
  // The fallback plan: a copy of the graph as loaded, compiled with the fallback backends.
  ir::Graph cpu_graph = graph;
  CompileOptions cpu_options = options;
  cpu_options.backends = options.fallback;
  cpu_options.fallback.clear();
  cpu_options.output_path.clear();
  cpu_options.strip_debug_info = true;
  std::vector<std::string> notes;
  const std::vector<std::unique_ptr<Partitioner>> owned =
      make_partitioners(options.fallback, &notes);
  std::vector<const Partitioner*> cpu_partitioners;
  for (const auto& p : owned) cpu_partitioners.push_back(p.get());
  MethodToEmit cpu_method;
  CompileResult cpu =
      compile_method(cpu_graph, cpu_options, cpu_partitioners, &cpu_method, nullptr);
  cpu_method.name += kFallbackPlanSuffix;
  CompileResult result = compile_method(graph, options, partitioners, nullptr, &cpu_method);
  result.report.fallback_regions = cpu.report.regions;
  result.report.notes.insert(result.report.notes.end(), notes.begin(), notes.end());
  return result;
}

namespace {

// The backends a compile uses: the ones named, else the target's delegates then its kernel
// libraries (the host's: XNNPACK, cortex-m, optimized, portable). A default delegate or kernel
// library this build or tool lacks (no XNNPACK library on the build machine; a tool that does
// not link the int8 kernel library's compiler side) is left out, so the default still
// compiles; one named explicitly stays an error. Portable is always there.
std::vector<std::string> backends_to_use(const CompileOptions& options, const Target& target,
                                         std::vector<std::string>* left_out) {
  if (!options.backends.empty()) return options.backends;
  const std::vector<std::string> available = available_backends();
  std::vector<std::string> out;
  for (const std::string& name : target.backends) {
    if (std::find(available.begin(), available.end(), name) != available.end()) {
      out.push_back(name);
    } else {
      left_out->push_back(name);
    }
  }
  for (const std::string& name : target.kernels) {
    if (is_kernel_library(name)) {
      out.push_back(name);
    } else {
      left_out->push_back(name);
    }
  }
  return out;
}

CompileResult compile_with_backends(ir::Graph& graph, const CompileOptions& options,
                                    const std::vector<std::string>& backends,
                                    const std::vector<std::string>& left_out) {
  std::vector<std::string> notes;
  const std::vector<std::unique_ptr<Partitioner>> owned = make_partitioners(backends, &notes);
  std::vector<const Partitioner*> partitioners;
  for (const auto& p : owned) partitioners.push_back(p.get());
  CompileResult result = compile_graph(graph, options, partitioners);
  result.report.notes.insert(result.report.notes.begin(), notes.begin(), notes.end());
  result.report.backends = backends;
  result.report.default_backends = options.backends.empty();
  result.report.backends_left_out = left_out;
  return result;
}

}  // namespace

CompileResult compile_graph(ir::Graph& graph, const CompileOptions& options) {
  std::vector<std::string> left_out;
  const std::vector<std::string> backends =
      backends_to_use(options, load_target(options.target), &left_out);
  return compile_with_backends(graph, options, backends, left_out);
}

// The frontend's note on the model's run-time checks of tensor values it left out (those on
// floating values, or arithmetic beyond integers and comparisons: frontend/value_checks.h).
static void note_unchecked_values(const ir::Graph& graph, CompileReport& report) {
  const std::string where = metadata_text(graph, frontend::kUncheckedValueChecks);
  if (where.empty()) return;
  report.notes.push_back(
      "these run-time checks on tensor values are not enforced (pteron checks integer and bool "
      "values at run time; not floating ones, nor conditions beyond integer arithmetic and "
      "comparisons): at " +
      where);
}

CompileResult compile_pt2(const std::string& path, const CompileOptions& options) {
  const auto t = std::chrono::steady_clock::now();
  ir::Graph graph = frontend::load_pt2(path);
  const double load = since(t);
  CompileResult result = compile_graph(graph, with_archive_constant_methods(path, options));
  result.report.seconds_load = load;
  note_unchecked_values(graph, result.report);
  return result;
}

CompileResult compile_pt2_methods(const std::vector<std::pair<std::string, std::string>>& methods,
                                  const CompileOptions& options) {
  if (methods.empty()) throw CompileError("a program needs at least one method");
  if (!options.fallback.empty())
    throw CompileError("fallback plans are not supported in a program with several methods");
  if (options.quantize != nullptr)
    throw CompileError("quantization is not supported in a program with several methods");
  std::vector<ir::Graph> graphs;
  graphs.reserve(methods.size());
  std::set<std::string> names;
  for (const auto& [name, path] : methods) {
    if (name.empty() || !names.insert(name).second)
      throw CompileError("method name '" + name + "' is empty or given twice");
    graphs.push_back(frontend::load_pt2(path));
  }
  // A buffer one method mutates is state wherever it is read.
  std::set<std::string> state_names;
  for (const ir::Graph& g : graphs) {
    for (ir::ValueId v : g.states()) state_names.insert(g.value(v).initial->fqn);
  }
  for (ir::Graph& g : graphs) {
    const std::vector<ir::ValueId> constants = g.constants();
    for (ir::ValueId c : constants) {
      const ir::ConstantData& data = *g.value(c).constant;
      if (data.kind == ir::ConstantKind::Buffer && state_names.count(data.fqn)) g.make_state(c);
    }
  }
  const Target target = load_target(options.target);
  uint32_t state_mem_id = 1;
  for (const MemoryArena& r : target.memory) state_mem_id = std::max(state_mem_id, r.mem_id + 1);
  std::vector<const ir::Graph*> graph_ptrs;
  for (const ir::Graph& g : graphs) graph_ptrs.push_back(&g);
  const StateLayout layout = layout_state(graph_ptrs, state_mem_id, target.tensor_alignment);

  std::vector<std::string> left_out;
  const std::vector<std::string> backends = backends_to_use(options, target, &left_out);
  std::vector<std::string> notes;
  const std::vector<std::unique_ptr<Partitioner>> owned = make_partitioners(backends, &notes);
  std::vector<const Partitioner*> partitioners;
  for (const auto& p : owned) partitioners.push_back(p.get());
  CompileOptions method_options = options;
  method_options.output_path.clear();
  method_options.strip_debug_info = true;  // the graph info describes one method
  method_options.state_layout = &layout;
  std::vector<MethodToEmit> emitted(methods.size());
  CompileResult result;
  std::vector<std::string> method_names;
  for (const auto& [name, path] : methods) method_names.push_back(name);
  CompileReport constants_report;
  const std::vector<ConstantMethod> constants =
      program_constant_methods(graphs[0], with_archive_constant_methods(methods[0].second, options),
                               method_names, constants_report);
  for (size_t i = 0; i < methods.size(); ++i) {
    CompileResult one =
        compile_method(graphs[i], method_options, partitioners, &emitted[i], nullptr);
    emitted[i].name = methods[i].first;
    if (i == 0) result.report = std::move(one.report);
  }
  CompileReport& r = result.report;
  r.constant_methods = constants_report.constant_methods;
  r.backends = backends;
  r.default_backends = options.backends.empty();
  r.backends_left_out = left_out;
  r.notes = notes;
  for (const ir::Graph& graph : graphs) note_unchecked_values(graph, r);
  const auto t = std::chrono::steady_clock::now();
  if (options.output_path.empty()) {
    result.program = emit_program(emitted, &r.emit, {}, constants);
  } else {
    try {
      FileSink sink(options.output_path.c_str());
      emit_program(emitted, sink, &r.emit, {}, constants);
      sink.close();
    } catch (...) {
      std::remove(options.output_path.c_str());
      throw;
    }
  }
  r.nodes_out = r.emit.instructions;
  r.seconds_emit = since(t);
  return result;
}

}  // namespace pteron::compiler
