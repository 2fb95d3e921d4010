// The program: its methods (each by a detail::MethodEmitter, method_emitter.h), the constant
// methods, and the segments (constants, delegate payloads, named data, the state's initial
// values).
#include "compiler/emit/program_emitter.h"

#include <map>

#include "compiler/compile_error.h"
#include "compiler/emit/method_emitter.h"

namespace pteron::compiler {

using detail::MethodEmitter;
using detail::MutableTable;
using flatbuffers::Offset;

std::vector<ir::NodeId> kernel_nodes(const MethodToEmit& m) {
  std::vector<ir::NodeId> out;
  if (m.steps.empty()) return m.graph->nodes();
  for (const Step& s : m.steps) {
    if (s.delegate < 0) out.push_back(s.node);
  }
  return out;
}

namespace {

// A constant method as ExecuTorch's _emit_prim_getters writes it: the values are the outputs,
// one chain without instructions, no operators or delegates, no planned memory, and the
// value's pytree spec as the output container.
Offset<fb::ExecutionPlan> constant_plan(flatbuffers::FlatBufferBuilder& b,
                                        const ConstantMethod& m) {
  std::vector<Offset<fb::EValue>> values;
  std::vector<int32_t> outputs;
  for (const ConstantScalar& v : m.values) {
    outputs.push_back(static_cast<int32_t>(values.size()));
    if (const auto* i = std::get_if<int64_t>(&v)) {
      values.push_back(fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, *i).Union()));
    } else if (const auto* flag = std::get_if<bool>(&v)) {
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::Bool, fb::CreateBool(b, *flag).Union()));
    } else if (const auto* d = std::get_if<double>(&v)) {
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::Double, fb::CreateDouble(b, *d).Union()));
    } else {
      auto text = b.CreateString(std::get<std::string>(v));
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::String, fb::CreateString(b, text).Union()));
    }
  }
  const std::vector<int32_t> none;
  auto chain = fb::CreateChain(b, b.CreateVector(none), b.CreateVector(none),
                               b.CreateVector(std::vector<Offset<fb::Instruction>>{}));
  auto container =
      fb::CreateContainerMetadata(b, b.CreateString(""), b.CreateString(constant_method_spec(m)));
  return fb::CreateExecutionPlan(b, b.CreateString(m.name), container, b.CreateVector(values),
                                 b.CreateVector(none), b.CreateVector(outputs),
                                 b.CreateVector(std::vector<Offset<fb::Chain>>{chain}),
                                 b.CreateVector(std::vector<Offset<fb::Operator>>{}),
                                 b.CreateVector(std::vector<Offset<fb::BackendDelegate>>{}),
                                 b.CreateVector(std::vector<int64_t>{0}));
}

}  // namespace

std::vector<InstructionOrigin> instruction_origins(const MethodToEmit& m) {
  flatbuffers::FlatBufferBuilder b;
  ConstantTable constants;
  MutableTable mutables;
  MethodEmitter e(b, m, constants, mutables, 1);
  e.emit();
  return e.origins();
}

uint64_t emit_program(const std::vector<MethodToEmit>& methods, ByteSink& sink, EmitStats* stats,
                      const std::vector<NamedDataToEmit>& named_data,
                      const std::vector<ConstantMethod>& constant_methods) {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  ConstantTable constants;
  MutableTable mutables;
  EmitStats local;
  std::vector<Offset<fb::ExecutionPlan>> plans;
  // Segment 0 holds the constants (ExecuTorch always lists it, even when empty); delegate
  // payloads follow, one segment each, in method order.
  uint32_t next_segment = 1;
  std::vector<const LoweredDelegate*> delegates;  // every plan's, in segment order
  for (const MethodToEmit& m : methods) {
    MethodEmitter e(b, m, constants, mutables, next_segment);
    plans.push_back(e.emit());
    next_segment += static_cast<uint32_t>(e.delegates().size());
    delegates.insert(delegates.end(), e.delegates().begin(), e.delegates().end());
    local.values += e.values();
    local.instructions += e.instructions();
    local.constants += e.constants_used();
    local.delegate_calls += e.delegate_calls();
  }
  for (const ConstantMethod& m : constant_methods) {
    plans.push_back(constant_plan(b, m));
    local.values += m.values.size();
  }
  std::vector<SegmentPieces> segments = {constants.pieces()};
  for (const LoweredDelegate* d : delegates) segments.push_back(SegmentPieces::whole(d->payload));
  // Named data follows the delegate payloads, one segment per key: the program's own, then
  // the delegates' (weights several regions share), each key once.
  std::vector<Offset<fb::NamedData>> named;
  std::map<std::string, const std::vector<uint8_t>*> named_bytes;
  auto add_named = [&](const std::string& key, const std::vector<uint8_t>& bytes) {
    auto [it, added] = named_bytes.try_emplace(key, &bytes);
    if (!added) {
      if (*it->second != bytes)
        throw CompileError("two different named data entries '" + key + "'");
      ++local.named_shared;
      return;
    }
    named.push_back(
        fb::CreateNamedData(b, b.CreateString(key), static_cast<uint32_t>(segments.size())));
    segments.push_back(SegmentPieces::whole(bytes));
  };
  for (const NamedDataToEmit& n : named_data) add_named(n.key, n.bytes);
  for (const LoweredDelegate* d : delegates) {
    for (const auto& [key, bytes] : d->named_data) {
      if (!named_bytes.count(key)) local.delegate_named_bytes += bytes.size();
      add_named(key, bytes);
    }
  }
  // The state's initial values come last, in one segment.
  Offset<flatbuffers::Vector<Offset<fb::SubsegmentOffsets>>> mutable_table = 0;
  if (!mutables.empty()) {
    const auto index = static_cast<uint32_t>(segments.size());
    segments.push_back(mutables.pieces());
    mutable_table = b.CreateVector(std::vector<Offset<fb::SubsegmentOffsets>>{
        fb::CreateSubsegmentOffsets(b, index, b.CreateVector(mutables.offsets()))});
  }
  std::vector<uint64_t> sizes;
  for (const SegmentPieces& seg : segments) sizes.push_back(seg.size);
  const std::vector<uint64_t> offsets = segment_offsets(sizes);
  std::vector<Offset<fb::DataSegment>> segment_table;
  for (size_t i = 0; i < sizes.size(); ++i)
    segment_table.push_back(fb::CreateDataSegment(b, offsets[i], sizes[i]));
  auto constant_segment = fb::CreateSubsegmentOffsets(b, 0, b.CreateVector(constants.offsets()));
  flatbuffers::Offset<flatbuffers::Vector<Offset<fb::NamedData>>> named_table = 0;
  if (!named.empty()) named_table = b.CreateVector(named);
  auto program = fb::CreateProgram(b, 0, b.CreateVector(plans), 0, 0, b.CreateVector(segment_table),
                                   constant_segment, mutable_table, named_table);
  fb::FinishProgramBuffer(b, program);
  local.file_bytes =
      write_pte(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()), segments, sink);
  local.constant_bytes = constants.size();
  local.deduplicated = constants.deduplicated();
  if (stats) *stats = local;
  return local.file_bytes;
}

std::vector<uint8_t> emit_program(const std::vector<MethodToEmit>& methods, EmitStats* stats,
                                  const std::vector<NamedDataToEmit>& named_data,
                                  const std::vector<ConstantMethod>& constant_methods) {
  VectorSink sink;
  emit_program(methods, sink, stats, named_data, constant_methods);
  return std::move(sink.bytes);
}

}  // namespace pteron::compiler
