// Program: a verified `.pte` file. Loading checks the flatbuffer and every cross-reference
// (values, operators, delegates, segments, constants, arenas) so that methods built from it
// can index without further checks. The file is untrusted input.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/loader/data_loader.h"

namespace pteron {
namespace fb {
struct Program;
struct ExecutionPlan;
}  // namespace fb

// The optional extended header inside the flatbuffer's leading padding (magic "eh00").
struct ExtendedHeader {
  uint64_t program_size = 0;
  uint64_t segment_base_offset = 0;
  uint64_t segment_data_size = 0;
  bool present = false;
};

// Parses the header from the file's first bytes; a missing header is not an error.
Result<ExtendedHeader> parse_extended_header(Span<const uint8_t> head);

struct TensorInfo {
  ScalarType dtype;
  Span<const int32_t> sizes;
  Span<const uint8_t> dim_order;
  size_t nbytes;
};

// Shapes and memory needs of one method, readable before loading it.
class MethodMeta {
 public:
  explicit MethodMeta(const fb::ExecutionPlan* plan) : plan_(plan) {}
  const char* name() const;
  size_t num_inputs() const;
  size_t num_outputs() const;
  // Fails if input/output `i` is not a tensor.
  Result<TensorInfo> input_tensor(size_t i) const;
  Result<TensorInfo> output_tensor(size_t i) const;
  // Planned arenas, indexed from 0 (memory_id 1 is arena 0).
  size_t num_planned_buffers() const;
  int64_t planned_buffer_size(size_t i) const;
  size_t num_instructions() const;
  // How the model's nested arguments and result flatten into the inputs and outputs (the
  // plan's container metadata: torch's treespec_dumps text, as ExecuTorch writes it); "" when
  // the program does not say. Text from the file, not checked here.
  const char* input_spec() const;
  const char* output_spec() const;

 private:
  Result<TensorInfo> tensor_at(int32_t value_index) const;
  const fb::ExecutionPlan* plan_;
};

class Program {
 public:
  // Reads and verifies the program. `loader` must outlive the Program.
  static Result<Program> load(DataLoader* loader);

  Program(Program&&) noexcept = default;
  Program(const Program&) = delete;

  size_t num_methods() const;
  Result<const char*> method_name(size_t i) const;
  Result<MethodMeta> method_meta(const char* name) const;
  Result<const fb::ExecutionPlan*> plan(const char* name) const;

  const fb::Program* flatbuffer() const { return program_; }
  DataLoader* loader() const { return loader_; }
  const ExtendedHeader& header() const { return header_; }
  // Constant tensor bytes: [offset, offset+size) of the constant segment, bounds-checked at load.
  Span<const uint8_t> constant_segment() const {
    return {constant_data_.bytes(), constant_data_.size()};
  }
  // Initial values of the program's state (mutable buffers): mutable_data_segments[0]'s segment,
  // entries bounds-checked at load; empty without state.
  Span<const uint8_t> initial_state_segment() const {
    return {initial_state_.bytes(), initial_state_.size()};
  }
  // Bytes of segment `index` (delegate payloads), loaded on demand.
  Result<FreeableBuffer> load_segment(size_t index) const;
  // Bytes of the named data entry `key` (Program.named_data), loaded on demand; NotFound when
  // the program has no such entry.
  Result<FreeableBuffer> named_data(const char* key) const;
  size_t file_size() const { return loader_->size(); }

 private:
  Program(DataLoader* loader, FreeableBuffer data, const fb::Program* program,
          ExtendedHeader header, FreeableBuffer constants, FreeableBuffer initial_state)
      : loader_(loader),
        program_data_(static_cast<FreeableBuffer&&>(data)),
        program_(program),
        header_(header),
        constant_data_(static_cast<FreeableBuffer&&>(constants)),
        initial_state_(static_cast<FreeableBuffer&&>(initial_state)) {}

  DataLoader* loader_;
  FreeableBuffer program_data_;
  const fb::Program* program_;
  ExtendedHeader header_;
  FreeableBuffer constant_data_;
  FreeableBuffer initial_state_;
};

}  // namespace pteron
