#include "runtime/backend/backend.h"

#include <cstring>

namespace pteron {
namespace {

// A firmware image links at most the Ethos-U delegate; hosts several.
#ifdef PTERON_BARE_METAL
constexpr size_t kMaxBackends = 4;
#else
constexpr size_t kMaxBackends = 16;
#endif

struct Entry {
  const char* id;
  BackendInterface* backend;
};
struct Registry {
  Entry entries[kMaxBackends];
  size_t count = 0;
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

Error register_backend(const char* id, BackendInterface* backend) {
  Registry& r = registry();
  for (size_t i = 0; i < r.count; ++i) {
    if (std::strcmp(r.entries[i].id, id) == 0) {
      r.entries[i].backend = backend;
      return Error::Ok;
    }
  }
  if (r.count == kMaxBackends) return fail(Error::OutOfMemory, "backend registry is full");
  r.entries[r.count++] = Entry{id, backend};
  return Error::Ok;
}

BackendInterface* find_backend(const char* id) {
  Registry& r = registry();
  for (size_t i = 0; i < r.count; ++i) {
    if (std::strcmp(r.entries[i].id, id) == 0) return r.entries[i].backend;
  }
  return nullptr;
}

size_t registered_backend_count() { return registry().count; }
const char* registered_backend_id(size_t index) {
  return index < registry().count ? registry().entries[index].id : nullptr;
}

}  // namespace pteron
