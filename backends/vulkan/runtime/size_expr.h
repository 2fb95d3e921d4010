// Size expressions of bounded dynamic shapes (schema SizeExpr): one evaluator for the
// verifier's bounds (each symbol a range [min, max]) and the runtime's sizes (each symbol a
// point range, its value in this call), so the two can never disagree.
#pragma once

#include <cstdint>

#include "backends/vulkan/runtime/payload_format.h"
#include "runtime/core/span.h"

namespace pteron {
namespace vulkan {

struct SizeRange {
  int64_t lo = 0;
  int64_t hi = 0;
};

constexpr uint32_t kMaxSizeOps = 64;    // steps per expression
constexpr uint32_t kMaxSizeStack = 16;  // values pending in one expression
constexpr uint32_t kMaxSymbols = 16;    // symbols per payload

// Evaluates `e` over `symbols` by interval arithmetic (exact for point ranges). False, with a
// static reason in `*why`, for a malformed expression (unknown op or symbol, a wrong operand
// count, a stack over- or underflow, more than one value left, a divisor range not >= 1) or a
// value beyond +-2^40 (sizes are far smaller; this keeps every step far from overflow).
bool eval_size(const fb::SizeExpr& e, Span<const SizeRange> symbols, SizeRange* out,
               const char** why);

}  // namespace vulkan
}  // namespace pteron
