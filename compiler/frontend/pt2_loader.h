// Reads a torch 2.13 `.pt2` archive (torch.export.save) into an ir::Graph.
#pragma once

#include <string>

#include "compiler/ir/graph.h"

namespace pteron::compiler::frontend {

struct LoadOptions {
  // Which exported program of the archive to read (models/<name>.json).
  std::string model_name = "model";
};

// The graph of the archive's program: user inputs, constants pointing into the memory-mapped
// file (the graph keeps the mapping alive), nodes with every argument filled in schema order,
// debug handles from the export metadata, and outputs. metadata() holds "source" (the path),
// "torch_version", "schema_version", the pytree specs (kInputPytreeSpec, kOutputPytreeSpec), the
// constant arguments (kConstantArguments) and, when the model checks tensor values at run time in a
// way pteron leaves out (frontend/value_checks.h), kUncheckedValueChecks: where those checks are.
//
// Throws CompileError with a one-line message naming the file, archive entry, node and
// source location at fault for any input it cannot read (missing entries, bad JSON, unknown
// ops or argument kinds, truncated weights, symbolic shapes, other schema versions).
ir::Graph load_pt2(const std::string& path, const LoadOptions& options = {});

inline constexpr const char* kUncheckedValueChecks = "unchecked_value_checks";
// torch's treespec_dumps text of the model's (args, kwargs) and of its result, when the archive
// states them (module_call_graph): how its nested arguments flatten into the graph's inputs.
inline constexpr const char* kInputPytreeSpec = "pytree_in_spec";
inline constexpr const char* kOutputPytreeSpec = "pytree_out_spec";
// The arguments export specialised on (leaves of the input spec that are no graph input), as
// JSON: [[position among the flattened arguments, export's value ({"as_bool": true}, ...)]].
inline constexpr const char* kConstantArguments = "constant_arguments";

}  // namespace pteron::compiler::frontend
