// The zip container of a .pt2 file (torch.export.save): entries by path below the archive's
// root folder, JSON entries read through libzip, weight entries mapped in place.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/frontend/mapped_file.h"

namespace pteron::compiler::frontend {

class Pt2Archive {
 public:
  // Maps `path`, opens it with libzip (consistency checks on) and locates every entry's data.
  // Throws CompileError naming the file for anything that is not a readable zip.
  static Pt2Archive open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  // The root folder all entries live in, with its slash ("model/"); empty if there is none.
  const std::string& root() const { return root_; }
  // Entry names relative to the root.
  std::vector<std::string> entries() const;
  bool has(std::string_view name) const;
  // The whole (possibly compressed) entry, decompressed and CRC-checked by libzip.
  std::string read_text(std::string_view name) const;
  // The bytes of an entry stored uncompressed, in place in the mapped file. Throws when the
  // entry is missing, compressed, encrypted or extends past the end of the file.
  std::span<const uint8_t> stored_bytes(std::string_view name) const;
  // Full name as the zip has it, for messages ("mlp/data/weights/weight_0").
  std::string full_name(std::string_view name) const { return root_ + std::string(name); }
  std::shared_ptr<const MappedFile> file() const { return file_; }

 private:
  struct Entry {
    uint64_t index = 0;  // libzip index
    uint64_t size = 0;   // uncompressed
    uint64_t comp_size = 0;
    uint16_t method = 0;  // 0 = stored
    bool encrypted = false;
    uint64_t data_offset = 0;  // from the local header; valid for stored entries
    bool has_offset = false;
  };
  const Entry& entry(std::string_view name) const;

  std::shared_ptr<const MappedFile> file_;
  std::shared_ptr<void> zip_;  // zip_t*, closed on destruction
  std::string root_;
  std::unordered_map<std::string, Entry> entries_;  // by full name
};

}  // namespace pteron::compiler::frontend
