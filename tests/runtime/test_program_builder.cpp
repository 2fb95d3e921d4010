#include "tests/runtime/test_program_builder.h"

#include "schema/program_generated.h"

namespace pteron::testing {

std::vector<uint8_t> build_add_program(const AddProgramSpec& s) {
  flatbuffers::FlatBufferBuilder b;
  auto tensor = [&](int32_t size, uint64_t offset, uint32_t memory_id, int8_t dtype,
                    const std::vector<uint8_t>& dim_order) {
    std::vector<int32_t> sizes = {size};
    auto alloc = fb::CreateAllocationDetails(b, memory_id, static_cast<uint32_t>(offset),
                                             static_cast<uint32_t>(offset >> 32));
    auto t = fb::CreateTensor(b, static_cast<fb::ScalarType>(dtype), 0, b.CreateVector(sizes),
                              b.CreateVector(dim_order), false, 0, alloc);
    return fb::CreateEValue(b, fb::KernelTypes::Tensor, t.Union());
  };
  std::vector<flatbuffers::Offset<fb::EValue>> values;
  values.push_back(tensor(s.n, 0, 1, 6, {0}));
  const uint64_t y_offset = (static_cast<uint64_t>(s.n > 0 ? s.n : 0) * 4 + 63) / 64 * 64;
  values.push_back(tensor(s.n, y_offset, 1, 6, {0}));
  values.push_back(fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, 1).Union()));
  values.push_back(tensor(s.out_size_override ? s.out_size_override : s.n, s.out_offset,
                          s.out_memory_id, s.out_dtype, s.out_dim_order));
  if (s.bool_tensor_offset >= 0) {
    values.push_back(tensor(s.n, static_cast<uint64_t>(s.bool_tensor_offset), 1, 11, {0}));
  } else {
    values.push_back(
        fb::CreateEValue(b, fb::KernelTypes::Bool, fb::CreateBool(b, s.bool_value).Union()));
  }
  if (s.int_list_item >= 0) {
    std::vector<int64_t> items = {s.int_list_item};
    values.push_back(fb::CreateEValue(b, fb::KernelTypes::IntList,
                                      fb::CreateIntList(b, b.CreateVector(items)).Union()));
  }
  std::vector<int32_t> args = {0, s.bad_arg_index >= 0 ? s.bad_arg_index : 1, 2, 3, 3};
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions;
  instructions.push_back(
      fb::CreateInstruction(b, fb::InstructionArguments::KernelCall,
                            fb::CreateKernelCall(b, s.op_index, b.CreateVector(args)).Union()));
  if (s.jump_destination >= 0) {
    instructions.push_back(fb::CreateInstruction(
        b, fb::InstructionArguments::JumpFalseCall,
        fb::CreateJumpFalseCall(b, s.jump_value, s.jump_destination).Union()));
  }
  std::vector<int32_t> inputs = {0, 1};
  std::vector<int32_t> outputs = {s.output_index};
  auto chain = fb::CreateChain(b, b.CreateVector(inputs), b.CreateVector(outputs),
                               b.CreateVector(instructions));
  std::vector<flatbuffers::Offset<fb::Chain>> chains = {chain};
  std::vector<flatbuffers::Offset<fb::Operator>> ops = {
      fb::CreateOperator(b, b.CreateString(s.op_name), b.CreateString(s.op_overload))};
  std::vector<int64_t> buffer_sizes = {0, s.arena_bytes};
  auto plan = fb::CreateExecutionPlan(b, b.CreateString("forward"), 0, b.CreateVector(values),
                                      b.CreateVector(inputs), b.CreateVector(outputs),
                                      b.CreateVector(chains), b.CreateVector(ops), 0,
                                      b.CreateVector(buffer_sizes));
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans = {plan};
  auto program = fb::CreateProgram(b, 0, b.CreateVector(plans));
  fb::FinishProgramBuffer(b, program);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace pteron::testing
