#include "backends/vgf/runtime/vgf_model.h"

#include <vgf/decoder.h>

#include <memory>
#include <new>

namespace pteron {
namespace vgf {

uint32_t format_size(VkFormat f) {
  switch (f) {
    case VK_FORMAT_R32_SFLOAT:
    case VK_FORMAT_R32_SINT:
      return 4;
    case VK_FORMAT_R16_SFLOAT:
    case VK_FORMAT_R16_SINT:
      return 2;
    case VK_FORMAT_R8_SINT:
    case VK_FORMAT_R8_UINT:
      return 1;
    case VK_FORMAT_R64_SINT:
      return 8;
    default:
      return 0;
  }
}

namespace {

constexpr size_t kMaxResources = 1 << 16;

bool section(const mlsdk_decoder_header_decoder* h, mlsdk_decoder_section which, size_t file_size,
             Span<const uint8_t> vgf, Span<const uint8_t>* out) {
  mlsdk_decoder_vgf_section_info info{};
  mlsdk_decoder_get_header_section_info(h, which, &info);
  if (info.offset > file_size || info.size > file_size - info.offset) return false;
  *out = {vgf.data() + info.offset, static_cast<size_t>(info.size)};
  return true;
}

Error bad(const char* what) { return fail(Error::InvalidProgram, "VGF: %s", what); }

}  // namespace

Result<Model*> decode_vgf(Span<const uint8_t> vgf) {
  if (vgf.size() < mlsdk_decoder_header_size()) return bad("file shorter than its header");
  std::unique_ptr<Model> m(new (std::nothrow) Model());
  if (!m) return fail(Error::OutOfMemory, "VGF: no memory to decode the model");
  const size_t header_mem = mlsdk_decoder_header_decoder_mem_reqs();
  const size_t modules_mem = mlsdk_decoder_module_table_decoder_mem_reqs();
  const size_t sequence_mem = mlsdk_decoder_model_sequence_decoder_mem_reqs();
  const size_t resources_mem = mlsdk_decoder_model_resource_table_decoder_mem_reqs();
  const size_t constants_mem = mlsdk_decoder_constant_table_decoder_mem_reqs();
  auto round = [](size_t n) { return (n + 15) / 16 * 16; };
  m->decoder_memory.resize(round(header_mem) + round(modules_mem) + round(sequence_mem) +
                           round(resources_mem) + round(constants_mem) + 16);
  uint8_t* mem = m->decoder_memory.data();
  mem += (16 - reinterpret_cast<uintptr_t>(mem) % 16) % 16;
  auto take = [&mem, &round](size_t n) {
    uint8_t* p = mem;
    mem += round(n);
    return p;
  };

  const mlsdk_decoder_header_decoder* header = mlsdk_decoder_create_header_decoder(
      vgf.data(), mlsdk_decoder_header_size(), vgf.size(), take(header_mem));
  if (header == nullptr || !mlsdk_decoder_is_header_valid(header)) return bad("invalid header");
  if (!mlsdk_decoder_is_header_compatible(header)) {
    return fail(Error::NotSupported, "VGF: file version %u.%u is not readable by VGF library",
                mlsdk_decoder_get_header_major(header), mlsdk_decoder_get_header_minor(header));
  }
  Span<const uint8_t> s_modules, s_sequence, s_resources, s_constants;
  if (!section(header, mlsdk_decoder_section_modules, vgf.size(), vgf, &s_modules) ||
      !section(header, mlsdk_decoder_section_model_sequence, vgf.size(), vgf, &s_sequence) ||
      !section(header, mlsdk_decoder_section_resources, vgf.size(), vgf, &s_resources) ||
      !section(header, mlsdk_decoder_section_constants, vgf.size(), vgf, &s_constants)) {
    return bad("a section lies outside the file");
  }
  auto* modules = mlsdk_decoder_create_module_table_decoder(s_modules.data(), s_modules.size(),
                                                            take(modules_mem));
  auto* sequence = mlsdk_decoder_create_model_sequence_decoder(s_sequence.data(), s_sequence.size(),
                                                               take(sequence_mem));
  auto* resources = mlsdk_decoder_create_model_resource_table_decoder(
      s_resources.data(), s_resources.size(), take(resources_mem));
  auto* constants = mlsdk_decoder_create_constant_table_decoder(
      s_constants.data(), s_constants.size(), take(constants_mem));
  if (!modules || !sequence || !resources || !constants) return bad("invalid section");

  // Resources.
  const size_t num_resources = mlsdk_decoder_get_model_resource_table_num_entries(resources);
  if (num_resources > kMaxResources) return bad("too many resources");
  m->resources.resize(num_resources);
  for (uint32_t i = 0; i < num_resources; ++i) {
    Resource& r = m->resources[i];
    r.format = static_cast<VkFormat>(mlsdk_decoder_get_vk_format(resources, i));
    mlsdk_decoder_tensor_dimensions dims{};
    mlsdk_decoder_model_resource_table_get_tensor_shape(resources, i, &dims);
    if (dims.size > 8) return bad("a resource has more than 8 dims");
    uint64_t numel = 1;
    for (size_t d = 0; d < dims.size; ++d) {
      if (dims.data[d] < 1 || dims.data[d] > (int64_t{1} << 31)) {
        return fail(Error::NotSupported, "VGF: resource %u has an unshaped or invalid dim %lld", i,
                    static_cast<long long>(dims.data[d]));
      }
      r.shape.push_back(dims.data[d]);
      numel *= static_cast<uint64_t>(dims.data[d]);
    }
    r.nbytes = numel * format_size(r.format);
  }

  // The one graph segment.
  const size_t num_segments = mlsdk_decoder_get_model_sequence_table_size(sequence);
  if (num_segments != 1) {
    return fail(Error::NotSupported,
                "VGF: %zu segments (this delegate runs files with exactly one graph segment)",
                num_segments);
  }
  if (mlsdk_decoder_model_sequence_get_segment_type(sequence, 0) !=
      mlsdk_decoder_module_type_graph) {
    return fail(Error::NotSupported, "VGF: the segment is a compute shader, not a graph");
  }
  const uint32_t module = mlsdk_decoder_model_sequence_get_segment_module_index(sequence, 0);
  if (module >= mlsdk_decoder_get_module_table_num_entries(modules) ||
      !mlsdk_decoder_module_is_spirv(modules, module) ||
      !mlsdk_decoder_module_has_spirv_code(modules, module)) {
    return bad("the graph segment has no SPIR-V module");
  }
  mlsdk_decoder_spirv_code code{};
  mlsdk_decoder_get_spirv_module_code(modules, module, &code);
  m->spirv = code.code;
  m->spirv_words = code.words;
  m->entry_point = mlsdk_decoder_get_module_entry_point(modules, module);
  if (m->spirv == nullptr || m->spirv_words == 0 || m->entry_point == nullptr) {
    return bad("the graph module has no code or entry point");
  }

  const size_t num_sets =
      mlsdk_decoder_model_sequence_get_segment_descriptorset_info_size(sequence, 0);
  for (uint32_t k = 0; k < num_sets; ++k) {
    const uint32_t set =
        mlsdk_decoder_model_sequence_get_segment_descriptorset_index(sequence, 0, k);
    auto slots = mlsdk_decoder_model_sequence_get_segment_descriptor_binding_slot(sequence, 0, k);
    const size_t n = mlsdk_decoder_binding_slot_size(sequence, slots);
    for (uint32_t j = 0; j < n; ++j) {
      Binding b{set, mlsdk_decoder_binding_slot_binding_id(sequence, slots, j),
                mlsdk_decoder_binding_slot_mrt_index(sequence, slots, j)};
      if (b.mrt_index >= num_resources || b.set > 31) return bad("a binding's resource is invalid");
      const Resource& r = m->resources[b.mrt_index];
      if (format_size(r.format) == 0) {
        return fail(Error::NotSupported, "VGF: binding %u.%u has unsupported VkFormat %d", b.set,
                    b.binding, static_cast<int>(r.format));
      }
      m->bindings.push_back(b);
    }
  }
  auto find_binding = [&m](uint32_t mrt) -> int32_t {
    for (size_t i = 0; i < m->bindings.size(); ++i) {
      if (m->bindings[i].mrt_index == mrt) return static_cast<int32_t>(i);
    }
    return -1;
  };
  for (int dir = 0; dir < 2; ++dir) {
    auto slots = dir == 0 ? mlsdk_decoder_model_sequence_get_input_binding_slot(sequence)
                          : mlsdk_decoder_model_sequence_get_output_binding_slot(sequence);
    const size_t n = mlsdk_decoder_binding_slot_size(sequence, slots);
    for (uint32_t j = 0; j < n; ++j) {
      const int32_t b = find_binding(mlsdk_decoder_binding_slot_mrt_index(sequence, slots, j));
      if (b < 0) return bad("a model input or output is not bound by the graph segment");
      (dir == 0 ? m->inputs : m->outputs).push_back(static_cast<uint32_t>(b));
    }
  }

  auto cbind = mlsdk_decoder_model_sequence_get_segment_constant_bindings(sequence, 0);
  const size_t num_constants = mlsdk_decoder_get_constant_table_num_entries(constants);
  const size_t nc = cbind ? mlsdk_decoder_graph_constant_binding_size(sequence, cbind) : 0;
  for (uint32_t j = 0; j < nc; ++j) {
    mlsdk_decoder_graph_constant_binding gb{};
    mlsdk_decoder_graph_constant_binding_get(sequence, cbind, j, &gb);
    if (gb.constant_table_index >= num_constants) return bad("a graph constant is out of range");
    if (mlsdk_decoder_constant_table_is_sparse(constants, gb.constant_table_index)) {
      return fail(Error::NotSupported, "VGF: sparse constants are not supported");
    }
    mlsdk_decoder_constant_data data{};
    mlsdk_decoder_constant_table_get_data(constants, gb.constant_table_index, &data);
    const uint32_t mrt =
        mlsdk_decoder_constant_table_get_mrt_index(constants, gb.constant_table_index);
    if (mrt >= num_resources || data.data == nullptr) return bad("a constant has no data");
    if (data.size != m->resources[mrt].nbytes) {
      return fail(Error::InvalidProgram, "VGF: constant %u holds %zu bytes, its tensor needs %llu",
                  gb.graph_constant_id, data.size,
                  static_cast<unsigned long long>(m->resources[mrt].nbytes));
    }
    m->constants.push_back({gb.graph_constant_id, mrt, data.data, data.size});
  }
  return m.release();
}

}  // namespace vgf
}  // namespace pteron
