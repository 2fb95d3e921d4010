// Backends (delegates) run the regions a compiler partitioner gave them, from a payload whose
// format only they know. One registry maps a program's backend id to an implementation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron {

struct CompileSpecView {
  const char* key;
  Span<const uint8_t> value;
};

class Program;

struct BackendInitContext {
  MemoryAllocator* method_allocator;  // load-time memory that lives as long as the method
  const char* method_name;
  // The program the delegate belongs to, for payloads whose weights are its named data
  // (ExecuTorch's XNNPACK payloads); may be null (tools initialising a payload on its own).
  const Program* program = nullptr;
};

class ExecutionObserver;
struct BackendExecuteContext {
  MemoryAllocator* scratch;  // reset before the call
  int delegate_index;
  // When tracing: report the backend's own nodes with begin/end_delegate_event. May be null.
  ExecutionObserver* observer = nullptr;
};

// Opaque per-region state a backend returns from init().
using DelegateHandle = void;

class BackendInterface {
 public:
  virtual ~BackendInterface() = default;
  // False when the device or library this backend needs is absent (the method then fails to
  // load with a message naming the backend).
  virtual bool is_available() const = 0;
  // `processed` stays valid for the lifetime of the program.
  virtual Result<DelegateHandle*> init(BackendInitContext& context, Span<const uint8_t> processed,
                                       Span<const CompileSpecView> compile_specs) = 0;
  // `args` are the DelegateCall's values: region inputs, then region outputs.
  virtual Error execute(BackendExecuteContext& context, DelegateHandle* handle,
                        Span<EValue*> args) = 0;
  virtual void destroy(DelegateHandle* handle) {}
};

// `id` must outlive the registry (a string literal). Re-registering an id replaces it.
Error register_backend(const char* id, BackendInterface* backend);
BackendInterface* find_backend(const char* id);
size_t registered_backend_count();
const char* registered_backend_id(size_t index);

}  // namespace pteron

#define PTERON_BACKEND_CONCAT_(a, b) a##b
#define PTERON_BACKEND_CONCAT(a, b) PTERON_BACKEND_CONCAT_(a, b)
// Registers a backend instance at start-up.
#define PTERON_REGISTER_BACKEND(id, instance)                                               \
  [[maybe_unused]] static const bool PTERON_BACKEND_CONCAT(pteron_backend_reg_, __LINE__) = \
      ::pteron::register_backend(id, &(instance)) == ::pteron::Error::Ok
