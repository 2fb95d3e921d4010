// Lays out a `.pte` file: the program flatbuffer with the extended header ("eh00") in its
// leading padding, then each segment at an aligned offset (ExecuTorch's layout).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pteron::compiler {

inline constexpr uint64_t kSegmentAlignment = 128;  // ExecuTorch's default

// Offset of segment i relative to the segment base, given all segment sizes in order.
std::vector<uint64_t> segment_offsets(const std::vector<uint64_t>& sizes, uint64_t alignment = kSegmentAlignment);

// `flatbuffer` must have been built with segment offsets from segment_offsets(). Returns the
// file bytes: flatbuffer (header inserted), padding, segments.
std::vector<uint8_t> write_pte(std::span<const uint8_t> flatbuffer,
                               const std::vector<std::span<const uint8_t>>& segments,
                               uint64_t alignment = kSegmentAlignment);

}  // namespace pteron::compiler
