// meshsim._core: the native half of the Python package (tools/python/meshsim).
#include "tools/python/bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "meshsim's native core (use the meshsim package, not this module)";
  meshsim::python::bind_vector_env(m);
}
