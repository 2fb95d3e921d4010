// Elementwise operators: binary (with broadcasting), unary and prelu.
#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

Error Verifier::check_binary(const fb::Binary& a) {
  PTERON_TRY(arity(2, 2));
  const bool qint8_ok = a.op() == fb::BinaryOp::Add || a.op() == fb::BinaryOp::Subtract ||
                        a.op() == fb::BinaryOp::Multiply;
  if (static_cast<int>(a.op()) > static_cast<int>(fb::BinaryOp::MAX)) {
    return node_fail("unknown binary operator %d", static_cast<int>(a.op()));
  }
  PTERON_TRY(expect_uniform_dtype(2, qint8_ok));
  // Numpy broadcasting, aligned at the last dim.
  const TensorInfo& x = in(0);
  const TensorInfo& y = in(1);
  const uint32_t rank = x.rank > y.rank ? x.rank : y.rank;
  uint32_t dims[kMaxDims];
  for (uint32_t d = 0; d < rank; ++d) {
    const uint32_t xd = d + x.rank >= rank ? x.dims[d + x.rank - rank] : 1;
    const uint32_t yd = d + y.rank >= rank ? y.dims[d + y.rank - rank] : 1;
    if (xd != yd && xd != 1 && yd != 1) {
      return node_fail("inputs do not broadcast (dim %u: %u vs %u)", d, xd, yd);
    }
    dims[d] = xd == 1 ? yd : xd;
  }
  return expect_dims("output", out(), dims, rank);
}

Error Verifier::check_unary(const fb::Unary& a) {
  PTERON_TRY(arity(1, 1));
  const DataType x = in(0).dtype;
  const DataType y = out().dtype;
  switch (a.op()) {
    case fb::UnaryOp::Convert: {
      const bool ok =
          (x == DataType::Float32 && (y == DataType::Float16 || y == DataType::QInt8)) ||
          ((x == DataType::Float16 || x == DataType::QInt8) && y == DataType::Float32);
      if (!ok) {
        return node_unsupported("conversion %s -> %s is unsupported", dtype_name(x), dtype_name(y));
      }
      break;
    }
    case fb::UnaryOp::Sigmoid:
      PTERON_TRY(expect_uniform_dtype(1, true));
      break;
    case fb::UnaryOp::Abs:
    case fb::UnaryOp::BankersRounding:
    case fb::UnaryOp::Ceiling:
    case fb::UnaryOp::Floor:
    case fb::UnaryOp::Negate:
    case fb::UnaryOp::Square:
    case fb::UnaryOp::SquareRoot:
    case fb::UnaryOp::Hardswish:
    case fb::UnaryOp::Softmax:
      PTERON_TRY(expect_uniform_dtype(1, false));
      break;
    default:
      return node_fail("unknown unary operator %d", static_cast<int>(a.op()));
  }
  return expect_dims("output", out(), in(0).dims, in(0).rank);
}

Error Verifier::check_prelu() {
  PTERON_TRY(arity(2, 2));
  PTERON_TRY(expect_uniform_dtype(2, false));
  PTERON_TRY(expect_constant("slope", in(1)));
  const TensorInfo& x = in(0);
  const uint32_t channels[1] = {x.rank == 0 ? 1u : x.dims[x.rank - 1]};
  PTERON_TRY(expect_dims("slope", in(1), channels, 1));
  return expect_dims("output", out(), x.dims, x.rank);
}

}  // namespace pteron::xnnpack::detail
