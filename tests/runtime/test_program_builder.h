// Builds small programs in memory for runtime tests, with knobs to corrupt one field at a
// time (the verifier must catch each).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pteron::testing {

// A program computing out = x + y for float tensors of shape [n], inputs and output planned in
// one arena: x at 0, y at the next 64-byte boundary, out at out_offset.
struct AddProgramSpec {
  int32_t n = 4;
  std::string op_name = "aten::add";
  std::string op_overload = "out";
  int32_t op_index = 0;
  int32_t bad_arg_index = -1;  // when >= 0, replaces the second kernel argument
  uint32_t out_memory_id = 1;
  uint64_t out_offset = 128;
  int64_t arena_bytes = 256;
  int32_t out_size_override = 0;  // when != 0, the output tensor's size
  std::vector<uint8_t> out_dim_order = {0};
  int8_t out_dtype = 6;  // float
  int32_t output_index = 3;
  int32_t jump_destination = -1;    // when >= 0, appends a JumpFalseCall to this target
  int32_t jump_value = 4;           // the value it jumps on (4: the Bool; 3: the output)
  bool bool_value = true;           // value 4
  int64_t bool_tensor_offset = -1;  // when >= 0, value 4 is a bool tensor [n] planned there
  int32_t int_list_item = -1;       // when >= 0, adds an IntList value with this item
};

// Returns the flatbuffer bytes (identifier ET12, no extended header).
std::vector<uint8_t> build_add_program(const AddProgramSpec& spec);

}  // namespace pteron::testing
