// Graph info: a compact JSON description of the lowered graph that the compiler stores in the
// program as named data (key kGraphInfoKey), so that `pteron inspect --delegation`, Python's
// get_delegation_info and (later) profilers can explain a program without its .pt2.
//
// Format (version 1), all indices 0-based:
//   {"version": 1, "backends": [names as compiled, in order], "kernel_libraries": [...],
//    "inputs": [{"name", "dtype", "shape"}], "outputs": [node index or -1 per graph output],
//    "nodes": [{"name" (its first output's name, unique), "from" (the exported node it came
//               from), "op", "module", "source", "outputs": [{"dtype", "shape"}],
//               "inputs": [producer node index, or the value's name for graph inputs and
//                          constants],
//               "flops", "runs_on": backend or kernel library, or "alias" for a view whose
//               output shares its input's memory (no instruction: memory_views.h),
//               "region": index (delegated only),
//               "reasons": ["partitioner: why"] (nodes left on the kernels only)}],
//    "regions": [{"backend", "backend_id", "nodes": [node indices],
//                 "inputs": [{"name", "bytes"}], "outputs": [{"name", "bytes"}]}],
//    "instructions": [{"nodes": [node indices], "region": index (delegate calls only),
//                      "prim": op (symbolic-int instructions, no nodes)}]}
// Nodes are in the graph's topological order; "instructions" follow the program's execution
// order one for one, so instruction i maps back to its graph nodes (debug handles); every
// instruction of a control-flow node (its jumps and inlined subgraphs) maps to that node.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/emit/program_emitter.h"
#include "compiler/ir/graph.h"
#include "compiler/partition/partitioner.h"
#include "compiler/partition/schedule.h"

namespace pteron::compiler {

inline constexpr const char* kGraphInfoKey = "pteron.graph_info";
inline constexpr int kGraphInfoVersion = 1;
// The reason every kernel node carries when the compile had no backend partitioner.
inline constexpr const char* kNoPartitionerReason =
    "no backend partitioner was part of this compile";

struct GraphInfoInput {
  const ir::Graph* graph = nullptr;
  std::vector<std::string> backends;          // partitioners then kernel libraries, as compiled
  std::vector<std::string> kernel_libraries;  // preference order for nodes left on kernels
  bool had_partitioners = false;              // whether any backend partitioner ran
  const PartitionResult* regions = nullptr;   // the regions that were lowered
  std::vector<std::string> region_backend;    // partitioner name per region
  std::vector<std::string> region_backend_id;
  std::vector<std::string> region_report;  // the backend's report JSON per region ("": none)
  // Per node left on the kernels: each partitioner's reason (PartitionResult::refusals plus
  // lowering failures).
  const std::unordered_map<ir::NodeId, std::vector<std::string>>* refusals = nullptr;
  std::unordered_set<ir::NodeId> memory_views;  // view nodes without an instruction
  // Every instruction of the emitted method, in execution order (emit's instruction_origins).
  std::vector<InstructionOrigin> instructions;
};

std::string graph_info_json(const GraphInfoInput& input);

}  // namespace pteron::compiler
