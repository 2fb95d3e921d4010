// Kernels: the functions a KernelCall instruction runs. One registry, filled at start-up by
// PTERON_KERNEL registrations (or, in selective bare-metal builds, by a generated file).
#pragma once

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"

namespace pteron {

// Per-call context: scratch memory that is reset before every instruction.
struct KernelContext {
  MemoryAllocator* scratch = nullptr;

  // Scratch memory for this call; nullptr if none is left (the kernel reports OutOfMemory).
  void* allocate_scratch(size_t bytes, size_t alignment = 16) {
    return scratch ? scratch->allocate(bytes, alignment) : nullptr;
  }
};

// `args` are the KernelCall's values in schema order: inputs, then out arguments. ExecuTorch
// appends the returned tensors after them; kernels ignore trailing extras.
using KernelFn = Error (*)(KernelContext& ctx, Span<EValue*> args);

struct KernelEntry {
  const char* name;  // "aten::add.out": operator name, '.', overload
  KernelFn fn;
};

// Registers `fn` under `name`. Later registrations of the same name replace earlier ones, so an
// optimized library linked after the portable one wins. Returns false when the table is full.
bool register_kernel(const char* name, KernelFn fn);

// Looks up "name.overload" (overload may be empty: then just "name").
const KernelEntry* find_kernel(const char* name, const char* overload);
Span<const KernelEntry> registered_kernels();

// Validates argument tags against `signature` before a kernel reads them, so a malformed
// program can never make a kernel misread a union. One character per argument:
//   T tensor   t tensor or None   S scalar   s scalar or None   I int   i int or None
//   B bool     D double           d double or None   L int list   l int list or None
//   A tensor list   O optional-tensor list   * anything
Error check_args(const char* op, Span<EValue*> args, const char* signature);

}  // namespace pteron

#define PTERON_KERNEL_CONCAT_(a, b) a##b
#define PTERON_KERNEL_CONCAT(a, b) PTERON_KERNEL_CONCAT_(a, b)
// Registers a kernel at static-initialisation time (compiled out with PTERON_SELECTIVE_BUILD,
// where a generated list registers only what a program uses).
#if defined(PTERON_SELECTIVE_BUILD)
#define PTERON_KERNEL(name, fn)
#else
#define PTERON_KERNEL(name, fn)                                                     \
  [[maybe_unused]] static const bool PTERON_KERNEL_CONCAT(pteron_kernel_reg_, __LINE__) = \
      ::pteron::register_kernel(name, fn)
#endif
