// A method's inputs: their size bounds and the inputs the program writes into (read from the
// program's named data at load), and setting them before each execute.
#include <cstdio>
#include <cstring>

#include "runtime/executor/method.h"
#include "runtime/executor/method_detail.h"
#include "schema/program_generated.h"

namespace pteron {
using method_detail::out_of_memory;
namespace {

// Whether the program carries named data `key` (pteron's optional per-method tables).
bool has_named_data(const Program& program, const char* key) {
  if (program.flatbuffer()->named_data() == nullptr) return false;
  for (const fb::NamedData* nd : *program.flatbuffer()->named_data())
    if (nd->key() && std::strcmp(nd->key()->c_str(), key) == 0) return true;
  return false;
}

}  // namespace

Error Method::init_written_inputs(const Program& program, MemoryAllocator* alloc) {
  char key[96];
  snprintf(key, sizeof(key), "pteron.written_inputs.%s", name());
  if (!has_named_data(program, key)) return Error::Ok;
  Result<FreeableBuffer> data = program.named_data(key);
  if (!data.ok()) return data.error();
  const uint8_t* bytes = data.get().bytes();
  const size_t size = data.get().size();
  if (size == 0 || size % 4 != 0)
    return fail(Error::InvalidProgram, "%s: %zu bytes, not whole int32s", key, size);
  const size_t n = num_inputs();
  input_written_ = alloc->allocate_array<bool>(n ? n : 1);
  if (input_written_ == nullptr) return out_of_memory("written inputs", n);
  for (size_t i = 0; i < n; ++i) input_written_[i] = false;
  int64_t previous = -1;
  for (size_t w = 0; w < size / 4; ++w) {
    int32_t i;
    std::memcpy(&i, bytes + 4 * w, 4);
    // The program writes the input's planned bytes; one the caller's memory backs is not its.
    if (i <= previous || static_cast<size_t>(i) >= n || !input_planned_[i])
      return fail(Error::InvalidProgram,
                  "%s: entry %zu (%d) is not a planned input after the previous one (%zu inputs)",
                  key, w, i, n);
    input_written_[i] = true;
    previous = i;
  }
  return Error::Ok;
}

Error Method::init_input_bounds(const Program& program, MemoryAllocator* alloc) {
  const size_t n = num_inputs();
  bool dynamic = false;
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    dynamic = dynamic || (v.tag == Tag::Tensor && v.tensor->dynamism() != ShapeDynamism::Static);
  }
  if (!dynamic) return Error::Ok;  // set_input compares with the tensors' own sizes
  input_dim_offset_ = alloc->allocate_array<size_t>(n + 1);
  if (input_dim_offset_ == nullptr) return out_of_memory("input bounds", (n + 1) * 8);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    input_dim_offset_[i] = total;
    const EValue& v = input(i);
    if (v.tag == Tag::Tensor) total += static_cast<size_t>(v.tensor->dim());
  }
  input_dim_offset_[n] = total;
  input_min_ = alloc->allocate_array<int32_t>(total ? total : 1);
  input_max_ = alloc->allocate_array<int32_t>(total ? total : 1);
  if (!input_min_ || !input_max_) return out_of_memory("input bounds", total * 8);
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    if (v.tag != Tag::Tensor) continue;
    const bool dynamic = v.tensor->dynamism() != ShapeDynamism::Static;
    for (int32_t d = 0; d < v.tensor->dim(); ++d) {
      input_max_[input_dim_offset_[i] + d] = v.tensor->size(d);
      input_min_[input_dim_offset_[i] + d] = dynamic ? 0 : v.tensor->size(d);
    }
  }
  // pteron's programs record the lower bounds (ExecuTorch's Tensor has none): int32 little
  // endian, per input its rank then its minimum sizes. Checked against the inputs.
  char key[96];
  snprintf(key, sizeof(key), "pteron.min_sizes.%s", name());
  PTERON_TRY(
      read_input_dim_table(program, key, input_min_, [&](size_t i, int32_t d, int32_t lo) -> Error {
        const int32_t hi = input_max_[input_dim_offset_[i] + d];
        if (lo < 0 || lo > hi)
          return fail(Error::InvalidProgram, "%s: input %zu dim %d minimum %d outside [0, %d]", key,
                      i, d, lo, hi);
        return Error::Ok;
      }));
  // And the steps of torch.export's derived dims (h = 32 * _h), the same way: 1 for any size.
  snprintf(key, sizeof(key), "pteron.size_steps.%s", name());
  if (!has_named_data(program, key)) return Error::Ok;
  input_step_ = alloc->allocate_array<int32_t>(total ? total : 1);
  if (input_step_ == nullptr) return out_of_memory("input size steps", total * 4);
  return read_input_dim_table(
      program, key, input_step_, [&](size_t i, int32_t d, int32_t step) -> Error {
        if (step < 1)
          return fail(Error::InvalidProgram, "%s: input %zu dim %d step %d is below 1", key, i, d,
                      step);
        return Error::Ok;
      });
}

template <typename Accept>
Error Method::read_input_dim_table(const Program& program, const char* key, int32_t* table,
                                   Accept accept) {
  if (!has_named_data(program, key)) return Error::Ok;
  Result<FreeableBuffer> data = program.named_data(key);
  if (!data.ok()) return data.error();
  const Span<const uint8_t> bytes(data.get().bytes(), data.get().size());
  if (bytes.size() % 4 != 0)
    return fail(Error::InvalidProgram, "%s: %zu bytes, not whole int32s", key, bytes.size());
  const size_t words = bytes.size() / 4;
  auto word = [&](size_t w) {
    int32_t x;
    std::memcpy(&x, bytes.data() + 4 * w, 4);
    return x;
  };
  const size_t n = num_inputs();
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    const int32_t rank = v.tag == Tag::Tensor ? v.tensor->dim() : 0;
    if (w >= words || word(w) != rank)
      return fail(Error::InvalidProgram, "%s: entry for input %zu does not match its rank %d", key,
                  i, rank);
    ++w;
    if (words - w < static_cast<size_t>(rank))
      return fail(Error::InvalidProgram, "%s: truncated at input %zu", key, i);
    for (int32_t d = 0; d < rank; ++d, ++w) {
      PTERON_TRY(accept(i, d, word(w)));
      table[input_dim_offset_[i] + d] = word(w);
    }
  }
  if (w != words) return fail(Error::InvalidProgram, "%s: %zu trailing words", key, words - w);
  return Error::Ok;
}

Error Method::input_index(size_t i, Tensor** tensor) {
  if (i >= num_inputs()) {
    return fail(Error::InvalidArgument, "method '%s' has %zu inputs; input %zu does not exist",
                name(), num_inputs(), i);
  }
  EValue& v = input(i);
  if (v.tag != Tag::Tensor) return fail(Error::InvalidArgument, "input %zu is not a tensor", i);
  *tensor = v.tensor;
  return Error::Ok;
}

EValue& Method::input(size_t i) {
  return values_[plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
}

const EValue& Method::output(size_t i) const {
  return values_[plan_->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
}

Error Method::set_input(size_t i, const Tensor& src) {
  Tensor* dst = nullptr;
  PTERON_TRY(input_index(i, &dst));
  if (src.dtype() != dst->dtype()) {
    return fail(Error::InvalidArgument, "input %zu: dtype %s given, the program expects %s", i,
                scalar_type_name(src.dtype()), scalar_type_name(dst->dtype()));
  }
  if (src.dim() != dst->dim()) {
    return fail(Error::InvalidArgument, "input %zu: rank %d given, the program expects rank %d", i,
                src.dim(), dst->dim());
  }
  for (int32_t d = 0; d < src.dim(); ++d) {
    const bool bounded = input_min_ != nullptr;
    const int32_t lo = bounded ? input_min_[input_dim_offset_[i] + d] : dst->size(d);
    const int32_t hi = bounded ? input_max_[input_dim_offset_[i] + d] : dst->size(d);
    if (lo == hi && src.size(d) != hi) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d given, the program expects %d", i, src.size(d), d,
                  hi);
    }
    if (src.size(d) < lo || src.size(d) > hi) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d is outside the program's bounds [%d, %d]", i,
                  src.size(d), d, lo, hi);
    }
    const int32_t step = input_step_ != nullptr ? input_step_[input_dim_offset_[i] + d] : 1;
    if ((src.size(d) - lo) % step != 0) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d is not %d plus a multiple of %d (its export "
                  "Dim is derived: %d * a size + offset)",
                  i, src.size(d), d, lo, step, step);
    }
  }
  PTERON_TRY(dst->resize(src.sizes()));
  // Two dim orders lay the bytes out alike when they agree on the dims of size above 1: a dim of
  // size 1 may sit anywhere (torch gives it any stride: x.T of a [1, n] row is [n, 1] in dim
  // order (1, 0)), and an empty tensor has no layout to disagree on.
  if (src.numel() > 0) {
    int32_t s = 0, p = 0;
    const int32_t rank = src.dim();
    while (true) {
      while (s < rank && src.size(src.dim_order()[s]) == 1) ++s;
      while (p < rank && src.size(dst->dim_order()[p]) == 1) ++p;
      if (s == rank || p == rank) break;
      if (src.dim_order()[s] != dst->dim_order()[p])
        return fail(Error::InvalidArgument, "input %zu: dim order differs from the program's", i);
      ++s;
      ++p;
    }
  }
  if (input_planned_[i]) {
    if (src.nbytes() > 0) std::memcpy(dst->mutable_data(), src.const_data(), src.nbytes());
  } else {
    dst->set_data(const_cast<void*>(src.const_data()));
  }
  return Error::Ok;
}

bool Method::input_size_bounds(size_t i, int32_t d, int32_t* lo, int32_t* hi) const {
  if (i >= num_inputs()) return false;
  const EValue& v = values_[plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
  if (v.tag != Tag::Tensor || d < 0 || d >= v.tensor->dim()) return false;
  const bool bounded = input_min_ != nullptr;
  *lo = bounded ? input_min_[input_dim_offset_[i] + d] : v.tensor->size(d);
  *hi = bounded ? input_max_[input_dim_offset_[i] + d] : v.tensor->size(d);
  return true;
}

Error Method::set_input_pointer(size_t i, void* data, size_t nbytes) {
  Tensor* dst = nullptr;
  PTERON_TRY(input_index(i, &dst));
  if (input_planned_[i]) {
    return fail(Error::InvalidArgument, "input %zu lives in a planned arena; use set_input to copy",
                i);
  }
  if (nbytes != dst->nbytes()) {
    return fail(Error::InvalidArgument, "input %zu: %zu bytes given, the program expects %zu", i,
                nbytes, dst->nbytes());
  }
  dst->set_data(data);
  return Error::Ok;
}

}  // namespace pteron
