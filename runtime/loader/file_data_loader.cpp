#include "runtime/loader/file_data_loader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace pteron {
namespace {

Result<size_t> regular_file_size(int fd, const char* path) {
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(Error::AccessFailed, "%s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail(Error::AccessFailed, "%s: not a regular file", path);
  return static_cast<size_t>(st.st_size);
}

Error check_range(size_t offset, size_t size, size_t total) {
  if (offset > total || size > total - offset) {
    return fail(Error::OutOfRange,
                "read of %zu bytes at offset %zu past the end of the file (%zu bytes)", size,
                offset, total);
  }
  return Error::Ok;
}

}  // namespace

Result<MmapDataLoader> MmapDataLoader::open(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Error::AccessFailed, "%s: %s", path, strerror(errno));
  Result<size_t> size = regular_file_size(fd, path);
  if (!size.ok()) {
    ::close(fd);
    return size.error();
  }
  void* base = nullptr;
  if (*size > 0) {
    base = mmap(nullptr, *size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      ::close(fd);
      return fail(Error::AccessFailed, "%s: mmap failed: %s", path, strerror(errno));
    }
  }
  ::close(fd);  // the mapping stays valid
  return MmapDataLoader(base, *size);
}

MmapDataLoader::MmapDataLoader(MmapDataLoader&& other) noexcept
    : base_(other.base_), size_(other.size_) {
  other.base_ = nullptr;
  other.size_ = 0;
}

MmapDataLoader::~MmapDataLoader() {
  if (base_ != nullptr) munmap(const_cast<void*>(base_), size_);
}

Result<FreeableBuffer> MmapDataLoader::load(size_t offset, size_t size) {
  PTERON_TRY(check_range(offset, size, size_));
  return FreeableBuffer(static_cast<const uint8_t*>(base_) + offset, size);
}

Result<FileDataLoader> FileDataLoader::open(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Error::AccessFailed, "%s: %s", path, strerror(errno));
  Result<size_t> size = regular_file_size(fd, path);
  if (!size.ok()) {
    ::close(fd);
    return size.error();
  }
  return FileDataLoader(fd, *size);
}

FileDataLoader::FileDataLoader(FileDataLoader&& other) noexcept
    : fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

FileDataLoader::~FileDataLoader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FreeableBuffer> FileDataLoader::load(size_t offset, size_t size) {
  PTERON_TRY(check_range(offset, size, size_));
  void* buffer = nullptr;
  if (posix_memalign(&buffer, 16, size == 0 ? 1 : size) != 0) {
    return fail(Error::OutOfMemory, "cannot allocate %zu bytes to read the program", size);
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd_, static_cast<uint8_t*>(buffer) + done, size - done,
                            static_cast<off_t>(offset + done));
    if (n <= 0) {
      std::free(buffer);
      return fail(Error::AccessFailed, "read failed at offset %zu: %s", offset + done,
                  n == 0 ? "unexpected end of file" : strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return FreeableBuffer(
      buffer, size, [](void*, const void* data, size_t) { std::free(const_cast<void*>(data)); });
}

}  // namespace pteron
