#include "compiler/emit/constant_table.h"

#include <cstring>

namespace pteron::compiler {
namespace {

// FNV-style hash over 8-byte words (weights run to hundreds of MB); collisions are resolved by
// comparing contents.
uint64_t hash_bytes(std::span<const uint8_t> bytes) {
  uint64_t h = 1469598103934665603ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

}  // namespace

uint32_t ConstantTable::add(std::span<const uint8_t> bytes) {
  if (bytes_.empty()) bytes_.emplace_back();
  const uint64_t h = hash_bytes(bytes);
  auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const std::span<const uint8_t> stored = bytes_[it->second];
    if (stored.size() == bytes.size() &&
        (bytes.empty() || std::memcmp(stored.data(), bytes.data(), bytes.size()) == 0)) {
      ++deduplicated_;
      return it->second;
    }
  }
  const uint64_t offset = (size_ + kAlignment - 1) / kAlignment * kAlignment;
  size_ = offset + bytes.size();
  const uint32_t index = static_cast<uint32_t>(offsets_.size());
  offsets_.push_back(offset);
  bytes_.push_back(bytes);
  by_hash_.emplace(h, index);
  return index;
}

SegmentPieces ConstantTable::pieces() const {
  SegmentPieces p;
  p.size = size_;
  for (size_t i = 1; i < offsets_.size(); ++i) p.pieces.push_back({offsets_[i], bytes_[i]});
  return p;
}

}  // namespace pteron::compiler
