// `pteron firmware`: turns a program into a Cortex-M ELF (generated sources linked against the
// runtime, kernel and platform libraries of the target core's cross build folder) and runs it
// under QEMU on the target's board.
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
  std::string build_dir;     // cross build folder (build-m55, build-m7, build-m4)
  std::string baked_inputs;  // raw input bytes to build in, or empty
  // "simd" (the libraries as built: MVE on the M55, DSP on the M4/M7) or "scalar": link each
  // kernel library's scalar-only archive where the cross build offers one (cortex_m), to
  // measure what the vector paths save.
  std::string kernel_path = "simd";
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
  uint64_t code_flash = 0;     // vectors, code, constants, .data initialisers
  uint64_t program_flash = 0;  // the program image (and inputs built in)
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
// `program_region`: the target's [firmware] program_region (its section holds the program).
ElfSizes elf_sizes(const std::string& elf, const std::string& program_region);

struct RunResult {
  int exit_code = 0;
  std::string console;                     // the firmware's output
  std::map<std::string, uint64_t> report;  // from the "pteron-firmware: ok k=v ..." line
  uint64_t instructions = 0;               // between the markers, when counted
  bool counted = false;
};

// Runs `elf` under qemu-system-arm -M `machine`. `inputs`/`outputs` are host files of raw
// tensor bytes (empty: none / don't write). `icount_plugin` (a path) counts instructions per
// inference.
RunResult run_firmware(const std::string& elf, const std::string& machine,
                       const std::string& inputs, const std::string& outputs,
                       const std::string& icount_plugin, int timeout_seconds = 600);

}  // namespace pteron::firmware
