// Reading and writing numpy .npz archives (the CLI's input/output format).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"

namespace pteron::cli {

struct NpyArray {
  std::string name;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order
};

// Throws std::runtime_error with a one-line message naming the file and entry at fault.
std::vector<NpyArray> read_npz(const std::string& path);
void write_npz(const std::string& path, const std::vector<NpyArray>& arrays);

}  // namespace pteron::cli
