// pteron::check_size(Tensor[] sources, SymInt lhs, SymInt rhs, str cmp, str message) -> ()
//
// A size condition export asserts that the planned bounds do not imply (torch._check on a
// data-dependent length, the divisibility a view of a selection needs, two selections asserted
// equal in length), checked when the program runs: `lhs cmp rhs` (Python's operator names ge,
// gt, le, lt, eq, ne) or the call fails with export's message and both sides' values, as
// torch's exported program raises. `sources` are the tensors the sizes are read from (they
// order the check after their producers); the kernel does not read them.
#include "kernels/portable/util/args.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "pteron::check_size.default";

Error check_size(KernelContext&, Span<EValue*> args) {
  PTERON_CHECK(args.size() == 5 && args[3]->tag == Tag::String && args[4]->tag == Tag::String,
               Error::InvalidProgram, "%s: expected (sources, lhs, rhs, cmp, message)", kOp);
  const int64_t lhs = args[1]->i, rhs = args[2]->i;
  const EValue& cmp = *args[3];
  bool holds = false;
  if (string_equals(cmp, "ge")) {
    holds = lhs >= rhs;
  } else if (string_equals(cmp, "gt")) {
    holds = lhs > rhs;
  } else if (string_equals(cmp, "le")) {
    holds = lhs <= rhs;
  } else if (string_equals(cmp, "lt")) {
    holds = lhs < rhs;
  } else if (string_equals(cmp, "eq")) {
    holds = lhs == rhs;
  } else if (string_equals(cmp, "ne")) {
    holds = lhs != rhs;
  } else {
    return fail(Error::InvalidProgram, "%s: unknown comparison '%.*s'", kOp,
                static_cast<int>(cmp.string.size()), cmp.string.data());
  }
  const Span<const char> message = args[4]->string;
  PTERON_CHECK(holds, Error::InvalidArgument, "%s: %.*s (sizes %lld and %lld)", kOp,
               static_cast<int>(message.size()), message.data(), static_cast<long long>(lhs),
               static_cast<long long>(rhs));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::check_size.default", check_size, "AII**");

}  // namespace pteron
