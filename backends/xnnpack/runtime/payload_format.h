// Constants of the XNNPACK payload format (schema/xnnpack_payload.fbs), shared by the
// runtime and the ahead-of-time builder.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/schema/xnnpack_payload_generated.h"

namespace pteron {
namespace xnnpack {

// The payload versions this runtime reads. The builder writes version 1 unless a constant is
// the program's named data (Tensor.constant_key), which a version-1 runtime would misread as
// blob offset 0: then version 2.
constexpr uint32_t kPayloadVersion = 1;
constexpr uint32_t kPayloadVersionNamedConstants = 2;
// Longest named-data key a constant may give.
constexpr size_t kMaxConstantKeyBytes = 256;
// Constant blob and constants inside it start at multiples of this.
constexpr size_t kConstantAlignment = 16;
// Readable bytes XNNPACK may touch past the end of any buffer it reads (XNN_EXTRA_BYTES).
constexpr size_t kExtraBytes = 16;
// XNN_MAX_TENSOR_DIMS of this snapshot.
constexpr size_t kMaxDims = 6;
// Bounds that keep every size computation far from overflow.
constexpr uint64_t kMaxDimSize = 0x7fffffff;
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 36;

const char* dtype_name(fb::DataType dtype);
// Bytes per element, 0 for Invalid/unknown.
size_t dtype_size(fb::DataType dtype);
// Short name of a node's operator ("conv2d", "add", "softmax", ...), "?" when unknown.
const char* op_name(const fb::Node& node);

}  // namespace xnnpack
}  // namespace pteron
