#include "tools/cli/npz.h"

#include <zip.h>

#include <cstring>
#include <memory>
#include <stdexcept>

#include "tools/run/npz_io.h"

namespace pteron::cli {
namespace {

// One entry's .npy blob as an array. The archive is libzip's (compressed .npz too); the .npy
// codec is the one every tool shares (tools/run/npz_io.h).
NpyArray parse_entry(const std::string& where, const std::vector<uint8_t>& blob) {
  npz::NpyView npy;
  std::string why;
  if (!npz::parse_npy(blob.data(), blob.size(), &npy, &why))
    throw std::runtime_error(where + ": " + why);
  NpyArray a;
  a.dtype = npy.dtype;
  a.data = npz::c_order_data(npy);
  a.shape = std::move(npy.shape);
  return a;
}

// libzip's own words for an open failure ("Not a zip archive", "No such file"), not its number.
std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

}  // namespace

std::vector<NpyArray> read_npz(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr)
    throw std::runtime_error(path + ": cannot open as .npz: " + zip_error_text(err));
  std::unique_ptr<zip_t, int (*)(zip_t*)> guard(z, zip_close);
  std::vector<NpyArray> arrays;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) != 0) continue;
    std::string name = st.name;
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    if (f == nullptr) throw std::runtime_error(path + ": cannot read entry " + name);
    std::vector<uint8_t> blob(st.size);
    const zip_int64_t got = zip_fread(f, blob.data(), st.size);
    zip_fclose(f);
    if (got != static_cast<zip_int64_t>(st.size))
      throw std::runtime_error(path + ": entry " + name + " is truncated");
    NpyArray a = parse_entry(path + ":" + name, blob);
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") name.resize(name.size() - 4);
    a.name = name;
    arrays.push_back(std::move(a));
  }
  return arrays;
}

void write_npz(const std::string& path, const std::vector<NpyArray>& arrays) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (z == nullptr) throw std::runtime_error(path + ": cannot create: " + zip_error_text(err));
  std::vector<std::vector<uint8_t>> blobs;
  blobs.reserve(arrays.size());
  for (const NpyArray& a : arrays) {
    std::string why;
    blobs.emplace_back();
    if (!npz::make_npy(a.dtype, a.shape, a.data, &blobs.back(), &why)) {
      zip_discard(z);
      throw std::runtime_error(path + ": " + a.name + ": " + why);
    }
    zip_source_t* src = zip_source_buffer(z, blobs.back().data(), blobs.back().size(), 0);
    if (src == nullptr || zip_file_add(z, (a.name + ".npy").c_str(), src, ZIP_FL_OVERWRITE) < 0) {
      zip_discard(z);
      throw std::runtime_error(path + ": cannot add " + a.name);
    }
  }
  if (zip_close(z) != 0) throw std::runtime_error(path + ": cannot write");
}

}  // namespace pteron::cli
