#include "compiler/frontend/pt2_archive.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "compiler/compile_error.h"

namespace pteron::compiler::frontend {
namespace {

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t u32(const uint8_t* p) { return u16(p) | static_cast<uint32_t>(u16(p + 2)) << 16; }
uint64_t u64(const uint8_t* p) { return u32(p) | static_cast<uint64_t>(u32(p + 4)) << 32; }

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentralDir = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfCentralDir = 0x06064b50;

struct CentralDirectory {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t count = 0;
};

// libzip checks the archive but does not tell where an entry's bytes are; the central
// directory does (local header offsets), so read it directly, checking every bound.
std::optional<CentralDirectory> find_central_directory(std::span<const uint8_t> f) {
  if (f.size() < 22) return std::nullopt;
  const size_t lowest = f.size() > 22 + 65535 ? f.size() - 22 - 65535 : 0;
  for (size_t pos = f.size() - 22 + 1; pos-- > lowest;) {
    const uint8_t* p = f.data() + pos;
    if (u32(p) != kEndOfCentralDir) continue;
    CentralDirectory cd{u32(p + 16), u32(p + 12), u16(p + 10)};
    if (pos >= 20 && u32(p - 20) == kZip64Locator) {
      const uint64_t eocd64 = u64(p - 20 + 8);
      if (eocd64 > f.size() || f.size() - eocd64 < 56) return std::nullopt;
      const uint8_t* q = f.data() + eocd64;
      if (u32(q) != kZip64EndOfCentralDir) return std::nullopt;
      cd = CentralDirectory{u64(q + 48), u64(q + 40), u64(q + 32)};
    }
    if (cd.offset > f.size() || cd.size > f.size() - cd.offset) return std::nullopt;
    return cd;
  }
  return std::nullopt;
}

// Local header offset of each central directory entry, by name.
std::unordered_map<std::string, uint64_t> local_header_offsets(std::span<const uint8_t> f,
                                                               const std::string& path) {
  const auto cd = find_central_directory(f);
  if (!cd) throw CompileError(path + ": not a zip archive (no central directory)");
  std::unordered_map<std::string, uint64_t> offsets;
  uint64_t pos = cd->offset;
  const uint64_t end = cd->offset + cd->size;
  for (uint64_t i = 0; i < cd->count; ++i) {
    if (end - pos < 46 || u32(f.data() + pos) != kCentralHeader) {
      throw CompileError(path + ": corrupt zip central directory (entry " + std::to_string(i) +
                         ")");
    }
    const uint8_t* p = f.data() + pos;
    const uint16_t name_len = u16(p + 28), extra_len = u16(p + 30), comment_len = u16(p + 32);
    if (end - pos - 46 < uint64_t{name_len} + extra_len + comment_len) {
      throw CompileError(path + ": corrupt zip central directory (entry " + std::to_string(i) +
                         ")");
    }
    std::string name(reinterpret_cast<const char*>(p + 46), name_len);
    uint64_t offset = u32(p + 42);
    // ZIP64 extra field: 64-bit sizes/offset follow for every 32-bit field that is saturated.
    const uint8_t* extra = p + 46 + name_len;
    for (size_t e = 0; e + 4 <= extra_len;) {
      const uint16_t id = u16(extra + e), len = u16(extra + e + 2);
      if (e + 4 + len > extra_len) break;
      if (id == 0x0001) {
        size_t k = e + 4;
        if (u32(p + 24) == 0xFFFFFFFF) k += 8;
        if (u32(p + 20) == 0xFFFFFFFF) k += 8;
        if (u32(p + 42) == 0xFFFFFFFF && k + 8 <= e + 4 + len) offset = u64(extra + k);
      }
      e += 4 + len;
    }
    offsets.emplace(std::move(name), offset);
    pos += 46 + name_len + extra_len + comment_len;
  }
  return offsets;
}

}  // namespace

Pt2Archive Pt2Archive::open(const std::string& path) {
  Pt2Archive archive;
  archive.file_ = MappedFile::open(path);
  const std::span<const uint8_t> bytes = archive.file_->bytes();

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw CompileError(path + ": cannot read as zip: " + text);
  }
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (zip == nullptr) {
    zip_source_free(source);
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw CompileError(path + ": not a valid zip archive: " + text);
  }
  zip_error_fini(&error);
  archive.zip_ = std::shared_ptr<void>(zip, [](void* z) { zip_discard(static_cast<zip_t*>(z)); });

  const auto offsets = local_header_offsets(bytes, path);
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) != 0 || st.name == nullptr) {
      throw CompileError(path + ": cannot read zip entry " + std::to_string(i));
    }
    Entry e;
    e.index = static_cast<uint64_t>(i);
    e.size = st.size;
    e.comp_size = st.comp_size;
    e.method = st.comp_method;
    e.encrypted = st.encryption_method != ZIP_EM_NONE;
    const std::string name = st.name;
    // Data starts after the local header (30 bytes), its name and its extra field (torch's
    // alignment padding lives there).
    auto it = offsets.find(name);
    if (it != offsets.end() && it->second <= bytes.size() && bytes.size() - it->second >= 30 &&
        u32(bytes.data() + it->second) == kLocalHeader) {
      const uint8_t* local = bytes.data() + it->second;
      e.data_offset = it->second + 30 + u16(local + 26) + u16(local + 28);
      e.has_offset = true;
    }
    archive.entries_.emplace(name, e);
  }

  // The root folder is the one holding `archive_format` (torch names it after the file).
  for (const auto& [name, e] : archive.entries_) {
    const size_t slash = name.find('/');
    if (slash != std::string::npos && name.substr(slash + 1) == "archive_format") {
      archive.root_ = name.substr(0, slash + 1);
    }
  }
  return archive;
}

std::vector<std::string> Pt2Archive::entries() const {
  std::vector<std::string> names;
  for (const auto& [name, e] : entries_) {
    if (name.starts_with(root_)) names.push_back(name.substr(root_.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool Pt2Archive::has(std::string_view name) const { return entries_.contains(full_name(name)); }

const Pt2Archive::Entry& Pt2Archive::entry(std::string_view name) const {
  auto it = entries_.find(full_name(name));
  if (it == entries_.end()) {
    throw CompileError(path() + ": missing entry " + full_name(name));
  }
  return it->second;
}

std::string Pt2Archive::read_text(std::string_view name) const {
  const Entry& e = entry(name);
  auto* zip = static_cast<zip_t*>(zip_.get());
  zip_file_t* f = zip_fopen_index(zip, e.index, 0);
  if (f == nullptr) {
    throw CompileError(path() + ": cannot read entry " + full_name(name) + ": " +
                       zip_strerror(zip));
  }
  std::string text(e.size, '\0');
  const zip_int64_t n = zip_fread(f, text.data(), e.size);
  // One more read reaches the end of the entry, where libzip checks the CRC.
  char probe;
  const zip_int64_t extra = n == static_cast<zip_int64_t>(e.size) ? zip_fread(f, &probe, 1) : 0;
  std::string error = n < 0 || extra < 0 ? zip_file_strerror(f) : "";
  zip_fclose(f);
  if (!error.empty() || n != static_cast<zip_int64_t>(e.size) || extra != 0) {
    if (error.empty()) error = "entry is shorter than its header says";
    throw CompileError(path() + ": cannot read entry " + full_name(name) + ": " + error);
  }
  return text;
}

std::span<const uint8_t> Pt2Archive::stored_bytes(std::string_view name) const {
  const Entry& e = entry(name);
  const std::string what = path() + ": entry " + full_name(name);
  if (e.encrypted) throw CompileError(what + " is encrypted");
  if (e.method != ZIP_CM_STORE) {
    throw CompileError(what + " is compressed (method " + std::to_string(e.method) +
                       "); weights must be stored uncompressed, as torch.export.save writes them");
  }
  const uint64_t file_size = file_->bytes().size();
  if (!e.has_offset || e.comp_size != e.size || e.data_offset > file_size ||
      e.size > file_size - e.data_offset) {
    throw CompileError(what + " extends past the end of the file (truncated archive?)");
  }
  return file_->bytes().subspan(e.data_offset, e.size);
}

}  // namespace pteron::compiler::frontend
