#include "tools/cli/npz.h"

#include <zip.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace pteron::cli {
namespace {

struct DescrMap {
  const char* descr;
  ScalarType dtype;
};
constexpr DescrMap kDescrs[] = {
    {"<f4", ScalarType::Float}, {"<f8", ScalarType::Double}, {"<f2", ScalarType::Half},
    {"|i1", ScalarType::Char},  {"<i2", ScalarType::Short},  {"<i4", ScalarType::Int},
    {"<i8", ScalarType::Long},  {"|u1", ScalarType::Byte},   {"<u2", ScalarType::UInt16},
    {"|b1", ScalarType::Bool},
};

std::string descr_of(ScalarType t) {
  for (const auto& d : kDescrs)
    if (d.dtype == t) return d.descr;
  throw std::runtime_error(std::string("cannot write dtype ") + scalar_type_name(t) + " to .npy");
}

// Parses one .npy blob (format versions 1-3).
NpyArray parse_npy(const std::string& where, const std::vector<uint8_t>& blob) {
  auto bad = [&](const std::string& why) { return std::runtime_error(where + ": " + why); };
  if (blob.size() < 10 || std::memcmp(blob.data(), "\x93NUMPY", 6) != 0)
    throw bad("not a .npy array");
  const uint8_t major = blob[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = blob[8] | (blob[9] << 8);
    header_start = 10;
  } else {
    if (blob.size() < 12) throw bad("truncated .npy header");
    header_len =
        blob[8] | (blob[9] << 8) | (blob[10] << 16) | (static_cast<size_t>(blob[11]) << 24);
    header_start = 12;
  }
  if (header_start + header_len > blob.size()) throw bad("truncated .npy header");
  const std::string header(reinterpret_cast<const char*>(blob.data() + header_start), header_len);
  NpyArray a;
  auto field = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) throw bad("header lacks '" + key + "'");
    return header.substr(header.find(':', k) + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[2] == '1') descr[0] = '|';  // byte order is moot for 1 byte
  bool found = false;
  for (const auto& d : kDescrs) {
    if (descr == d.descr) {
      a.dtype = d.dtype;
      found = true;
    }
  }
  if (!found) throw bad("unsupported dtype '" + descr + "'");
  const std::string fortran = field("fortran_order");
  if (fortran.find("True") < fortran.find(',')) throw bad("Fortran-order arrays are not supported");
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  size_t numel = 1;
  size_t pos = 0;
  while (pos < shape.size()) {
    const size_t comma = shape.find(',', pos);
    const std::string item =
        shape.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.find_first_of("0123456789") != std::string::npos) {
      a.shape.push_back(std::stoll(item));
      numel *= static_cast<size_t>(a.shape.back());
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  const size_t data_start = header_start + header_len;
  const size_t nbytes = numel * element_size(a.dtype);
  if (blob.size() - data_start < nbytes) throw bad("array data is truncated");
  a.data.assign(blob.begin() + static_cast<long>(data_start),
                blob.begin() + static_cast<long>(data_start + nbytes));
  return a;
}

std::vector<uint8_t> make_npy(const NpyArray& a) {
  std::string shape = "(";
  for (size_t i = 0; i < a.shape.size(); ++i) {
    shape += std::to_string(a.shape[i]);
    if (a.shape.size() == 1)
      shape += ",";
    else if (i + 1 < a.shape.size())
      shape += ", ";
  }
  shape += ")";
  std::string header =
      "{'descr': '" + descr_of(a.dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> blob = {0x93,
                               'N',
                               'U',
                               'M',
                               'P',
                               'Y',
                               1,
                               0,
                               static_cast<uint8_t>(header.size() & 0xff),
                               static_cast<uint8_t>(header.size() >> 8)};
  blob.insert(blob.end(), header.begin(), header.end());
  blob.insert(blob.end(), a.data.begin(), a.data.end());
  return blob;
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
    NpyArray a = parse_npy(path + ":" + name, blob);
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
    blobs.push_back(make_npy(a));
    zip_source_t* src = zip_source_buffer(z, blobs.back().data(), blobs.back().size(), 0);
    if (src == nullptr || zip_file_add(z, (a.name + ".npy").c_str(), src, ZIP_FL_OVERWRITE) < 0) {
      zip_discard(z);
      throw std::runtime_error(path + ": cannot add " + a.name);
    }
  }
  if (zip_close(z) != 0) throw std::runtime_error(path + ": cannot write");
}

}  // namespace pteron::cli
