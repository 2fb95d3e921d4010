// pteron-run: runs a method of a .pte with nothing but the runtime, for targets the compiler
// and the full CLI are not built for (aarch64 boards: `make pteron-aarch64`).
//
//   pteron-run PROGRAM.pte [--method NAME] [--inputs IN.npz | --random-inputs]
//              [--outputs OUT.npz] [--iters N] [--threads N]
//
// Inputs come from IN.npz (input_0, input_1, ...) or are seeded random data; outputs go to
// OUT.npz (output_0, ...). Prints each output's dtype and shape and the median run time.
// Exit codes: 0 success, 1 the program failed (one line on stderr naming why), 2 usage error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "tools/run/npz_io.h"
#ifdef PTERON_RUN_THREADS
#include "runtime/threads/threadpool.h"
#endif

namespace pteron {
namespace {

struct Options {
  std::string program;
  std::string method = "forward";
  std::string inputs;
  std::string outputs;
  bool random_inputs = false;
  int iters = 1;
  int threads = 0;
};

constexpr const char* kUsage =
    "usage: pteron-run PROGRAM.pte [--method NAME] [--inputs IN.npz | --random-inputs]\n"
    "                  [--outputs OUT.npz] [--iters N] [--threads N]\n";

bool parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    auto int_value = [&](int* out, int min) {
      std::string text;
      if (!value(&text)) return false;
      char* end = nullptr;
      const long v = std::strtol(text.c_str(), &end, 10);
      if (*end != '\0' || v < min || v > 1000000) return false;
      *out = static_cast<int>(v);
      return true;
    };
    bool ok = true;
    if (arg == "--method")
      ok = value(&o->method);
    else if (arg == "--inputs")
      ok = value(&o->inputs);
    else if (arg == "--outputs")
      ok = value(&o->outputs);
    else if (arg == "--random-inputs")
      o->random_inputs = true;
    else if (arg == "--iters")
      ok = int_value(&o->iters, 1);
    else if (arg == "--threads")
      ok = int_value(&o->threads, 0);
    else if (arg == "-h" || arg == "--help")
      return std::fputs(kUsage, stdout), std::exit(0), true;
    else if (!arg.empty() && arg[0] != '-' && o->program.empty())
      o->program = arg;
    else
      ok = false;
    if (!ok)
      return std::fprintf(stderr, "pteron-run: bad argument '%s'\n%s", arg.c_str(), kUsage), false;
  }
  if (o->program.empty()) return std::fputs(kUsage, stderr), false;
  if (!o->inputs.empty() && o->random_inputs) {
    return std::fputs("pteron-run: --inputs and --random-inputs exclude each other\n", stderr),
           false;
  }
  return true;
}

int fail(const std::string& where) {
  std::fprintf(stderr, "pteron-run: error: %s: %s\n", where.c_str(), last_error_message());
  return 1;
}

// Seeded data every consumer accepts: small non-negative integers (valid indices), normal
// floats, random bools.
npz::Array random_array(const Tensor& like, std::mt19937_64& rng) {
  npz::Array a;
  a.dtype = like.dtype();
  a.shape.assign(like.sizes().begin(), like.sizes().end());
  a.data.resize(like.nbytes());
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 9);
  const size_t es = like.element_size();
  for (size_t i = 0; i < a.data.size() / std::max<size_t>(es, 1); ++i) {
    uint8_t* p = &a.data[i * es];
    switch (a.dtype) {
      case ScalarType::Float: {
        const float v = normal(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case ScalarType::Double: {
        const double v = normal(rng);
        std::memcpy(p, &v, 8);
        break;
      }
      case ScalarType::Half: {
        const uint16_t v = float_to_half(normal(rng));
        std::memcpy(p, &v, 2);
        break;
      }
      case ScalarType::BFloat16: {
        const uint16_t v = float_to_bf16(normal(rng));
        std::memcpy(p, &v, 2);
        break;
      }
      case ScalarType::Long: {
        const int64_t v = small(rng);
        std::memcpy(p, &v, 8);
        break;
      }
      case ScalarType::Int: {
        const int32_t v = small(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case ScalarType::Bool:
        *p = static_cast<uint8_t>(small(rng) & 1);
        break;
      default:
        *p = static_cast<uint8_t>(small(rng));
        break;
    }
  }
  return a;
}

// The tensor's elements in C order, whatever its dim order.
npz::Array to_array(const std::string& name, const Tensor& t) {
  npz::Array a;
  a.name = name;
  a.dtype = t.dtype();
  a.shape.assign(t.sizes().begin(), t.sizes().end());
  a.data.resize(t.nbytes());
  const size_t es = t.element_size();
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  const auto* base = static_cast<const uint8_t*>(t.const_data());
  for (int64_t linear = 0; linear < t.numel(); ++linear) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
    std::memcpy(a.data.data() + linear * es, base + offset * es, es);
    for (int32_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return a;
}

// Markers around each execute(): under qemu-aarch64, tools/qemu_icount counts the guest
// instructions between a call of the first and a call of the second, found by these names
// (bench/arm_icount.py). Out of line, and different, so the compiler neither inlines nor
// merges them; elsewhere they cost two calls per run.
static volatile int g_icount_marker;
extern "C" __attribute__((noinline)) void pteron_icount_begin() { g_icount_marker = 1; }
extern "C" __attribute__((noinline)) void pteron_icount_end() { g_icount_marker = 2; }

int run(const Options& o) {
#ifdef PTERON_RUN_THREADS
  set_num_threads(o.threads);
#endif
  auto program = HostProgram::open(o.program.c_str());
  if (!program.ok()) return fail(o.program);
  auto host = HostMethod::load(**program, o.method.c_str());
  if (!host.ok()) return fail(o.program + ": method '" + o.method + "'");
  Method& method = (*host)->method();

  std::vector<npz::Array> inputs;
  if (!o.inputs.empty()) {
    std::string error;
    std::vector<npz::Array> file = npz::read(o.inputs, &error);
    if (file.empty()) return std::fprintf(stderr, "pteron-run: error: %s\n", error.c_str()), 1;
    for (size_t i = 0; i < method.num_inputs(); ++i) {
      const std::string key = "input_" + std::to_string(i);
      auto it = std::find_if(file.begin(), file.end(),
                             [&](const npz::Array& a) { return a.name == key; });
      if (it == file.end()) {
        std::fprintf(stderr,
                     "pteron-run: error: %s has no array '%s' (the method takes %zu inputs)\n",
                     o.inputs.c_str(), key.c_str(), method.num_inputs());
        return 1;
      }
      inputs.push_back(std::move(*it));
    }
  } else if (method.num_inputs() > 0 && !o.random_inputs) {
    std::fprintf(
        stderr,
        "pteron-run: error: method '%s' takes %zu input(s): pass --inputs or --random-inputs\n",
        o.method.c_str(), method.num_inputs());
    return 1;
  } else {
    std::mt19937_64 rng(0);
    for (size_t i = 0; i < method.num_inputs(); ++i) {
      const EValue& in = method.input(i);
      if (in.tag != Tag::Tensor) {
        std::fprintf(stderr, "pteron-run: error: input %zu is not a tensor\n", i);
        return 1;
      }
      inputs.push_back(random_array(*in.tensor, rng));
    }
  }
  // Inputs are copied in before every run: the memory plan may reuse an input's bytes once the
  // input is dead, so a second execute() would read whatever was planned there since.
  std::vector<std::vector<uint8_t>> orders(inputs.size());
  std::vector<std::vector<int32_t>> strides(inputs.size());
  auto set_inputs = [&]() {
    for (size_t i = 0; i < inputs.size(); ++i) {
      npz::Array& a = inputs[i];
      orders[i].resize(a.shape.size());
      for (size_t d = 0; d < a.shape.size(); ++d) orders[i][d] = static_cast<uint8_t>(d);
      strides[i].resize(a.shape.size());
      Tensor t(a.dtype, static_cast<int32_t>(a.shape.size()), a.shape.data(), orders[i].data(),
               strides[i].data(), a.data.data());
      if (method.set_input(i, t) != Error::Ok) return fail("input " + std::to_string(i)), false;
    }
    return true;
  };

  std::vector<double> times_ms;
  for (int it = 0; it < o.iters; ++it) {
    if (!set_inputs()) return 1;
    const auto start = std::chrono::steady_clock::now();
    pteron_icount_begin();
    const Error executed = method.execute();
    pteron_icount_end();
    if (executed != Error::Ok) return fail(o.program);
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times_ms.begin(), times_ms.end());

  std::printf("%s: method '%s', %zu instruction(s)\n", o.program.c_str(), o.method.c_str(),
              method.num_instructions());
  std::vector<npz::Array> outputs;
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const EValue& v = method.output(i);
    if (v.tag != Tag::Tensor) {
      std::printf("  output %zu: %s\n", i, tag_name(v.tag));
      continue;
    }
    outputs.push_back(to_array("output_" + std::to_string(i), *v.tensor));
    std::string shape;
    for (int32_t s : outputs.back().shape) shape += (shape.empty() ? "" : ", ") + std::to_string(s);
    std::printf("  output %zu: %s [%s]\n", i, scalar_type_name(v.tensor->dtype()), shape.c_str());
  }
  std::printf("  time: median %.3f ms, min %.3f ms over %zu run(s)\n",
              times_ms[times_ms.size() / 2], times_ms.front(), times_ms.size());
  if (!o.outputs.empty()) {
    std::string error;
    if (!npz::write(o.outputs, outputs, &error)) {
      return std::fprintf(stderr, "pteron-run: error: %s\n", error.c_str()), 1;
    }
    std::printf("  outputs written to %s\n", o.outputs.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace pteron

int main(int argc, char** argv) {
  pteron::Options options;
  if (!pteron::parse_args(argc, argv, &options)) return 2;
  return pteron::run(options);
}
