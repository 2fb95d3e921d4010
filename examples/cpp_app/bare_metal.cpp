// The bare-metal form of main.cpp: no files, no heap. The program is a byte array in flash (or
// received at run time) and every byte of memory is a static buffer the application chose; the
// board code (startup, UART/semihosting; firmware/platform/ for the MPS3 AN547) calls this.
#include <stddef.h>
#include <string.h>

#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/loader/data_loader.h"

using namespace pteron;

namespace {
alignas(16) uint8_t arena[64 * 1024];          // the planned activations (one arena here)
alignas(16) uint8_t method_memory[16 * 1024];  // values, tensors, kernel and delegate state
alignas(16) uint8_t scratch[16 * 1024];        // per-instruction scratch (im2col, packing)
}  // namespace

// Runs `forward` of the program in `pte` on `input` (bytes of input 0) into `output` (bytes of
// output 0). Returns Error::Ok, or the error; last_error_message() says what went wrong.
extern "C" int cpp_app_run(const void* pte, size_t pte_size, const void* input, size_t input_size,
                           void* output, size_t output_size) {
  BufferDataLoader loader(pte, pte_size);
  Result<Program> program = Program::load(&loader);  // verifies every table and offset
  if (!program.ok()) return static_cast<int>(program.error());
  Span<uint8_t> arenas[] = {Span<uint8_t>(arena, sizeof(arena))};
  HierarchicalAllocator planned(Span<Span<uint8_t>>(arenas, 1));
  MemoryAllocator method_allocator(method_memory, sizeof(method_memory));
  MemoryAllocator scratch_allocator(scratch, sizeof(scratch));
  MemoryManager memory{&method_allocator, &planned, &scratch_allocator};
  Result<Method> method = Method::load(*program, "forward", &memory);
  if (!method.ok()) return static_cast<int>(method.error());
  Tensor* in = method->input(0).is_tensor() ? method->input(0).tensor : nullptr;
  if (in == nullptr || in->nbytes() != input_size || in->mutable_data() == nullptr)
    return static_cast<int>(fail(Error::InvalidArgument, "cpp_app: input 0 needs %u bytes",
                                 static_cast<unsigned>(in != nullptr ? in->nbytes() : 0)));
  memcpy(in->mutable_data(), input, input_size);  // inputs are planned into the arena
  const Error e = method->execute();
  if (e != Error::Ok) return static_cast<int>(e);
  const EValue& out = method->output(0);
  if (!out.is_tensor() || out.tensor->nbytes() > output_size)
    return static_cast<int>(fail(Error::InvalidArgument, "cpp_app: output 0 does not fit"));
  memcpy(output, out.tensor->const_data(), out.tensor->nbytes());
  return 0;
}
