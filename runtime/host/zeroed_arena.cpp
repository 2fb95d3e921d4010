#include "runtime/host/zeroed_arena.h"

#include <sys/mman.h>

#include <utility>

namespace pteron {

// An anonymous private mapping reads as zeros and gets a physical page only when one is
// written, unlike allocate-then-memset (which writes, and commits, every page up front).
ZeroedArena::ZeroedArena(size_t size) {
  const size_t bytes = size == 0 ? 1 : size;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  data_ = static_cast<uint8_t*>(p);
  size_ = bytes;
}

ZeroedArena::ZeroedArena(ZeroedArena&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

ZeroedArena& ZeroedArena::operator=(ZeroedArena&& other) noexcept {
  if (this != &other) {
    this->~ZeroedArena();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

ZeroedArena::~ZeroedArena() {
  if (data_ != nullptr) munmap(data_, size_);
}

}  // namespace pteron
