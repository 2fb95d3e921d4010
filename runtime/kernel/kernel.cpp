#include "runtime/kernel/kernel.h"

#include <cstring>

namespace pteron {
namespace {

// The table of registered kernels. Hosted builds hold room for every kernel library. Bare-metal
// builds take the table from the image: `pteron firmware` defines pteron_kernel_slots with room
// for exactly its program's kernels (firmware RAM is scarce: 12 bytes a slot), and images that
// register whole libraries (tests) get the weak default of PTERON_MAX_KERNELS slots.
#ifndef PTERON_MAX_KERNELS
#define PTERON_MAX_KERNELS 1024
#endif
#ifdef PTERON_BARE_METAL
}  // namespace
extern "C" {
__attribute__((weak)) KernelEntry pteron_kernel_slots[PTERON_MAX_KERNELS];
__attribute__((weak)) extern const size_t pteron_kernel_slot_count = PTERON_MAX_KERNELS;
}
namespace {
KernelEntry* slots() { return pteron_kernel_slots; }
size_t slot_count() { return pteron_kernel_slot_count; }
#else
KernelEntry g_slots[PTERON_MAX_KERNELS];
KernelEntry* slots() { return g_slots; }
size_t slot_count() { return PTERON_MAX_KERNELS; }
#endif

// Function-local static so registration order across translation units is safe.
struct Registry {
  KernelEntry* entries = slots();
  size_t count = 0;
  const char* libraries[kMaxKernelLibraries];
  size_t library_count = 0;  // 0: any library, non-portable first
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
    case 'T':
      return tag == Tag::Tensor;
    case 't':
      return tag == Tag::Tensor || tag == Tag::None;
    case 'S':
      return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool;
    case 's':
      return tag == Tag::Int || tag == Tag::Double || tag == Tag::Bool || tag == Tag::None;
    case 'I':
      return tag == Tag::Int;
    case 'i':
      return tag == Tag::Int || tag == Tag::None;
    case 'B':
      return tag == Tag::Bool;
    case 'D':
      return tag == Tag::Double || tag == Tag::Int;
    case 'd':
      return tag == Tag::Double || tag == Tag::Int || tag == Tag::None;
    case 'L':
      return tag == Tag::IntList;
    case 'l':
      return tag == Tag::IntList || tag == Tag::None;
    case 'A':
      return tag == Tag::TensorList;
    case 'O':
      return tag == Tag::OptionalTensorList || tag == Tag::TensorList;
    case '*':
      return true;
  }
  return false;
}

}  // namespace

bool register_kernel(const char* name, KernelFn fn, const char* library, const char* signature) {
  Registry& r = registry();
  for (size_t i = 0; i < r.count; ++i) {
    if (std::strcmp(r.entries[i].name, name) == 0 &&
        std::strcmp(r.entries[i].library, library) == 0) {
      r.entries[i].fn = fn;
      r.entries[i].signature = signature;
      return true;
    }
  }
  if (r.count == slot_count()) return false;
  r.entries[r.count++] = KernelEntry{name, fn, library, signature};
  return true;
}

Error call_kernel(const KernelEntry& kernel, KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kernel.name, args, kernel.signature));
  return kernel.fn(ctx, args);
}

bool set_kernel_libraries(Span<const char* const> libraries) {
  Registry& r = registry();
  if (libraries.size() > kMaxKernelLibraries) return false;
  for (size_t i = 0; i < libraries.size(); ++i) r.libraries[i] = libraries[i];
  r.library_count = libraries.size();
  return true;
}

const KernelEntry* find_kernel(const char* name, const char* overload) {
  Registry& r = registry();
  // Rank of a library: its position in the preference list, or with no list 0 for anything
  // but portable and 1 for portable. Lower wins; libraries outside the list never match.
  auto rank = [&r](const char* library) -> size_t {
    if (r.library_count == 0) return std::strcmp(library, "portable") == 0 ? 1 : 0;
    for (size_t i = 0; i < r.library_count; ++i) {
      if (std::strcmp(r.libraries[i], library) == 0) return i;
    }
    return kMaxKernelLibraries;
  };
  const KernelEntry* best = nullptr;
  size_t best_rank = kMaxKernelLibraries;
  for (size_t i = 0; i < r.count; ++i) {
    if (!name_matches(r.entries[i].name, name, overload)) continue;
    const size_t k = rank(r.entries[i].library);
    if (k < best_rank) {
      best = &r.entries[i];
      best_rank = k;
    }
  }
  return best;
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
