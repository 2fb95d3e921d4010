// Memory planning: give every planned tensor an arena (mem_id) and a byte offset so that no two
// tensors alive at the same time overlap, using as few bytes as possible.
//
// Algorithm: greedy with best fit (as in TFLite Micro's GreedyMemoryPlanner) — place
// tensors from largest to smallest, each at the smallest gap between already-placed tensors
// whose lifetimes overlap it. It reuses space at byte granularity, which ExecuTorch's default
// greedy planner (whole shared buffers) cannot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pteron::compiler {

struct MemoryArena {
  std::string name;       // e.g. "dtcm", "sram", "host"
  uint32_t mem_id = 1;    // the program's 1-based arena index
  uint64_t capacity = 0;  // bytes; 0 means unlimited
};

// A tensor that needs planned memory, alive from instruction `first` to `last` inclusive.
struct TensorLifetime {
  uint64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct Placement {
  uint32_t mem_id = 0;
  uint64_t offset = 0;
};

// Where a graph value lives in the method's planned memory (what the emitter writes into the
// tensor's allocation_info).
struct TensorPlacement {
  uint32_t mem_id = 1;
  uint64_t offset = 0;
};

struct ArenaUsage {
  std::string name;
  uint32_t mem_id = 0;
  uint64_t capacity = 0;
  uint64_t used = 0;  // arena size after planning
};

struct MemoryPlan {
  bool fits = true;
  std::string why_not;                // set when !fits: names the arena and the numbers
  std::vector<Placement> placements;  // one per TensorLifetime, same order
  std::vector<ArenaUsage> arenas;     // in the order given
  uint64_t peak_live_bytes = 0;       // lower bound: most bytes alive at any instruction
  uint64_t total_arena_bytes = 0;
  size_t in_place_outputs = 0;  // outputs placed over an input (plan_graph_memory)
  double efficiency() const {
    return total_arena_bytes == 0 ? 1.0 : static_cast<double>(peak_live_bytes) / total_arena_bytes;
  }
};

// A tensor (`output`, an index into the planned tensors) that may overlap another that dies
// where it is made (`input`), starting at least `lag` bytes before it: its kernel never
// overwrites an input byte it has still to read when placed so (an InPlaceRule's answer; 0 for
// element-wise kernels, which may then share the input's bytes).
struct InPlacePair {
  size_t output = 0;
  size_t input = 0;
  uint64_t lag = 0;
};

// Plans `tensors` into `arenas`, filling them in order (fastest first): a tensor goes to the
// first arena where it fits within capacity. `alignment` applies to every offset. Each pair of
// `in_place` may overlap as it allows, where best fit finds that placement smallest;
// peak_live_bytes counts every tensor apart, so such a plan can be below it.
MemoryPlan plan_memory(const std::vector<TensorLifetime>& tensors,
                       const std::vector<MemoryArena>& arenas, uint64_t alignment,
                       const std::vector<InPlacePair>& in_place = {});

// Proves the plan: returns "" when no two tensors alive at the same time overlap in the same
// arena (except an `in_place` pair placed as it allows) and every tensor lies within its arena;
// otherwise a description of the first conflict.
std::string check_memory_plan(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan,
                              const std::vector<InPlacePair>& in_place = {});

// A human-readable report: bytes per arena, lower bound and efficiency.
std::string describe_memory_plan(const MemoryPlan& plan);

}  // namespace pteron::compiler
