#include "tools/cli/method_inputs.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "tools/cli/commands.h"
#include "tools/cli/program_tools.h"

namespace pteron::cli {
namespace {

// Random data that is valid for any consumer: small non-negative ints (valid indices),
// standard-normal floats, random bools.
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
  if (!o.inputs.empty()) {
    std::vector<NpyArray> file = read_npz(o.inputs);
    // Named input_0, input_1, ... when present; otherwise in archive order.
    for (size_t i = 0; i < meta.num_inputs(); ++i) {
      auto it = std::find_if(file.begin(), file.end(), [&](const NpyArray& a) {
        return a.name == "input_" + std::to_string(i);
      });
      if (it == file.end() && file.size() == meta.num_inputs())
        it = file.begin() + static_cast<long>(i);
      if (it == file.end()) {
        throw UserError(o.inputs + ": has no array 'input_" + std::to_string(i) +
                        "' (the method takes " + std::to_string(meta.num_inputs()) + " inputs)");
      }
      inputs.push_back(*it);
    }
    return inputs;
  }
  if (meta.num_inputs() > 0 && !o.random_inputs) {
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

void BoundInputs::bind(Method& method, std::vector<NpyArray>& inputs, const std::string& context) {
  sizes_.assign(inputs.size(), {});
  orders_.assign(inputs.size(), {});
  strides_.assign(inputs.size(), {});
  for (size_t i = 0; i < inputs.size(); ++i) {
    NpyArray& a = inputs[i];
    for (int64_t s : a.shape) sizes_[i].push_back(static_cast<int32_t>(s));
    for (size_t d = 0; d < a.shape.size(); ++d) orders_[i].push_back(static_cast<uint8_t>(d));
    strides_[i].resize(a.shape.size());
    Tensor t(a.dtype, static_cast<int32_t>(a.shape.size()), sizes_[i].data(), orders_[i].data(),
             strides_[i].data(), a.data.data());
    const Error e = method.set_input(i, t);
    if (e != Error::Ok) throw_runtime_error(context, e);
  }
}

}  // namespace pteron::cli
