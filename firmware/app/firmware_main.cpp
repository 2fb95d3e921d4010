// The firmware's main: loads the program from flash into static arenas, reads the inputs
// (from a host file named on the QEMU command line, or built in), runs one inference between
// the instruction-count markers, writes the outputs to a host file and reports the measured
// stack high-water mark and memory use on one line the host tools parse:
//   pteron-firmware: ok stack=<bytes> static_ram=<bytes> method=<bytes> scratch=<bytes> ...
// Command line (QEMU -append): [INPUTS.bin|-] [OUTPUTS.bin]; inputs and outputs are the
// tensors' bytes back to back in method order.
#include <stddef.h>
#include <string.h>

#include "board.h"
#include "firmware/app/firmware_config.h"
#include "runtime/executor/method.h"
#include "runtime/executor/program.h"
#include "runtime/loader/data_loader.h"
#include "semihosting.h"

// newlib's (librdimon's) break and the linker script's end of static data, where the heap starts.
extern "C" void* _sbrk(ptrdiff_t increment);
extern "C" char end[];

namespace pteron::firmware {
namespace {

// The report and error lines go out piece by piece, without printf: newlib's stdio would set up
// state on the heap for them (about 440 bytes of RAM the inference never needs).
int report_error(const char* stage, Error e) {
  for (const char* piece :
       {"pteron-firmware: error ", stage, ": ", error_name(e), ": ", last_error_message(), "\n"}) {
    sh_write0(piece);
  }
  return 1;
}

// " key=value" on the console.
void report_value(const char* key, unsigned long value) {
  char digits[12];
  char* p = digits + sizeof(digits);
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  sh_write0(" ");
  sh_write0(key);
  sh_write0("=");
  sh_write0(p);
}

// Splits the semihosting command line (program name first) into at most `max` words.
size_t command_words(char* line, char** words, size_t max) {
  size_t n = 0;
  for (char* p = line; *p != '\0' && n < max;) {
    while (*p == ' ') *p++ = '\0';
    if (*p == '\0') break;
    words[n++] = p;
    while (*p != '\0' && *p != ' ') ++p;
  }
  return n;
}

Error read_inputs(Method& method, const char* path) {
  const uint8_t* baked = config.baked_inputs;
  int handle = -1;
  if (baked == nullptr) {
    if (path == nullptr)
      return fail(Error::InvalidArgument, "no input file given and none built in");
    handle = sh_open(path, "rb");
    if (handle < 0) return fail(Error::AccessFailed, "cannot open input file %s", path);
  }
  size_t offset = 0;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    EValue& v = method.input(i);
    if (v.tag != Tag::Tensor) continue;
    Tensor& t = *v.tensor;
    if (t.const_data() == nullptr) {
      return fail(Error::NotSupported, "input %zu is not planned into an arena (plan_inputs)", i);
    }
    const size_t n = t.nbytes();
    if (baked != nullptr) {
      if (offset + n > config.baked_inputs_size)
        return fail(Error::OutOfRange, "built-in inputs too short");
      memcpy(t.mutable_data(), baked + offset, n);
    } else if (sh_read(handle, t.mutable_data(), n) != static_cast<long>(n)) {
      sh_close(handle);
      return fail(Error::AccessFailed, "input file %s is shorter than input %zu needs", path, i);
    }
    offset += n;
  }
  if (handle >= 0) sh_close(handle);
  return Error::Ok;
}

Error write_outputs(const Method& method, const char* path) {
  const int handle = sh_open(path, "wb");
  if (handle < 0) return fail(Error::AccessFailed, "cannot create output file %s", path);
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const EValue& v = method.output(i);
    if (v.tag != Tag::Tensor) continue;
    if (sh_write(handle, v.tensor->const_data(), v.tensor->nbytes()) != 0) {
      sh_close(handle);
      return fail(Error::AccessFailed, "cannot write output %zu to %s", i, path);
    }
  }
  sh_close(handle);
  return Error::Ok;
}

int run() {
  for (size_t i = 0; i < config.num_kernels; ++i) {
    const KernelEntry* k = config.kernels[i];
    if (!register_kernel(k->name, k->fn, k->library, k->signature))
      return report_error("register", Error::OutOfMemory);
  }
  BufferDataLoader loader(config.program, config.program_size);
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return report_error("program", program.error());

  HierarchicalAllocator planned(Span<Span<uint8_t>>(config.arenas, config.num_arenas));
  MemoryAllocator method_allocator(config.method_memory, config.method_memory_size);
  MemoryAllocator scratch(config.scratch, config.scratch_size);
  MemoryManager memory{&method_allocator, &planned, &scratch};
  Result<Method> method = Method::load(*program, config.method, &memory);
  if (!method.ok()) return report_error("load", method.error());

  static char command_line[256];  // two absolute paths
  char* words[4] = {};
  size_t n_words = 0;
  if (sh_command_line(command_line, sizeof(command_line)) >= 0) {
    n_words = command_words(command_line, words, 4);
  }
  const char* input_path = n_words > 1 && strcmp(words[1], "-") != 0 ? words[1] : nullptr;
  const char* output_path = n_words > 2 ? words[2] : nullptr;

  Error e = read_inputs(*method, input_path);
  if (e != Error::Ok) return report_error("inputs", e);
  board_icount_begin();
  e = method->execute();
  board_icount_end();
  if (e != Error::Ok) return report_error("execute", e);
  if (output_path != nullptr) {
    e = write_outputs(*method, output_path);
    if (e != Error::Ok) return report_error("outputs", e);
  }

  // newlib's heap in use: how far sbrk moved the break past the end of static data (0: nothing
  // called malloc), so `pteron firmware --trim` can reserve just that.
  const unsigned long heap = static_cast<unsigned long>(static_cast<char*>(_sbrk(0)) - end);
  size_t arena_bytes = 0;
  for (size_t i = 1; i < config.num_arenas; ++i) arena_bytes += config.arenas[i].size();
  sh_write0("pteron-firmware: ok");
  report_value("stack", board_stack_high_water());
  report_value("stack_reserved", board_stack_size());
  report_value("static_ram", board_static_ram_bytes());
  report_value("arenas", arena_bytes);
  report_value("method", method_allocator.used());
  report_value("scratch", scratch.peak());
  report_value("kernels", config.num_kernels);
  report_value("heap", heap);
  sh_write0("\n");
  return 0;
}

}  // namespace
}  // namespace pteron::firmware

// The firmware writes over semihosting itself (sh_*) and the runtime formats its messages into
// its own buffer: newlib's stdio is never used, so it is not set up (board.h).
extern "C" void board_stdio_init(void) {}

int main() { return pteron::firmware::run(); }
