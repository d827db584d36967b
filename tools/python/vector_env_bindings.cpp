// meshsim.VectorEnv's native half: rl::VectorEnv stepped with the GIL released, its
// buffers copied straight into fresh numpy arrays, infos as dicts of arrays (Gymnasium
// 1.x's vector layout). The spaces and argument checks live in meshsim/vector_env.py.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "rl/env/vector_env.hpp"
#include "tools/runs/command_inputs.hpp"
#include "tools/python/bindings.hpp"
#include "tools/python/env_values.hpp"

namespace meshsim::python {

namespace {

template <typename T>
py::array_t<T> copy_of(std::span<const T> from, std::vector<py::ssize_t> shape) {
  py::array_t<T> out(shape);
  std::memcpy(out.mutable_data(), from.data(), from.size_bytes());
  return out;
}

class PyVectorEnv {
 public:
  PyVectorEnv(std::size_t num_envs, const py::object& config, const py::object& trace, unsigned threads,
              const py::dict& overrides, bool next_step_autoreset)
      : next_step_(next_step_autoreset) {
    auto [scenario, workload] = env_inputs(config, trace, overrides);
    rl::VectorEnvOptions options;
    options.num_envs = num_envs;
    options.threads = threads;
    options.next_step_autoreset = next_step_autoreset;
    catalog_ = catalog_for(scenario);
    envs_ = value_or_raise(rl::VectorEnv::create(scenario, catalog_, std::move(workload), options));
    discrete_choices_ = configs::chooses(scenario.rl->action) ? envs_->env(0).discrete_choices() : 0;
    observation_names_ = observation_names_of(envs_->env(0));
    observation_bounds_ = (envs_->env(0)).observation_bounds();
    num_envs_ = envs_->num_envs();
    observation_size_ = envs_->observation_size();
    action_size_ = envs_->action_size();
    threads_ = envs_->threads();
    steps_per_episode_ = envs_->env(0).steps_per_episode();
  }

  py::tuple reset(std::optional<std::uint64_t> seed, const py::dict& options) {
    const auto lock = gate_.enter_open(envs_, "VectorEnv");
    const rl::ResetOptions reset_options = reset_options_of(options, envs_->env(0));
    {
      const py::gil_scoped_release unlocked;
      envs_->reset(seed, reset_options);
    }
    reset_ = true;
    return py::make_tuple(observations(envs_->observations()), infos_of(envs_->infos()));
  }

  py::tuple step(const py::array_t<float, py::array::c_style | py::array::forcecast>& actions) {
    const auto lock = gate_.enter_open(envs_, "VectorEnv");
    // Environments that ended reset themselves (in this step or, with next-step
    // autoreset, the next); before the first reset there is no episode to step.
    if (!reset_) throw py::value_error("step: call reset() before the first step");
    const std::size_t n = envs_->num_envs(), a = envs_->action_size();
    if (static_cast<std::size_t>(actions.size()) != n * a || (actions.ndim() != 2 && !(actions.ndim() == 1 && a == 1))) {
      throw py::value_error("step: expected actions of shape (" + std::to_string(n) + ", " + std::to_string(a) +
                            "), got " + shape_text(actions));
    }
    const std::span<const float> flat(actions.data(), n * a);
    {
      const py::gil_scoped_release unlocked;
      envs_->step(flat);
    }
    const auto count = static_cast<py::ssize_t>(n);
    py::array_t<bool> terminations(count), truncations(count);
    bool any_truncated = false;
    for (std::size_t i = 0; i < n; ++i) {
      terminations.mutable_data()[i] = envs_->terminations()[i] != 0;
      truncations.mutable_data()[i] = envs_->truncations()[i] != 0;
      any_truncated = any_truncated || truncations.data()[i];
    }
    py::dict infos = infos_of(envs_->infos());
    if (any_truncated && !next_step_) {
      // Same-step autoreset: the ended episodes' last observations and infos, masked.
      infos["final_obs"] = observations(envs_->final_observations());
      infos["_final_obs"] = truncations;
      infos["final_info"] = infos_of(envs_->infos());
      infos["_final_info"] = truncations;
    }
    return py::make_tuple(observations(envs_->observations()), copy_of(envs_->rewards(), {count}), terminations,
                          truncations, infos);
  }

  // The baseline of the Python-overhead benchmark (experiments/bench/python_env_bench.py):
  // `steps` steps with `actions` from C++ alone, no Python between them; wall seconds.
  double time_native_steps(const py::array_t<float, py::array::c_style | py::array::forcecast>& actions,
                           std::size_t steps) {
    const auto lock = gate_.enter_open(envs_, "VectorEnv");
    if (!reset_) throw py::value_error("time_native_steps: call reset() before the first step");
    if (static_cast<std::size_t>(actions.size()) != envs_->num_envs() * envs_->action_size()) {
      throw py::value_error("time_native_steps: expected num_envs x action_size actions");
    }
    const std::span<const float> flat(actions.data(), static_cast<std::size_t>(actions.size()));
    const py::gil_scoped_release unlocked;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < steps; ++i) envs_->step(flat);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Frees the environments; every later call but close raises.
  void close() {
    const auto lock = gate_.enter();
    envs_.reset();
  }

  // Fixed at construction, so they still answer once closed.
  std::size_t num_envs() const { return num_envs_; }
  std::size_t observation_size() const { return observation_size_; }
  std::size_t action_size() const { return action_size_; }
  std::uint32_t discrete_choices() const { return discrete_choices_; }
  unsigned threads() const { return threads_; }
  std::uint32_t steps_per_episode() const { return steps_per_episode_; }
  py::list observation_names() const { return observation_names_; }
  const std::vector<std::pair<double, double>>& observation_bounds() const { return observation_bounds_; }

 private:
  py::array_t<float> observations(std::span<const float> buffer) const {
    return copy_of(buffer, {static_cast<py::ssize_t>(envs_->num_envs()), static_cast<py::ssize_t>(envs_->observation_size())});
  }
  static std::string shape_text(const py::array& array) {
    std::string text = "(";
    for (py::ssize_t d = 0; d < array.ndim(); ++d) text += (d ? ", " : "") + std::to_string(array.shape(d));
    return text + (array.ndim() == 1 ? ",)" : ")");
  }

  configs::Catalog catalog_;  // the environments build their worlds from it at every reset
  std::unique_ptr<rl::VectorEnv> envs_;  // null once closed
  std::uint32_t discrete_choices_ = 0;
  std::size_t num_envs_ = 0, observation_size_ = 0, action_size_ = 0;
  unsigned threads_ = 0;
  std::uint32_t steps_per_episode_ = 0;
  bool reset_ = false;  // reset() was called: step() may run
  bool next_step_ = false;  // Gymnasium's NEXT_STEP autoreset, else SAME_STEP
  py::list observation_names_;
  std::vector<std::pair<double, double>> observation_bounds_;
  CallerGate gate_;
};

}  // namespace

void bind_vector_env(py::module_& m) {
  py::class_<PyVectorEnv>(m, "_VectorEnv")
      .def(py::init<std::size_t, const py::object&, const py::object&, unsigned, const py::dict&, bool>(),
           py::arg("num_envs"), py::arg("config"), py::arg("trace"), py::arg("threads"), py::arg("overrides"),
           py::arg("next_step_autoreset"))
      .def("reset", &PyVectorEnv::reset, py::arg("seed"), py::arg("options"))
      .def("step", &PyVectorEnv::step, py::arg("actions"))
      .def("time_native_steps", &PyVectorEnv::time_native_steps, py::arg("actions"), py::arg("steps"))
      .def("close", &PyVectorEnv::close)
      .def_property_readonly("num_envs", &PyVectorEnv::num_envs)
      .def_property_readonly("observation_size", &PyVectorEnv::observation_size)
      .def_property_readonly("action_size", &PyVectorEnv::action_size)
      .def_property_readonly("discrete_choices", &PyVectorEnv::discrete_choices)
      .def_property_readonly("threads", &PyVectorEnv::threads)
      .def_property_readonly("steps_per_episode", &PyVectorEnv::steps_per_episode)
      .def_property_readonly("observation_names", &PyVectorEnv::observation_names)
      .def_property_readonly("observation_bounds", &PyVectorEnv::observation_bounds);
}

}  // namespace meshsim::python
