#include "runtime/core/memory_allocator.h"

namespace pteron {

void* MemoryAllocator::allocate(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
  const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
  const size_t padding = aligned - start;
  if (padding > size_ - used_ || size > size_ - used_ - padding) return nullptr;
  used_ += padding + size;
  if (used_ > peak_) peak_ = used_;
  return reinterpret_cast<void*>(aligned);
}

Result<void*> HierarchicalAllocator::address(uint32_t memory_id, uint64_t offset,
                                             size_t size) const {
  if (memory_id == 0 || memory_id >= buffers_.size()) {
    return fail(Error::OutOfRange, "memory_id %u has no arena (program plans %zu)", memory_id,
                buffers_.size() == 0 ? size_t{0} : buffers_.size() - 1);
  }
  const Span<uint8_t>& arena = buffers_[memory_id];
  if (offset > arena.size() || size > arena.size() - offset) {
    return fail(Error::OutOfRange,
                "tensor at offset %llu (+%zu bytes) overruns arena %u of %zu bytes",
                static_cast<unsigned long long>(offset), size, memory_id, arena.size());
  }
  return static_cast<void*>(arena.data() + offset);
}

}  // namespace pteron
