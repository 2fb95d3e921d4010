#include "backends/vgf/runtime/payload_format.h"

#include <cstring>

#include "runtime/core/scalar_type.h"

namespace pteron {
namespace vgf {

uint64_t fnv1a64(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

Result<PayloadView> verify_payload(Span<const uint8_t> payload) {
  if (payload.size() < sizeof(PayloadHeader)) {
    return fail(Error::InvalidProgram, "VGF payload: %zu bytes is too short for its header",
                payload.size());
  }
  if (reinterpret_cast<uintptr_t>(payload.data()) % alignof(PayloadHeader) != 0) {
    return fail(Error::InvalidProgram, "VGF payload: data is not 8-byte aligned");
  }
  const auto* h = reinterpret_cast<const PayloadHeader*>(payload.data());
  if (memcmp(h->magic, kPayloadMagic, 4) != 0) {
    return fail(Error::InvalidProgram, "VGF payload: bad magic (expected PVG1)");
  }
  if (h->version != kPayloadVersion) {
    return fail(Error::InvalidProgram, "VGF payload: version %u (this runtime reads %u)",
                h->version, kPayloadVersion);
  }
  if (h->num_inputs == 0 || h->num_outputs == 0 || h->num_inputs > kMaxIo ||
      h->num_outputs > kMaxIo) {
    return fail(Error::InvalidProgram, "VGF payload: %u inputs and %u outputs (1..%u each)",
                h->num_inputs, h->num_outputs, kMaxIo);
  }
  const uint64_t num_io = uint64_t{h->num_inputs} + h->num_outputs;
  const uint64_t table_end = sizeof(PayloadHeader) + num_io * sizeof(IoDesc);
  if (table_end > payload.size()) {
    return fail(Error::InvalidProgram, "VGF payload: I/O table runs past the payload end");
  }
  const auto* io = reinterpret_cast<const IoDesc*>(payload.data() + sizeof(PayloadHeader));
  for (uint64_t i = 0; i < num_io; ++i) {
    if (io[i].rank > kMaxDims) {
      return fail(Error::InvalidProgram, "VGF payload: I/O %u has rank %u (max %u)",
                  static_cast<uint32_t>(i), io[i].rank, kMaxDims);
    }
    if (io[i].dtype > 127 || !is_supported(static_cast<ScalarType>(io[i].dtype))) {
      return fail(Error::InvalidProgram, "VGF payload: I/O %u has an unknown dtype %u",
                  static_cast<uint32_t>(i), io[i].dtype);
    }
    uint32_t seen = 0;
    for (uint32_t d = 0; d < io[i].rank; ++d) {
      if (io[i].dim_order[d] >= io[i].rank || (seen >> io[i].dim_order[d]) & 1) {
        return fail(Error::InvalidProgram, "VGF payload: I/O %u has an invalid dim order",
                    static_cast<uint32_t>(i));
      }
      seen |= 1u << io[i].dim_order[d];
    }
    const bool is_input = i < h->num_inputs;
    const uint32_t count = is_input ? h->num_inputs : h->num_outputs;
    const uint64_t first = is_input ? 0 : h->num_inputs;
    for (uint64_t j = first; j < i; ++j) {
      if (io[j].vgf_index == io[i].vgf_index) {
        return fail(Error::InvalidProgram, "VGF payload: two arguments name VGF %s %u",
                    is_input ? "input" : "output", io[i].vgf_index);
      }
    }
    if (io[i].vgf_index >= count) {
      return fail(Error::InvalidProgram, "VGF payload: I/O %u names VGF %s %u of %u",
                  static_cast<uint32_t>(i), is_input ? "input" : "output", io[i].vgf_index, count);
    }
    for (uint32_t d = 0; d < io[i].rank; ++d) {
      if (io[i].dims[d] < 1 || io[i].dims[d] > (int64_t{1} << 31)) {
        return fail(Error::InvalidProgram, "VGF payload: I/O %u dim %u is %lld",
                    static_cast<uint32_t>(i), d, static_cast<long long>(io[i].dims[d]));
      }
    }
  }
  if (h->vgf_offset < table_end || h->vgf_offset % 16 != 0 || h->vgf_size == 0 ||
      h->vgf_offset > payload.size() || h->vgf_size > payload.size() - h->vgf_offset) {
    return fail(Error::InvalidProgram,
                "VGF payload: VGF bytes [%llu, +%llu) are not inside the %zu-byte payload",
                static_cast<unsigned long long>(h->vgf_offset),
                static_cast<unsigned long long>(h->vgf_size), payload.size());
  }
  const uint8_t* vgf = payload.data() + h->vgf_offset;
  if (fnv1a64(vgf, static_cast<size_t>(h->vgf_size)) != h->vgf_checksum) {
    return fail(Error::InvalidProgram, "VGF payload: the VGF bytes fail their checksum (corrupt)");
  }
  return PayloadView{h, io, {vgf, static_cast<size_t>(h->vgf_size)}};
}

}  // namespace vgf
}  // namespace pteron
