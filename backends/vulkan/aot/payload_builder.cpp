#include "backends/vulkan/aot/payload_builder.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "flatbuffers/flatbuffers.h"
#include "runtime/core/scalar_type.h"

namespace pteron::vulkan {

namespace {
uint64_t numel(const std::vector<uint32_t>& dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}
}  // namespace

uint32_t PayloadBuilder::add(TensorDef t) {
  tensors_.push_back(std::move(t));
  return static_cast<uint32_t>(tensors_.size() - 1);
}

uint32_t PayloadBuilder::add_tensor(std::vector<uint32_t> dims, fb::DataType dtype) {
  return add(TensorDef{std::move(dims), dtype});
}

uint32_t PayloadBuilder::add_constant(std::vector<uint32_t> dims, std::span<const float> data,
                                      fb::DataType dtype) {
  if (data.size() != numel(dims)) {
    throw std::invalid_argument("Vulkan payload builder: constant has " +
                                std::to_string(data.size()) + " values for " +
                                std::to_string(numel(dims)) + " elements");
  }
  TensorDef t{std::move(dims), dtype};
  t.is_constant = true;
  t.constant_offset = blob_.size();
  if (dtype == fb::DataType::Float16) {
    t.constant_size = data.size() * 2;
    blob_.resize(blob_.size() + t.constant_size);
    for (size_t i = 0; i < data.size(); ++i) {
      const uint16_t h = float_to_half(data[i]);
      std::memcpy(blob_.data() + t.constant_offset + 2 * i, &h, 2);
    }
  } else {
    t.constant_size = data.size_bytes();
    blob_.resize(blob_.size() + data.size_bytes());
    if (!data.empty()) {
      std::memcpy(blob_.data() + t.constant_offset, data.data(), data.size_bytes());
    }
  }
  blob_.resize((blob_.size() + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment);
  return add(std::move(t));
}

uint32_t PayloadBuilder::add_input(std::vector<uint32_t> dims, uint32_t arg_index,
                                   fb::DataType dtype) {
  TensorDef t{std::move(dims), dtype};
  t.external = fb::ExternalKind::Input;
  t.arg_index = arg_index;
  return add(std::move(t));
}

uint32_t PayloadBuilder::add_output(std::vector<uint32_t> dims, uint32_t arg_index) {
  TensorDef t{std::move(dims)};
  t.external = fb::ExternalKind::Output;
  t.arg_index = arg_index;
  return add(std::move(t));
}

void PayloadBuilder::add_node(fb::OpType op, std::vector<uint32_t> inputs, uint32_t output,
                              NodeAttrs attrs) {
  for (uint32_t t : inputs) {
    if (t >= tensors_.size()) throw std::invalid_argument("Vulkan payload builder: bad tensor id");
  }
  if (output >= tensors_.size()) {
    throw std::invalid_argument("Vulkan payload builder: bad output tensor id");
  }
  nodes_.push_back(NodeDef{op, std::move(inputs), output, attrs, debug_id_});
}

uint32_t PayloadBuilder::add_symbol(uint32_t arg_index, uint32_t dim, uint32_t min, uint32_t max) {
  symbols_.push_back(SymbolDef{arg_index, dim, min, max});
  return static_cast<uint32_t>(symbols_.size() - 1);
}

void PayloadBuilder::set_sym_dims(uint32_t id, std::vector<SizeProgram> dims) {
  if (id >= tensors_.size())
    throw std::invalid_argument("Vulkan payload builder: no tensor " + std::to_string(id));
  if (dims.size() != tensors_[id].dims.size()) {
    throw std::invalid_argument("Vulkan payload builder: tensor " + std::to_string(id) + " has " +
                                std::to_string(tensors_[id].dims.size()) + " dims, " +
                                std::to_string(dims.size()) + " size expressions given");
  }
  tensors_[id].sym_dims = std::move(dims);
}

std::vector<uint8_t> PayloadBuilder::build() const {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);  // every scalar present: the size does not depend on the offset
  // Builds the flatbuffer with the constant blob at `offset`; returns its size.
  auto finish = [&](uint64_t offset) {
    fbb.Clear();
    const auto symbols =
        [&]() -> flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::SizeSymbol>>> {
      if (symbols_.empty()) return 0;
      std::vector<flatbuffers::Offset<fb::SizeSymbol>> out;
      for (const SymbolDef& s : symbols_) {
        out.push_back(fb::CreateSizeSymbol(fbb, s.arg_index, s.dim, s.min, s.max));
      }
      return fbb.CreateVector(out);
    };
    std::vector<flatbuffers::Offset<fb::Tensor>> ts;
    for (const TensorDef& t : tensors_) {
      std::vector<flatbuffers::Offset<fb::SizeExpr>> sym;
      for (const SizeProgram& e : t.sym_dims) {
        std::vector<uint8_t> ops;
        for (fb::SizeOp op : e.ops) ops.push_back(static_cast<uint8_t>(op));
        sym.push_back(fb::CreateSizeExpr(
            fbb, fbb.CreateVector(reinterpret_cast<const fb::SizeOp*>(ops.data()), ops.size()),
            fbb.CreateVector(e.args)));
      }
      ts.push_back(fb::CreateTensor(fbb, t.dtype, fbb.CreateVector(t.dims), t.is_constant,
                                    t.constant_offset, t.constant_size, t.external, t.arg_index,
                                    sym.empty() ? 0 : fbb.CreateVector(sym)));
    }
    std::vector<flatbuffers::Offset<fb::Node>> ns;
    for (const NodeDef& n : nodes_) {
      const std::vector<uint32_t> outputs{n.output};
      const auto list = [&](const auto& v) { return v.empty() ? 0 : fbb.CreateVector(v); };
      ns.push_back(fb::CreateNode(
          fbb, n.op, fbb.CreateVector(n.inputs), fbb.CreateVector(outputs), n.attrs.alpha,
          n.attrs.output_min, n.attrs.output_max, list(n.attrs.stride), list(n.attrs.padding),
          list(n.attrs.dilation), n.attrs.groups, n.attrs.eps, n.attrs.has_weight, n.attrs.has_bias,
          list(n.attrs.perm), n.attrs.unary, n.attrs.pool, list(n.attrs.kernel),
          n.attrs.count_include_pad, n.attrs.divisor, n.attrs.axis, n.attrs.start, n.attrs.step,
          n.debug_id, n.attrs.resize, n.attrs.align_corners, list(n.attrs.scales),
          list(n.attrs.pads), n.attrs.pad_mode, n.attrs.pad_value));
    }
    auto root = fb::CreatePayload(fbb, kPayloadVersion, fbb.CreateVector(ts), fbb.CreateVector(ns),
                                  offset, blob_.size(), fp16_arithmetic_, symbols());
    fbb.Finish(root, "PVK1");
    return static_cast<uint64_t>(fbb.GetSize());
  };
  const uint64_t size = finish(0);
  const uint64_t offset = (size + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
  if (finish(offset) != size) throw std::logic_error("Vulkan payload builder: size changed");
  std::vector<uint8_t> out(offset + blob_.size(), 0);
  std::memcpy(out.data(), fbb.GetBufferPointer(), size);
  if (!blob_.empty()) std::memcpy(out.data() + offset, blob_.data(), blob_.size());
  return out;
}

}  // namespace pteron::vulkan
