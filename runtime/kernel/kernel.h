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
  // A mark to give back to: what is allocated after it is released by release_scratch(mark).
  size_t scratch_mark() const { return scratch ? scratch->used() : 0; }
  void release_scratch(size_t mark) {
    if (scratch) scratch->rewind(mark);
  }
};

// `args` are the KernelCall's values in schema order: inputs, then out arguments. ExecuTorch
// appends the returned tensors after them; kernels ignore trailing extras. A kernel runs only
// through call_kernel, so the tags of the arguments its signature names are checked already.
using KernelFn = Error (*)(KernelContext& ctx, Span<EValue*> args);

struct KernelEntry {
  const char* name;  // "aten::add.out": operator name, '.', overload
  KernelFn fn;
  const char* library;  // "portable", "optimized", "cortex_m": which kernel library it is from
  // One check_args letter per argument of the operator's out variant, in schema order (for an
  // op without one, e.g. a prim op, its arguments then its returns): "TTST" for aten::add.out.
  // The same for every library registering the name; tests/compiler/test_kernel_signatures.cpp
  // checks each against the op schema table.
  const char* signature;
};

// Registers `fn` under `name` for `library`. Several libraries may register the same name (an
// optimized kernel next to the portable one); the same name twice in one library replaces the
// first. Returns false when the table is full.
bool register_kernel(const char* name, KernelFn fn, const char* library, const char* signature);

// Which libraries lookups may use, most preferred first (e.g. {"portable"} to run a program on
// the portable kernels only). An empty list (the default) allows every library and prefers any
// other library over "portable". Takes effect for methods loaded afterwards. The strings must
// outlive the setting. Returns false if more than kMaxKernelLibraries are given.
constexpr size_t kMaxKernelLibraries = 8;
bool set_kernel_libraries(Span<const char* const> libraries);

// Looks up "name.overload" (overload may be empty: then just "name") in the preferred library
// that has it.
const KernelEntry* find_kernel(const char* name, const char* overload);
Span<const KernelEntry> registered_kernels();

// Runs `kernel` on `args` after checking them against its signature (check_args): the one way a
// kernel is called (methods, the compiler's host runner, the Python bindings, a fast kernel
// handing a call to the portable one), so a malformed program can never make a kernel misread a
// union.
Error call_kernel(const KernelEntry& kernel, KernelContext& ctx, Span<EValue*> args);

// Validates argument tags against `signature` before a kernel reads them. One character per
// argument:
//   T tensor   t tensor or None   S scalar   s scalar or None   I int   i int or None
//   B bool     D double           d double or None   L int list   l int list or None
//   A tensor list   O optional-tensor list   * anything
Error check_args(const char* op, Span<EValue*> args, const char* signature);

}  // namespace pteron

#define PTERON_KERNEL_CONCAT_(a, b) a##b
#define PTERON_KERNEL_CONCAT(a, b) PTERON_KERNEL_CONCAT_(a, b)
// Registers a kernel with its signature (KernelEntry::signature) at static-initialisation time
// (compiled out with PTERON_SELECTIVE_BUILD, where a generated list registers only what a
// program uses).
// A kernel library's build defines PTERON_KERNEL_LIBRARY (a string literal) for its sources.
#ifndef PTERON_KERNEL_LIBRARY
#define PTERON_KERNEL_LIBRARY "portable"
#endif
#if defined(PTERON_SELECTIVE_BUILD)
#include "runtime/kernel/selective_kernel.h"  // constant entries a generated list references
#else
#define PTERON_KERNEL(name, fn, signature)                                                \
  [[maybe_unused]] static const bool PTERON_KERNEL_CONCAT(pteron_kernel_reg_, __LINE__) = \
      ::pteron::register_kernel(name, fn, PTERON_KERNEL_LIBRARY, signature)
#endif
