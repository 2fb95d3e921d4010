#include "compiler/ir/dtype.h"

#include <array>

namespace pteron::compiler::ir {
namespace {

struct DtypeInfo {
  int code;
  size_t size;
  std::string_view name;
};

// c10::ScalarType numbering (c10/core/ScalarType.h); verified against torch 2.13.
constexpr std::array<DtypeInfo, 24> kDtypes = {{
    {0, 1, "u8"},      {1, 1, "i8"},        {2, 2, "i16"},         {3, 4, "i32"},
    {4, 8, "i64"},     {5, 2, "f16"},       {6, 4, "f32"},         {7, 8, "f64"},
    {8, 4, "c32"},     {9, 8, "c64"},       {10, 16, "c128"},      {11, 1, "b8"},
    {12, 1, "qi8"},    {13, 1, "qu8"},      {14, 4, "qi32"},       {15, 2, "bf16"},
    {23, 1, "f8e5m2"}, {24, 1, "f8e4m3fn"}, {25, 1, "f8e5m2fnuz"}, {26, 1, "f8e4m3fnuz"},
    {27, 2, "u16"},    {28, 4, "u32"},      {29, 8, "u64"},        {44, 1, "f8e8m0fnu"},
}};

const DtypeInfo* find(ScalarType t) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.code == static_cast<int>(t)) return &info;
  }
  return nullptr;
}

}  // namespace

size_t dtype_size(ScalarType t) {
  const DtypeInfo* info = find(t);
  return info ? info->size : 0;
}

std::string dtype_name(ScalarType t) {
  if (const DtypeInfo* info = find(t)) return std::string(info->name);
  return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
}

std::string_view memory_format_name(MemoryFormat f) {
  switch (f) {
    case MemoryFormat::Contiguous:
      return "contiguous_format";
    case MemoryFormat::Preserve:
      return "preserve_format";
    case MemoryFormat::ChannelsLast:
      return "channels_last";
    case MemoryFormat::ChannelsLast3d:
      return "channels_last_3d";
  }
  return "memory_format(?)";
}

std::string_view layout_name(Layout l) {
  switch (l) {
    case Layout::Strided:
      return "strided";
    case Layout::Sparse:
      return "sparse_coo";
    case Layout::SparseCsr:
      return "sparse_csr";
    case Layout::Mkldnn:
      return "mkldnn";
    case Layout::SparseCsc:
      return "sparse_csc";
    case Layout::SparseBsr:
      return "sparse_bsr";
    case Layout::SparseBsc:
      return "sparse_bsc";
    case Layout::Jagged:
      return "jagged";
  }
  return "layout(?)";
}

}  // namespace pteron::compiler::ir
