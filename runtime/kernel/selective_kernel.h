// Selective builds (PTERON_SELECTIVE_BUILD, firmware): PTERON_KERNEL defines no constructor,
// only a constant KernelEntry under the linker symbol "pteron_kernel:<library>:<name>". The
// file `pteron firmware` generates references the entries its program uses (by
// PTERON_KERNEL_SYMBOL) and registers them, so the linker keeps exactly those kernels and
// drops the rest (--gc-sections). Included by kernel.h; not used directly.
#pragma once

// The (quoted, for the assembler) symbol of a selective-build kernel entry.
#define PTERON_KERNEL_SYMBOL(library, name) "\"pteron_kernel:" library ":" name "\""

#define PTERON_KERNEL(name, fn, signature)                                                        \
  extern const ::pteron::KernelEntry PTERON_KERNEL_CONCAT(                                        \
      pteron_kernel_entry_, __LINE__) __asm__(PTERON_KERNEL_SYMBOL(PTERON_KERNEL_LIBRARY, name)); \
  const ::pteron::KernelEntry PTERON_KERNEL_CONCAT(pteron_kernel_entry_, __LINE__) = {            \
      name, fn, PTERON_KERNEL_LIBRARY, signature}
