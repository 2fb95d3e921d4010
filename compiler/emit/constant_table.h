// The constant segment: constant tensor bytes at 16-byte-aligned offsets, identical bytes
// stored once. Index 0 is reserved (the format's "no constant").
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace pteron::compiler {

class ConstantTable {
 public:
  static constexpr uint64_t kAlignment = 16;

  ConstantTable() { offsets_.push_back(0); }
  // Returns the data_buffer_idx for `bytes` (>= 1).
  uint32_t add(std::span<const uint8_t> bytes);

  const std::vector<uint64_t>& offsets() const { return offsets_; }
  std::span<const uint8_t> data() const { return data_; }
  size_t deduplicated() const { return deduplicated_; }
  size_t unique_count() const { return offsets_.size() - 1; }

 private:
  std::vector<uint8_t> data_;
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> sizes_;  // by index, for dedupe comparison
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
  size_t deduplicated_ = 0;
};

}  // namespace pteron::compiler
