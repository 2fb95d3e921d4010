#include "backends/vulkan/runtime/size_expr.h"

#include <algorithm>

namespace pteron {
namespace vulkan {
namespace {

constexpr int64_t kLimit = int64_t{1} << 40;

bool in_limit(const SizeRange& r) { return r.lo >= -kLimit && r.hi <= kLimit && r.lo <= r.hi; }

// Python's floor division and modulo for a divisor > 0.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t py_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

SizeRange combine(fb::SizeOp op, const SizeRange& a, const SizeRange& b) {
  switch (op) {
    case fb::SizeOp::Add:
      return {a.lo + b.lo, a.hi + b.hi};
    case fb::SizeOp::Mul: {
      // Operands within 2^40: a product may not fit 64 bits, so it is clamped just past the
      // limit (in_limit() then refuses it).
      const auto mul = [](int64_t x, int64_t y) {
        int64_t p = 0;
        return __builtin_mul_overflow(x, y, &p) ? kLimit + 1 : p;
      };
      const int64_t p[4] = {mul(a.lo, b.lo), mul(a.lo, b.hi), mul(a.hi, b.lo), mul(a.hi, b.hi)};
      return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case fb::SizeOp::Max:
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case fb::SizeOp::Min:
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case fb::SizeOp::FloorDiv: {
      // Monotone in a; in b (> 0) monotone for each sign of a: the corners bound it.
      const int64_t q[4] = {floor_div(a.lo, b.lo), floor_div(a.lo, b.hi), floor_div(a.hi, b.lo),
                            floor_div(a.hi, b.hi)};
      return {*std::min_element(q, q + 4), *std::max_element(q, q + 4)};
    }
    default: {  // Mod
      if (a.lo == a.hi && b.lo == b.hi) {
        const int64_t m = py_mod(a.lo, b.lo);
        return {m, m};
      }
      if (a.lo >= 0 && a.hi < b.lo) return a;
      return {0, b.hi - 1};
    }
  }
}

}  // namespace

bool eval_size(const fb::SizeExpr& e, Span<const SizeRange> symbols, SizeRange* out,
               const char** why) {
  const auto* ops = e.ops();
  const auto* args = e.args();
  if (ops == nullptr || args == nullptr || ops->size() == 0 || ops->size() != args->size() ||
      ops->size() > kMaxSizeOps) {
    *why = "needs 1..64 steps, one argument each";
    return false;
  }
  SizeRange stack[kMaxSizeStack];
  uint32_t depth = 0;
  for (uint32_t i = 0; i < ops->size(); ++i) {
    const fb::SizeOp op = ops->Get(i);
    const int64_t arg = args->Get(i);
    if (op == fb::SizeOp::Const || op == fb::SizeOp::Symbol) {
      if (depth == kMaxSizeStack) {
        *why = "holds more than 16 pending values";
        return false;
      }
      if (op == fb::SizeOp::Symbol) {
        if (arg < 0 || static_cast<uint64_t>(arg) >= symbols.size()) {
          *why = "names a symbol the payload does not have";
          return false;
        }
        stack[depth++] = symbols[static_cast<size_t>(arg)];
      } else {
        stack[depth++] = SizeRange{arg, arg};
      }
      if (!in_limit(stack[depth - 1])) {
        *why = "has a value beyond 2^40";
        return false;
      }
      continue;
    }
    if (static_cast<uint8_t>(op) > static_cast<uint8_t>(fb::SizeOp::Min)) {
      *why = "has an unknown step";
      return false;
    }
    const bool binary = op == fb::SizeOp::FloorDiv || op == fb::SizeOp::Mod;
    if ((binary && arg != 2) || arg < 2 || static_cast<uint64_t>(arg) > depth) {
      *why = "combines more values than it holds (or fewer than 2)";
      return false;
    }
    const uint32_t first = depth - static_cast<uint32_t>(arg);
    SizeRange acc = stack[first];
    for (uint32_t k = first + 1; k < depth; ++k) {
      if (binary && stack[k].lo < 1) {
        *why = "divides by a range that is not >= 1";
        return false;
      }
      acc = combine(op, acc, stack[k]);  // operands within 2^40
      if (!in_limit(acc)) {
        *why = "has a value beyond 2^40";
        return false;
      }
    }
    depth = first;
    stack[depth++] = acc;
  }
  if (depth != 1) {
    *why = "leaves other than one value";
    return false;
  }
  *out = stack[0];
  return true;
}

}  // namespace vulkan
}  // namespace pteron
