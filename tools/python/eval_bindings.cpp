// meshsim._core.evaluate: a policy written in Python judged by `meshsim eval`'s protocol,
// the same C++ run (tools/cli/evaluation_run.hpp), so its figures are those the command
// gives a checkpoint acting the same way.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>

#include "tools/runs/command_inputs.hpp"
#include "tools/runs/evaluation_run.hpp"
#include "tools/python/bindings.hpp"
#include "tools/python/common.hpp"

namespace meshsim::python {
namespace {

// The Python policy and the first exception it raised: the run goes on to its end with
// the policy's later actions left NaN (no change), and evaluate() raises it then.
struct PythonPolicy {
  py::object policy;
  std::exception_ptr error;
};

// Plays under the GIL: windows play on native threads, one Python call at a time.
rl::Actor actor_of(std::shared_ptr<PythonPolicy> state) {
  return [state](std::span<const float> obs, std::span<float> action) {
    std::fill(action.begin(), action.end(), std::numeric_limits<float>::quiet_NaN());
    const py::gil_scoped_acquire python;
    if (state->error) return;
    try {
      py::array_t<float> observation(static_cast<py::ssize_t>(obs.size()));
      std::copy(obs.begin(), obs.end(), observation.mutable_data());
      const py::object result = state->policy(observation);
      const auto chosen = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(result);
      if (!chosen || static_cast<std::size_t>(chosen.size()) != action.size()) {
        throw py::value_error("policy: expected an action of " + std::to_string(action.size()) +
                              " numbers for an observation, got " + py::repr(result).cast<std::string>());
      }
      std::copy(chosen.data(), chosen.data() + chosen.size(), action.begin());
    } catch (...) {
      state->error = std::current_exception();
    }
  };
}

// (printed text, exit code); the run's files are in options.out_dir.
py::tuple evaluate(const py::object& policy, const py::object& config, const std::string& name,
                   const std::string& out_dir, const std::vector<double>& delays, std::optional<std::string> split,
                   std::optional<double> window_start_s, std::optional<double> window_s, double rate_scale,
                   std::uint32_t max_static, const py::dict& grids) {
  cli::EvalCommandOptions options;
  options.config_path = config_path(config, configs::default_training_path());
  options.out_dir = out_dir;
  options.delays_s = delays;
  options.split = std::move(split);
  options.window_start_s = window_start_s;
  options.window_s = window_s;
  options.rate_scale = rate_scale;
  options.max_static = max_static;
  options.plot = false;
  for (const auto& [key, values] : grids) {
    const std::string grid = py::str(key);
    if (grid == "bound_prices") {
      options.grids.bound_prices = values.cast<std::size_t>();
      continue;
    }
    if (grid == "capacity_model") {
      options.capacity_model = py::str(values).cast<std::string>();
      continue;
    }
    std::vector<double>* field = grid == "kv_targets"            ? &options.grids.kv_targets
                                 : grid == "request_targets"     ? &options.grids.request_targets
                                 : grid == "rate_targets"        ? &options.grids.rate_targets
                                 : grid == "token_targets"       ? &options.grids.token_targets
                                 : grid == "elastic_capacities"  ? &options.grids.elastic_capacities
                                 : grid == "oracle_utilisations" ? &options.grids.oracle_utilisations
                                 : grid == "bound_utilisations"  ? &options.grids.bound_utilisations
                                 : grid == "multi_metric_scales" ? &options.grids.multi_metric_scales
                                 : grid == "capacity_targets"    ? &options.grids.capacity_targets
                                                                 : nullptr;
    if (field == nullptr) throw py::value_error("grids: unknown grid '" + grid + "'");
    *field = values.cast<std::vector<double>>();
  }
  auto state = std::make_shared<PythonPolicy>(PythonPolicy{policy, nullptr});
  cli::EvalPolicy p;
  p.name = name;
  p.source = "policy " + name;  // written for the recipe's environment: its sizes
  p.make_actor = [state]() -> Expected<rl::Actor> { return actor_of(state); };
  std::ostringstream out, err;
  int code = 0;
  {
    py::gil_scoped_release release;
    code = cli::run_evaluation(options, {p}, out, err);
  }
  if (state->error) std::rethrow_exception(state->error);
  if (code != cli::kExitOk) throw py::value_error(err.str());
  return py::make_tuple(out.str(), err.str());
}

}  // namespace

void bind_evaluate(py::module_& m) {
  m.def("evaluate", &evaluate, py::arg("policy"), py::arg("config"), py::arg("name"), py::arg("out"),
        py::arg("delays"), py::arg("split"), py::arg("window_start_s"), py::arg("window_s"), py::arg("rate_scale"),
        py::arg("max_static"), py::arg("grids"),
        "Judges a Python policy by meshsim eval's protocol: (printed text, notes); files in `out`");
}

}  // namespace meshsim::python
