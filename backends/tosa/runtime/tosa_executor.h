// Runs a TOSA 1.0 flatbuffer (identifier "TOSA", root TosaGraph) functionally, bit-exact with
// the TOSA reference model for the INT profile ops the MLPerf Tiny models use (and their FP32
// forms where that is trivial). This is what the Ethos-U delegate runs when no NPU is present:
// an emulation of the region, not of the NPU's command stream.
//
// Runtime rules: no heap, no exceptions. All memory comes from one caller-provided block whose
// size memory_required() reports: tensor and operator tables first, then an arena for the
// intermediate tensors, planned once at create() from their lifetimes (tensors whose
// lifetimes do not overlap share bytes). Constants are read in place from the flatbuffer, which
// must outlive the executor and be 8-byte aligned (TOSA aligns constant data to 8).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/tosa/runtime/tosa_tensor.h"
#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron::tosa_rt {

struct TosaOpRecord {
  tosa::Op op = tosa::Op::UNKNOWN;
  const tosa::TosaOperator* fb = nullptr;
  int32_t first_arg = 0;  // index into the executor's argument table: inputs, then outputs
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
};

struct TosaExecStats {
  size_t table_bytes = 0;  // tensor/op tables
  size_t arena_bytes = 0;  // planned intermediates
  int32_t num_ops = 0;
  int32_t num_tensors = 0;
};

class TosaExecutor {
 public:
  // Verifies the flatbuffer and returns the bytes create() needs for `fb`.
  static Result<size_t> memory_required(const void* fb, size_t size);

  // Builds the executor over `memory` (at least memory_required() bytes, any alignment).
  static Result<TosaExecutor> create(const void* fb, size_t size, Span<uint8_t> memory);

  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }
  const TosaTensor& input(size_t i) const { return tensors_[input_ids_[i]]; }
  const TosaTensor& output(size_t i) const { return tensors_[output_ids_[i]]; }
  const TosaExecStats& stats() const { return stats_; }
  // Bytes of the caller's block this graph really uses (tables, alignment slack, planned
  // arena): what a payload records so the delegate can hand over exactly that much.
  size_t planned_bytes() const { return stats_.table_bytes + 16 + stats_.arena_bytes; }

  // Runs the graph. inputs[i]/outputs[i] point at dense buffers of input(i)/output(i)'s
  // dtype and shape (tensor_bytes() each), in the graph's input and output order.
  Error execute(Span<const void* const> inputs, Span<void* const> outputs);

  TosaExecutor(TosaExecutor&&) = default;

 private:
  TosaExecutor() = default;
  static Error build(const void* fb, size_t size, uint8_t* memory, size_t capacity,
                     TosaExecutor* out, size_t* used);

  TosaTensor* tensors_ = nullptr;
  int32_t num_tensors_ = 0;
  TosaOpRecord* ops_ = nullptr;
  int32_t num_ops_ = 0;
  int32_t* args_ = nullptr;
  int32_t* input_ids_ = nullptr;
  int32_t* output_ids_ = nullptr;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
  uint8_t* arena_ = nullptr;
  TosaExecStats stats_;
};

}  // namespace pteron::tosa_rt
