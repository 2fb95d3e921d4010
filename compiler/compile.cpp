#include "compiler/compile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <unordered_set>

#include "compiler/compile_error.h"
#include "compiler/emit/sym_prologue.h"
#include "compiler/frontend/pt2_archive.h"
#include "compiler/frontend/pt2_loader.h"
#include "compiler/memory/graph_memory.h"
#include "compiler/partition/registry.h"
#include "compiler/passes/last_token_logits.h"
#include "compiler/report/graph_info.h"
#include "runtime/executor/plan_choice.h"  // kFallbackPlanSuffix

namespace pteron::compiler {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Gives a region's boundary tensors the dim orders its payload expects: an input in another
// dim order is copied into a converted value just before the region reads it; an output takes
// the expected dim order and its readers outside the region get a copy in the old one.
// The copies are dim_order_ops::_clone_dim_order kernel calls, outside the delegate.
void convert_boundary_dim_orders(ir::Graph& graph, Region& region, const LoweredRegion& lowered) {
  const ir::OpSchema* clone =
      ir::OpSchemaRegistry::global().find("dim_order_ops::_clone_dim_order.default");
  const std::unordered_set<ir::NodeId> members(region.nodes.begin(), region.nodes.end());
  const auto convert = [&](ir::ValueId from, const std::vector<uint8_t>& order, ir::NodeId before,
                           const ir::DebugHandle& debug) {
    const ir::Value& v = graph.value(from);
    ir::TensorSpec spec = v.spec;
    spec.dim_order = order;
    const std::vector<int64_t> order_arg(order.begin(), order.end());
    const ir::NodeId n = graph.add_node(
        *clone, {ir::TensorRef{from}, false, order_arg},
        {ir::NewValue{graph.unique_name(v.name + "_dim_order"), spec}}, debug, before);
    return graph.node(n).outputs[0];
  };
  const auto repoint = [&](ir::NodeId user, ir::ValueId from, ir::ValueId to) {
    const std::vector<ir::Argument> args = graph.node(user).args;
    for (size_t k = 0; k < args.size(); ++k) {
      ir::Argument a = args[k];
      if (a.replace_value(from, to) > 0) graph.set_arg(user, k, std::move(a));
    }
  };
  const std::vector<ir::NodeId>& order = graph.nodes();
  const auto position = [&](ir::NodeId n) {
    return std::find(order.begin(), order.end(), n) - order.begin();
  };
  for (size_t i = 0; i < region.inputs.size() && i < lowered.input_dim_orders.size(); ++i) {
    const ir::ValueId v = region.inputs[i];
    const std::vector<uint8_t>& want = lowered.input_dim_orders[i];
    if (want.empty() || want == graph.value(v).spec.dim_order) continue;
    std::vector<ir::NodeId> readers;
    for (ir::NodeId u : graph.value(v).users) {
      if (members.count(u)) readers.push_back(u);
    }
    if (readers.empty()) continue;
    const ir::NodeId first =
        *std::min_element(readers.begin(), readers.end(),
                          [&](ir::NodeId a, ir::NodeId b) { return position(a) < position(b); });
    const ir::ValueId converted = convert(v, want, first, graph.node(first).debug);
    for (ir::NodeId u : readers) repoint(u, v, converted);
    region.inputs[i] = converted;
  }
  for (size_t j = 0; j < region.outputs.size() && j < lowered.output_dim_orders.size(); ++j) {
    const ir::ValueId v = region.outputs[j];
    const std::vector<uint8_t>& want = lowered.output_dim_orders[j];
    const ir::TensorSpec old = graph.value(v).spec;
    if (want.empty() || want == old.dim_order) continue;
    ir::TensorSpec spec = old;
    spec.dim_order = want;
    graph.set_spec(v, spec);
    std::vector<ir::NodeId> readers;
    for (ir::NodeId u : graph.value(v).users) {
      if (!members.count(u)) readers.push_back(u);
    }
    const std::vector<ir::ValueId>& outs = graph.outputs();
    const bool graph_output = std::find(outs.begin(), outs.end(), v) != outs.end();
    if (readers.empty() && !graph_output) continue;
    ir::NodeId before = ir::kNoNode;
    if (!readers.empty()) {
      before = *std::min_element(readers.begin(), readers.end(), [&](ir::NodeId a, ir::NodeId b) {
        return position(a) < position(b);
      });
    }
    const ir::ValueId converted =
        convert(v, old.dim_order, before, graph.node(graph.value(v).producer).debug);
    for (ir::NodeId u : readers) repoint(u, v, converted);
    if (graph_output) {
      std::vector<ir::ValueId> new_outs = outs;
      for (ir::ValueId& o : new_outs) o = o == v ? converted : o;
      graph.set_outputs(new_outs);
    }
  }
}

// A partitioner's lowering of one region: a Refusal thrown at any depth gives the region back
// with its reason; any other exception fails the compile, naming the region's first node (the
// lowering names the node at fault inside it where it knows).
LoweredRegion lower_region(const Partitioner& p, const ir::Graph& graph, const Region& region,
                           const PartitionContext& context) {
  try {
    return p.lower(graph, region, context);
  } catch (const Refusal& r) {
    LoweredRegion refused;
    refused.reason = r.what();
    return refused;
  } catch (const std::exception& e) {
    throw CompileError(graph.node(region.nodes.front()).describe() + ": " + p.label() +
                       ": lowering its region of " + std::to_string(region.nodes.size()) +
                       " node(s) failed: " + e.what());
  }
}

}  // namespace

// The kernel libraries named in `backends`, in order; the target's when none is named.
std::vector<const KernelLibrary*> selected_libraries(const std::vector<std::string>& backends,
                                                     const Target& target) {
  std::vector<const KernelLibrary*> out;
  for (const std::string& name : backends) {
    if (const KernelLibrary* lib = find_kernel_library(name)) out.push_back(lib);
  }
  if (out.empty()) {
    for (const std::string& name : target.kernels) {
      const KernelLibrary* lib = find_kernel_library(name);
      if (lib == nullptr)
        throw CompileError("target '" + target.name + "' names unknown kernel library '" + name +
                           "'");
      out.push_back(lib);
    }
  }
  return out;
}

namespace {

// Dynamic programs: the inputs' lower bounds for the runtime's set_input check (ExecuTorch's
// Tensor records only the upper bound): int32 little endian, per input its rank then its
// minimum sizes. Empty for a static program.
std::vector<uint8_t> input_min_sizes(const ir::Graph& graph) {
  bool dynamic = false;
  for (ir::ValueId v : graph.inputs()) dynamic = dynamic || graph.value(v).spec.is_dynamic();
  if (!dynamic) return {};
  std::vector<int32_t> words;
  for (ir::ValueId v : graph.inputs()) {
    const ir::TensorSpec& spec = graph.value(v).spec;
    words.push_back(static_cast<int32_t>(spec.rank()));
    for (size_t d = 0; d < spec.rank(); ++d)
      words.push_back(static_cast<int32_t>(spec.is_dynamic() ? spec.min_sizes[d] : spec.sizes[d]));
  }
  std::vector<uint8_t> bytes(words.size() * 4);
  std::memcpy(bytes.data(), words.data(), bytes.size());  // hosts are little endian
  return bytes;
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

// Compiles `graph` into one method. With `capture` set the method is handed back there instead
// of emitted (it refers to `graph`); `extra` is a method emitted after it (the fallback plan).
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

  auto t = std::chrono::steady_clock::now();
  r.passes = run_default_passes(graph);
  if (options.last_token_logits) {
    if (last_token_logits(graph) == 0) {
      throw CompileError(
          "--last-token-logits: the first output is not a linear's result over the tokens of "
          "one sequence ([1, T, vocab] logits)");
    }
    r.passes.lines.push_back("last_token_logits: the first output is the last token's row");
  }
  if (options.quantize != nullptr) {
    r.quantize = quantize_graph(graph, *options.quantize);
    remove_dead_code(graph);  // the float weights the int8 ones replaced
  }
  if (options.llm_quantize != nullptr) {
    bool optimized = false;
    for (const KernelLibrary* lib : selected_libraries(options.backends, r.target))
      optimized = optimized || lib->name == "optimized";
    if (!optimized) {
      throw CompileError(
          "LLM quantization runs on the optimized kernel library, which the selected backends "
          "do not include (add optimized, e.g. backends optimized,portable)");
    }
    r.passes.lines.push_back(quantize_llm(graph, *options.llm_quantize));
  }

  // Partition, then lower each region; a region whose lowering fails stays on the kernels.
  // Partitioners see the target and the kernel libraries the rest will run on (their cost
  // rules weigh them).
  PartitionContext context;
  context.target = &r.target;
  for (const KernelLibrary* lib : selected_libraries(options.backends, r.target))
    context.kernel_libraries.push_back(lib->name);
  PartitionResult parts = partition(graph, partitioners, context);
  MethodToEmit method;
  method.graph = &graph;
  std::unordered_set<ir::NodeId> delegated;
  PartitionResult kept;
  std::vector<std::string> region_backend, region_backend_id;
  for (size_t i = 0; i < partitioners.size(); ++i) {
    std::vector<Region> claimed;
    for (Region region : parts.regions) {
      if (region.partitioner != i) continue;
      compute_region_boundary(graph, region);
      claimed.push_back(std::move(region));
    }
    if (!claimed.empty()) partitioners[i]->prepare(graph, claimed, context);
  }
  for (Region region : parts.regions) {
    const Partitioner& p = *partitioners[region.partitioner];
    compute_region_boundary(graph, region);  // earlier regions may have added conversions
    LoweredRegion lowered = lower_region(p, graph, region, context);
    if (!lowered.ok) {
      for (ir::NodeId n : region.nodes)
        parts.refusals[n].push_back(p.label() + ": " + lowered.reason);
      continue;
    }
    convert_boundary_dim_orders(graph, region, lowered);
    const size_t index = kept.regions.size();
    for (ir::NodeId n : region.nodes) {
      kept.region_of[n] = index;
      delegated.insert(n);
    }
    kept.regions.push_back(region);
    region_backend.push_back(p.label());
    region_backend_id.push_back(p.backend_id());
    method.delegates.push_back(DelegateToEmit{p.backend_id(), std::move(lowered.payload),
                                              std::move(lowered.compile_specs), region.inputs,
                                              region.outputs, std::move(lowered.named_data)});
    r.regions.push_back({p.label(), region.nodes.size(), region.inputs.size(),
                         region.outputs.size(), std::move(lowered.report_json)});
  }
  // Kernel-library passes (fusions, lowering to a library's ops) on what no delegate took.
  std::vector<std::string> runtime_libraries;
  for (const KernelLibrary* lib : selected_libraries(options.backends, r.target)) {
    runtime_libraries.push_back(lib->runtime_library);
    for (const auto& [pass_name, pass] : lib->passes) {
      const auto pass_start = std::chrono::steady_clock::now();
      const int changed = pass(graph, delegated, context);
      char line[160];
      std::snprintf(line, sizeof line, "%s/%s: %d node(s) (%.1f ms)", lib->name.c_str(),
                    pass_name.c_str(), changed, since(pass_start) * 1e3);
      r.passes.lines.push_back(line);
    }
  }
  for (ir::NodeId n : contracted_order(graph, kept)) {
    auto it = kept.region_of.find(n);
    method.steps.push_back(
        it == kept.region_of.end() ? Step{n, -1} : Step{ir::kNoNode, static_cast<int>(it->second)});
  }
  for (ir::NodeId n : graph.nodes()) {
    if (delegated.count(n)) continue;
    auto it = parts.refusals.find(n);
    if (it == parts.refusals.end()) continue;
    for (const std::string& why : it->second)
      r.refusals.push_back(graph.node(n).describe() + ": " + why);
  }
  // State: every buffer update is computed in the buffer's memory, or copied into it last.
  if (const int copies = insert_state_write_backs(graph, method.steps, method.delegates)) {
    r.passes.lines.push_back("state write-backs: " + std::to_string(copies) +
                             " buffer update(s) copied into the buffer at the end");
  }
  check_kernels_available(graph, delegated, runtime_libraries);
  r.seconds_passes = since(t);

  t = std::chrono::steady_clock::now();
  std::unordered_set<std::string> in_place_ops;
  for (const KernelLibrary* lib : selected_libraries(options.backends, r.target))
    in_place_ops.insert(lib->in_place_ops.begin(), lib->in_place_ops.end());
  // Views that are their input's bytes get no instruction: their outputs share that memory.
  const std::unordered_map<ir::ValueId, MemoryView> views = find_memory_views(
      graph, method.steps, method.delegates, r.target.plan_inputs, r.target.tensor_alignment);
  method.steps = steps_without_views(method.steps, views);
  const int et_views = use_et_view_for_dynamic_views(graph, views);
  GraphMemoryPlan memory = plan_graph_memory(graph, r.target.memory, r.target.tensor_alignment,
                                             method.steps, method.delegates, r.target.plan_inputs,
                                             options.state_layout, in_place_ops, views);
  if (!views.empty()) {
    r.passes.lines.push_back(
        "memory views: " + std::to_string(views.size()) +
        " view node(s) share their input's memory (no instruction" +
        (et_views > 0 ? "; " + std::to_string(et_views) + " dynamic: an et_view each)" : ")"));
  }
  r.memory = memory.plan;
  r.seconds_plan = since(t);
  // Allocation-only nodes (a kernel's planned scratch) had their place in the plan; no
  // instruction runs them.
  std::unordered_set<std::string> allocation_ops;
  for (const KernelLibrary* lib : selected_libraries(options.backends, r.target))
    allocation_ops.insert(lib->allocation_ops.begin(), lib->allocation_ops.end());
  if (!allocation_ops.empty()) {
    std::vector<Step> kept_steps;
    for (const Step& s : method.steps) {
      if (s.delegate >= 0 || !allocation_ops.count(graph.node(s.node).op.str()))
        kept_steps.push_back(s);
    }
    if (kept_steps.size() < method.steps.size()) {
      r.passes.lines.push_back(
          "allocation-only nodes: " + std::to_string(method.steps.size() - kept_steps.size()) +
          " planned buffer(s) without an instruction");
    }
    method.steps = std::move(kept_steps);
  }

  t = std::chrono::steady_clock::now();
  method.placements = std::move(memory.placements);
  method.arena_sizes = memory.arena_sizes;
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
    info.regions = &kept;
    info.region_backend = region_backend;
    info.region_backend_id = region_backend_id;
    for (const RegionSummary& s : r.regions) info.region_report.push_back(s.report_json);
    info.refusals = &parts.refusals;
    info.steps = &method.steps;
    for (const auto& [v, view] : views) info.memory_views.insert(view.node);
    const SymPrologue prologue(graph, kernel_nodes(method));
    for (const SymCall& call : prologue.calls())
      info.sym_calls.push_back(call.op + "." + call.overload);
    const std::string text = graph_info_json(info);
    named.push_back({kGraphInfoKey, std::vector<uint8_t>(text.begin(), text.end())});
    r.graph_info_bytes = text.size();
  }
  if (std::vector<uint8_t> bounds = input_min_sizes(graph); !bounds.empty())
    named.push_back({"pteron.min_sizes." + method.name, std::move(bounds)});
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
// libraries (the host's: XNNPACK, optimized, portable). A default delegate this build lacks
// (no XNNPACK library on the build machine) is left out, so the default still compiles; one
// named explicitly stays an error.
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
  out.insert(out.end(), target.kernels.begin(), target.kernels.end());
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

CompileResult compile_pt2(const std::string& path, const CompileOptions& options) {
  const auto t = std::chrono::steady_clock::now();
  ir::Graph graph = frontend::load_pt2(path);
  const double load = since(t);
  CompileResult result = compile_graph(graph, with_archive_constant_methods(path, options));
  result.report.seconds_load = load;
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
  for (const MemoryRegion& r : target.memory) state_mem_id = std::max(state_mem_id, r.mem_id + 1);
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
