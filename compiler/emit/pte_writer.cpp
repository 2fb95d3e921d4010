#include "compiler/emit/pte_writer.h"

#include <cerrno>
#include <cstring>
#include <string>

#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

constexpr size_t kHeaderOffset = 8;     // after root offset and file identifier
constexpr uint32_t kHeaderLength = 32;  // magic, length, program_size, base offset, data size

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

void ByteSink::zeros(uint64_t count) {
  static const uint8_t kZeros[4096] = {};
  while (count > 0) {
    const size_t n = count < sizeof(kZeros) ? static_cast<size_t>(count) : sizeof(kZeros);
    write(kZeros, n);
    count -= n;
  }
}

void VectorSink::write(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + size);
}

FileSink::FileSink(const char* path) : file_(std::fopen(path, "wb")), path_(path) {
  if (file_ == nullptr)
    throw CompileError(std::string(path) + ": cannot write: " + std::strerror(errno));
}

FileSink::~FileSink() {
  if (file_ != nullptr) std::fclose(file_);
}

void FileSink::write(const void* data, size_t size) {
  if (size > 0 && std::fwrite(data, 1, size, file_) != size) {
    throw CompileError(std::string(path_) + ": cannot write: " + std::strerror(errno));
  }
}

void FileSink::close() {
  std::FILE* f = file_;
  file_ = nullptr;
  if (f != nullptr && std::fclose(f) != 0)
    throw CompileError(std::string(path_) + ": cannot write");
}

std::vector<uint64_t> segment_offsets(const std::vector<uint64_t>& sizes, uint64_t alignment) {
  std::vector<uint64_t> offsets;
  uint64_t cursor = 0;
  for (uint64_t size : sizes) {
    offsets.push_back(cursor);
    cursor = align_up(cursor + size, alignment);
  }
  return offsets;
}

uint64_t write_pte(std::span<const uint8_t> flatbuffer, const std::vector<SegmentPieces>& segments,
                   ByteSink& sink, uint64_t alignment) {
  if (flatbuffer.size() < kHeaderOffset) throw CompileError("internal: flatbuffer too small");
  // Inserting the header right after the identifier shifts every byte behind it equally, so
  // only the root offset (relative to byte 0) changes. 32 keeps 16-byte alignment intact.
  const uint64_t program_size = flatbuffer.size() + kHeaderLength;
  const uint64_t base = align_up(program_size, alignment);
  std::vector<uint64_t> sizes;
  for (const auto& s : segments) sizes.push_back(s.size);
  const std::vector<uint64_t> offsets = segment_offsets(sizes, alignment);
  const uint64_t data_size = segments.empty() ? 0 : offsets.back() + sizes.back();

  uint8_t head[kHeaderOffset + kHeaderLength];
  uint32_t root;
  std::memcpy(&root, flatbuffer.data(), 4);
  put_u32(head, root + kHeaderLength);
  std::memcpy(head + 4, flatbuffer.data() + 4, 4);
  uint8_t* h = head + kHeaderOffset;
  std::memcpy(h, "eh00", 4);
  put_u32(h + 4, kHeaderLength);
  put_u64(h + 8, program_size);
  put_u64(h + 16, base);
  put_u64(h + 24, data_size);
  sink.write(head, sizeof(head));
  sink.write(flatbuffer.data() + kHeaderOffset, flatbuffer.size() - kHeaderOffset);
  uint64_t written = program_size;
  for (size_t i = 0; i < segments.size(); ++i) {
    const uint64_t start = base + offsets[i];
    sink.zeros(start - written);
    written = start;
    for (const auto& piece : segments[i].pieces) {
      sink.zeros(start + piece.offset - written);
      sink.write(piece.bytes.data(), piece.bytes.size());
      written = start + piece.offset + piece.bytes.size();
    }
    sink.zeros(start + segments[i].size - written);
    written = start + segments[i].size;
  }
  return written;
}

}  // namespace pteron::compiler
