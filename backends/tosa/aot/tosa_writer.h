// Builds one TOSA 1.0 graph (one region "main", one basic block "main") and serializes it to
// the TOSA flatbuffer (tosa.fbs from tosa-tools: identifier "TOSA", root TosaGraph, version
// 1.0.0). Tensors are named; operators name their inputs and outputs. Shape operands (RESHAPE's
// new shape, PAD's padding, SLICE's start/size) are CONST_SHAPE values in the block's `shapes`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/tosa/schema/tosa_generated.h"

namespace pteron::tosa_aot {

// Attribute payloads of the operators the lowering writes; fields follow tosa.fbs.
struct TosaAttr {
  std::vector<int32_t> pad, stride, dilation, kernel, perms;
  int32_t axis = 0;
  tosa::DType acc_type = tosa::DType::UNKNOWN;
  std::vector<uint8_t> min_val, max_val;  // CLAMP bounds, bytes of the operand's dtype
  bool per_channel = false;               // RESCALE
  bool input_unsigned = false, output_unsigned = false;
  tosa::RoundingMode rounding = tosa::RoundingMode::SINGLE_ROUND;
  tosa::ResizeMode resize_mode = tosa::ResizeMode::NEAREST;  // RESIZE
};

struct TosaTensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  tosa::DType dtype = tosa::DType::UNKNOWN;
};

class TosaWriter {
 public:
  // A graph input (placeholder), in the order added.
  TosaTensorInfo add_input(const std::string& base, std::vector<int64_t> shape, tosa::DType dtype);
  // An intermediate tensor an operator will define.
  TosaTensorInfo add_tensor(const std::string& base, std::vector<int64_t> shape, tosa::DType dtype);
  // A CONST operator and its tensor; `data` is the little-endian bytes of the dtype.
  TosaTensorInfo add_const(const std::string& base, std::vector<int64_t> shape, tosa::DType dtype,
                           std::vector<uint8_t> data);
  TosaTensorInfo const_i8(const std::string& base, std::vector<int64_t> shape,
                          const std::vector<int8_t>& v);
  TosaTensorInfo const_i32(const std::string& base, std::vector<int64_t> shape,
                           const std::vector<int32_t>& v);
  TosaTensorInfo const_f32(const std::string& base, std::vector<int64_t> shape,
                           const std::vector<float>& v);
  // A CONST_SHAPE value (int64 elements); returns its name.
  std::string const_shape(const std::string& base, const std::vector<int64_t>& values);

  void add_op(tosa::Op op, const std::vector<std::string>& inputs,
              const std::vector<std::string>& outputs, const TosaAttr& attr = {});
  void mark_output(const std::string& name) { outputs_.push_back(name); }

  // The serialized graph. Throws CompileError for an op whose attribute it cannot write.
  std::vector<uint8_t> finish();

  size_t op_count() const { return ops_.size(); }
  // Checking only: constants keep no bytes (and are not size-checked).
  void set_check_only(bool on) { check_only_ = on; }

 private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    tosa::DType dtype;
    std::vector<uint8_t> data;
  };
  struct Shape {
    std::string name;
    std::vector<int64_t> values;
  };
  struct Op {
    tosa::Op op;
    std::vector<std::string> inputs, outputs;
    TosaAttr attr;
  };
  std::string unique(const std::string& base);

  std::vector<Tensor> tensors_;
  std::vector<Shape> shapes_;
  std::vector<Op> ops_;
  std::vector<std::string> inputs_, outputs_;
  size_t next_id_ = 0;
  bool check_only_ = false;
};

size_t dtype_bytes(tosa::DType t);

}  // namespace pteron::tosa_aot
