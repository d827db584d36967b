#pragma once

// The parts of the native module meshsim._core, one registration function per file.
#include <pybind11/pybind11.h>

namespace meshsim::python {

void bind_vector_env(pybind11::module_& m);
void bind_scaling_env(pybind11::module_& m);
void bind_replay(pybind11::module_& m);
void bind_scheduler(pybind11::module_& m);
void bind_evaluate(pybind11::module_& m);

}  // namespace meshsim::python
