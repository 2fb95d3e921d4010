// numpy's .npy arrays, and uncompressed .npz archives of them (what np.savez writes) without
// libzip, so runtime-only tools and tests need nothing but the C++ library on any hosted target
// (pteron-run and the ExecuTorch fixture test, also cross-built for aarch64). The .npy codec is
// the one every tool uses: the `pteron` CLI reads compressed archives too (libzip,
// tools/cli/npz.h) and parses and writes their entries with parse_npy and make_npy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"

namespace pteron::npz {

struct Array {
  std::string name;  // entry name without ".npy"
  ScalarType dtype = ScalarType::Float;
  std::vector<int32_t> shape;
  std::vector<uint8_t> data;  // C order
};

// One .npy blob (format versions 1-3): its dtype, shape and data (pointing into the blob), in
// C order or, where `fortran_order`, in Fortran order (numpy writes an F-contiguous array that
// way: a transposed one, np.asfortranarray, many arrays from MATLAB or R tools).
struct NpyView {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t nbytes = 0;
  bool fortran_order = false;
};
// False with `why` set ("unsupported dtype '<c8'", "array data is truncated") when the blob is
// not an array of a dtype pteron has.
bool parse_npy(const uint8_t* blob, size_t size, NpyView* out, std::string* why);
// The view's elements in C order (what every tensor of pteron's takes): a copy of its data,
// transposed when the blob holds them in Fortran order.
std::vector<uint8_t> c_order_data(const NpyView& npy);
// A version 1.0 .npy blob: magic, header dict padded to a multiple of 64 bytes, C-order data.
// False with `why` set for a dtype .npy cannot hold.
bool make_npy(ScalarType dtype, const std::vector<int64_t>& shape, const std::vector<uint8_t>& data,
              std::vector<uint8_t>* blob, std::string* why);

// The arrays of `path` in archive order. On failure returns an empty list and sets `error` to
// a line naming the file and what is wrong (compressed entries, unknown dtype, truncation).
std::vector<Array> read(const std::string& path, std::string* error);

// Writes `arrays` as <name>.npy entries, stored uncompressed. On failure returns false and sets
// `error` (unwritable file, a dtype .npy cannot hold).
bool write(const std::string& path, const std::vector<Array>& arrays, std::string* error);

}  // namespace pteron::npz
