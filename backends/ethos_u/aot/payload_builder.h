// Writes the Ethos-U payload (schema/ethos_u_payload.fbs) from a region's TOSA graph and what
// Vela made of it. Host only (C++20).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/ethos_u/aot/vela.h"

namespace pteron::ethos_u {

struct PayloadIo {
  std::string name;                // TOSA tensor name
  std::vector<int64_t> shape;      // TOSA shape
  std::vector<uint8_t> dim_order;  // memory layout of the program's tensor (empty: row-major)
  int8_t dtype = 1;                // pteron ScalarType: 1 int8, 6 float32
  double scale = 1;
  int32_t zero_point = 0;
  uint32_t tosa_index = 0;  // which TOSA graph input / output (the lists are in call order)
};

// The I/O of a TOSA graph as it declares them (int8 / fp32 only), row-major.
void tosa_io(const std::vector<uint8_t>& tosa, std::vector<PayloadIo>* inputs,
             std::vector<PayloadIo>* outputs);

// Bytes the TOSA executor plans for the graph (what the delegate allocates at load time).
// Throws CompileError naming the op when the executor cannot run the graph.
uint64_t tosa_planned_bytes(const std::vector<uint8_t>& tosa);

std::vector<uint8_t> build_payload(const std::vector<uint8_t>& tosa,
                                   const std::vector<PayloadIo>& inputs,
                                   const std::vector<PayloadIo>& outputs, const NpuConfig& config,
                                   const VelaOutput& vela, uint64_t tosa_memory);

}  // namespace pteron::ethos_u
