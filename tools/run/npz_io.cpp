#include "tools/run/npz_io.h"

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace pteron::npz {
namespace {

struct Descr {
  const char* text;
  ScalarType dtype;
};
constexpr Descr kDescrs[] = {
    {"<f4", ScalarType::Float}, {"<f8", ScalarType::Double}, {"<f2", ScalarType::Half},
    {"|i1", ScalarType::Char},  {"<i2", ScalarType::Short},  {"<i4", ScalarType::Int},
    {"<i8", ScalarType::Long},  {"|u1", ScalarType::Byte},   {"<u2", ScalarType::UInt16},
    {"|b1", ScalarType::Bool},
};

uint64_t little_endian(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The text after `'key':` in a .npy header dict, or "" when the key is missing.
std::string header_field(const std::string& header, const char* key) {
  const size_t k = header.find(std::string("'") + key + "'");
  if (k == std::string::npos) return "";
  return header.substr(header.find(':', k) + 1);
}

void put(std::vector<uint8_t>* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint32_t crc32(const uint8_t* p, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

}  // namespace

bool parse_npy(const uint8_t* blob, size_t size, NpyView* out, std::string* why) {
  out->shape.clear();
  if (size < 10 || std::memcmp(blob, "\x93NUMPY", 6) != 0) return *why = "not a .npy array", false;
  const bool v1 = blob[6] == 1;
  const size_t header_start = v1 ? 10 : 12;
  if (size < header_start) return *why = "truncated .npy header", false;
  const size_t header_len = little_endian(blob + 8, v1 ? 2 : 4);
  if (header_start + header_len > size) return *why = "truncated .npy header", false;
  const std::string header(reinterpret_cast<const char*>(blob + header_start), header_len);

  std::string descr = header_field(header, "descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  if (descr.size() == 3 && descr[2] == '1') descr[0] = '|';  // byte order is moot for 1 byte
  bool known = false;
  for (const Descr& d : kDescrs) {
    if (descr == d.text) out->dtype = d.dtype, known = true;
  }
  if (!known) return *why = "unsupported dtype '" + descr + "'", false;
  const std::string fortran = header_field(header, "fortran_order");
  out->fortran_order = fortran.find("True") < fortran.find(',');

  std::string shape = header_field(header, "shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  size_t numel = 1;
  for (size_t pos = 0; pos < shape.size();) {
    size_t end = shape.find(',', pos);
    if (end == std::string::npos) end = shape.size();
    const std::string item = shape.substr(pos, end - pos);
    if (item.find_first_of("0123456789") != std::string::npos) {
      out->shape.push_back(std::stoll(item));
      numel *= static_cast<size_t>(out->shape.back());
    }
    pos = end + 1;
  }
  const size_t nbytes = numel * element_size(out->dtype);
  if (size - header_start - header_len < nbytes) return *why = "array data is truncated", false;
  out->data = blob + header_start + header_len;
  out->nbytes = nbytes;
  return true;
}

std::vector<uint8_t> c_order_data(const NpyView& npy) {
  if (!npy.fortran_order || npy.shape.size() < 2) return {npy.data, npy.data + npy.nbytes};
  // Walk the C-order index (last dimension fastest) and read each element at its Fortran
  // offset: dimension d's stride is the product of the dimensions before it.
  const size_t rank = npy.shape.size(), item = element_size(npy.dtype);
  std::vector<size_t> stride(rank, 1);
  for (size_t d = 1; d < rank; ++d)
    stride[d] = stride[d - 1] * static_cast<size_t>(npy.shape[d - 1]);
  std::vector<uint8_t> out(npy.nbytes);
  std::vector<int64_t> index(rank, 0);
  size_t from = 0;
  for (size_t to = 0; to < npy.nbytes; to += item) {
    std::memcpy(&out[to], npy.data + from * item, item);
    for (size_t d = rank; d-- > 0;) {  // next index; `from` follows it
      if (++index[d] < npy.shape[d]) {
        from += stride[d];
        break;
      }
      from -= stride[d] * static_cast<size_t>(index[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

bool make_npy(ScalarType dtype, const std::vector<int64_t>& shape_dims,
              const std::vector<uint8_t>& data, std::vector<uint8_t>* blob, std::string* why) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == dtype) descr = d.text;
  }
  if (descr == nullptr)
    return *why = std::string("dtype ") + scalar_type_name(dtype) + " has no .npy form", false;
  std::string shape = "(";
  for (size_t i = 0; i < shape_dims.size(); ++i) {
    shape += std::to_string(shape_dims[i]) + (shape_dims.size() == 1      ? ","
                                              : i + 1 < shape_dims.size() ? ", "
                                                                          : "");
  }
  std::string header =
      std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  blob->assign({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
  put(blob, header.size(), 2);
  blob->insert(blob->end(), header.begin(), header.end());
  blob->insert(blob->end(), data.begin(), data.end());
  return true;
}

std::vector<Array> read(const std::string& path, std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = path + ": " + why;
    return std::vector<Array>{};
  };
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return fail("cannot open");
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) {
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  std::fclose(f);

  // Walk the local file headers; the central directory that follows repeats what they say.
  std::vector<Array> arrays;
  size_t pos = 0;
  while (pos + 30 <= bytes.size() && little_endian(&bytes[pos], 4) == 0x04034b50) {
    const uint8_t* h = &bytes[pos];
    const uint64_t flags = little_endian(h + 6, 2), method = little_endian(h + 8, 2);
    uint64_t csize = little_endian(h + 18, 4), usize = little_endian(h + 22, 4);
    const size_t name_len = little_endian(h + 26, 2), extra_len = little_endian(h + 28, 2);
    if (pos + 30 + name_len + extra_len > bytes.size()) return fail("truncated zip header");
    std::string name(reinterpret_cast<const char*>(h + 30), name_len);
    if (method != 0)
      return fail("entry " + name + " is compressed (use np.savez, not savez_compressed)");
    if (flags & 8) return fail("entry " + name + " has a trailing data descriptor");
    // numpy forces zip64: the sizes then sit in the extra field (id 1: size, compressed size).
    for (const uint8_t* e = h + 30 + name_len; e + 4 <= h + 30 + name_len + extra_len;) {
      const uint64_t id = little_endian(e, 2), len = little_endian(e + 2, 2);
      const uint8_t* field = e + 4;
      if (id == 1) {
        if (usize == 0xffffffffu) usize = little_endian(field, 8), field += 8;
        if (csize == 0xffffffffu) csize = little_endian(field, 8);
      }
      e += 4 + len;
    }
    const size_t data_start = pos + 30 + name_len + extra_len;
    if (csize != usize || data_start + csize > bytes.size())
      return fail("entry " + name + " is truncated");
    Array a;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    a.name = name;
    std::string why;
    NpyView npy;
    if (!parse_npy(&bytes[data_start], csize, &npy, &why))
      return fail("entry " + name + ": " + why);
    a.dtype = npy.dtype;
    for (int64_t d : npy.shape) {
      if (d > INT32_MAX) return fail("entry " + name + ": a dimension exceeds int32");
      a.shape.push_back(static_cast<int32_t>(d));
    }
    a.data = c_order_data(npy);
    arrays.push_back(std::move(a));
    pos = data_start + csize;
  }
  if (arrays.empty()) return fail("no arrays (not an uncompressed .npz)");
  return arrays;
}

bool write(const std::string& path, const std::vector<Array>& arrays, std::string* error) {
  std::vector<uint8_t> zip, central;
  for (const Array& a : arrays) {
    std::vector<uint8_t> blob;
    std::string why;
    if (!make_npy(a.dtype, std::vector<int64_t>(a.shape.begin(), a.shape.end()), a.data, &blob,
                  &why))
      return *error = path + ": " + a.name + ": " + why, false;
    if (blob.size() >= 0xffffffffu) return *error = path + ": " + a.name + " is too large", false;
    const std::string name = a.name + ".npy";
    const uint32_t crc = crc32(blob.data(), blob.size());
    const size_t offset = zip.size();
    // Local header, then the same fields in the central directory entry.
    put(&zip, 0x04034b50, 4);
    put(&central, 0x02014b50, 4);
    put(&central, 20, 2);  // made by: version 2.0
    for (std::vector<uint8_t>* h : {&zip, &central}) {
      put(h, 20, 2);    // version needed: 2.0
      put(h, 0, 2);     // flags
      put(h, 0, 2);     // stored
      put(h, 0, 2);     // time 00:00
      put(h, 0x21, 2);  // date 1980-01-01
      put(h, crc, 4);
      put(h, blob.size(), 4);
      put(h, blob.size(), 4);
      put(h, name.size(), 2);
      put(h, 0, 2);  // extra field length
    }
    put(&central, 0, 2);       // comment length
    put(&central, 0, 2);       // disk
    put(&central, 0, 2);       // internal attributes
    put(&central, 0, 4);       // external attributes
    put(&central, offset, 4);  // local header offset
    central.insert(central.end(), name.begin(), name.end());
    zip.insert(zip.end(), name.begin(), name.end());
    zip.insert(zip.end(), blob.begin(), blob.end());
  }
  const size_t central_offset = zip.size();
  zip.insert(zip.end(), central.begin(), central.end());
  put(&zip, 0x06054b50, 4);
  put(&zip, 0, 2);  // this disk
  put(&zip, 0, 2);  // disk with the central directory
  put(&zip, arrays.size(), 2);
  put(&zip, arrays.size(), 2);
  put(&zip, central.size(), 4);
  put(&zip, central_offset, 4);
  put(&zip, 0, 2);  // comment length

  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return *error = path + ": cannot open for writing", false;
  const bool ok = std::fwrite(zip.data(), 1, zip.size(), f) == zip.size();
  if (std::fclose(f) != 0 || !ok) return *error = path + ": cannot write", false;
  return true;
}

}  // namespace pteron::npz
