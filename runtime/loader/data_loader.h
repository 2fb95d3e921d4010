// Where program bytes come from. The runtime reads a program only through this interface, so
// a file, an mmapped file, or a constant array in flash all work the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"

namespace pteron {

// A read-only view of loaded bytes, released (if it owns them) when destroyed.
class FreeableBuffer {
 public:
  using FreeFn = void (*)(void* context, const void* data, size_t size);

  FreeableBuffer() = default;
  FreeableBuffer(const void* data, size_t size, FreeFn free_fn = nullptr, void* context = nullptr)
      : data_(data), size_(size), free_fn_(free_fn), context_(context) {}
  FreeableBuffer(FreeableBuffer&& other) noexcept { *this = static_cast<FreeableBuffer&&>(other); }
  FreeableBuffer& operator=(FreeableBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      size_ = other.size_;
      free_fn_ = other.free_fn_;
      context_ = other.context_;
      other.data_ = nullptr;
      other.size_ = 0;
      other.free_fn_ = nullptr;
    }
    return *this;
  }
  FreeableBuffer(const FreeableBuffer&) = delete;
  FreeableBuffer& operator=(const FreeableBuffer&) = delete;
  ~FreeableBuffer() { release(); }

  const void* data() const { return data_; }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }
  void release() {
    if (free_fn_ != nullptr && data_ != nullptr) free_fn_(context_, data_, size_);
    data_ = nullptr;
    size_ = 0;
    free_fn_ = nullptr;
  }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_fn_ = nullptr;
  void* context_ = nullptr;
};

class DataLoader {
 public:
  virtual ~DataLoader() = default;
  // Bytes [offset, offset + size). Fails with OutOfRange past the end, AccessFailed on I/O.
  virtual Result<FreeableBuffer> load(size_t offset, size_t size) = 0;
  virtual size_t size() const = 0;
};

// Program bytes already in memory (e.g. a constant array in flash). Views, never copies.
class BufferDataLoader final : public DataLoader {
 public:
  BufferDataLoader(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  Result<FreeableBuffer> load(size_t offset, size_t size) override {
    if (offset > size_ || size > size_ - offset) {
      return fail(Error::OutOfRange, "read of %zu bytes at offset %zu past the end (%zu bytes)",
                  size, offset, size_);
    }
    return FreeableBuffer(data_ + offset, size);
  }
  size_t size() const override { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace pteron
