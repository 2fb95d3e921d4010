// Turns a verified payload into a ready XNNPACK runtime, and describes its external values so
// the backend can bind DelegateCall arguments to them.
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "backends/xnnpack/runtime/payload_format.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace pteron {
namespace xnnpack {

// One tensor crossing the delegate boundary.
struct ExternalValue {
  uint32_t id;         // XNNPACK value id (= payload tensor id)
  uint32_t arg_index;  // DelegateCall argument
  bool is_input;
  fb::DataType dtype;
  uint32_t rank;
  uint32_t dims[kMaxDims];      // XNNPACK's (memory) order
  uint8_t dim_order[kMaxDims];  // dims[i] == pteron sizes[dim_order[i]]
  size_t nbytes;
};

// Finds the bytes of a constant the payload names (Tensor.constant_key: the program's named
// data). The bytes must stay valid as long as the CompiledGraph. An error (with its message
// recorded) when the key is absent.
using NamedDataResolver = std::function<Error(const char* key, Span<const uint8_t>* bytes)>;

// Owns an XNNPACK runtime made from one payload.
class CompiledGraph {
 public:
  CompiledGraph() = default;
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  // Verifies `payload` and creates the runtime on `threadpool` (nullptr: caller's thread).
  // Reads constants in place when the payload is 16-byte aligned, else from an aligned copy;
  // either way `payload` must outlive this object. Named constants come from `resolve` (read
  // in place when 16-byte aligned and the over-read cannot fault, else copied); without one a
  // payload naming a constant is refused. Calls xnn_initialize.
  Error init(Span<const uint8_t> payload, pthreadpool_t threadpool, bool fp16_hint_allowed,
             const NamedDataResolver& resolve = nullptr);

  xnn_runtime_t runtime() const { return runtime_; }
  uint32_t num_args() const { return num_args_; }
  const std::vector<ExternalValue>& externals() const { return externals_; }

 private:
  // Each tensor's constant bytes (null for values) into `data`.
  Error locate_constants(const fb::Payload& p, const uint8_t* blob,
                         const NamedDataResolver& resolve, std::vector<const void*>* data);
  Error define_subgraph(const fb::Payload& p, const std::vector<const void*>& data,
                        xnn_subgraph_t subgraph);

  xnn_runtime_t runtime_ = nullptr;
  void* aligned_copy_ = nullptr;
  std::vector<void*> constant_copies_;  // named constants that could not be read in place
  uint32_t num_args_ = 0;
  std::vector<ExternalValue> externals_;
};

// Name of an xnn_status ("invalid_parameter", ...).
const char* status_name(xnn_status status);

// Initialises XNNPACK once per process; false when this CPU or build cannot run it.
bool ensure_xnnpack_initialized();

// Verify, define and create the runtime without running it: the answer to "would this
// runtime load this payload?". Ok, or the error with its message recorded.
Error dry_run_payload(Span<const uint8_t> payload);

}  // namespace xnnpack
}  // namespace pteron
