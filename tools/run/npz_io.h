// Uncompressed numpy .npz archives (what np.savez writes) without libzip, so runtime-only tools
// and tests need nothing but the C++ library on any hosted target (pteron-run and the ExecuTorch
// fixture test, also cross-built for aarch64).
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

// The arrays of `path` in archive order. On failure returns an empty list and sets `error` to
// a line naming the file and what is wrong (compressed entries, Fortran order, unknown dtype).
std::vector<Array> read(const std::string& path, std::string* error);

// Writes `arrays` as <name>.npy entries, stored uncompressed. On failure returns false and sets
// `error` (unwritable file, a dtype .npy cannot hold).
bool write(const std::string& path, const std::vector<Array>& arrays, std::string* error);

}  // namespace pteron::npz
