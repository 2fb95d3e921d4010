#include "runtime/host/host_constant_cache.h"

#include <functional>
#include <shared_mutex>
#include <vector>

namespace pteron {
namespace {

struct Registered {
  uintptr_t begin, end;
  HostConstantCache* cache;
};

std::shared_mutex& registry_mutex() {
  static std::shared_mutex m;
  return m;
}

std::vector<Registered>& registry() {
  static std::vector<Registered> r;
  return r;
}

}  // namespace

size_t HostConstantCache::KeyHash::operator()(const ConstantKey& k) const {
  size_t h = std::hash<const void*>()(k.source) ^ (static_cast<size_t>(k.kind) << 1);
  for (int64_t p : k.params) h = h * 1099511628211ull ^ static_cast<size_t>(p);
  return h;
}

bool HostConstantCache::KeyEqual::operator()(const ConstantKey& a, const ConstantKey& b) const {
  if (a.source != b.source || a.kind != b.kind) return false;
  for (size_t i = 0; i < sizeof(a.params) / sizeof(a.params[0]); ++i)
    if (a.params[i] != b.params[i]) return false;
  return true;
}

HostConstantCache::~HostConstantCache() {
  std::unique_lock<std::shared_mutex> lock(registry_mutex());
  auto& r = registry();
  for (size_t i = r.size(); i-- > 0;)
    if (r[i].cache == this) r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
}

void HostConstantCache::register_memory(Span<const uint8_t> bytes) {
  if (bytes.size() == 0) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(bytes.data());
  std::unique_lock<std::shared_mutex> lock(registry_mutex());
  registry().push_back({begin, begin + bytes.size(), this});
}

ConstantCache* constant_cache_for(const void* data, size_t nbytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  if (data == nullptr || nbytes == 0 || begin + nbytes < begin) return nullptr;
  std::shared_lock<std::shared_mutex> lock(registry_mutex());
  for (const Registered& r : registry())
    if (begin >= r.begin && begin + nbytes <= r.end) return r.cache;
  return nullptr;
}

const void* HostConstantCache::get_or_derive(const ConstantKey& key, size_t bytes,
                                             ConstantDeriveFn derive, const void* context) {
  // One lock around lookup and derivation: two methods of a program running the same weight
  // for the first time at once derive it once (the second waits, then finds it).
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = blocks_.find(key);
  if (found != blocks_.end()) return found->second.get();
  void* block = nullptr;
  if (posix_memalign(&block, 64, bytes == 0 ? 64 : bytes) != 0) return nullptr;
  derive(context, block);
  blocks_.emplace(key, std::unique_ptr<void, Free>(block));
  bytes_ += bytes;
  ++derivations_;
  return block;
}

size_t HostConstantCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t HostConstantCache::blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return blocks_.size();
}

uint64_t HostConstantCache::derivations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return derivations_;
}

}  // namespace pteron
