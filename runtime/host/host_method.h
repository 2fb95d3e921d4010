// Hosted convenience: open a program file and load a method with heap-backed arenas sized from
// the program. Used by the CLI, the Python module and tests; bare-metal builds use static
// arenas instead (see firmware/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/host/host_constant_cache.h"
#include "runtime/host/zeroed_arena.h"
#include "runtime/loader/data_loader.h"

namespace pteron {

class HostProgram {
 public:
  // Opens `path` (mmapped, zero-copy) and verifies it.
  static Result<std::unique_ptr<HostProgram>> open(const char* path);
  // Verifies a program held in memory; `bytes` is copied so the caller may free it.
  static Result<std::unique_ptr<HostProgram>> from_bytes(const void* bytes, size_t size);

  const Program& program() const { return *program_; }

  // The arena every method of this program uses for memory id `mem_id` when that arena holds
  // only state (see HostMethod::load): allocated on first use at the largest size any method
  // plans for it, so methods sharing a buffer share its bytes. Null when out of memory.
  Span<uint8_t> shared_state_arena(uint32_t mem_id, size_t max_bytes) const;

  // What the kernels derived from this program's constants (weights packed for the SGEMM's
  // micro-kernel on their first product), shared by its methods, freed with the program.
  // PTERON_CONSTANT_CACHE=off in the environment when the program is opened leaves it empty:
  // kernels then derive per call (less memory; before/after measurements).
  const HostConstantCache& constant_cache() const { return *constant_cache_; }

 private:
  // Registers the program's bytes with constant_cache_ (runtime/host/host_constant_cache.h).
  // `file_mapped`: the loader maps the program's file (open()), not a copy in memory.
  void start_constant_cache(bool file_mapped);

  mutable std::vector<std::pair<uint32_t, ZeroedArena>> state_arenas_;
  mutable std::vector<Span<uint8_t>> state_spans_;
  std::vector<uint64_t> owned_bytes_;  // 8-byte aligned copy for from_bytes()
  std::unique_ptr<DataLoader> loader_;
  std::optional<Program> program_;
  std::optional<FreeableBuffer> file_bytes_;  // the registered view of the whole file
  // Last: destroyed (and unregistered) first, before the bytes it was registered for.
  std::unique_ptr<HostConstantCache> constant_cache_ = std::make_unique<HostConstantCache>();
};

struct HostMethodOptions {
  size_t scratch_bytes = size_t{64} << 20;  // per-instruction scratch (im2col, packing)
  // Refuse programs whose planned arenas exceed this (a corrupt file can ask for anything).
  size_t max_planned_bytes = size_t{16} << 30;
};

class HostMethod {
 public:
  static Result<std::unique_ptr<HostMethod>> load(const HostProgram& program, const char* name,
                                                  const HostMethodOptions& options = {});
  Method& method() { return *method_; }
  // The plan loaded: the method asked for, or its CPU fallback (runtime/executor/plan_choice.h)
  // when that needs a backend this device lacks; then fallback_reason() says which and why.
  const std::string& plan_name() const { return plan_name_; }
  const std::string& fallback_reason() const { return fallback_reason_; }
  // Bytes used by load-time structures, and the total planned arena bytes.
  size_t method_allocator_used() const { return method_allocator_.used(); }
  size_t planned_bytes() const;

 private:
  struct AlignedFree {
    void operator()(uint8_t* p) const;
  };
  std::vector<ZeroedArena> arenas_;
  std::vector<Span<uint8_t>> arena_spans_;
  HierarchicalAllocator planned_;
  std::unique_ptr<uint8_t, AlignedFree> method_memory_;
  MemoryAllocator method_allocator_;
  std::unique_ptr<uint8_t, AlignedFree> scratch_memory_;
  MemoryAllocator scratch_allocator_;
  MemoryManager memory_;
  std::optional<Method> method_;
  std::string plan_name_, fallback_reason_;
};

}  // namespace pteron
