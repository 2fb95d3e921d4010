// The firmware side of a target file: the [firmware] layout and [budget] tables next to the
// compiler's keys (compiler/target/target.h), and what a program needs on such a target.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/target/target.h"
#include "runtime/core/scalar_type.h"

namespace pteron::firmware {

struct FirmwareTarget {
  compiler::Target target;
  bool is_firmware = false;  // has a [firmware] table
  std::string platform;
  // The QEMU machine that emulates the board ("mps3-an547", "mps2-an386", "mps2-an500").
  std::string qemu_machine;
  // The memory region (a linker-script section of that name) the program image goes to.
  std::string program_region;
  uint64_t stack_size = 16384;
  // RAM regions (name, bytes) in order of preference for method memory and scratch.
  std::vector<std::pair<std::string, uint64_t>> ram_regions;
  bool has_budget = false;  // has a [budget] table
  uint64_t ram_budget = 0;
  uint64_t flash_budget = 0;
  uint64_t code_flash_budget = 0;
  uint64_t code_runtime_bytes = 0;
  uint64_t code_per_kernel_bytes = 0;
  // Per operator namespace ("cortex_m"), for libraries whose kernels are much smaller than the
  // portable ones (int8 only, no dtype dispatch); others cost code_per_kernel_bytes.
  std::map<std::string, uint64_t> code_per_kernel_bytes_by_namespace;
  // Code the Ethos-U delegate adds (TOSA executor and backend) when a program calls it.
  uint64_t code_ethos_u_bytes = 0;
};

// Throws std::runtime_error naming the file and key on a bad value.
FirmwareTarget load_firmware_target(const std::string& name_or_path);

// The cross build folder a target's libraries are built in by default: build-m55, build-m7,
// build-m4 ("build-" and the core's name without "cortex-").
std::string default_cross_build_name(const FirmwareTarget& t);

struct TensorSpec {
  ScalarType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> dim_order;
  size_t nbytes;
};

// Measured by loading the program and running it once on the host with zero inputs, on the
// target's kernel libraries only (the kernels the device links, not the host's optimized ones):
// exact for arenas and scratch, an upper bound for the method's load-time structures (64-bit
// pointers here, 32-bit there).
struct ProgramNeeds {
  uint64_t program_bytes = 0;
  std::vector<uint64_t> arenas;  // planned arena sizes, memory_id 1..n
  uint64_t method_bytes = 0;
  uint64_t scratch_bytes = 0;
  // The instruction whose run took scratch_bytes ("aten::convolution.out (instruction 3)"), so
  // an over-budget refusal names the node; empty when no kernel takes scratch.
  std::string scratch_peak_node;
  std::vector<std::string> ops;  // "aten::convolution.out", in program order
  size_t delegates = 0;
  std::vector<std::string> delegate_ids;  // backend id per delegate, e.g. "PteronEthosUBackend"
  // Load-time memory the delegates declare (compile spec "pteron.method_bytes"), e.g. the
  // Ethos-U emulated driver's TOSA arena; method_bytes is at least this.
  uint64_t delegate_method_bytes = 0;
  std::vector<TensorSpec> inputs, outputs;
};
// `kernel_libraries`: the target's `runtime.kernels` ("cortex-m", "portable"), most preferred
// first; empty measures on whatever the host prefers.
ProgramNeeds measure_program(const std::string& pte_path, const std::string& method,
                             const std::vector<std::string>& kernel_libraries);

// RAM and flash a program needs on the target, before anything is linked.
struct BudgetEstimate {
  uint64_t arenas = 0, scratch = 0, method = 0, stack = 0, state = 0;
  uint64_t code = 0, program = 0;
  uint64_t ram() const { return arenas + scratch + method + stack + state; }
  uint64_t flash() const { return code + program; }
  std::string over;  // empty when it fits, else one line with the numbers
};
BudgetEstimate estimate_budget(const FirmwareTarget& t, const ProgramNeeds& needs);
// "RAM 123.4 KiB (arenas ..., scratch ..., ...) of 6656 KiB; flash ..."
std::string describe_budget(const FirmwareTarget& t, const BudgetEstimate& b);

// The one delegate firmware can link (backends/ethos_u, emulated driver).
constexpr const char kEthosUBackendId[] = "PteronEthosUBackend";

// Static runtime state outside the method memory: the kernel table (12 bytes a kernel the
// program calls), the error message, the firmware main's command line and report line, newlib's
// stdio (about 1.5 KiB measured on the MLPerf Tiny firmware).
constexpr uint64_t kRuntimeStateBytes = 2048;

}  // namespace pteron::firmware
