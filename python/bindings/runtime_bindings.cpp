// Python access to the runtime: load a program, load a method, execute it on arrays.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "compiler/report/delegation_report.h"
#include "python/bindings/llm_bindings.h"
#include "python/bindings/tensor_convert.h"
#include "runtime/host/host_method.h"
#include "runtime/llm/metadata.h"

namespace nb = nanobind;

namespace pteron::py {
namespace {

[[noreturn]] void raise(Error e) {
  const std::string message = last_error_message()[0] ? last_error_message() : error_name(e);
  throw std::runtime_error(message);
}

nb::dict tensor_info_dict(const TensorInfo& info) {
  nb::dict d;
  d["dtype"] = scalar_type_name(info.dtype);
  d["shape"] = std::vector<int32_t>(info.sizes.begin(), info.sizes.end());
  d["dim_order"] = std::vector<int>(info.dim_order.begin(), info.dim_order.end());
  d["nbytes"] = info.nbytes;
  return d;
}

// A method's inputs, outputs (None where not a tensor), planned arena sizes, instruction count
// and pytree specs ("" where the program states none).
nb::dict method_meta_dict(const MethodMeta& meta) {
  nb::dict d;
  d["name"] = meta.name();
  nb::list inputs, outputs, arenas;
  for (size_t i = 0; i < meta.num_inputs(); ++i) {
    auto t = meta.input_tensor(i);
    inputs.append(t.ok() ? nb::object(tensor_info_dict(*t)) : nb::none());
  }
  for (size_t i = 0; i < meta.num_outputs(); ++i) {
    auto t = meta.output_tensor(i);
    outputs.append(t.ok() ? nb::object(tensor_info_dict(*t)) : nb::none());
  }
  for (size_t i = 0; i < meta.num_planned_buffers(); ++i)
    arenas.append(meta.planned_buffer_size(i));
  d["inputs"] = inputs;
  d["outputs"] = outputs;
  d["planned_buffer_sizes"] = arenas;
  d["num_instructions"] = meta.num_instructions();
  // Text from the file: bytes that are not UTF-8 become U+FFFD, for the spec reader to refuse.
  auto text = [](const char* s) {
    return nb::steal<nb::str>(PyUnicode_DecodeUTF8(s, std::strlen(s), "replace"));
  };
  d["input_spec"] = text(meta.input_spec());
  d["output_spec"] = text(meta.output_spec());
  return d;
}

class PyProgram;

class PyMethod {
 public:
  PyMethod(std::shared_ptr<HostProgram> program, std::unique_ptr<HostMethod> method)
      : program_(std::move(program)), method_(std::move(method)) {}

  // Runs the method; returns outputs as numpy arrays (copies unless copy_outputs is false, in
  // which case they view the method's arena and are overwritten by the next call).
  nb::list execute(nb::sequence inputs, bool copy_outputs) {
    Method& m = method_->method();
    if (nb::len(inputs) != m.num_inputs()) {
      throw std::invalid_argument("method '" + std::string(m.name()) + "' takes " +
                                  std::to_string(m.num_inputs()) + " inputs, got " +
                                  std::to_string(nb::len(inputs)));
    }
    std::deque<TensorHolder> holders;
    size_t i = 0;
    for (nb::handle h : inputs) {
      holders.emplace_back();
      nb::ndarray<nb::ro> array;
      if (!nb::try_cast(h, array))
        throw nb::type_error(("input " + std::to_string(i) + ": a " +
                              nb::type_name(h.type()).c_str() + " is not an array or tensor")
                                 .c_str());
      wrap_ndarray(array, holders.back());
      const Error e = m.set_input(i, holders.back().tensor);
      if (e != Error::Ok) raise(e);
      ++i;
    }
    {
      nb::gil_scoped_release release;
      const Error e = m.execute();
      if (e != Error::Ok) raise(e);
    }
    // An input the model writes into changes in the caller's array or tensor, as in eager
    // (the holder wraps its memory; set_input gave the program the same sizes and layout).
    for (size_t k = 0; k < m.num_inputs(); ++k) {
      if (!m.input_written(k)) continue;
      const Tensor& written = *m.input(k).tensor;
      Tensor& caller = holders[k].tensor;
      if (written.nbytes() != caller.nbytes())
        throw std::runtime_error("input " + std::to_string(k) + ": the program wrote " +
                                 std::to_string(written.nbytes()) + " bytes into " +
                                 std::to_string(caller.nbytes()));
      if (written.nbytes() > 0)
        std::memcpy(caller.mutable_data(), written.const_data(), written.nbytes());
    }
    nb::list outputs;
    for (size_t k = 0; k < m.num_outputs(); ++k) {
      const EValue& v = m.output(k);
      if (v.tag == Tag::Tensor) {
        outputs.append(tensor_to_numpy(*v.tensor, copy_outputs));
      } else if (v.tag == Tag::Int) {
        outputs.append(nb::int_(v.i));
      } else if (v.tag == Tag::Double) {
        outputs.append(nb::float_(v.d));
      } else if (v.tag == Tag::Bool) {
        outputs.append(nb::bool_(v.b));
      } else if (v.tag == Tag::String) {
        outputs.append(nb::str(v.string.data(), v.string.size()));
      } else {
        outputs.append(nb::none());
      }
    }
    return outputs;
  }

  // Input `i` as the method holds it now (a copy): after a run, what the program wrote into an
  // input the model changes in place (execute also copies that into the caller's array).
  nb::object input(size_t i) {
    Method& m = method_->method();
    if (i >= m.num_inputs())
      throw std::out_of_range("method '" + std::string(m.name()) + "' has " +
                              std::to_string(m.num_inputs()) + " inputs, not " +
                              std::to_string(i + 1));
    const EValue& v = m.input(i);
    if (v.tag != Tag::Tensor) return nb::none();
    return tensor_to_numpy(*v.tensor, true);
  }

  bool input_written(size_t i) { return method_->method().input_written(i); }

  nb::dict meta() const {
    nb::dict d = method_meta_dict(method_->method().meta());
    d["method_allocator_bytes"] = method_->method_allocator_used();
    return d;
  }

  void reset_state() {
    const Error e = method_->method().reset_state();
    if (e != Error::Ok) raise(e);
  }
  size_t num_state_tensors() const { return method_->method().num_state_tensors(); }

  // Per argument of instruction `i`, its tensor's data address (None for other values): lets
  // tests see which tensors share memory (a cache update computed in the cache itself).
  std::vector<nb::object> instruction_tensor_addresses(size_t i) const {
    const Method& m = method_->method();
    if (i >= m.num_instructions()) throw nb::index_error("no such instruction");
    std::vector<nb::object> out;
    EValue* gathered[Method::kMaxGatheredArgs];
    for (const EValue* v : m.instruction_args(i, {gathered, Method::kMaxGatheredArgs})) {
      out.push_back(v->tag == Tag::Tensor
                        ? nb::cast(reinterpret_cast<uintptr_t>(v->tensor->const_data()))
                        : nb::none());
    }
    return out;
  }

  // (data address, bytes) of each state tensor.
  std::vector<std::pair<uintptr_t, size_t>> state_memory() const {
    const Method& m = method_->method();
    std::vector<std::pair<uintptr_t, size_t>> out;
    for (size_t k = 0; k < m.num_state_tensors(); ++k) {
      const Tensor* t = m.state_tensor(k);
      out.emplace_back(reinterpret_cast<uintptr_t>(t->const_data()), t->nbytes());
    }
    return out;
  }

  std::vector<std::string> instruction_names() const {
    std::vector<std::string> names;
    const Method& m = method_->method();
    for (size_t i = 0; i < m.num_instructions(); ++i) names.emplace_back(m.instruction_name(i));
    return names;
  }

 private:
  nb::object tensor_to_numpy(const Tensor& t, bool copy) {
    if (t.dtype() == ScalarType::BFloat16) return bfloat16_as_float32(t);
    std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
    std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
    nb::ndarray<nb::numpy> view(t.mutable_data(), shape.size(), shape.data(), nb::find(this),
                                strides.data(), dlpack_from_dtype(t.dtype()));
    nb::object array = nb::cast(view, nb::rv_policy::reference);
    return copy ? array.attr("copy")() : array;
  }

  // numpy has no bfloat16 (an array of that dtype cannot even be made): a bfloat16 output
  // comes back widened to float32, exactly, in a new array (pteron.Method gives torch callers
  // a bfloat16 tensor again).
  static nb::object bfloat16_as_float32(const Tensor& t) {
    std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
    std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
    auto* values = new float[static_cast<size_t>(t.numel())];
    nb::capsule owner(values, [](void* p) noexcept { delete[] static_cast<float*>(p); });
    // Element by element through the strides, into the same strides' dense array.
    std::vector<int64_t> index(shape.size(), 0);
    const BFloat16* bits = t.data<const BFloat16>();
    for (int64_t n = 0; n < t.numel(); ++n) {
      int64_t offset = 0;
      for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
      values[offset] = bf16_to_float(bits[offset].bits);
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < static_cast<int64_t>(shape[d])) break;
        index[d] = 0;
      }
    }
    nb::ndarray<nb::numpy, float> array(values, shape.size(), shape.data(), owner, strides.data());
    return nb::cast(array, nb::rv_policy::take_ownership);
  }

  std::shared_ptr<HostProgram> program_;
  std::unique_ptr<HostMethod> method_;
};

class PyProgram {
 public:
  explicit PyProgram(std::unique_ptr<HostProgram> program) : program_(std::move(program)) {}

  std::vector<std::string> method_names() const {
    std::vector<std::string> names;
    const Program& p = program_->program();
    for (size_t i = 0; i < p.num_methods(); ++i) names.emplace_back(*p.method_name(i));
    return names;
  }

  std::unique_ptr<PyMethod> load_method(const std::string& name, size_t scratch_bytes) {
    HostMethodOptions options;
    options.scratch_bytes = scratch_bytes;
    auto method = HostMethod::load(*program_, name.c_str(), options);
    if (!method.ok()) raise(method.error());
    return std::make_unique<PyMethod>(program_, std::move(method.get()));
  }

  // What the kernels derived from the program's constants and keep (packed weights).
  nb::dict constant_cache() const {
    const HostConstantCache& cache = program_->constant_cache();
    nb::dict d;
    d["bytes"] = cache.bytes();
    d["blocks"] = cache.blocks();
    d["derivations"] = cache.derivations();
    return d;
  }

  // Bytes stored under `key` in the program's named data (e.g. "pteron.graph_info"), or None.
  nb::object named_data(const std::string& key) const {
    std::optional<std::string> data;
    try {
      data = compiler::read_named_data(program_->program(), key.c_str());
    } catch (const std::exception& e) {
      throw std::runtime_error(e.what());
    }
    if (!data) return nb::none();
    return nb::bytes(data->data(), data->size());
  }

  // A text generator over method `name` (runtime/llm), with its own loaded copy of the method.
  nb::object generator(const std::string& name) const { return make_generator(program_, name); }

  // The LLM metadata (runtime/llm/metadata.h) keyed by method name, as ExecuTorch's
  // constant_methods are written: {"get_max_seq_len": 128, "get_eos_ids": [2], ...}.
  nb::dict llm_metadata() const {
    auto read = llm::read_llm_metadata(program_->program());
    if (!read.ok()) raise(read.error());
    const llm::LlmMetadata& m = read.get();
    nb::dict d;
    llm::for_each_field(m, [&](const char* key, const auto& field) {
      if constexpr (std::is_same_v<std::decay_t<decltype(field)>, llm::EosIds>) {
        if (field.present) d[key] = std::vector<int64_t>(field.ids, field.ids + field.count);
      } else if (field) {
        d[key] = *field;
      }
    });
    return d;
  }

  nb::dict method_meta(const std::string& name) const {
    auto meta = program_->program().method_meta(name.c_str());
    if (!meta.ok()) raise(meta.error());
    return method_meta_dict(*meta);
  }

 private:
  std::shared_ptr<HostProgram> program_;
};

std::unique_ptr<PyProgram> load_path(const std::string& path) {
  auto program = HostProgram::open(path.c_str());
  if (!program.ok()) raise(program.error());
  return std::make_unique<PyProgram>(std::move(program.get()));
}

std::unique_ptr<PyProgram> load_bytes(nb::bytes data) {
  auto program = HostProgram::from_bytes(data.c_str(), data.size());
  if (!program.ok()) raise(program.error());
  return std::make_unique<PyProgram>(std::move(program.get()));
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<PyMethod>(m, "Method")
      .def("execute", &PyMethod::execute, nb::arg("inputs"), nb::arg("copy_outputs") = true)
      .def("meta", &PyMethod::meta)
      .def("input", &PyMethod::input, nb::arg("index"))
      .def("input_written", &PyMethod::input_written, nb::arg("index"))
      .def("reset_state", &PyMethod::reset_state)
      .def("num_state_tensors", &PyMethod::num_state_tensors)
      .def("instruction_names", &PyMethod::instruction_names)
      .def("instruction_tensor_addresses", &PyMethod::instruction_tensor_addresses)
      .def("state_memory", &PyMethod::state_memory);
  nb::class_<PyProgram>(m, "Program")
      .def_prop_ro("method_names", &PyProgram::method_names)
      .def("load_method", &PyProgram::load_method, nb::arg("name") = "forward",
           nb::arg("scratch_bytes") = size_t{64} << 20)
      .def("constant_cache", &PyProgram::constant_cache,
           "Bytes, blocks and derivations so far of the data kernels derived from constants.")
      .def("method_meta", &PyProgram::method_meta, nb::arg("name") = "forward")
      .def("named_data", &PyProgram::named_data, nb::arg("key"))
      .def("generator", &PyProgram::generator, nb::arg("method") = "forward")
      .def("llm_metadata", &PyProgram::llm_metadata,
           "The LLM metadata methods' values, checked (RuntimeError naming a malformed one).");
  m.def("load", &load_path, nb::arg("path"), "Loads and verifies a .pte file (mmapped).");
  m.def("load_bytes", &load_bytes, nb::arg("data"), "Loads and verifies a program from bytes.");
}

}  // namespace pteron::py
