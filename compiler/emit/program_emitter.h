// Emits an ExecuTorch-compatible `.pte` from lowered methods: every node becomes a KernelCall of
// its out-variant (view ops through their *_copy form), constants go to one aligned segment
// (identical bytes stored once), planned tensors carry their arena and offset.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/emit/constant_methods.h"
#include "compiler/emit/pte_writer.h"
#include "compiler/ir/graph.h"
#include "compiler/memory/memory_planner.h"  // TensorPlacement
#include "compiler/partition/schedule.h"     // Step, LoweredDelegate

namespace pteron::compiler {

struct MethodToEmit;

// A control-flow node's subgraphs (pteron::cond: true then false branch; pteron::while_loop:
// cond then body), each compiled as a method of its own; their instructions go inline between
// JumpFalse instructions, their values into the method's table.
struct ControlFlowToEmit {
  ir::NodeId node = ir::kNoNode;
  std::vector<MethodToEmit> graphs;  // a vector's element may be incomplete here (C++17)
};

struct MethodToEmit {
  std::string name = "forward";
  const ir::Graph* graph = nullptr;
  // Execution order; empty means every node of the graph in order as a kernel call.
  std::vector<Step> steps;
  std::vector<LoweredDelegate> delegates;
  // Every intermediate value (node outputs, graph outputs) must be placed.
  std::unordered_map<ir::ValueId, TensorPlacement> placements;
  std::vector<int64_t> arena_sizes;  // bytes per arena; entry i is memory_id i + 1
  // Static memory views (no instruction): each output and the tensor whose bytes it is, which
  // a size read from the view (x[0].item()) waits for.
  std::unordered_map<ir::ValueId, ir::ValueId> view_sources;
  // The control-flow nodes' subgraphs; their placements are in this method's arenas.
  std::vector<ControlFlowToEmit> control_flow;
  // torch's treespec_dumps text of the model's (args, kwargs) and of its result, written as the
  // plan's container metadata (as ExecuTorch does) so that a loaded program can take the
  // model's nested arguments; empty when unknown (no container metadata is written).
  std::string input_spec, output_spec;
};

// Where one instruction of an emitted method comes from, in execution order.
struct InstructionOrigin {
  // A kernel call's node; for a control-flow node, every instruction of its jumps, copies and
  // inlined subgraphs.
  ir::NodeId node = ir::kNoNode;
  int delegate = -1;  // a delegate call's region (index into the method's delegates)
  std::string prim;   // a symbolic-int instruction's op ("aten::sym_size.int"), else ""
};

// The origin of each instruction emit_program writes for `m`, one for one (the emitter run on a
// scratch buffer): what the graph info maps profiles and the explorer's labels with.
std::vector<InstructionOrigin> instruction_origins(const MethodToEmit& m);

// Program-level bytes stored in their own segment and found by key (Program.named_data), e.g.
// the graph info the delegation report reads.
struct NamedDataToEmit {
  std::string key;
  std::vector<uint8_t> bytes;
};

struct EmitStats {
  uint64_t constant_bytes = 0;        // bytes in the constant segment
  size_t constants = 0;               // constant tensors referenced
  size_t deduplicated = 0;            // constants stored once for several uses
  uint64_t delegate_named_bytes = 0;  // delegates' named data (shared weights), stored once each
  size_t named_shared = 0;            // delegates' references to a named-data entry already stored
  size_t values = 0;                  // EValues across methods
  size_t instructions = 0;            // KernelCalls and DelegateCalls across methods
  size_t delegate_calls = 0;
  uint64_t file_bytes = 0;
};

// The nodes `m` runs as kernel calls, in order.
std::vector<ir::NodeId> kernel_nodes(const MethodToEmit& m);

// Throws CompileError naming the node when a node has no out-variant kernel form or an
// argument cannot be encoded. `constant_methods` (checked by the caller) follow the methods,
// as ExecuTorch emits its prim getters after the graphs.
std::vector<uint8_t> emit_program(const std::vector<MethodToEmit>& methods,
                                  EmitStats* stats = nullptr,
                                  const std::vector<NamedDataToEmit>& named_data = {},
                                  const std::vector<ConstantMethod>& constant_methods = {});
// The same, streamed to `sink` (weights go from the archive to the file without a copy);
// returns the file size.
uint64_t emit_program(const std::vector<MethodToEmit>& methods, ByteSink& sink,
                      EmitStats* stats = nullptr,
                      const std::vector<NamedDataToEmit>& named_data = {},
                      const std::vector<ConstantMethod>& constant_methods = {});

}  // namespace pteron::compiler
