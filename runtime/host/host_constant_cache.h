// The host's ConstantCache (runtime/kernel/constant_cache.h): heap blocks, one per key, owned by
// a HostProgram, so every method of the program shares them and they are freed with it.
//
// How a kernel finds it: the HostProgram registers its loaded bytes (the flatbuffer and the
// constant segment: immutable while it lives) with its cache, and constant_cache_for(data,
// bytes) returns the cache whose program holds those bytes, nullptr for anything else
// (activations, inputs, scratch, a program loaded with the cache off). A pointer into a loaded
// program is a constant whatever instruction reads it, so neither KernelContext nor the kernel
// registration changes, and views of a constant are found as well (their key differs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/core/span.h"
#include "runtime/kernel/constant_cache.h"

namespace pteron {

class HostConstantCache final : public ConstantCache {
 public:
  HostConstantCache() = default;
  HostConstantCache(const HostConstantCache&) = delete;
  HostConstantCache& operator=(const HostConstantCache&) = delete;
  ~HostConstantCache() override;  // unregisters its memory

  const void* get_or_derive(const ConstantKey& key, size_t source_bytes, size_t bytes,
                            ConstantDeriveFn derive, const void* context) override;
  const void* find(const ConstantKey& key) override;
  const void* streaming_copy(const void* source, size_t bytes) override;
  const void* find_streaming_copy(const void* source, size_t bytes) override;

  // Makes constant_cache_for() answer this cache for pointers into `bytes` (a loaded program's
  // immutable memory) until the cache is destroyed. `file_mapped`: `bytes` is a read-only
  // private mapping of the program's file, whose pages the cache releases once derived from
  // (the OS reads them back from the file if anything touches them again).
  void register_memory(Span<const uint8_t> bytes, bool file_mapped);

  // Bytes of derived data held (`packed_constant_bytes` in `pteron run/bench --json`).
  size_t bytes() const;
  // Blocks held, and blocks derived so far (a second call of a kernel derives none: tests).
  size_t blocks() const;
  uint64_t derivations() const;

 private:
  struct KeyHash {
    size_t operator()(const ConstantKey& k) const;
  };
  struct KeyEqual {
    bool operator()(const ConstantKey& a, const ConstantKey& b) const;
  };
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  // A block of `bytes` (64-byte aligned) carved from the slabs below.
  void* allocate_block(size_t bytes);
  // Records a derived block under `key` (mutex_ held) and returns it.
  const void* keep(const ConstantKey& key, void* block, size_t bytes);
  // Releases the whole pages inside [source, source + nbytes) when they lie in file-mapped
  // memory registered with this cache.
  void release_source_pages(const void* source, size_t nbytes) const;
  bool is_file_mapped(const void* source, size_t nbytes) const;

  mutable std::mutex mutex_;
  std::vector<std::pair<uintptr_t, uintptr_t>> file_mapped_;  // registered [begin, end)
  std::unordered_map<ConstantKey, const void*, KeyHash, KeyEqual> blocks_;
  // Derived blocks live in slabs of at least kSlabBytes, 2 MiB aligned and advised to use
  // transparent huge pages, and are carved one after another (a cache frees nothing before it
  // dies). A matrix-vector product streams a packed weight once per call: in 4 KiB pages two
  // threads read no faster than one (TLB misses: 43 vs 83 GB/s here), and per-block huge pages
  // would leave the blocks under 2 MiB (a GQA model's key/value weights) and every block's tail
  // in small pages.
  std::vector<std::unique_ptr<void, Free>> slabs_;
  char* slab_next_ = nullptr;
  size_t slab_left_ = 0;
  size_t bytes_ = 0;
  uint64_t derivations_ = 0;
};

// The cache of the loaded program whose registered memory holds [data, data + nbytes), or
// nullptr. Cheap (a shared lock and a scan of the loaded programs' ranges): kernels ask on
// every call.
ConstantCache* constant_cache_for(const void* data, size_t nbytes);

}  // namespace pteron
