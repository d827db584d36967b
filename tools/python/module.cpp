// meshsim._core: the native half of the Python package (tools/python/meshsim).
#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "tools/python/bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "meshsim's native core (use the meshsim package, not this module)";
  m.def("default_scenario_path", &meshsim::configs::default_scenario_path,
        "configs/scenarios/default.json: the bundled default scenario");
  m.def("default_training_path", &meshsim::configs::default_training_path,
        "configs/scenarios/rl-train.json: the default RL training recipe");
  m.def("_use_config_folder", &meshsim::configs::set_config_folder,
        "Points the bundled catalog and scenarios at an installed package's copy (its import does)");
  meshsim::python::bind_vector_env(m);
  meshsim::python::bind_scaling_env(m);
  meshsim::python::bind_replay(m);
  meshsim::python::bind_scheduler(m);
  meshsim::python::bind_evaluate(m);
}
