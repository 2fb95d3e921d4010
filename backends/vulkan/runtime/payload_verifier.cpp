#include "backends/vulkan/runtime/payload_verifier.h"

#include <cmath>
#include <vector>

#include "backends/vulkan/runtime/size_expr.h"
#include "flatbuffers/flatbuffers.h"

namespace pteron {
namespace vulkan {

const char* op_name(fb::OpType op) {
  switch (op) {
    case fb::OpType::Linear:
      return "linear";
    case fb::OpType::MatMul:
      return "matmul";
    case fb::OpType::Add:
      return "add";
    case fb::OpType::Sub:
      return "sub";
    case fb::OpType::Mul:
      return "mul";
    case fb::OpType::Clamp:
      return "clamp";
    case fb::OpType::Softmax:
      return "softmax";
    case fb::OpType::Conv2d:
      return "conv2d";
    case fb::OpType::LayerNorm:
      return "layer_norm";
    case fb::OpType::Mean:
      return "mean";
    case fb::OpType::Reshape:
      return "reshape";
    case fb::OpType::Permute:
      return "permute";
    case fb::OpType::BatchMatMul:
      return "bmm";
    case fb::OpType::Div:
      return "div";
    case fb::OpType::Unary:
      return "unary";
    case fb::OpType::Pool2d:
      return "pool2d";
    case fb::OpType::Cat:
      return "cat";
    case fb::OpType::Slice:
      return "slice";
    case fb::OpType::Embedding:
      return "embedding";
    case fb::OpType::Convert:
      return "convert";
    case fb::OpType::Upsample:
      return "upsample";
    case fb::OpType::Pad:
      return "pad";
    default:
      return "?";
  }
}

uint64_t tensor_numel(const fb::Tensor& t) {
  uint64_t n = 1;
  if (t.dims() != nullptr) {
    for (uint32_t d : *t.dims()) n *= d;
  }
  return n;
}

uint32_t element_size(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
      return 4;
    case fb::DataType::Float16:
      return 2;
    case fb::DataType::Int64:
      return 8;
    default:
      return 0;
  }
}

namespace {

// flatbuffers' verifier checks a vector's length field to 4 bytes, not its 8-byte elements:
// a malformed file can place [long] / [double] data 4 bytes off, which reading would make an
// undefined misaligned load. (The payload itself is checked 8-byte aligned first.)
bool eight_byte_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 8 == 0; }

constexpr uint32_t kNotWritten = 0xffffffffu;

uint32_t rank(const fb::Tensor& t) { return t.dims() ? t.dims()->size() : 0; }
uint32_t dim(const fb::Tensor& t, uint32_t i) { return t.dims()->Get(i); }

Error verify_tensor(const fb::Payload& p, uint32_t i, const fb::Tensor* t) {
  if (t == nullptr) return fail(Error::InvalidProgram, "Vulkan payload: tensor %u is null", i);
  // Externals are Float32 (Int64: embedding indices, inputs only); Float16 lives inside.
  const fb::DataType dt = t->dtype();
  const bool ok_dtype =
      dt == fb::DataType::Float32 ||
      (dt == fb::DataType::Float16 && t->external() == fb::ExternalKind::Internal) ||
      (dt == fb::DataType::Int64 && t->external() == fb::ExternalKind::Input);
  if (!ok_dtype) {
    return fail(Error::InvalidProgram,
                "Vulkan payload: tensor %u has dtype %d (Float32; Float16 inside the region; "
                "Int64 for an input)",
                i, static_cast<int>(dt));
  }
  if (rank(*t) > kMaxDims) {
    return fail(Error::InvalidProgram, "Vulkan payload: tensor %u has %u dims (at most %zu)", i,
                rank(*t), kMaxDims);
  }
  uint64_t bytes = element_size(dt);
  for (uint32_t d = 0; d < rank(*t); ++d) {
    const uint64_t size = dim(*t, d);
    if (size < 1 || size > kMaxDimSize) {
      return fail(Error::InvalidProgram, "Vulkan payload: tensor %u dim %u is %llu", i, d,
                  static_cast<unsigned long long>(size));
    }
    bytes *= size;
    if (bytes > kMaxTensorBytes) {
      return fail(Error::InvalidProgram, "Vulkan payload: tensor %u is larger than %llu bytes", i,
                  static_cast<unsigned long long>(kMaxTensorBytes));
    }
  }
  if (static_cast<uint8_t>(t->external()) > static_cast<uint8_t>(fb::ExternalKind::Output)) {
    return fail(Error::InvalidProgram, "Vulkan payload: tensor %u has unknown external kind %d", i,
                static_cast<int>(t->external()));
  }
  if (t->is_constant()) {
    if (t->external() != fb::ExternalKind::Internal) {
      return fail(Error::InvalidProgram, "Vulkan payload: tensor %u is constant and external", i);
    }
    if (t->constant_size() != bytes || t->constant_offset() > p.constant_data_size() ||
        p.constant_data_size() - t->constant_offset() < bytes) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: constant tensor %u range [%llu, +%llu) does not hold its %llu "
                  "bytes inside the %llu-byte blob",
                  i, static_cast<unsigned long long>(t->constant_offset()),
                  static_cast<unsigned long long>(t->constant_size()),
                  static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(p.constant_data_size()));
    }
  }
  return Error::Ok;
}

// Numpy broadcasting of `a` to `out`: right-aligned, each dim equal or 1.
bool broadcasts_to(const fb::Tensor& a, const fb::Tensor& out) {
  if (rank(a) > rank(out)) return false;
  const uint32_t shift = rank(out) - rank(a);
  for (uint32_t d = 0; d < rank(a); ++d) {
    const uint32_t s = dim(a, d);
    if (s != 1 && s != dim(out, d + shift)) return false;
  }
  return true;
}

bool same_dims(const fb::Tensor& a, const fb::Tensor& b) {
  if (rank(a) != rank(b)) return false;
  for (uint32_t d = 0; d < rank(a); ++d) {
    if (dim(a, d) != dim(b, d)) return false;
  }
  return true;
}

Error shape_error(uint32_t n, fb::OpType op, const char* what) {
  return fail(Error::InvalidProgram, "Vulkan payload: node %u (%s): %s", n, op_name(op), what);
}

// Checks a 2-element attribute list with every entry >= `min`.
bool pair_at_least(const flatbuffers::Vector<uint32_t>* v, uint32_t min) {
  return v != nullptr && v->size() == 2 && v->Get(0) >= min && v->Get(1) >= min &&
         v->Get(0) <= 0xffff && v->Get(1) <= 0xffff;
}

Error verify_conv2d(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  const auto& in = *node.inputs();
  if (in.size() < 2 || in.size() > 3) return shape_error(n, op, "needs 2 or 3 inputs");
  const fb::Tensor& x = *ts.Get(in.Get(0));
  const fb::Tensor& w = *ts.Get(in.Get(1));
  const fb::Tensor& out = *ts.Get(node.outputs()->Get(0));
  if (rank(x) != 4 || rank(w) != 4 || rank(out) != 4) {
    return shape_error(n, op, "input, weight and output must be 4-D (NCHW, OIHW)");
  }
  if (!pair_at_least(node.stride(), 1) || !pair_at_least(node.padding(), 0) ||
      !pair_at_least(node.dilation(), 1)) {
    return shape_error(n, op,
                       "stride, padding and dilation need 2 entries (stride, dilation >= 1)");
  }
  const uint32_t groups = node.groups();
  const uint32_t c = dim(x, 1), oc = dim(w, 0);
  if (groups < 1 || c % groups != 0 || oc % groups != 0 || dim(w, 1) != c / groups) {
    return shape_error(n, op, "groups must divide C and OC, and weight dim 1 be C / groups");
  }
  if (in.size() == 3) {
    const fb::Tensor& b = *ts.Get(in.Get(2));
    if (rank(b) != 1 || dim(b, 0) != oc) return shape_error(n, op, "bias must be [OC]");
  }
  for (uint32_t s = 0; s < 2; ++s) {
    const int64_t size = dim(x, 2 + s), k = dim(w, 2 + s);
    const int64_t span = int64_t{node.dilation()->Get(s)} * (k - 1) + 1;
    const int64_t padded = size + 2 * int64_t{node.padding()->Get(s)};
    const int64_t o = padded < span ? 0 : (padded - span) / node.stride()->Get(s) + 1;
    if (o < 1 || o != dim(out, 2 + s)) {
      return shape_error(n, op, "output spatial size does not follow from the attributes");
    }
  }
  if (dim(out, 0) != dim(x, 0) || dim(out, 1) != oc) {
    return shape_error(n, op, "output must be [N, OC, OH, OW]");
  }
  if (!(node.output_min() <= node.output_max())) {
    return shape_error(n, op, "output_min > output_max (or NaN)");
  }
  return Error::Ok;
}

Error verify_pool2d(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  const auto& in = *node.inputs();
  if (in.size() != 1) return shape_error(n, op, "needs 1 input");
  const fb::Tensor& x = *ts.Get(in.Get(0));
  const fb::Tensor& out = *ts.Get(node.outputs()->Get(0));
  if (rank(x) != 4 || rank(out) != 4 || dim(out, 0) != dim(x, 0) || dim(out, 1) != dim(x, 1)) {
    return shape_error(n, op, "input and output must be [N, C, H, W] with the same N and C");
  }
  if (node.pool() > fb::PoolType::MAX) return shape_error(n, op, "unknown pool type");
  if (node.pool() == fb::PoolType::AdaptiveAverage) return Error::Ok;
  if (!pair_at_least(node.kernel(), 1) || !pair_at_least(node.stride(), 1) ||
      !pair_at_least(node.padding(), 0) || !pair_at_least(node.dilation(), 1)) {
    return shape_error(n, op, "kernel, stride, padding, dilation need 2 entries");
  }
  for (uint32_t s = 0; s < 2; ++s) {
    const int64_t k = node.kernel()->Get(s), pad = node.padding()->Get(s);
    if (2 * pad > k) return shape_error(n, op, "padding larger than half the kernel");
    const int64_t span = int64_t{node.dilation()->Get(s)} * (k - 1) + 1;
    const int64_t padded = int64_t{dim(x, 2 + s)} + 2 * pad;
    if (padded < span) return shape_error(n, op, "kernel larger than the padded input");
    const int64_t floor_size = (padded - span) / node.stride()->Get(s) + 1;
    const int64_t o = dim(out, 2 + s);
    // ceil_mode may add one more window, which must start inside the input or left padding.
    if (o != floor_size &&
        !(o == floor_size + 1 && (o - 1) * node.stride()->Get(s) < int64_t{dim(x, 2 + s)} + pad)) {
      return shape_error(n, op, "output spatial size does not follow from the attributes");
    }
  }
  return Error::Ok;
}

Error verify_upsample(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  if (node.inputs()->size() != 1) return shape_error(n, op, "needs 1 input");
  const fb::Tensor& x = *ts.Get(node.inputs()->Get(0));
  const fb::Tensor& out = *ts.Get(node.outputs()->Get(0));
  if (rank(x) != 4 || rank(out) != 4 || dim(out, 0) != dim(x, 0) || dim(out, 1) != dim(x, 1)) {
    return shape_error(n, op, "input and output must be [N, C, H, W] with the same N and C");
  }
  if (node.resize() > fb::ResizeMode::MAX) return shape_error(n, op, "unknown resize mode");
  const auto* scales = node.scales();
  if (scales != nullptr) {
    if (scales->size() != 2) return shape_error(n, op, "scales need 2 entries [h, w]");
    if (!eight_byte_aligned(scales->data())) return shape_error(n, op, "scales are misaligned");
    for (double s : *scales) {
      if (!std::isfinite(s) || s < 0)
        return shape_error(n, op, "a scale is negative or not finite");
    }
  }
  return Error::Ok;
}

Error verify_pad(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  if (node.inputs()->size() != 1) return shape_error(n, op, "needs 1 input");
  const fb::Tensor& x = *ts.Get(node.inputs()->Get(0));
  const fb::Tensor& out = *ts.Get(node.outputs()->Get(0));
  const auto* pads = node.pads();
  if (pads == nullptr || pads->size() != 4) {
    return shape_error(n, op, "pads need 4 entries [left, right, top, bottom]");
  }
  if (node.pad_mode() > fb::PadMode::MAX) return shape_error(n, op, "unknown pad mode");
  const uint32_t r = rank(x);
  if (r < 1 || rank(out) != r) return shape_error(n, op, "needs >= 1 dim and the input's rank");
  if (r == 1 && (pads->Get(2) != 0 || pads->Get(3) != 0)) {
    return shape_error(n, op, "a 1-D tensor pads its last dim only");
  }
  for (uint32_t d = 0; d < r; ++d) {
    const uint32_t from_end = r - 1 - d;  // 0: the last dim (pads 0, 1), 1: the one before (2, 3)
    const int64_t before = from_end < 2 ? pads->Get(2 * from_end) : 0;
    const int64_t after = from_end < 2 ? pads->Get(2 * from_end + 1) : 0;
    if (int64_t{dim(x, d)} + before + after != int64_t{dim(out, d)}) {
      return shape_error(n, op, "output sizes are not the input's plus the pads");
    }
    // Reflection mirrors around the edge element, so a pad must stay inside the input.
    if (node.pad_mode() == fb::PadMode::Reflect &&
        (before >= int64_t{dim(x, d)} || after >= int64_t{dim(x, d)})) {
      return shape_error(n, op, "reflection pads must be smaller than the padded dim");
    }
  }
  return Error::Ok;
}

// Dtypes: Convert changes Float32 <-> Float16; Embedding reads Int64 indices; every other node
// reads and writes one float dtype.
Error verify_dtypes(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  const auto& in = *node.inputs();
  const fb::DataType out = ts.Get(node.outputs()->Get(0))->dtype();
  if (out == fb::DataType::Int64) return shape_error(n, op, "writes an Int64 tensor");
  for (uint32_t k = 0; k < in.size(); ++k) {
    const fb::DataType dt = ts.Get(in.Get(k))->dtype();
    const bool ok = op == fb::OpType::Convert     ? dt != out && dt != fb::DataType::Int64
                    : op == fb::OpType::Embedding ? (k == 1 ? dt == fb::DataType::Int64 : dt == out)
                                                  : dt == out;
    if (!ok) return shape_error(n, op, "input dtypes do not fit the op");
  }
  return Error::Ok;
}

Error verify_shapes(uint32_t n, const fb::Node& node, const fb::Payload& p) {
  PTERON_TRY(verify_dtypes(n, node, p));
  const auto& ts = *p.tensors();
  const fb::OpType op = node.op();
  const auto& in = *node.inputs();
  const fb::Tensor& out = *ts.Get(node.outputs()->Get(0));
  const fb::Tensor& x = *ts.Get(in.Get(0));
  switch (op) {
    case fb::OpType::Linear:
    case fb::OpType::MatMul: {
      if (in.size() < 2 || in.size() > 3) return shape_error(n, op, "needs 2 or 3 inputs");
      const fb::Tensor& w = *ts.Get(in.Get(1));
      if (rank(x) < 1 || rank(w) != 2) {
        return shape_error(n, op, "input must have >= 1 dim and the weight 2");
      }
      const uint32_t k = dim(x, rank(x) - 1);
      const bool transposed = op == fb::OpType::Linear;
      const uint32_t wk = transposed ? dim(w, 1) : dim(w, 0);
      const uint32_t wn = transposed ? dim(w, 0) : dim(w, 1);
      if (wk != k) return shape_error(n, op, "weight and input disagree on K");
      if (in.size() == 3) {
        const fb::Tensor& b = *ts.Get(in.Get(2));
        if (rank(b) != 1 || dim(b, 0) != wn) return shape_error(n, op, "bias must be [N]");
      }
      if (rank(out) != rank(x) || dim(out, rank(out) - 1) != wn) {
        return shape_error(n, op, "output must be the input's sizes with N last");
      }
      for (uint32_t d = 0; d + 1 < rank(x); ++d) {
        if (dim(out, d) != dim(x, d)) {
          return shape_error(n, op, "output must be the input's sizes with N last");
        }
      }
      return Error::Ok;
    }
    case fb::OpType::Add:
    case fb::OpType::Sub:
    case fb::OpType::Mul:
    case fb::OpType::Div: {
      if (in.size() != 2) return shape_error(n, op, "needs 2 inputs");
      const fb::Tensor& y = *ts.Get(in.Get(1));
      if (!broadcasts_to(x, out) || !broadcasts_to(y, out)) {
        return shape_error(n, op, "inputs do not broadcast to the output's sizes");
      }
      // The output is exactly the broadcast shape (no input is larger in any dim).
      for (uint32_t d = 0; d < rank(out); ++d) {
        const uint32_t dx = d + rank(x) >= rank(out) ? dim(x, d + rank(x) - rank(out)) : 1;
        const uint32_t dy = d + rank(y) >= rank(out) ? dim(y, d + rank(y) - rank(out)) : 1;
        if (dim(out, d) != (dx > dy ? dx : dy)) {
          return shape_error(n, op, "output is not the broadcast of the inputs' sizes");
        }
      }
      if (!std::isfinite(node.alpha())) return shape_error(n, op, "alpha is not finite");
      return Error::Ok;
    }
    case fb::OpType::Unary:
    case fb::OpType::Convert:
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      if (!same_dims(x, out)) return shape_error(n, op, "output sizes differ from the input's");
      if (op == fb::OpType::Unary && node.unary() > fb::UnaryOp::MAX) {
        return shape_error(n, op, "unknown unary function");
      }
      return Error::Ok;
    case fb::OpType::Pool2d:
      return verify_pool2d(n, node, p);
    case fb::OpType::Upsample:
      return verify_upsample(n, node, p);
    case fb::OpType::Pad:
      return verify_pad(n, node, p);
    case fb::OpType::Cat: {
      const uint32_t axis = node.axis();
      if (axis >= rank(out)) return shape_error(n, op, "axis out of range");
      uint64_t total = 0;
      for (uint32_t k = 0; k < in.size(); ++k) {
        const fb::Tensor& t = *ts.Get(in.Get(k));
        if (rank(t) != rank(out)) return shape_error(n, op, "inputs must have the output's rank");
        for (uint32_t d = 0; d < rank(out); ++d) {
          if (d != axis && dim(t, d) != dim(out, d)) {
            return shape_error(n, op, "inputs differ from the output outside the axis");
          }
        }
        total += dim(t, axis);
      }
      if (total != dim(out, axis)) return shape_error(n, op, "axis sizes do not add up");
      return Error::Ok;
    }
    case fb::OpType::Slice: {
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      const uint32_t axis = node.axis();
      if (rank(x) != rank(out) || axis >= rank(x) || node.step() < 1) {
        return shape_error(n, op, "needs output rank = input rank, axis in range, step >= 1");
      }
      for (uint32_t d = 0; d < rank(x); ++d) {
        if (d != axis && dim(x, d) != dim(out, d)) {
          return shape_error(n, op, "output differs from the input outside the axis");
        }
      }
      const uint64_t last = uint64_t{node.start()} + uint64_t{dim(out, axis) - 1} * node.step();
      if (last >= dim(x, axis)) return shape_error(n, op, "slice runs past the input");
      return Error::Ok;
    }
    case fb::OpType::Embedding: {
      if (in.size() != 2) return shape_error(n, op, "needs weight and indices");
      const fb::Tensor& idx = *ts.Get(in.Get(1));
      if (rank(x) != 2 || rank(out) != rank(idx) + 1 || dim(out, rank(idx)) != dim(x, 1)) {
        return shape_error(n, op, "needs weight [V, D], indices [...] and output [..., D]");
      }
      for (uint32_t d = 0; d < rank(idx); ++d) {
        if (dim(idx, d) != dim(out, d)) return shape_error(n, op, "output must be [..., D]");
      }
      return Error::Ok;
    }
    case fb::OpType::Clamp:
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      if (!same_dims(x, out)) return shape_error(n, op, "output sizes differ from the input's");
      if (!(node.output_min() <= node.output_max())) {
        return shape_error(n, op, "output_min > output_max (or NaN)");
      }
      return Error::Ok;
    case fb::OpType::Softmax:
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      if (rank(x) < 1 || !same_dims(x, out)) {
        return shape_error(n, op, "needs >= 1 dim and output sizes equal to the input's");
      }
      return Error::Ok;
    case fb::OpType::Conv2d:
      return verify_conv2d(n, node, p);
    case fb::OpType::BatchMatMul: {
      if (in.size() != 2) return shape_error(n, op, "needs 2 inputs");
      const fb::Tensor& y = *ts.Get(in.Get(1));
      if (rank(x) != 3 || rank(y) != 3 || rank(out) != 3 || dim(x, 0) != dim(y, 0) ||
          dim(x, 2) != dim(y, 1) || dim(out, 0) != dim(x, 0) || dim(out, 1) != dim(x, 1) ||
          dim(out, 2) != dim(y, 2)) {
        return shape_error(n, op, "needs a[B, M, K], b[B, K, N] and out[B, M, N]");
      }
      return Error::Ok;
    }
    case fb::OpType::Permute: {
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      // A 0-D permute's perm is empty, which the writer (like flatbuffers' own tools) leaves
      // out: an absent vector reads as an empty one.
      const auto* perm = node.perm();
      const uint32_t perm_size = perm == nullptr ? 0 : perm->size();
      if (perm_size != rank(x) || rank(out) != rank(x)) {
        return shape_error(n, op, "perm must have one entry per dim");
      }
      uint32_t seen = 0;
      for (uint32_t d = 0; d < perm_size; ++d) {
        const uint32_t from = perm->Get(d);
        if (from >= rank(x) || (seen >> from) & 1u || dim(out, d) != dim(x, from)) {
          return shape_error(n, op, "perm is not a permutation matching the output's sizes");
        }
        seen |= 1u << from;
      }
      return Error::Ok;
    }
    case fb::OpType::Reshape:
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      if (tensor_numel(x) != tensor_numel(out)) return shape_error(n, op, "element counts differ");
      return Error::Ok;
    case fb::OpType::Mean: {
      if (in.size() != 1) return shape_error(n, op, "needs 1 input");
      // Output = the input's first k dims, then only 1s; the mean runs over the rest.
      uint32_t k = rank(out);
      while (k > 0 && dim(out, k - 1) == 1) --k;
      bool ok = k <= rank(x);
      for (uint32_t d = 0; ok && d < k; ++d) ok = dim(out, d) == dim(x, d);
      if (!ok || tensor_numel(x) % tensor_numel(out) != 0) {
        return shape_error(n, op, "output must be the input's leading dims (then 1s)");
      }
      return Error::Ok;
    }
    case fb::OpType::LayerNorm: {
      const uint32_t want = 1u + node.has_weight() + node.has_bias();
      if (in.size() != want || (node.has_bias() && !node.has_weight())) {
        return shape_error(n, op, "inputs must be x[, weight[, bias]] as has_weight/has_bias say");
      }
      if (rank(x) < 1 || !same_dims(x, out)) {
        return shape_error(n, op, "needs >= 1 dim and output sizes equal to the input's");
      }
      const uint32_t d = dim(x, rank(x) - 1);
      for (uint32_t k = 1; k < in.size(); ++k) {
        const fb::Tensor& t = *ts.Get(in.Get(k));
        if (rank(t) != 1 || dim(t, 0) != d) return shape_error(n, op, "weight/bias must be [D]");
      }
      if (!(node.eps() >= 0.0f) || !std::isfinite(node.eps())) {
        return shape_error(n, op, "eps must be finite and >= 0");
      }
      return Error::Ok;
    }
    default:
      return fail(Error::InvalidProgram, "Vulkan payload: node %u has unknown op %d", n,
                  static_cast<int>(op));
  }
}

// Bounded dynamic shapes: each symbol is a dim of an input argument whose size expression is
// that symbol alone, within [1, the dim planned]; every size expression stays within
// [1, its tensor's planned dim] over the symbols' ranges. The runtime then never computes a size
// (or an offset from one) beyond what memory was planned for.
Error verify_sizes(const fb::Payload& p) {
  const auto* symbols = p.symbols();
  const uint32_t num_symbols = symbols ? symbols->size() : 0;
  if (num_symbols > kMaxSymbols) {
    return fail(Error::InvalidProgram, "Vulkan payload: %u size symbols (at most %u)", num_symbols,
                kMaxSymbols);
  }
  const auto& ts = *p.tensors();
  // Before any size expression is read: their int64 arguments must be aligned.
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const auto* sym = ts.Get(i)->sym_dims();
    for (uint32_t d = 0; sym != nullptr && d < sym->size(); ++d) {
      const fb::SizeExpr* e = sym->Get(d);
      if (e != nullptr && e->args() != nullptr && !eight_byte_aligned(e->args()->data())) {
        return fail(Error::InvalidProgram,
                    "Vulkan payload: tensor %u dim %u: size expression's arguments are misaligned",
                    i, d);
      }
    }
  }
  SizeRange ranges[kMaxSymbols];
  for (uint32_t k = 0; k < num_symbols; ++k) {
    const fb::SizeSymbol* s = symbols->Get(k);
    const fb::Tensor* source = nullptr;
    for (const fb::Tensor* t : ts) {
      if (t->external() == fb::ExternalKind::Input && t->arg_index() == s->arg_index()) source = t;
    }
    if (source == nullptr || s->dim() >= rank(*source)) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: size symbol %u reads dim %u of input argument %u, which the "
                  "region does not have",
                  k, s->dim(), s->arg_index());
    }
    if (s->min() < 1 || s->min() > s->max() || s->max() != dim(*source, s->dim())) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: size symbol %u has range [%u, %u]; it must be within [1, %u], "
                  "ending at the planned dim",
                  k, s->min(), s->max(), dim(*source, s->dim()));
    }
    const auto* sym = source->sym_dims();
    const fb::SizeExpr* e = sym && s->dim() < sym->size() ? sym->Get(s->dim()) : nullptr;
    if (e == nullptr || e->ops() == nullptr || e->args() == nullptr || e->ops()->size() != 1 ||
        e->args()->size() != 1 || e->ops()->Get(0) != fb::SizeOp::Symbol ||
        e->args()->Get(0) != static_cast<int64_t>(k)) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: size symbol %u: input argument %u's dim %u is not that symbol",
                  k, s->arg_index(), s->dim());
    }
    ranges[k] = SizeRange{s->min(), s->max()};
  }
  for (uint32_t i = 0; i < ts.size(); ++i) {
    const fb::Tensor& t = *ts.Get(i);
    const auto* sym = t.sym_dims();
    if (sym == nullptr || sym->size() == 0) continue;
    if (t.is_constant() || sym->size() != rank(t)) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: tensor %u has %u size expressions for %u dims%s", i, sym->size(),
                  rank(t), t.is_constant() ? " (and is a constant)" : "");
    }
    for (uint32_t d = 0; d < rank(t); ++d) {
      SizeRange r;
      const char* why = "";
      if (sym->Get(d) == nullptr ||
          !eval_size(*sym->Get(d), Span<const SizeRange>(ranges, num_symbols), &r, &why)) {
        return fail(Error::InvalidProgram, "Vulkan payload: tensor %u dim %u: size expression %s",
                    i, d, sym->Get(d) == nullptr ? "is null" : why);
      }
      if (r.lo < 1 || r.hi > static_cast<int64_t>(dim(t, d))) {
        return fail(Error::InvalidProgram,
                    "Vulkan payload: tensor %u dim %u: size expression spans [%lld, %lld], "
                    "outside [1, %u] (the planned size)",
                    i, d, static_cast<long long>(r.lo), static_cast<long long>(r.hi), dim(t, d));
      }
    }
  }
  return Error::Ok;
}

enum class Check { Load, Resized };

Error verify(Span<const uint8_t> payload, const fb::Payload** out, Check check);

}  // namespace

Error verify_payload(Span<const uint8_t> payload, const fb::Payload** out) {
  return verify(payload, out, Check::Load);
}

Error verify_resized_payload(Span<const uint8_t> flatbuffer) {
  const fb::Payload* p = nullptr;
  return verify(flatbuffer, &p, Check::Resized);
}

namespace {

Error verify(Span<const uint8_t> payload, const fb::Payload** out, Check check) {
  // The verifier checks each field's alignment relative to the buffer's start, so the buffer
  // itself must be aligned for its 8-byte fields (size expressions' int64 arguments). The
  // schema places delegate data 16-byte aligned; a file that does not is malformed.
  if (reinterpret_cast<uintptr_t>(payload.data()) % 8 != 0) {
    return fail(Error::InvalidProgram,
                "Vulkan payload: not 8-byte aligned in memory (delegate data must be 16-byte "
                "aligned in the program)");
  }
  flatbuffers::Verifier verifier(payload.data(), payload.size());
  if (payload.size() < 8 || !flatbuffers::BufferHasIdentifier(payload.data(), "PVK1") ||
      !verifier.VerifyBuffer<fb::Payload>("PVK1")) {
    return fail(Error::InvalidProgram, "Vulkan payload: not a valid PVK1 flatbuffer (%zu bytes)",
                payload.size());
  }
  const fb::Payload& p = *flatbuffers::GetRoot<fb::Payload>(payload.data());
  if (p.version() != kPayloadVersion) {
    return fail(Error::NotSupported, "Vulkan payload version %u, this runtime reads %u",
                p.version(), kPayloadVersion);
  }
  if (check == Check::Load &&
      (p.constant_data_offset() % kConstantAlignment != 0 ||
       p.constant_data_offset() > payload.size() ||
       payload.size() - p.constant_data_offset() < p.constant_data_size())) {
    return fail(Error::InvalidProgram,
                "Vulkan payload: constant blob [%llu, +%llu) is outside the %zu-byte payload",
                static_cast<unsigned long long>(p.constant_data_offset()),
                static_cast<unsigned long long>(p.constant_data_size()), payload.size());
  }
  if (p.tensors() == nullptr || p.tensors()->size() == 0 || p.tensors()->size() > kMaxTensors ||
      p.nodes() == nullptr || p.nodes()->size() == 0 || p.nodes()->size() > kMaxNodes) {
    return fail(Error::InvalidProgram, "Vulkan payload: needs 1..%zu tensors and 1..%zu nodes",
                kMaxTensors, kMaxNodes);
  }
  const auto& ts = *p.tensors();
  const uint32_t num_tensors = ts.size();
  uint32_t num_inputs = 0, num_outputs = 0;
  for (uint32_t i = 0; i < num_tensors; ++i) {
    PTERON_TRY(verify_tensor(p, i, ts.Get(i)));
    num_inputs += ts.Get(i)->external() == fb::ExternalKind::Input;
    num_outputs += ts.Get(i)->external() == fb::ExternalKind::Output;
  }
  if (num_outputs == 0) return fail(Error::InvalidProgram, "Vulkan payload: no outputs");
  // Arguments: inputs take 0..num_inputs-1, outputs the rest, each index exactly once.
  std::vector<bool> arg_seen(num_inputs + num_outputs, false);
  for (uint32_t i = 0; i < num_tensors; ++i) {
    const fb::Tensor& t = *ts.Get(i);
    if (t.external() == fb::ExternalKind::Internal) continue;
    const bool input = t.external() == fb::ExternalKind::Input;
    const uint32_t a = t.arg_index();
    const bool in_range = input ? a < num_inputs : (a >= num_inputs && a < arg_seen.size());
    if (!in_range || arg_seen[a]) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: tensor %u has arg_index %u (inputs take 0..%u, outputs "
                  "%u..%u, each once)",
                  i, a, num_inputs - 1, num_inputs, num_inputs + num_outputs - 1);
    }
    arg_seen[a] = true;
  }
  // Data flow: a node reads constants, inputs or earlier nodes' outputs and writes one
  // tensor that nothing wrote before.
  std::vector<uint32_t> writer(num_tensors, kNotWritten);
  const auto& nodes = *p.nodes();
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    const fb::Node* node = nodes.Get(n);
    if (node == nullptr || node->inputs() == nullptr || node->outputs() == nullptr ||
        node->inputs()->size() == 0 || node->outputs()->size() != 1) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: node %u needs inputs and exactly one output", n);
    }
    for (uint32_t t : *node->inputs()) {
      if (t >= num_tensors) {
        return fail(Error::InvalidProgram, "Vulkan payload: node %u reads tensor %u of %u", n, t,
                    num_tensors);
      }
      const fb::Tensor& in = *ts.Get(t);
      if (!in.is_constant() && in.external() != fb::ExternalKind::Input &&
          writer[t] == kNotWritten) {
        return fail(Error::InvalidProgram,
                    "Vulkan payload: node %u reads tensor %u before anything writes it", n, t);
      }
    }
    const uint32_t o = node->outputs()->Get(0);
    if (o >= num_tensors || ts.Get(o)->is_constant() ||
        ts.Get(o)->external() == fb::ExternalKind::Input || writer[o] != kNotWritten) {
      return fail(Error::InvalidProgram,
                  "Vulkan payload: node %u writes tensor %u, which is out of range, a constant, "
                  "an input or already written",
                  n, o);
    }
    for (uint32_t t : *node->inputs()) {
      if (t == o) return fail(Error::InvalidProgram, "Vulkan payload: node %u reads its output", n);
    }
    PTERON_TRY(verify_shapes(n, *node, p));
    writer[o] = n;
  }
  for (uint32_t i = 0; i < num_tensors; ++i) {
    if (ts.Get(i)->external() == fb::ExternalKind::Output && writer[i] == kNotWritten) {
      return fail(Error::InvalidProgram, "Vulkan payload: output tensor %u is never written", i);
    }
  }
  if (check == Check::Load) PTERON_TRY(verify_sizes(p));
  *out = &p;
  return Error::Ok;
}

}  // namespace

}  // namespace vulkan
}  // namespace pteron
