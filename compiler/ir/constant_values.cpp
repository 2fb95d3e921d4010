#include "compiler/ir/constant_values.h"

#include <cstring>
#include <type_traits>

namespace pteron::compiler::ir {
namespace {

template <typename T>
double load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return static_cast<double>(x);
}

// The reader for one element of `dtype`, or nullptr for a dtype not read as numbers.
double (*element_reader(ScalarType dtype))(const uint8_t*) {
  switch (dtype) {
    case ScalarType::Float:
      return load<float>;
    case ScalarType::Double:
      return load<double>;
    case ScalarType::Char:
      return load<int8_t>;
    case ScalarType::Byte:
      return load<uint8_t>;
    case ScalarType::Short:
      return load<int16_t>;
    case ScalarType::Int:
      return load<int32_t>;
    case ScalarType::Long:
      return load<int64_t>;
    case ScalarType::Bool:
      return [](const uint8_t* p) { return *p != 0 ? 1.0 : 0.0; };
    default:
      return nullptr;
  }
}

}  // namespace

template <typename T>
std::optional<std::vector<T>> constant_values(const Value& v, std::string* why) {
  const auto fail = [&](const std::string& reason) -> std::optional<std::vector<T>> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  if (!v.is_constant() || !v.constant) return fail("'" + v.name + "' is not a constant");
  const TensorSpec& s = v.spec;
  if (v.constant->bytes.size() < s.nbytes()) return fail("constant '" + v.name + "' is short");
  const auto read = element_reader(s.dtype);
  if (read == nullptr) return fail("constant '" + v.name + "' has dtype " + dtype_name(s.dtype));
  const std::vector<int64_t> strides = s.strides();
  const size_t element = dtype_size(s.dtype);
  const uint8_t* base = v.constant->bytes.data();
  const size_t n = static_cast<size_t>(s.numel());
  std::vector<T> out(n);
  if (s.is_contiguous() &&
      s.dtype == (std::is_same_v<T, float> ? ScalarType::Float : ScalarType::Double)) {
    std::memcpy(out.data(), base, n * sizeof(T));  // a weight as stored: no conversion
    return out;
  }
  std::vector<int64_t> index(s.rank(), 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < s.rank(); ++d) offset += index[d] * strides[d];
    out[i] = static_cast<T>(read(base + static_cast<size_t>(offset) * element));
    for (size_t d = s.rank(); d-- > 0;) {
      if (++index[d] < s.sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

template std::optional<std::vector<double>> constant_values(const Value&, std::string*);
template std::optional<std::vector<float>> constant_values(const Value&, std::string*);

}  // namespace pteron::compiler::ir
