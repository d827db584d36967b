// meshsim.Scheduler's native half: a scenario session (tools/cli/scenario_command), so
// each call has the scenario script's name, arguments and result.
#include <pybind11/stl.h>

#include "configs/config_file.hpp"
#include "tools/cli/scenario_command.hpp"
#include "tools/python/bindings.hpp"
#include "tools/python/common.hpp"

namespace meshsim::python {

namespace {

class PyScheduler {
 public:
  // `setup`: None (one large default node), a dict, or the path of a JSON/YAML file with
  // the script's nodes, serving and scaling objects.
  PyScheduler(const py::object& setup, bool allow_files) {
    nlohmann::json document = nlohmann::json::object();
    std::string name = "meshsim.Scheduler";
    if (py::isinstance<py::str>(setup)) {
      name = setup.cast<std::string>();
      document = value_or_raise(configs::read_config_file(name));
    } else if (!setup.is_none()) {
      document = to_json(setup, "setup");
    }
    session_ = value_or_raise(cli::ScenarioSession::create(document, name, allow_files));
  }

  py::object call(const std::string& name, const py::dict& args) {
    return to_python(value_or_raise(session_->call(name, to_json(args, name))));
  }

  double now() const { return session_->now(); }
  std::vector<std::string> check_invariants() const { return session_->check_invariants(); }
  std::string prometheus_text() const { return session_->prometheus_text(); }

 private:
  std::unique_ptr<cli::ScenarioSession> session_;
};

}  // namespace

void bind_scheduler(py::module_& m) {
  py::class_<PyScheduler>(m, "_Scheduler")
      .def(py::init<const py::object&, bool>(), py::arg("setup"), py::arg("allow_files"))
      .def("call", &PyScheduler::call, py::arg("name"), py::arg("args"))
      .def_property_readonly("time", &PyScheduler::now)
      .def("check_invariants", &PyScheduler::check_invariants)
      .def("prometheus_text", &PyScheduler::prometheus_text);
  m.def("scheduler_calls", &cli::ScenarioSession::call_names, "The calls a scenario script (and meshsim.Scheduler) knows");
}

}  // namespace meshsim::python
