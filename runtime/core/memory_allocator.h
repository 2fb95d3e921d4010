// Bump allocator over caller-owned memory. Never calls the heap; reset() frees everything.
// Tracks its high-water mark so a program's load-time memory can be reported.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron {

class MemoryAllocator {
 public:
  static constexpr size_t kDefaultAlignment = 16;

  MemoryAllocator() = default;
  MemoryAllocator(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}

  // Returns nullptr when out of memory (callers turn that into Error::OutOfMemory with context).
  void* allocate(size_t size, size_t alignment = kDefaultAlignment);

  template <typename T>
  T* allocate_array(size_t count) {
    if (count != 0 && count > SIZE_MAX / sizeof(T)) return nullptr;
    return static_cast<T*>(allocate(count * sizeof(T), alignof(T) > 8 ? alignof(T) : 8));
  }

  void reset() { used_ = 0; }
  // Gives back everything allocated since used() was `mark` (a kernel making several calls that
  // each take scratch, so they reuse the same bytes).
  void rewind(size_t mark) {
    if (mark <= used_) used_ = mark;
  }
  size_t used() const { return used_; }
  size_t peak() const { return peak_; }
  size_t capacity() const { return size_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
  size_t peak_ = 0;
};

// Planned memory: one caller-owned buffer per arena, addressed by the program's 1-based
// memory_id (index 0 is reserved by the format) and a byte offset.
class HierarchicalAllocator {
 public:
  HierarchicalAllocator() = default;
  // buffers[i] backs memory_id i; buffers[0] is ignored.
  explicit HierarchicalAllocator(Span<Span<uint8_t>> buffers) : buffers_(buffers) {}

  // Address of [offset, offset+size) in arena `memory_id`, bounds-checked.
  Result<void*> address(uint32_t memory_id, uint64_t offset, size_t size) const;
  size_t arena_count() const { return buffers_.size(); }

 private:
  Span<Span<uint8_t>> buffers_;
};

// Everything a Method needs, all supplied by the caller.
struct MemoryManager {
  MemoryAllocator* method_allocator = nullptr;   // load-time structures
  HierarchicalAllocator* planned = nullptr;      // activations (may be null if none planned)
  MemoryAllocator* scratch_allocator = nullptr;  // per-instruction scratch, reset each call
};

}  // namespace pteron
