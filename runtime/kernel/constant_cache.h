// Data a kernel derives from a program constant once and then reuses on every call: weights
// repacked into a GEMM micro-kernel's panel layout (kernels/optimized/util/sgemm.cpp).
// XNNPACK packs its weights when an operator is created, in a weights cache looked up by the
// weights' address; ExecuTorch's optimized kernels repack per call. Here the kernel derives on
// its first call and the loaded program keeps the result for its life, so a weight shared by
// several instructions or methods is derived once.
//
// The runtime never trusts a file for it: the derived bytes are computed by the kernel from
// the loaded program's own (verified, immutable) bytes, never read from the program, and the
// key holds everything they depend on besides those bytes (sizes, strides, the micro-kernel),
// so two calls get the same block only when they would derive the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pteron {

struct ConstantKey {
  const void* source = nullptr;  // the constant's data (the program's constant memory)
  uint32_t kind = 0;             // what is derived: a tag of the deriving code's own
  int64_t params[7] = {};        // what else the derived bytes depend on (sizes, strides, layout)
};

// Writes the derived bytes of one key into `dst` (64-byte aligned, the size asked for).
using ConstantDeriveFn = void (*)(const void* context, void* dst);

class ConstantCache {
 public:
  virtual ~ConstantCache() = default;
  // The block for `key`: on the first request `bytes` bytes are allocated and filled by
  // derive(context, block); later requests return the same block (its pointer stays valid
  // while the cache lives). nullptr when the cache cannot hold it (out of memory): the kernel
  // then works from the constant as it is. Safe to call from several threads; derive may use
  // the thread pool. `source_bytes` is the extent of the constant derived from (from
  // key.source): after deriving, a cache may give that memory's pages back to the OS where
  // reading them again brings the same bytes back (a program mapped from its file), so the
  // derived copy replaces the constant in memory instead of doubling it.
  virtual const void* get_or_derive(const ConstantKey& key, size_t source_bytes, size_t bytes,
                                    ConstantDeriveFn derive, const void* context) = 0;
  // The block already derived for `key`, or nullptr; derives nothing. For a kernel that can
  // work from either form and prefers the derived one only once it exists (the SGEMM's
  // matrix-vector path reads a weight's panels when a matrix product packed them, since the
  // constant's own pages may have been given back).
  virtual const void* find(const ConstantKey& key) = 0;
  // The constant's `bytes` from `source` as a kernel that streams all of them on every call
  // (a matrix-vector product's weights) reads them fastest: the host copies a constant of a
  // program mapped from its file into memory in huge pages once, giving the file's pages back
  // as it goes (so the copy replaces them rather than doubling them, even at its peak), and
  // returns `source` itself for anything else. Safe to call from several threads.
  virtual const void* streaming_copy(const void* source, size_t bytes) {
    (void)bytes;
    return source;
  }
  // The copy streaming_copy(source, bytes) made, or nullptr when it made none; copies nothing.
  // A matrix product reads a weight that row vectors streamed first from there and packs it per
  // call: packing it into the cache too would hold the weight twice for the program's life.
  virtual const void* find_streaming_copy(const void* source, size_t bytes) {
    (void)source;
    (void)bytes;
    return nullptr;
  }
};

}  // namespace pteron
