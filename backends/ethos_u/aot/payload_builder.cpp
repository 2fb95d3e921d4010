#include "backends/ethos_u/aot/payload_builder.h"

#include <cstring>

#include "backends/ethos_u/runtime/payload_verifier.h"
#include "backends/tosa/runtime/tosa_executor.h"
#include "compiler/compile_error.h"
#include "runtime/core/error.h"

namespace pteron::ethos_u {

using compiler::CompileError;

void tosa_io(const std::vector<uint8_t>& tosa, std::vector<PayloadIo>* inputs,
             std::vector<PayloadIo>* outputs) {
  // Parse through the executor (it verifies the graph); 8-byte aligned copy for constants.
  std::vector<uint64_t> aligned((tosa.size() + 7) / 8);
  std::memcpy(aligned.data(), tosa.data(), tosa.size());
  auto need = tosa_rt::TosaExecutor::memory_required(aligned.data(), tosa.size());
  if (!need.ok()) throw CompileError(std::string("ethos-u: ") + last_error_message());
  std::vector<uint8_t> memory(*need);
  auto ex =
      tosa_rt::TosaExecutor::create(aligned.data(), tosa.size(), {memory.data(), memory.size()});
  if (!ex.ok()) throw CompileError(std::string("ethos-u: ") + last_error_message());
  auto fill = [](const tosa_rt::TosaTensor& t, size_t index) {
    PayloadIo io;
    io.tosa_index = uint32_t(index);
    io.name = t.name;
    io.shape.assign(t.shape, t.shape + t.rank);
    if (t.dtype == tosa::DType::INT8)
      io.dtype = 1;
    else if (t.dtype == tosa::DType::FP32)
      io.dtype = 6;
    else
      throw CompileError(std::string("ethos-u: region I/O '") + t.name + "' is " +
                         tosa::EnumNameDType(t.dtype) + " (int8 or float32)");
    return io;
  };
  for (size_t i = 0; i < ex->num_inputs(); ++i) inputs->push_back(fill(ex->input(i), i));
  for (size_t i = 0; i < ex->num_outputs(); ++i) outputs->push_back(fill(ex->output(i), i));
}

uint64_t tosa_planned_bytes(const std::vector<uint8_t>& tosa) {
  std::vector<uint64_t> aligned((tosa.size() + 7) / 8);
  std::memcpy(aligned.data(), tosa.data(), tosa.size());
  auto need = tosa_rt::TosaExecutor::memory_required(aligned.data(), tosa.size());
  if (!need.ok())
    throw CompileError(std::string("ethos-u: TOSA executor: ") + last_error_message());
  std::vector<uint8_t> memory(*need);
  auto ex =
      tosa_rt::TosaExecutor::create(aligned.data(), tosa.size(), {memory.data(), memory.size()});
  if (!ex.ok()) throw CompileError(std::string("ethos-u: TOSA executor: ") + last_error_message());
  return ex->planned_bytes();
}

std::vector<uint8_t> build_payload(const std::vector<uint8_t>& tosa,
                                   const std::vector<PayloadIo>& inputs,
                                   const std::vector<PayloadIo>& outputs, const NpuConfig& config,
                                   const VelaOutput& vela, uint64_t tosa_memory) {
  if (inputs.size() != vela.inputs.size() || outputs.size() != vela.outputs.size()) {
    throw CompileError("ethos-u: Vela placed " + std::to_string(vela.inputs.size()) +
                       " inputs and " + std::to_string(vela.outputs.size()) +
                       " outputs, the region has " + std::to_string(inputs.size()) + " and " +
                       std::to_string(outputs.size()));
  }
  flatbuffers::FlatBufferBuilder b(tosa.size() + vela.command_stream.size() + vela.weights.size() +
                                   4096);
  auto io_vec = [&](const std::vector<PayloadIo>& list, const std::vector<VelaIo>& placed) {
    std::vector<flatbuffers::Offset<fb::IoTensor>> v;
    for (size_t i = 0; i < list.size(); ++i) {
      const PayloadIo& io = list[i];
      if (io.tosa_index >= placed.size()) throw CompileError("ethos-u: bad TOSA I/O index");
      const VelaIo& at = placed[io.tosa_index];
      v.push_back(fb::CreateIoTensor(
          b, b.CreateString(io.name), b.CreateVector(io.shape), b.CreateVector(io.dim_order),
          io.dtype, io.scale, io.zero_point, at.elem_size, at.region, at.offset, io.tosa_index));
    }
    return b.CreateVector(v);
  };
  auto in = io_vec(inputs, vela.inputs);
  auto out = io_vec(outputs, vela.outputs);
  b.ForceVectorAlignment(vela.command_stream.size(), 1, 16);
  auto cmd = b.CreateVector(vela.command_stream);
  b.ForceVectorAlignment(vela.weights.size(), 1, 16);
  auto weights = b.CreateVector(vela.weights);
  b.ForceVectorAlignment(tosa.size(), 1, 16);
  auto tosa_vec = b.CreateVector(tosa);
  const VelaEstimate& e = vela.estimate;
  auto est = fb::CreateVelaEstimate(b, e.npu_cycles, e.total_cycles, e.macs, e.sram_bytes,
                                    e.off_chip_flash_bytes, e.on_chip_flash_bytes, e.dram_bytes,
                                    e.inference_time_s, e.npu_ops);
  auto root = fb::CreateEthosUPayload(
      b, kPayloadVersion, b.CreateString(config.accelerator), b.CreateString(config.system_config),
      b.CreateString(config.memory_mode), b.CreateString(vela.version), cmd, weights,
      vela.weight_region, vela.scratch_size, vela.scratch_region, vela.fast_scratch_size,
      vela.fast_scratch_region, in, out, tosa_vec, tosa_memory, est);
  b.Finish(root, fb::EthosUPayloadIdentifier());
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace pteron::ethos_u
