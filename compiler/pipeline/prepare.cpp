// Stage 1: the graph as every backend sees it (the default passes, then the options' rewrites).
#include <chrono>
#include <cstdio>

#include "compiler/compile_error.h"
#include "compiler/passes/last_token_logits.h"
#include "compiler/pipeline/pipeline.h"

namespace pteron::compiler {

const std::vector<NamedPass>& default_passes() {
  static const std::vector<NamedPass> passes = {
      {"normalize_dim_orders", normalize_dim_orders},
      {"simplify_views", simplify_views},
      {"remove_noops", remove_noops},
      // Again: removing a no-op clone (x.transpose(1, 2).contiguous()) leaves permute(permute(x))
      // chains that now compose, often into one transpose or a no-op.
      {"simplify_views", simplify_views},
      {"remove_noops", remove_noops},
      {"remove_dead_code", remove_dead_code},
      {"recompose_hard_activations", recompose_hard_activations},
      {"fold_batch_norm", fold_batch_norm},
      // After the batch norms fold into their 1-D convolutions (a squeeze would stand between).
      {"conv1d_as_conv2d", conv1d_as_conv2d},
      {"fuse_linear", fuse_linear},
      {"select_before_linear", select_before_linear},
      {"select_rows_early", select_rows_early},
      {"remove_dead_code", remove_dead_code},
      {"fold_constants", fold_constants},
      {"remove_dead_code", remove_dead_code},
  };
  return passes;
}

PassReport run_default_passes(ir::Graph& graph) {
  PassReport report;
  for (const NamedPass& pass : default_passes()) {
    const auto start = std::chrono::steady_clock::now();
    const int n = pass.run(graph);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    char line[160];
    std::snprintf(line, sizeof(line), "%s: %d node(s), %.1f ms", pass.name, n, ms);
    report.lines.push_back(line);
  }
  graph.verify();
  return report;
}

std::vector<const KernelLibrary*> selected_libraries(const std::vector<std::string>& backends,
                                                     const Target& target) {
  std::vector<const KernelLibrary*> out;
  for (const std::string& name : backends) {
    if (const KernelLibrary* lib = find_kernel_library(name)) out.push_back(lib);
  }
  if (out.empty()) {
    // The target's, less those this tool does not link (as compile.cpp's backends_to_use).
    for (const std::string& name : target.kernels) {
      if (const KernelLibrary* lib = find_kernel_library(name)) out.push_back(lib);
    }
    if (out.empty())
      throw CompileError("target '" + target.name + "' names no kernel library this build has");
  }
  return out;
}

PreparedGraph prepare_graph(ir::Graph& graph, const PrepareOptions& options,
                            const std::vector<const KernelLibrary*>& libraries) {
  PreparedGraph out;
  out.passes = run_default_passes(graph);
  if (options.last_token_logits) {
    if (last_token_logits(graph) == 0) {
      throw CompileError(
          "--last-token-logits: the first output is not a linear's result over the tokens of "
          "one sequence ([1, T, vocab] logits)");
    }
    out.passes.lines.push_back("last_token_logits: the first output is the last token's row");
  }
  if (options.quantize != nullptr) {
    out.quantize = quantize_graph(graph, *options.quantize);
    remove_dead_code(graph);  // the float weights the int8 ones replaced
  }
  if (options.llm_quantize != nullptr) {
    bool optimized = false;
    for (const KernelLibrary* lib : libraries) optimized = optimized || lib->name == "optimized";
    if (!optimized) {
      throw CompileError(
          "LLM quantization runs on the optimized kernel library, which the selected backends "
          "do not include (add optimized, e.g. backends optimized,portable)");
    }
    out.passes.lines.push_back(quantize_llm(graph, *options.llm_quantize));
  }
  return out;
}

}  // namespace pteron::compiler
