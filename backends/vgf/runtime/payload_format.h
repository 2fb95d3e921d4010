// The VGF delegate's payload: a small fixed header, the region's I/O layout, then the .vgf file
// the ML SDK model converter wrote (SPIR-V graph module, resource table, constants). All
// integers little-endian. The I/O table lets the runtime check a call's tensors before touching
// the device and cross-check the VGF's own resource table.
//
//   PayloadHeader                      (40 bytes)
//   IoDesc[num_inputs + num_outputs]   (the delegate call's arguments: inputs, then outputs)
//   ... padding ...
//   VGF bytes at vgf_offset (16-byte aligned), vgf_size bytes
#pragma once

#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron {
namespace vgf {

constexpr char kPayloadMagic[4] = {'P', 'V', 'G', '1'};
constexpr uint32_t kPayloadVersion = 1;
constexpr uint32_t kMaxDims = 6;
constexpr uint32_t kMaxIo = 64;

struct PayloadHeader {
  char magic[4];
  uint32_t version;
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint64_t vgf_offset;
  uint64_t vgf_size;
  // FNV-1a (64-bit) of the VGF bytes. The VGF's SPIR-V is parsed by the driver (here Arm's
  // emulation layer), which is not hardened against corrupt modules: a damaged payload must be
  // refused before it gets there.
  uint64_t vgf_checksum;
};
static_assert(sizeof(PayloadHeader) == 40, "payload header layout");

uint64_t fnv1a64(const uint8_t* data, size_t size);

struct IoDesc {
  uint32_t dtype;  // pteron ScalarType (c10 numbering)
  uint32_t rank;
  int64_t dims[kMaxDims];  // logical (torch) sizes
  uint8_t dim_order[8];    // the memory layout the VGF tensor has ({0, 2, 3, 1}: NHWC)
  uint32_t vgf_index;      // which of the VGF's model inputs (or outputs) this argument is
  uint32_t reserved;
};
static_assert(sizeof(IoDesc) == 72, "payload I/O descriptor layout");

// A checked view of a payload: header fields in range, I/O table inside it, dims >= 1, dim
// orders and VGF indices permutations, the VGF bytes inside the payload. Does not parse the VGF
// itself (vgf_model does).
struct PayloadView {
  const PayloadHeader* header;
  const IoDesc* io;  // num_inputs + num_outputs entries
  Span<const uint8_t> vgf;
};
Result<PayloadView> verify_payload(Span<const uint8_t> payload);

}  // namespace vgf
}  // namespace pteron
