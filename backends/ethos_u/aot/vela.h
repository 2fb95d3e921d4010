// Vela (PyPI ethos-u-vela, pinned in tools/arm/requirements-arm.txt) as the compiler runs it:
// a subprocess on a TOSA file with --output-format raw, whose .npz (command stream, encoded
// weights, scratch sizes, I/O placement) and summary CSV (performance estimate) are read back.
//
// Which Vela: $PTERON_VELA, else the .venv-arm this build was configured with
// (PTERON_ARM_VENV/bin/vela), else `vela` on PATH. A missing Vela is a one-line CompileError.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/target/target.h"

namespace pteron::ethos_u {

// The [npu] table of a target file (targets/ethos-u55-128.toml ...).
struct NpuConfig {
  std::string accelerator;    // Vela --accelerator-config, e.g. "ethos-u55-128"
  std::string system_config;  // Vela --system-config (a section of config_file)
  std::string memory_mode;    // Vela --memory-mode: Shared_Sram, Sram_Only, Dedicated_Sram...
  std::string config_file;    // Vela --config (absolute; pteron's targets/vela/pteron_vela.ini)
  std::vector<std::string> extra_args;
};

// Reads [npu] from the target's file. Throws CompileError when the target has none.
NpuConfig npu_config_of(const compiler::Target& target);
// The same for a target name or path (loads it).
NpuConfig npu_config_of(const std::string& target_name_or_path);

std::string vela_path();  // what run_vela would execute

struct VelaIo {
  uint32_t elem_size = 0;
  int32_t region = 0;
  int64_t offset = 0;
};

struct VelaEstimate {
  uint64_t npu_cycles = 0, total_cycles = 0, macs = 0;
  uint64_t sram_bytes = 0, off_chip_flash_bytes = 0, on_chip_flash_bytes = 0, dram_bytes = 0;
  double inference_time_s = 0;
  uint32_t npu_ops = 0, cpu_ops = 0;
};

struct VelaOutput {
  std::string version;
  std::vector<uint8_t> command_stream, weights;
  int32_t weight_region = 0, scratch_region = 0, fast_scratch_region = 0;
  uint64_t scratch_size = 0, fast_scratch_size = 0;
  std::vector<VelaIo> inputs, outputs;
  VelaEstimate estimate;
};

// Compiles a TOSA flatbuffer. Throws CompileError with Vela's own error line when it refuses
// (TOSA input has no CPU fallback: every operator must be one Vela supports). Takes the result
// of the last prefetch_vela when it compiled the same bytes for the same configuration, else
// runs Vela (and `vela --version`) as processes of their own.
VelaOutput run_vela(const std::vector<uint8_t>& tosa, const NpuConfig& config);

// The Python interpreter that runs Vela: $PTERON_VELA_PYTHON, else the one the vela program's
// `#!` line names (a pip-installed vela is a Python script); empty when neither says.
std::string vela_python();

// Compiles every region of a program in one Vela process (Vela's main() once per region inside
// one vela_python(): Python's start-up and Vela's imports, most of a small region's time, are
// paid once) and keeps the results, successes and refusals alike, for run_vela, replacing the
// previous prefetch's. Regions with the same bytes are compiled once. Does nothing without a
// vela_python(); a region the batch could not compile is left to run_vela. Returns how many
// distinct regions it compiled.
int prefetch_vela(const std::vector<std::vector<uint8_t>>& tosas, const NpuConfig& config);

}  // namespace pteron::ethos_u
