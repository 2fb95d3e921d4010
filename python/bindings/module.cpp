#include <nanobind/nanobind.h>

namespace nb = nanobind;

namespace pteron::py {
void bind_kernels(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_compiler(nb::module_& m);
void bind_llm(nb::module_& m);
#ifdef PTERON_HAVE_TOSA
void bind_tosa(nb::module_& m);
#endif
}  // namespace pteron::py

NB_MODULE(pteron_native, m) {
  m.doc() = "pteron's native compiler and runtime";
  pteron::py::bind_kernels(m);
  pteron::py::bind_runtime(m);
  pteron::py::bind_compiler(m);
  pteron::py::bind_llm(m);
#ifdef PTERON_HAVE_TOSA
  pteron::py::bind_tosa(m);
#endif
}
