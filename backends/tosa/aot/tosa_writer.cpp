#include "backends/tosa/aot/tosa_writer.h"

#include <cstring>

#include "compiler/compile_error.h"

namespace pteron::tosa_aot {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

size_t dtype_bytes(tosa::DType t) {
  switch (t) {
    case tosa::DType::BOOL:
    case tosa::DType::INT8:
      return 1;
    case tosa::DType::INT16:
    case tosa::DType::FP16:
    case tosa::DType::BF16:
      return 2;
    case tosa::DType::INT32:
    case tosa::DType::FP32:
      return 4;
    case tosa::DType::INT48:
      return 6;
    case tosa::DType::SHAPE:
    case tosa::DType::INT64:
      return 8;
    default:
      return 0;
  }
}

std::string TosaWriter::unique(const std::string& base) {
  return base + "_" + std::to_string(next_id_++);
}

TosaTensorInfo TosaWriter::add_input(const std::string& base, std::vector<int64_t> shape,
                                     tosa::DType dtype) {
  TosaTensorInfo t = add_tensor(base, std::move(shape), dtype);
  inputs_.push_back(t.name);
  return t;
}

TosaTensorInfo TosaWriter::add_tensor(const std::string& base, std::vector<int64_t> shape,
                                      tosa::DType dtype) {
  Tensor t{unique(base), std::move(shape), dtype, {}};
  tensors_.push_back(t);
  return {t.name, t.shape, t.dtype};
}

TosaTensorInfo TosaWriter::add_const(const std::string& base, std::vector<int64_t> shape,
                                     tosa::DType dtype, std::vector<uint8_t> data) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  if (check_only_) data.clear();
  if (!check_only_ && data.size() != n * dtype_bytes(dtype))
    throw compiler::CompileError("tosa: constant '" + base + "' has " +
                                 std::to_string(data.size()) + " bytes for " + std::to_string(n) +
                                 " elements");
  Tensor t{unique(base), std::move(shape), dtype, std::move(data)};
  tensors_.push_back(t);
  ops_.push_back({tosa::Op::CONST, {}, {t.name}, {}});
  return {t.name, t.shape, t.dtype};
}

namespace {
template <typename T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}
}  // namespace

TosaTensorInfo TosaWriter::const_i8(const std::string& base, std::vector<int64_t> shape,
                                    const std::vector<int8_t>& v) {
  return add_const(base, std::move(shape), tosa::DType::INT8, bytes_of(v));
}
TosaTensorInfo TosaWriter::const_i32(const std::string& base, std::vector<int64_t> shape,
                                     const std::vector<int32_t>& v) {
  return add_const(base, std::move(shape), tosa::DType::INT32, bytes_of(v));
}
TosaTensorInfo TosaWriter::const_f32(const std::string& base, std::vector<int64_t> shape,
                                     const std::vector<float>& v) {
  return add_const(base, std::move(shape), tosa::DType::FP32, bytes_of(v));
}

std::string TosaWriter::const_shape(const std::string& base, const std::vector<int64_t>& values) {
  Shape s{unique(base), values};
  shapes_.push_back(s);
  ops_.push_back({tosa::Op::CONST_SHAPE, {}, {s.name}, {}});
  return s.name;
}

void TosaWriter::add_op(tosa::Op op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const TosaAttr& attr) {
  ops_.push_back({op, inputs, outputs, attr});
}

namespace {

Offset<flatbuffers::Vector<int32_t>> ints(FlatBufferBuilder& fbb, const std::vector<int32_t>& v) {
  return fbb.CreateVector(v);
}

Offset<flatbuffers::Vector<uint8_t>> aligned_bytes(FlatBufferBuilder& fbb,
                                                   const std::vector<uint8_t>& v) {
  // tosa.fbs declares data as (force_align: 8).
  fbb.ForceVectorAlignment(v.size(), sizeof(uint8_t), 8);
  return fbb.CreateVector(v);
}

// The attribute union member of `op`.
std::pair<tosa::Attribute, Offset<void>> attribute(FlatBufferBuilder& fbb, tosa::Op op,
                                                   const TosaAttr& a) {
  using A = tosa::Attribute;
  switch (op) {
    case tosa::Op::CONV2D:
      return {A::Conv2dAttribute,
              tosa::CreateConv2dAttribute(fbb, ints(fbb, a.pad), ints(fbb, a.stride),
                                          ints(fbb, a.dilation), false, a.acc_type)
                  .Union()};
    case tosa::Op::DEPTHWISE_CONV2D:
      return {A::DepthwiseConv2dAttribute,
              tosa::CreateDepthwiseConv2dAttribute(fbb, ints(fbb, a.pad), ints(fbb, a.stride),
                                                   ints(fbb, a.dilation), false, a.acc_type)
                  .Union()};
    case tosa::Op::AVG_POOL2D:
      return {A::AvgPool2dAttribute,
              tosa::CreateAvgPool2dAttribute(fbb, ints(fbb, a.kernel), ints(fbb, a.stride),
                                             ints(fbb, a.pad), a.acc_type)
                  .Union()};
    case tosa::Op::MAX_POOL2D:
      return {A::MaxPool2dAttribute,
              tosa::CreateMaxPool2dAttribute(fbb, ints(fbb, a.kernel), ints(fbb, a.stride),
                                             ints(fbb, a.pad), tosa::NanPropagationMode::PROPAGATE)
                  .Union()};
    case tosa::Op::CLAMP: {
      auto lo = aligned_bytes(fbb, a.min_val);
      auto hi = aligned_bytes(fbb, a.max_val);
      return {A::ClampAttribute,
              tosa::CreateClampAttribute(fbb, lo, hi, tosa::NanPropagationMode::PROPAGATE).Union()};
    }
    case tosa::Op::SIGMOID:
      return {A::SigmoidAttribute, tosa::CreateSigmoidAttribute(fbb).Union()};
    case tosa::Op::TANH:
      return {A::TanhAttribute, tosa::CreateTanhAttribute(fbb).Union()};
    case tosa::Op::ERF:
      return {A::ErfAttribute, tosa::CreateErfAttribute(fbb).Union()};
    case tosa::Op::ADD:
      return {A::AddAttribute, tosa::CreateAddAttribute(fbb).Union()};
    case tosa::Op::SUB:
      return {A::SubAttribute, tosa::CreateSubAttribute(fbb).Union()};
    case tosa::Op::MUL:
      return {A::MulAttribute, tosa::CreateMulAttribute(fbb).Union()};
    case tosa::Op::MAXIMUM:
      return {A::MaximumAttribute,
              tosa::CreateMaximumAttribute(fbb, tosa::NanPropagationMode::PROPAGATE).Union()};
    case tosa::Op::TABLE:
      return {A::TableAttribute, tosa::CreateTableAttribute(fbb).Union()};
    case tosa::Op::EXP:
      return {A::ExpAttribute, tosa::CreateExpAttribute(fbb).Union()};
    case tosa::Op::RSQRT:
      return {A::RsqrtAttribute, tosa::CreateRsqrtAttribute(fbb).Union()};
    case tosa::Op::SELECT:
      return {A::SelectAttribute, tosa::CreateSelectAttribute(fbb).Union()};
    case tosa::Op::RECIPROCAL:
      return {A::ReciprocalAttribute, tosa::CreateReciprocalAttribute(fbb).Union()};
    case tosa::Op::REDUCE_SUM:
      return {A::ReduceSumAttribute, tosa::CreateReduceSumAttribute(fbb, a.axis).Union()};
    case tosa::Op::REDUCE_MAX:
      return {
          A::ReduceMaxAttribute,
          tosa::CreateReduceMaxAttribute(fbb, a.axis, tosa::NanPropagationMode::PROPAGATE).Union()};
    case tosa::Op::CONCAT:
      return {A::ConcatAttribute, tosa::CreateConcatAttribute(fbb, a.axis).Union()};
    case tosa::Op::PAD:
      return {A::PadAttribute, tosa::CreatePadAttribute(fbb).Union()};
    case tosa::Op::RESIZE:
      return {A::ResizeAttribute, tosa::CreateResizeAttribute(fbb, a.resize_mode).Union()};
    case tosa::Op::RESHAPE:
      return {A::ReshapeAttribute, tosa::CreateReshapeAttribute(fbb).Union()};
    case tosa::Op::TRANSPOSE:
      return {A::TransposeAttribute,
              tosa::CreateTransposeAttribute(fbb, ints(fbb, a.perms)).Union()};
    case tosa::Op::SLICE:
      return {A::SliceAttribute, tosa::CreateSliceAttribute(fbb).Union()};
    case tosa::Op::RESCALE:
      return {A::RescaleAttribute,
              tosa::CreateRescaleAttribute(fbb, true, a.rounding, a.per_channel, a.input_unsigned,
                                           a.output_unsigned)
                  .Union()};
    case tosa::Op::CONST:
      return {A::ConstAttribute, tosa::CreateConstAttribute(fbb).Union()};
    case tosa::Op::CONST_SHAPE:
      return {A::ConstShapeAttribute, tosa::CreateConstShapeAttribute(fbb).Union()};
    case tosa::Op::IDENTITY:
      return {A::IdentityAttribute, tosa::CreateIdentityAttribute(fbb).Union()};
    case tosa::Op::MATMUL:
      return {A::MatMulAttribute, tosa::CreateMatMulAttribute(fbb).Union()};
    default:
      throw compiler::CompileError(std::string("tosa: the writer has no attribute for op ") +
                                   tosa::EnumNameOp(op));
  }
}

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> names(FlatBufferBuilder& fbb,
                                                               const std::vector<std::string>& v) {
  return fbb.CreateVectorOfStrings(v);
}

}  // namespace

std::vector<uint8_t> TosaWriter::finish() {
  FlatBufferBuilder fbb(1 << 16);
  std::vector<Offset<tosa::TosaOperator>> ops;
  for (const Op& op : ops_) {
    auto [type, attr] = attribute(fbb, op.op, op.attr);
    auto in = names(fbb, op.inputs);
    auto out = names(fbb, op.outputs);
    ops.push_back(tosa::CreateTosaOperator(fbb, op.op, type, attr, in, out));
  }
  std::vector<Offset<tosa::TosaTensor>> tensors;
  for (const Tensor& t : tensors_) {
    std::vector<int32_t> shape(t.shape.begin(), t.shape.end());
    auto name = fbb.CreateString(t.name);
    auto shp = fbb.CreateVector(shape);
    auto data = aligned_bytes(fbb, t.data);
    tosa::TosaTensorBuilder b(fbb);
    b.add_name(name);
    b.add_shape(shp);
    b.add_type(t.dtype);
    b.add_data(data);
    tensors.push_back(b.Finish());
  }
  std::vector<Offset<tosa::TosaShape>> shapes;
  for (const Shape& s : shapes_) {
    std::vector<uint8_t> bytes(s.values.size() * sizeof(int64_t));
    if (!bytes.empty()) std::memcpy(bytes.data(), s.values.data(), bytes.size());
    auto name = fbb.CreateString(s.name);
    auto data = aligned_bytes(fbb, bytes);
    shapes.push_back(
        tosa::CreateTosaShape(fbb, name, static_cast<uint32_t>(s.values.size()), data));
  }
  auto ops_v = fbb.CreateVector(ops);
  auto tensors_v = fbb.CreateVector(tensors);
  auto shapes_v = fbb.CreateVector(shapes);
  auto in = names(fbb, inputs_);
  auto out = names(fbb, outputs_);
  auto block = tosa::CreateTosaBasicBlock(fbb, fbb.CreateString("main"), ops_v, tensors_v, in, out,
                                          shapes_v);
  auto region =
      tosa::CreateTosaRegion(fbb, fbb.CreateString("main"), fbb.CreateVector(std::vector{block}));
  auto version = tosa::CreateVersion(fbb, 1, 0, 0, false);
  tosa::FinishTosaGraphBuffer(
      fbb, tosa::CreateTosaGraph(fbb, version, fbb.CreateVector(std::vector{region})));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

}  // namespace pteron::tosa_aot
