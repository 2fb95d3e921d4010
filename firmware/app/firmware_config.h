// What `pteron firmware` generates for one program (firmware_config.cpp in its build folder):
// where the program and its memory live, and the kernels to register. firmware_main.cpp is the
// same for every program and reads only this.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/kernel/kernel.h"

namespace pteron::firmware {

struct FirmwareConfig {
  const uint8_t* program;  // the .pte image, a constant array in flash
  size_t program_size;
  const char* method;
  Span<uint8_t>* arenas;   // arenas[0] unused (memory_id 0 is reserved), then one per arena
  size_t num_arenas;       // including arenas[0]
  uint8_t* method_memory;  // load-time structures (values, tensors, instruction arguments)
  size_t method_memory_size;
  uint8_t* scratch;  // per-instruction scratch
  size_t scratch_size;
  const KernelEntry* const* kernels;  // only the kernels this program calls
  size_t num_kernels;
  const uint8_t* baked_inputs;  // inputs built into the image, or nullptr to read a host file
  size_t baked_inputs_size;
};

extern const FirmwareConfig config;

}  // namespace pteron::firmware
