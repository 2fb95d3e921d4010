// The constant segment: constant tensor bytes at 16-byte-aligned offsets, identical bytes
// stored once. Index 0 is reserved (the format's "no constant"). The table keeps views of the
// bytes (weights stay in the memory-mapped archive) until the file is written.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "compiler/emit/pte_writer.h"

namespace pteron::compiler {

class ConstantTable {
 public:
  static constexpr uint64_t kAlignment = 16;

  ConstantTable() { offsets_.push_back(0); }
  // Returns the data_buffer_idx for `bytes` (>= 1). `bytes` must stay valid until written.
  uint32_t add(std::span<const uint8_t> bytes);

  const std::vector<uint64_t>& offsets() const { return offsets_; }
  uint64_t size() const { return size_; }
  // The segment as pieces at their offsets (gaps are zero padding).
  SegmentPieces pieces() const;
  size_t deduplicated() const { return deduplicated_; }
  size_t unique_count() const { return offsets_.size() - 1; }

 private:
  std::vector<std::span<const uint8_t>> bytes_;  // by index (0 unused)
  std::vector<uint64_t> offsets_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
  uint64_t size_ = 0;
  size_t deduplicated_ = 0;
};

}  // namespace pteron::compiler
