#include "runtime/kernel/kernel.h"

#include <cstring>

namespace pteron {
namespace {

constexpr size_t kMaxKernels = 640;

// Function-local static so registration order across translation units is safe.
struct Registry {
  KernelEntry entries[kMaxKernels];
  size_t count = 0;
};
Registry& registry() {
  static Registry r;
  return r;
}

bool name_matches(const char* full, const char* name, const char* overload) {
  const size_t n = std::strlen(name);
  if (std::strncmp(full, name, n) != 0) return false;
  if (overload == nullptr || overload[0] == '\0') return full[n] == '\0';
  return full[n] == '.' && std::strcmp(full + n + 1, overload) == 0;
}

bool tag_fits(char want, Tag tag) {
  switch (want) {
    case 'T': return tag == Tag::Tensor;
    case 't': return tag == Tag::Tensor || tag == Tag::None;
    case 'S': return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool;
    case 's': return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool || tag == Tag::None;
    case 'I': return tag == Tag::Int;
    case 'i': return tag == Tag::Int || tag == Tag::None;
    case 'B': return tag == Tag::Bool;
    case 'D': return tag == Tag::Double || tag == Tag::Int;
    case 'd': return tag == Tag::Double || tag == Tag::Int || tag == Tag::None;
    case 'L': return tag == Tag::IntList;
    case 'l': return tag == Tag::IntList || tag == Tag::None;
    case 'A': return tag == Tag::TensorList;
    case 'O': return tag == Tag::OptionalTensorList || tag == Tag::TensorList;
    case '*': return true;
  }
  return false;
}

}  // namespace

bool register_kernel(const char* name, KernelFn fn) {
  Registry& r = registry();
  for (size_t i = 0; i < r.count; ++i) {
    if (std::strcmp(r.entries[i].name, name) == 0) {
      r.entries[i].fn = fn;
      return true;
    }
  }
  if (r.count == kMaxKernels) return false;
  r.entries[r.count++] = KernelEntry{name, fn};
  return true;
}

const KernelEntry* find_kernel(const char* name, const char* overload) {
  Registry& r = registry();
  for (size_t i = 0; i < r.count; ++i) {
    if (name_matches(r.entries[i].name, name, overload)) return &r.entries[i];
  }
  return nullptr;
}

Span<const KernelEntry> registered_kernels() {
  Registry& r = registry();
  return {r.entries, r.count};
}

Error check_args(const char* op, Span<EValue*> args, const char* signature) {
  const size_t want = std::strlen(signature);
  if (args.size() < want) {
    return fail(Error::InvalidProgram, "%s takes %zu arguments, the program passes %zu", op, want,
                args.size());
  }
  for (size_t i = 0; i < want; ++i) {
    if (!tag_fits(signature[i], args[i]->tag)) {
      return fail(Error::InvalidProgram, "%s argument %zu: expected '%c', got %s", op, i,
                  signature[i], tag_name(args[i]->tag));
    }
  }
  return Error::Ok;
}

}  // namespace pteron
