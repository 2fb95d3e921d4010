#include "backends/vgf/aot/payload_builder.h"

#include <cstring>
#include <memory>

#include "backends/vgf/runtime/vgf_model.h"
#include "runtime/core/scalar_type.h"

namespace pteron {
namespace vgf {

std::vector<uint8_t> build_payload(const std::vector<uint8_t>& vgf,
                                   const std::vector<IoDesc>& inputs,
                                   const std::vector<IoDesc>& outputs) {
  PayloadHeader h{};
  memcpy(h.magic, kPayloadMagic, 4);
  h.version = kPayloadVersion;
  h.num_inputs = static_cast<uint32_t>(inputs.size());
  h.num_outputs = static_cast<uint32_t>(outputs.size());
  const uint64_t table_end = sizeof(h) + (inputs.size() + outputs.size()) * sizeof(IoDesc);
  h.vgf_offset = (table_end + 15) / 16 * 16;
  h.vgf_size = vgf.size();
  h.vgf_checksum = fnv1a64(vgf.data(), vgf.size());
  std::vector<uint8_t> out(h.vgf_offset + vgf.size(), 0);
  memcpy(out.data(), &h, sizeof(h));
  uint8_t* p = out.data() + sizeof(h);
  for (const auto* list : {&inputs, &outputs}) {
    for (const IoDesc& io : *list) {
      memcpy(p, &io, sizeof(io));
      p += sizeof(io);
    }
  }
  if (!vgf.empty()) memcpy(out.data() + h.vgf_offset, vgf.data(), vgf.size());
  return out;
}

namespace {

bool dtype_of(VkFormat f, ScalarType* t) {
  switch (f) {
    case VK_FORMAT_R32_SFLOAT:
      *t = ScalarType::Float;
      return true;
    case VK_FORMAT_R16_SFLOAT:
      *t = ScalarType::Half;
      return true;
    case VK_FORMAT_R32_SINT:
      *t = ScalarType::Int;
      return true;
    case VK_FORMAT_R16_SINT:
      *t = ScalarType::Short;
      return true;
    case VK_FORMAT_R8_SINT:
      *t = ScalarType::Char;
      return true;
    case VK_FORMAT_R64_SINT:
      *t = ScalarType::Long;
      return true;
    default:
      return false;
  }
}

}  // namespace

bool io_from_vgf(const std::vector<uint8_t>& vgf, std::vector<IoDesc>* inputs,
                 std::vector<IoDesc>* outputs, std::string* error) {
  inputs->clear();
  outputs->clear();
  Result<Model*> decoded = decode_vgf({vgf.data(), vgf.size()});
  if (!decoded.ok()) {
    *error = last_error_message();
    return false;
  }
  std::unique_ptr<Model> m(decoded.get());
  for (int dir = 0; dir < 2; ++dir) {
    for (uint32_t b : dir == 0 ? m->inputs : m->outputs) {
      const Resource& r = m->resources[m->bindings[b].mrt_index];
      IoDesc io{};
      ScalarType t;
      if (!dtype_of(r.format, &t) || r.shape.size() > kMaxDims) {
        *error = "VGF: a model input or output has an unsupported format or rank";
        return false;
      }
      io.dtype = static_cast<uint32_t>(t);
      io.rank = static_cast<uint32_t>(r.shape.size());
      for (size_t d = 0; d < r.shape.size(); ++d) {
        io.dims[d] = r.shape[d];
        io.dim_order[d] = static_cast<uint8_t>(d);
      }
      auto* list = dir == 0 ? inputs : outputs;
      io.vgf_index = static_cast<uint32_t>(list->size());
      list->push_back(io);
    }
  }
  return true;
}

}  // namespace vgf
}  // namespace pteron
