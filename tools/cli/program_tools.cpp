#include "tools/cli/program_tools.h"

#include <algorithm>
#include <cstring>
#include <random>

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

// Random data that is valid for any consumer: small non-negative ints (valid indices),
// standard-normal floats, random bools.
namespace {

NpyArray random_input(const TensorInfo& info, std::mt19937_64& rng, const std::string& name) {
  NpyArray a;
  a.name = name;
  a.dtype = info.dtype;
  for (int32_t s : info.sizes) a.shape.push_back(s);
  a.data.resize(info.nbytes);
  size_t n = info.nbytes / std::max<size_t>(1, element_size(info.dtype));
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> small(0, 9);
  for (size_t i = 0; i < n; ++i) {
    switch (info.dtype) {
      case ScalarType::Float: {
        float v = normal(rng);
        std::memcpy(&a.data[i * 4], &v, 4);
        break;
      }
      case ScalarType::Double: {
        double v = normal(rng);
        std::memcpy(&a.data[i * 8], &v, 8);
        break;
      }
      case ScalarType::Half: {
        uint16_t v = float_to_half(normal(rng));
        std::memcpy(&a.data[i * 2], &v, 2);
        break;
      }
      case ScalarType::BFloat16: {
        uint16_t v = float_to_bf16(normal(rng));
        std::memcpy(&a.data[i * 2], &v, 2);
        break;
      }
      case ScalarType::Long: {
        int64_t v = small(rng);
        std::memcpy(&a.data[i * 8], &v, 8);
        break;
      }
      case ScalarType::Int: {
        int32_t v = small(rng);
        std::memcpy(&a.data[i * 4], &v, 4);
        break;
      }
      case ScalarType::Bool:
        a.data[i] = static_cast<uint8_t>(small(rng) & 1);
        break;
      default:
        a.data[i * element_size(info.dtype)] = static_cast<uint8_t>(small(rng));
        break;
    }
  }
  return a;
}

}  // namespace

std::vector<NpyArray> gather_inputs(const InputSource& o, const MethodMeta& meta) {
  std::vector<NpyArray> inputs;
  if (!o.npz.empty()) {
    std::vector<NpyArray> file = read_npz(o.npz);
    // Named input_0, input_1, ... when present; otherwise in archive order.
    for (size_t i = 0; i < meta.num_inputs(); ++i) {
      auto it = std::find_if(file.begin(), file.end(), [&](const NpyArray& a) {
        return a.name == "input_" + std::to_string(i);
      });
      if (it == file.end() && file.size() == meta.num_inputs())
        it = file.begin() + static_cast<long>(i);
      if (it == file.end()) {
        throw UserError(o.npz + ": has no array 'input_" + std::to_string(i) +
                        "' (the method takes " + std::to_string(meta.num_inputs()) + " inputs)");
      }
      inputs.push_back(*it);
    }
    return inputs;
  }
  if (meta.num_inputs() > 0 && !o.random) {
    throw UserError(o.program + ": method '" + o.method + "' takes " +
                    std::to_string(meta.num_inputs()) +
                    " input(s); pass --inputs FILE.npz or --random-inputs");
  }
  std::mt19937_64 rng(o.seed);
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    auto info = meta.input_tensor(i);
    if (!info.ok()) throw_runtime_error(o.program, info.error());
    inputs.push_back(random_input(*info, rng, "input_" + std::to_string(i)));
  }
  return inputs;
}

void set_inputs(Method& method, std::vector<NpyArray>& inputs, const std::string& context) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    NpyArray& a = inputs[i];
    std::vector<int32_t> sizes;
    for (int64_t s : a.shape) sizes.push_back(static_cast<int32_t>(s));
    std::vector<uint8_t> order;
    for (size_t d = 0; d < a.shape.size(); ++d) order.push_back(static_cast<uint8_t>(d));
    std::vector<int32_t> strides(a.shape.size());
    Tensor t(a.dtype, static_cast<int32_t>(a.shape.size()), sizes.data(), order.data(),
             strides.data(), a.data.data());
    const Error e = method.set_input(i, t);  // copies: the tensor's views may go out of scope
    if (e != Error::Ok) throw_runtime_error(context, e);
  }
}

}  // namespace pteron::cli
