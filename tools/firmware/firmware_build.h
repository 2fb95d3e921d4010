// `pteron firmware`: turns a program into a Cortex-M55 ELF (generated sources linked against
// the runtime, kernel and platform libraries of a cross build folder) and runs it under QEMU.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/firmware/firmware_target.h"

namespace pteron::firmware {

struct BuildOptions {
  std::string program;  // .pte
  std::string method = "forward";
  std::string output;        // .elf
  std::string source_dir;    // repository (for configuring the cross build)
  std::string build_dir;     // cross build folder (build-m55)
  std::string baked_inputs;  // raw input bytes to build in, or empty
  // "mve" (the libraries as built) or "scalar": link each kernel library's scalar-only archive
  // where the cross build offers one (cortex_m), to measure what the vector paths save.
  std::string kernel_path = "mve";
  // Trimmed reservations from a first run on the device (`pteron firmware --trim`); 0: the
  // method memory measured on the host (64-bit pointers: an upper bound) and the target's stack.
  uint64_t method_bytes = 0;
  uint64_t stack_size = 0;
  // newlib's heap: with --trim what a first run's sbrk took (newlib's stdio state), else 1 KiB
  // for newlib's allocations at start-up (pteron itself never allocates).
  uint64_t heap_size = 1024;
  bool quiet = false;
};

// Sizes read back from the linked ELF.
struct ElfSizes {
  uint64_t code_flash = 0;     // ITCM: vectors, code, constants, .data initialisers
  uint64_t program_flash = 0;  // QSPI: the program image
  uint64_t ram = 0;            // every RAM section: .data, .bss, arenas, scratch, stack
  uint64_t stack = 0;
  std::map<std::string, uint64_t> sections;
  uint64_t flash() const { return code_flash + program_flash; }
};

struct BuildResult {
  ProgramNeeds needs;
  BudgetEstimate estimate;
  std::vector<std::string> kernels;  // "portable:aten::convolution.out"
  ElfSizes sizes;
};

// Throws std::runtime_error with one line on any failure (missing kernels, compile errors).
BuildResult build_firmware(const FirmwareTarget& target, const BuildOptions& options);
ElfSizes elf_sizes(const std::string& elf);

struct RunResult {
  int exit_code = 0;
  std::string console;                     // the firmware's output
  std::map<std::string, uint64_t> report;  // from the "pteron-firmware: ok k=v ..." line
  uint64_t instructions = 0;               // between the markers, when counted
  bool counted = false;
};

// Runs `elf` under qemu-system-arm. `inputs`/`outputs` are host files of raw tensor bytes
// (empty: none / don't write). `icount_plugin` (a path) counts instructions per inference.
RunResult run_firmware(const std::string& elf, const std::string& inputs,
                       const std::string& outputs, const std::string& icount_plugin,
                       int timeout_seconds = 600);

}  // namespace pteron::firmware
