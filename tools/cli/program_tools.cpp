#include "tools/cli/program_tools.h"

#include <cstdio>
#include <cstring>

#include "tools/cli/commands.h"

namespace pteron::cli {

void throw_runtime_error(const std::string& context, Error error) {
  const std::string message = last_error_message()[0] ? last_error_message() : error_name(error);
  // Loader messages already start with the file name.
  if (message.rfind(context, 0) == 0) throw UserError(message);
  throw UserError(context + ": " + message);
}

std::unique_ptr<HostProgram> open_program(const std::string& path) {
  auto program = HostProgram::open(path.c_str());
  if (!program.ok()) throw_runtime_error(path, program.error());
  return std::move(program.get());
}

std::unique_ptr<HostMethod> load_method(const HostProgram& program, const std::string& path,
                                        const std::string& method) {
  auto loaded = HostMethod::load(program, method.c_str());
  if (!loaded.ok()) throw_runtime_error(path, loaded.error());
  const HostMethod& host = *loaded.get();
  if (!host.fallback_reason().empty()) {  // one line: which plan runs and why
    std::fprintf(stderr, "%s: running the CPU fallback plan '%s': %s\n", path.c_str(),
                 host.plan_name().c_str(), host.fallback_reason().c_str());
  }
  return std::move(loaded.get());
}

std::string shape_string(Span<const int32_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

NpyArray tensor_to_npy(const std::string& name, const Tensor& t) {
  NpyArray a;
  a.name = name;
  a.dtype = t.dtype();
  for (int32_t d = 0; d < t.dim(); ++d) a.shape.push_back(t.size(d));
  a.data.resize(t.nbytes());
  if (t.is_contiguous()) {
    if (t.nbytes()) std::memcpy(a.data.data(), t.const_data(), t.nbytes());
    return a;
  }
  // Gather a non-default dim order into C order.
  const size_t es = t.element_size();
  std::vector<int64_t> index(static_cast<size_t>(t.dim()), 0);
  for (int64_t linear = 0; linear < t.numel(); ++linear) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.dim(); ++d) offset += index[d] * t.stride(d);
    std::memcpy(a.data.data() + linear * es,
                static_cast<const uint8_t*>(t.const_data()) + offset * es, es);
    for (int32_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return a;
}

}  // namespace pteron::cli
