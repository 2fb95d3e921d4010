#include "runtime/host/host_constant_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
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

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kSlabBytes = size_t{32} << 20;

size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

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

void HostConstantCache::register_memory(Span<const uint8_t> bytes, bool file_mapped) {
  if (bytes.size() == 0) return;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(bytes.data());
  if (file_mapped) {
    std::lock_guard<std::mutex> lock(mutex_);
    file_mapped_.emplace_back(begin, begin + bytes.size());
  }
  std::unique_lock<std::shared_mutex> lock(registry_mutex());
  registry().push_back({begin, begin + bytes.size(), this});
}

bool HostConstantCache::is_file_mapped(const void* source, size_t nbytes) const {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(source);
  for (const auto& [lo, hi] : file_mapped_)
    if (begin >= lo && begin + nbytes <= hi && begin + nbytes >= begin) return true;
  return false;
}

void HostConstantCache::release_source_pages(const void* source, size_t nbytes) const {
  if (nbytes == 0 || !is_file_mapped(source, nbytes)) return;
  // Only pages wholly inside the constant: a neighbour's bytes stay where they are.
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(source);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + nbytes) / page * page;
  // A private, never written file mapping: MADV_DONTNEED drops the pages and a later read
  // faults the file's bytes back in, the same bytes the verifier saw (as after the OS evicts
  // clean pages under memory pressure). Failure only leaves them resident.
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

ConstantCache* constant_cache_for(const void* data, size_t nbytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  if (data == nullptr || nbytes == 0 || begin + nbytes < begin) return nullptr;
  std::shared_lock<std::shared_mutex> lock(registry_mutex());
  for (const Registered& r : registry())
    if (begin >= r.begin && begin + nbytes <= r.end) return r.cache;
  return nullptr;
}

const void* HostConstantCache::get_or_derive(const ConstantKey& key, size_t source_bytes,
                                             size_t bytes, ConstantDeriveFn derive,
                                             const void* context) {
  // One lock around lookup and derivation: two methods of a program running the same weight
  // for the first time at once derive it once (the second waits, then finds it).
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = blocks_.find(key);
  if (found != blocks_.end()) return found->second;
  void* block = allocate_block(bytes);
  if (block == nullptr) return nullptr;
  derive(context, block);
  release_source_pages(key.source, source_bytes);
  return keep(key, block, bytes);
}

const void* HostConstantCache::keep(const ConstantKey& key, void* block, size_t bytes) {
  blocks_.emplace(key, block);
  bytes_ += bytes;
  ++derivations_;
  return block;
}

const void* HostConstantCache::find(const ConstantKey& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = blocks_.find(key);
  return found != blocks_.end() ? found->second : nullptr;
}

void* HostConstantCache::allocate_block(size_t bytes) {
  const size_t need = round_up(bytes == 0 ? 64 : bytes, 64);
  if (need > slab_left_) {
    // A new slab: the rest of the current one stays unused (never touched, so never resident).
    const size_t slab = round_up(need > kSlabBytes ? need : kSlabBytes, kHugePage);
    void* memory = nullptr;
    if (posix_memalign(&memory, kHugePage, slab) != 0) return nullptr;
#if defined(MADV_HUGEPAGE)
    // Advice only: where the kernel has no huge pages to give, the slab stays in small pages.
    (void)madvise(memory, slab, MADV_HUGEPAGE);
#endif
    slabs_.emplace_back(memory);
    slab_next_ = static_cast<char*>(memory);
    slab_left_ = slab;
  }
  void* block = slab_next_;
  slab_next_ += need;
  slab_left_ -= need;
  return block;
}

namespace {
ConstantKey streaming_copy_key(const void* source, size_t bytes) {
  constexpr uint32_t kStreamingCopyKind = 0x434f5059;  // "COPY"
  return ConstantKey{source, kStreamingCopyKind, {static_cast<int64_t>(bytes)}};
}
}  // namespace

const void* HostConstantCache::find_streaming_copy(const void* source, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = blocks_.find(streaming_copy_key(source, bytes));
  return found != blocks_.end() ? found->second : nullptr;
}

const void* HostConstantCache::streaming_copy(const void* source, size_t bytes) {
  constexpr size_t kChunk = size_t{2} << 20;
  std::lock_guard<std::mutex> lock(mutex_);
  if (bytes == 0 || !is_file_mapped(source, bytes)) return source;
  const ConstantKey key = streaming_copy_key(source, bytes);
  auto found = blocks_.find(key);
  if (found != blocks_.end()) return found->second;
  void* block = allocate_block(bytes);
  if (block == nullptr) return source;
  // Chunk by chunk, each chunk's file pages given back once copied: at most a chunk of the
  // constant is resident twice.
  const char* from = static_cast<const char*>(source);
  for (size_t done = 0; done < bytes; done += kChunk) {
    const size_t n = bytes - done < kChunk ? bytes - done : kChunk;
    std::memcpy(static_cast<char*>(block) + done, from + done, n);
    release_source_pages(from + done, n);
  }
  release_source_pages(source, bytes);  // the pages that straddle two chunks
  return keep(key, block, bytes);
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
