#include "compiler/emit/pte_writer.h"

#include <cstring>

#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

constexpr size_t kHeaderOffset = 8;   // after root offset and file identifier
constexpr uint32_t kHeaderLength = 32;  // magic, length, program_size, base offset, data size

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

std::vector<uint64_t> segment_offsets(const std::vector<uint64_t>& sizes, uint64_t alignment) {
  std::vector<uint64_t> offsets;
  uint64_t cursor = 0;
  for (uint64_t size : sizes) {
    offsets.push_back(cursor);
    cursor = align_up(cursor + size, alignment);
  }
  return offsets;
}

std::vector<uint8_t> write_pte(std::span<const uint8_t> flatbuffer,
                               const std::vector<std::span<const uint8_t>>& segments,
                               uint64_t alignment) {
  if (flatbuffer.size() < kHeaderOffset) throw CompileError("internal: flatbuffer too small");
  // Inserting the header right after the identifier shifts every byte behind it equally, so
  // only the root offset (relative to byte 0) changes. 32 keeps 16-byte alignment intact.
  std::vector<uint8_t> out;
  const uint64_t program_size = flatbuffer.size() + kHeaderLength;
  const uint64_t base = align_up(program_size, alignment);
  std::vector<uint64_t> sizes;
  for (const auto& s : segments) sizes.push_back(s.size());
  const std::vector<uint64_t> offsets = segment_offsets(sizes, alignment);
  const uint64_t data_size = segments.empty() ? 0 : offsets.back() + sizes.back();
  out.resize(base + data_size, 0);

  uint32_t root;
  std::memcpy(&root, flatbuffer.data(), 4);
  put_u32(out.data(), root + kHeaderLength);
  std::memcpy(out.data() + 4, flatbuffer.data() + 4, 4);
  uint8_t* h = out.data() + kHeaderOffset;
  std::memcpy(h, "eh00", 4);
  put_u32(h + 4, kHeaderLength);
  put_u64(h + 8, program_size);
  put_u64(h + 16, base);
  put_u64(h + 24, data_size);
  std::memcpy(out.data() + kHeaderOffset + kHeaderLength, flatbuffer.data() + kHeaderOffset,
              flatbuffer.size() - kHeaderOffset);
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!segments[i].empty()) std::memcpy(out.data() + base + offsets[i], segments[i].data(), segments[i].size());
  }
  return out;
}

}  // namespace pteron::compiler
