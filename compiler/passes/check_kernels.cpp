#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "compiler/compile_error.h"
#include "compiler/emit/kernel_call_form.h"
#include "compiler/passes/passes.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {

namespace {

bool has_kernel(const std::string& qualified, const std::vector<std::string>& libraries) {
  for (const KernelEntry& e : registered_kernels()) {
    if (qualified != e.name) continue;
    for (const std::string& library : libraries) {
      if (library == e.library) return true;
    }
  }
  return false;
}

}  // namespace

void check_kernels_available(const ir::Graph& graph,
                             const std::unordered_set<ir::NodeId>& delegated,
                             const std::vector<std::string>& libraries) {
  // op -> first node needing it, and how many nodes need it
  std::map<std::string, std::pair<std::string, int>> missing;
  for (ir::NodeId id : graph.nodes()) {
    if (delegated.count(id)) continue;
    const ir::Node& node = graph.node(id);
    const ir::OpSchema* schema = kernel_schema_for(node);
    std::string key;
    if (schema == nullptr && node.op.ns == "torchao") {
      // Only the optimized library's quantized_linear pass turns these into kernels.
      key = node.op.str() +
            " (torchao quantization: compile with the optimized library, "
            "backends optimized,portable)";
    } else if (schema == nullptr) {
      key = node.op.str() + " (no out-variant form)";
    } else {
      const std::string qualified =
          schema->op.ns + "::" + schema->op.name + "." + schema->op.overload;
      if (has_kernel(qualified, libraries)) continue;
      key = schema->op.str();
    }
    auto [it, inserted] = missing.try_emplace(key, node.describe(), 0);
    ++it->second.second;
  }
  if (missing.empty()) return;
  std::string names;
  for (const std::string& library : libraries) names += (names.empty() ? "" : ", ") + library;
  std::string message = std::to_string(missing.size()) +
                        " operator(s) have no kernel in the selected kernel libraries (" + names +
                        "): ";
  bool first = true;
  for (const auto& [op, where] : missing) {
    message += (first ? "" : "; ") + op + " x" + std::to_string(where.second) + ", first at " +
               where.first;
    first = false;
  }
  throw CompileError(message);
}

PassReport run_default_passes(ir::Graph& graph) {
  PassReport report;
  auto run = [&](const char* pass, int (*fn)(ir::Graph&)) {
    const auto start = std::chrono::steady_clock::now();
    const int n = fn(graph);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char line[160];
    std::snprintf(line, sizeof(line), "%s: %d node(s), %.1f ms", pass, n, ms);
    report.lines.push_back(line);
  };
  run("normalize_dim_orders", normalize_dim_orders);
  run("simplify_views", simplify_views);
  run("remove_noops", remove_noops);
  // Again: removing a no-op clone (x.transpose(1, 2).contiguous()) leaves permute(permute(x))
  // chains that now compose, often into one transpose or a no-op.
  run("simplify_views", simplify_views);
  run("remove_noops", remove_noops);
  run("remove_dead_code", remove_dead_code);
  run("fold_batch_norm", fold_batch_norm);
  run("fuse_linear", fuse_linear);
  run("select_before_linear", select_before_linear);
  run("select_rows_early", select_rows_early);
  run("remove_dead_code", remove_dead_code);
  run("fold_constants", fold_constants);
  run("remove_dead_code", remove_dead_code);
  graph.verify();
  return report;
}

}  // namespace pteron::compiler
