// meshsim.Scheduler's native half: the scenario-script interpreter (sim/script), so each
// call has the scenario script's name, arguments and result.
#include <pybind11/stl.h>

#include <sstream>

#include "configs/config_file.hpp"
#include "sim/script/script_session.hpp"
#include "tools/runs/scheduler_prometheus.hpp"
#include "tools/runs/state_file.hpp"
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
    session_ = value_or_raise(script::ScriptSession::create(document, name, allow_files ? &files_ : nullptr));
  }

  py::object call(const std::string& name, const py::dict& args) {
    return to_python(value_or_raise(session_->call(name, to_json(args, name))));
  }

  double now() const { return session_->now(); }
  std::vector<std::string> check_invariants() const { return session_->check_invariants(); }
  std::string prometheus_text() const {
    std::ostringstream out;
    cli::write_scheduler_metrics(out, session_->scheduler());
    return out.str();
  }

 private:
  cli::StateFiles files_;
  std::unique_ptr<script::ScriptSession> session_;
};

}  // namespace

void bind_scheduler(py::module_& m) {
  py::class_<PyScheduler>(m, "_Scheduler")
      .def(py::init<const py::object&, bool>(), py::arg("setup"), py::arg("allow_files"))
      .def("call", &PyScheduler::call, py::arg("name"), py::arg("args"))
      .def_property_readonly("time", &PyScheduler::now)
      .def("check_invariants", &PyScheduler::check_invariants)
      .def("prometheus_text", &PyScheduler::prometheus_text);
  m.def(
      "scheduler_calls",
      [] {
        std::vector<std::pair<std::string, std::string>> calls;
        for (const auto& call : script::script_calls()) calls.emplace_back(call.name, call.summary);
        return calls;
      },
      "The calls a scenario script (and meshsim.Scheduler) knows: (name, summary) pairs");
}

}  // namespace meshsim::python
