// Hosted-only loaders: read a file on demand, or mmap it once and hand out views.
#pragma once

#include "runtime/loader/data_loader.h"

namespace pteron {

// mmaps the whole file read-only; loads are zero-copy views valid while the loader lives.
class MmapDataLoader final : public DataLoader {
 public:
  static Result<MmapDataLoader> open(const char* path);
  MmapDataLoader(MmapDataLoader&& other) noexcept;
  MmapDataLoader(const MmapDataLoader&) = delete;
  ~MmapDataLoader() override;

  Result<FreeableBuffer> load(size_t offset, size_t size) override;
  size_t size() const override { return size_; }

 private:
  MmapDataLoader(const void* base, size_t size) : base_(base), size_(size) {}
  const void* base_ = nullptr;
  size_t size_ = 0;
};

// Reads each requested range into a fresh 16-byte-aligned heap buffer (for file systems where
// mmap is unavailable or undesirable).
class FileDataLoader final : public DataLoader {
 public:
  static Result<FileDataLoader> open(const char* path);
  FileDataLoader(FileDataLoader&& other) noexcept;
  FileDataLoader(const FileDataLoader&) = delete;
  ~FileDataLoader() override;

  Result<FreeableBuffer> load(size_t offset, size_t size) override;
  size_t size() const override { return size_; }

 private:
  FileDataLoader(int fd, size_t size) : fd_(fd), size_(size) {}
  int fd_ = -1;
  size_t size_ = 0;
};

}  // namespace pteron
