// run_kernel(): calls one registered kernel on Python values. Kernel tests use it to check
// every operator against torch without building a program around it.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "python/bindings/tensor_convert.h"
#include "runtime/kernel/kernel.h"
#if defined(PTERON_HAVE_THREADS)
#include "runtime/threads/threadpool.h"
#endif

namespace nb = nanobind;

namespace pteron::py {
namespace {

// Keeps every converted value alive for the duration of one call.
struct ArgStore {
  std::deque<TensorHolder> tensors;
  std::deque<std::vector<int64_t>> int_lists;
  std::deque<std::vector<double>> double_lists;
  std::deque<std::unique_ptr<bool[]>> bool_lists;
  std::deque<std::vector<Tensor*>> tensor_lists;
  std::deque<std::string> strings;

  Tensor* tensor(nb::handle h) {
    tensors.emplace_back();
    // Writable arrays only: a kernel writes into its out arguments.
    wrap_ndarray(nb::ndarray<nb::ro>(nb::cast<nb::ndarray<>>(h)), tensors.back());
    return &tensors.back().tensor;
  }
};

bool is_array(nb::handle h) { return nb::isinstance<nb::ndarray<>>(h); }

EValue convert(nb::handle h, ArgStore& store) {
  EValue v;
  if (h.is_none()) return v;
  if (nb::isinstance<nb::bool_>(h)) return EValue::from_bool(nb::cast<bool>(h));
  if (nb::isinstance<nb::int_>(h)) return EValue::from_int(nb::cast<int64_t>(h));
  if (nb::isinstance<nb::float_>(h)) return EValue::from_double(nb::cast<double>(h));
  if (nb::isinstance<nb::str>(h)) {
    store.strings.push_back(nb::cast<std::string>(h));
    v.tag = Tag::String;
    v.string = Span<const char>(store.strings.back().data(), store.strings.back().size());
    return v;
  }
  if (is_array(h)) return EValue::from_tensor(store.tensor(h));
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    const size_t n = nb::len(seq);
    bool any_array = false, any_none = false, any_float = false, all_bool = n > 0;
    for (nb::handle item : seq) {
      any_array |= is_array(item);
      any_none |= item.is_none();
      any_float |= nb::isinstance<nb::float_>(item);
      all_bool &= nb::isinstance<nb::bool_>(item);
    }
    if (any_array) {
      store.tensor_lists.emplace_back();
      for (nb::handle item : seq)
        store.tensor_lists.back().push_back(item.is_none() ? nullptr : store.tensor(item));
      v.tag = any_none ? Tag::OptionalTensorList : Tag::TensorList;
      v.tensor_list = Span<Tensor* const>(store.tensor_lists.back().data(), n);
    } else if (all_bool) {
      store.bool_lists.emplace_back(new bool[n]);
      size_t i = 0;
      for (nb::handle item : seq) store.bool_lists.back()[i++] = nb::cast<bool>(item);
      v.tag = Tag::BoolList;
      v.bool_list = Span<const bool>(store.bool_lists.back().get(), n);
    } else if (any_float) {
      store.double_lists.emplace_back();
      for (nb::handle item : seq) store.double_lists.back().push_back(nb::cast<double>(item));
      v.tag = Tag::DoubleList;
      v.double_list = Span<const double>(store.double_lists.back().data(), n);
    } else {
      store.int_lists.emplace_back();
      for (nb::handle item : seq) store.int_lists.back().push_back(nb::cast<int64_t>(item));
      v.tag = Tag::IntList;
      v.int_list = Span<const int64_t>(store.int_lists.back().data(), n);
    }
    return v;
  }
  throw std::invalid_argument("run_kernel: unsupported argument type");
}

// The kernel registered as `name`: from `library` when given, else the runtime's preferred one.
const KernelEntry* lookup(const std::string& name, const std::optional<std::string>& library) {
  if (library) {
    for (const KernelEntry& e : registered_kernels())
      if (name == e.name && *library == e.library) return &e;
    return nullptr;
  }
  const size_t dot = name.rfind('.');
  const std::string op = dot == std::string::npos ? name : name.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
  return find_kernel(op.c_str(), overload.c_str());
}

// Marks the tensor argument as bounded-dynamic (capacity: its array's bytes), as the memory
// planner plans the outputs of data-dependent ops (nonzero, masked_select) at their upper bound.
void make_dynamic_bound(ArgStore& store, EValue& v) {
  if (v.tag != Tag::Tensor)
    throw std::invalid_argument("run_kernel: dynamic argument is not a tensor");
  for (TensorHolder& h : store.tensors) {
    if (&h.tensor != v.tensor) continue;
    const Tensor& t = h.tensor;
    h.tensor = Tensor(t.dtype(), t.dim(), h.sizes.data(), h.dim_order.data(), h.strides.data(),
                      t.mutable_data(), ShapeDynamism::DynamicBound);
    return;
  }
}

// One kernel with its arguments converted, ready to be called any number of times.
struct KernelCall {
  const KernelEntry* entry = nullptr;
  ArgStore store;
  std::vector<EValue> values;
  std::vector<EValue*> ptrs;

  KernelCall(const std::string& name, nb::sequence args, const std::optional<std::string>& library,
             const std::vector<size_t>& dynamic) {
    entry = lookup(name, library);
    if (entry == nullptr) {
      throw std::invalid_argument("no kernel registered for " + name +
                                  (library ? " in library " + *library : std::string()));
    }
    for (nb::handle h : args) values.push_back(convert(h, store));
    for (EValue& v : values) ptrs.push_back(&v);
    for (size_t i : dynamic) {
      if (i >= values.size()) throw std::invalid_argument("run_kernel: dynamic index out of range");
      make_dynamic_bound(store, values[i]);
    }
  }

  void call() {
    static std::vector<uint8_t> scratch(256u << 20);
    MemoryAllocator scratch_allocator(scratch.data(), scratch.size());
    KernelContext ctx{&scratch_allocator};
    clear_error_message();
    const Error err = call_kernel(*entry, ctx, Span<EValue*>(ptrs.data(), ptrs.size()));
    if (err != Error::Ok) {
      throw std::runtime_error(std::string(error_name(err)) + ": " + last_error_message());
    }
  }
};

std::vector<std::vector<int32_t>> run_kernel(const std::string& name, nb::sequence args,
                                             const std::optional<std::string>& library,
                                             const std::vector<size_t>& dynamic) {
  KernelCall k(name, args, library, dynamic);
  k.call();
  std::vector<std::vector<int32_t>> shapes;
  for (size_t i : dynamic) {
    const Span<const int32_t> sz = k.values[i].tensor->sizes();
    shapes.emplace_back(sz.begin(), sz.end());
  }
  return shapes;
}

// Wall seconds of each of `reps` back-to-back calls (after `warmup` untimed ones), timed here
// rather than in Python: a program calls its kernels with no argument conversion, and that
// conversion (about 7 us per call) would otherwise be most of a short kernel's figure.
std::vector<double> time_kernel(const std::string& name, nb::sequence args,
                                const std::optional<std::string>& library, int reps, int warmup) {
  KernelCall k(name, args, library, {});
  for (int i = 0; i < warmup; ++i) k.call();
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    k.call();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

}  // namespace

void bind_kernels(nb::module_& m) {
  m.def("run_kernel", &run_kernel, nb::arg("name"), nb::arg("args"),
        nb::arg("library") = nb::none(), nb::arg("dynamic") = std::vector<size_t>(),
        "Runs one registered kernel (from `library`, e.g. \"portable\" or \"optimized\", when "
        "given). Arrays are passed without copying; out arguments are written in place. The "
        "arguments at positions `dynamic` are bounded-dynamic tensors (their array is the bound) "
        "and their shapes after the call are returned. Raises RuntimeError with the kernel's "
        "message on failure.");
  m.def("time_kernel", &time_kernel, nb::arg("name"), nb::arg("args"),
        nb::arg("library") = nb::none(), nb::arg("reps") = 30, nb::arg("warmup") = 3,
        "Calls one registered kernel `warmup` + `reps` times back to back on arguments converted "
        "once (as run_kernel takes them) and returns the wall seconds of each timed call.");
  m.def(
      "set_kernel_libraries",
      [](const std::vector<std::string>& libraries) {
        // The registry keeps the pointers: the strings live until the next call.
        static std::vector<std::string> names;
        static std::vector<const char*> pointers;
        names = libraries;
        pointers.clear();
        for (const std::string& n : names) pointers.push_back(n.c_str());
        if (!set_kernel_libraries(Span<const char* const>(pointers.data(), pointers.size()))) {
          throw std::invalid_argument("set_kernel_libraries: too many libraries");
        }
      },
      nb::arg("libraries"),
      "Kernel libraries for methods loaded from now on, most preferred first ([] = all, "
      "preferring any library over \"portable\").");
#if defined(PTERON_HAVE_THREADS)
  m.def("set_num_threads", &set_num_threads, nb::arg("threads"),
        "Threads for optimized kernels and delegates from now on (0: the default).");
  m.def("num_threads", &num_threads);
  m.def("set_spin_workers", &set_spin_workers, nb::arg("spin"),
        "Whether the thread pool's workers spin for the next parallel call (the default) or "
        "sleep as soon as one ends (runtime/threads/threadpool.h).");
  m.def("spin_workers", &spin_workers);
#endif
  m.def("registered_kernels", [] {
    std::vector<std::string> names;
    for (const KernelEntry& e : registered_kernels()) names.emplace_back(e.name);
    return names;
  });
  m.def(
      "kernel_libraries",
      [](const std::string& name) {
        std::vector<std::string> libs;
        for (const KernelEntry& e : registered_kernels()) {
          if (name == e.name) libs.emplace_back(e.library);
        }
        return libs;
      },
      nb::arg("name"), "The kernel libraries that register `name` (\"aten::add.out\").");
}

}  // namespace pteron::py
