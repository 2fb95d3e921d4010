// A zero-filled block of memory for a planned arena whose pages the OS supplies on first touch:
// allocating costs address space, not the time to write zeros, so an arena costs what the
// method's tensors touch, whatever size the program declares (a corrupt size is cheap to reject
// later or simply never touched). Page-aligned, hence aligned for every tensor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron {

class ZeroedArena {
 public:
  ZeroedArena() = default;
  // Null data() when the OS refuses the mapping (out of memory or address space).
  explicit ZeroedArena(size_t size);
  ZeroedArena(ZeroedArena&& other) noexcept;
  ZeroedArena& operator=(ZeroedArena&& other) noexcept;
  ZeroedArena(const ZeroedArena&) = delete;
  ZeroedArena& operator=(const ZeroedArena&) = delete;
  ~ZeroedArena();

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace pteron
