// Emits an ExecuTorch-compatible `.pte` from lowered methods: every node becomes a KernelCall of
// its out-variant (view ops through their *_copy form), constants go to one aligned segment
// (identical bytes stored once), planned tensors carry their arena and offset.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

struct TensorPlacement {
  uint32_t mem_id = 1;
  uint64_t offset = 0;
};

struct MethodToEmit {
  std::string name = "forward";
  const ir::Graph* graph = nullptr;
  // Every intermediate value (node outputs, graph outputs) must be placed.
  std::unordered_map<ir::ValueId, TensorPlacement> placements;
  std::vector<int64_t> arena_sizes;  // bytes per arena; entry i is memory_id i + 1
};

struct EmitStats {
  uint64_t constant_bytes = 0;    // bytes in the constant segment
  size_t constants = 0;           // constant tensors referenced
  size_t deduplicated = 0;        // constants stored once for several uses
  size_t values = 0;              // EValues across methods
  size_t instructions = 0;        // KernelCalls across methods
  uint64_t file_bytes = 0;
};

// Throws CompileError naming the node when a node has no out-variant kernel form or an
// argument cannot be encoded.
std::vector<uint8_t> emit_program(const std::vector<MethodToEmit>& methods, EmitStats* stats = nullptr);

}  // namespace pteron::compiler
