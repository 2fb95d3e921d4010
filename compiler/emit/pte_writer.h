// Lays out a `.pte` file: the program flatbuffer with the extended header ("eh00") in its
// leading padding, then each segment at an aligned offset (ExecuTorch's layout). Segments are
// streamed from where their bytes already are (e.g. weights in the mmapped archive).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

namespace pteron::compiler {

inline constexpr uint64_t kSegmentAlignment = 128;  // ExecuTorch's default

// A segment made of byte ranges at offsets within it; bytes between pieces are zero.
struct SegmentPieces {
  struct Piece {
    uint64_t offset;
    std::span<const uint8_t> bytes;
  };
  uint64_t size = 0;
  std::vector<Piece> pieces;  // in increasing offset order

  static SegmentPieces whole(std::span<const uint8_t> bytes) {
    return {bytes.size(), {{0, bytes}}};
  }
};

// Where the file goes: memory (Python's bytes) or a file (the CLI).
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, size_t size) = 0;
  void zeros(uint64_t count);
};

class VectorSink final : public ByteSink {
 public:
  void write(const void* data, size_t size) override;
  std::vector<uint8_t> bytes;
};

// Throws CompileError naming the path when it cannot be written.
class FileSink final : public ByteSink {
 public:
  explicit FileSink(const char* path);
  ~FileSink() override;
  void write(const void* data, size_t size) override;
  void close();

 private:
  std::FILE* file_;
  const char* path_;
};

// Offset of segment i relative to the segment base, given all segment sizes in order.
std::vector<uint64_t> segment_offsets(const std::vector<uint64_t>& sizes,
                                      uint64_t alignment = kSegmentAlignment);

// `flatbuffer` must have been built with segment offsets from segment_offsets(). Writes the
// flatbuffer (header inserted), padding, then the segments; returns the file size.
uint64_t write_pte(std::span<const uint8_t> flatbuffer, const std::vector<SegmentPieces>& segments,
                   ByteSink& sink, uint64_t alignment = kSegmentAlignment);

}  // namespace pteron::compiler
