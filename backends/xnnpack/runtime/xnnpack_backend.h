// The XNNPACK delegate's runtime half, registered as "PteronXnnpackBackend". Hosted targets
// only: it uses the C++ standard library, the heap and threads (never exceptions).
//
// Threads: each delegate runs on the process-wide pthreadpool for its thread count
// (runtime/threads, shared with the optimized kernels). The count is, first of all, what
// pteron::set_num_threads() (or its alias here) set; else the compile spec
// "threads" (ASCII decimal, e.g. b"2", or a 4/8-byte little-endian integer); else the
// hardware concurrency capped at 4. 1 runs on the caller's thread.
//
// XNN_EXTRA_BYTES: XNNPACK may read up to 16 bytes past the end of any buffer it reads. The
// memory planner is not asked to pad. Instead, for each external tensor at each call, the
// backend checks whether those 16 bytes stay in the same 4 KiB page as the tensor's last
// byte (memory protection is page-granular, so such a read cannot fault, and its value is
// never used). Where they would cross into the next page (about 16 in 4096 buffer ends), it
// copies the input into (or the output out of) an internal buffer with 16 spare bytes,
// allocated on first need and kept. Constants are padded by the payload format itself.
#pragma once

#include "runtime/backend/backend.h"

namespace pteron {
namespace xnnpack {

constexpr const char kBackendId[] = "PteronXnnpackBackend";

// pteron::set_num_threads (runtime/threads): the process-wide thread count, for delegates
// initialised from now on and the optimized kernels; 0 returns to the default (compile spec,
// else hardware concurrency capped at 4). Negative counts mean 0.
void set_num_threads(int threads);
// pteron::num_threads(): what a delegate initialised now without a compile spec would get.
int default_num_threads();

// The registered backend instance (what find_backend(kBackendId) returns).
BackendInterface& backend();

// Thread count a delegate handle runs with (0 for nullptr).
int delegate_num_threads(const DelegateHandle* handle);
// Times the handle staged a buffer to keep XNNPACK's over-read inside mapped memory.
size_t delegate_staged_copies(const DelegateHandle* handle);

}  // namespace xnnpack
}  // namespace pteron
