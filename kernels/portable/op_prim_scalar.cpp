// executorch_prim::*.Scalar: integer arithmetic and comparisons on symbolic sizes, as
// ExecuTorch emits them for bounded dynamic shapes (args: a, b, out). Integers only (sizes);
// overflow and division by zero are errors, never undefined behaviour, since the operands
// come from a file.
#include <algorithm>

#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

enum class IntOp { Add, Sub, Mul, FloorDiv, Mod, Max, Min };
enum class CmpOp { Eq, Gt, Lt, Ge, Le };

// `n` int operands, then the out value, which must already hold `out_tag` (a prim op never
// changes what kind of value a slot is: other instructions rely on it).
Error operands(const char* op, Span<EValue*> args, size_t n, Tag out_tag = Tag::Int) {
  PTERON_CHECK(args.size() == n + 1, Error::InvalidProgram, "%s: %zu arguments, expected %zu", op,
               args.size(), n + 1);
  PTERON_CHECK(args[n]->tag == out_tag, Error::InvalidProgram, "%s: out is %s, expected %s", op,
               tag_name(args[n]->tag), tag_name(out_tag));
  for (size_t i = 0; i < n; ++i) {
    PTERON_CHECK(args[i]->tag == Tag::Int, Error::NotSupported,
                 "%s: operand %zu is %s; pteron's prim ops take ints", op, i,
                 tag_name(args[i]->tag));
  }
  return Error::Ok;
}

template <IntOp kOpKind>
Error int_op(KernelContext&, Span<EValue*> args) {
  static constexpr const char* kNames[] = {
      "executorch_prim::add.Scalar",    "executorch_prim::sub.Scalar",
      "executorch_prim::mul.Scalar",    "executorch_prim::floordiv.Scalar",
      "executorch_prim::mod.Scalar",    "executorch_prim::sym_max.Scalar",
      "executorch_prim::sym_min.Scalar"};
  const char* op = kNames[static_cast<int>(kOpKind)];
  PTERON_TRY(operands(op, args, 2));
  const int64_t a = args[0]->i, b = args[1]->i;
  int64_t r = 0;
  bool overflow = false;
  switch (kOpKind) {
    case IntOp::Add:
      overflow = __builtin_add_overflow(a, b, &r);
      break;
    case IntOp::Sub:
      overflow = __builtin_sub_overflow(a, b, &r);
      break;
    case IntOp::Mul:
      overflow = __builtin_mul_overflow(a, b, &r);
      break;
    case IntOp::FloorDiv:
    case IntOp::Mod:
      PTERON_CHECK(b != 0, Error::InvalidArgument, "%s: division by zero", op);
      PTERON_CHECK(!(a == INT64_MIN && b == -1), Error::InvalidArgument, "%s: overflow", op);
      if (kOpKind == IntOp::Mod) {
        r = a % b;  // C's remainder, as ExecuTorch's mod.Scalar
      } else {
        r = a / b;  // Python's floor division
        if ((a % b != 0) && ((a < 0) != (b < 0))) --r;
      }
      break;
    case IntOp::Max:
      r = std::max(a, b);
      break;
    case IntOp::Min:
      r = std::min(a, b);
      break;
  }
  PTERON_CHECK(!overflow, Error::InvalidArgument, "%s: %lld and %lld overflow", op,
               static_cast<long long>(a), static_cast<long long>(b));
  *args[2] = EValue::from_int(r);
  return Error::Ok;
}

template <CmpOp kCmp>
Error compare(KernelContext&, Span<EValue*> args) {
  static constexpr const char* kNames[] = {
      "executorch_prim::eq.Scalar", "executorch_prim::gt.Scalar", "executorch_prim::lt.Scalar",
      "executorch_prim::ge.Scalar", "executorch_prim::le.Scalar"};
  PTERON_TRY(operands(kNames[static_cast<int>(kCmp)], args, 2, Tag::Bool));
  const int64_t a = args[0]->i, b = args[1]->i;
  bool r = false;
  switch (kCmp) {
    case CmpOp::Eq:
      r = a == b;
      break;
    case CmpOp::Gt:
      r = a > b;
      break;
    case CmpOp::Lt:
      r = a < b;
      break;
    case CmpOp::Ge:
      r = a >= b;
      break;
    case CmpOp::Le:
      r = a <= b;
      break;
  }
  *args[2] = EValue::from_bool(r);
  return Error::Ok;
}

Error neg(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "executorch_prim::neg.Scalar";
  PTERON_TRY(operands(kOp, args, 1));
  PTERON_CHECK(args[0]->i != INT64_MIN, Error::InvalidArgument, "%s: overflow", kOp);
  *args[1] = EValue::from_int(-args[0]->i);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("executorch_prim::add.Scalar", int_op<IntOp::Add>, "SSS");
PTERON_KERNEL("executorch_prim::sub.Scalar", int_op<IntOp::Sub>, "SSS");
PTERON_KERNEL("executorch_prim::mul.Scalar", int_op<IntOp::Mul>, "SSS");
PTERON_KERNEL("executorch_prim::floordiv.Scalar", int_op<IntOp::FloorDiv>, "SSS");
PTERON_KERNEL("executorch_prim::mod.Scalar", int_op<IntOp::Mod>, "III");
PTERON_KERNEL("executorch_prim::sym_max.Scalar", int_op<IntOp::Max>, "SSS");
PTERON_KERNEL("executorch_prim::sym_min.Scalar", int_op<IntOp::Min>, "SSS");
PTERON_KERNEL("executorch_prim::eq.Scalar", compare<CmpOp::Eq>, "SSB");
PTERON_KERNEL("executorch_prim::gt.Scalar", compare<CmpOp::Gt>, "SSB");
PTERON_KERNEL("executorch_prim::lt.Scalar", compare<CmpOp::Lt>, "SSB");
PTERON_KERNEL("executorch_prim::ge.Scalar", compare<CmpOp::Ge>, "SSB");
PTERON_KERNEL("executorch_prim::le.Scalar", compare<CmpOp::Le>, "SSB");
PTERON_KERNEL("executorch_prim::neg.Scalar", neg, "SS");

}  // namespace pteron
