// meshsim.ScalingEnv's native half: one rl::ScalingEnv with Gymnasium's single-environment
// meanings. Unlike a VectorEnv it never resets by itself: after the step that truncates
// an episode, step() raises until reset() is called. The spaces live in
// meshsim/scaling_env.py.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>
#include <vector>

#include "tools/python/bindings.hpp"
#include "tools/python/env_values.hpp"

namespace meshsim::python {

namespace {

class PyScalingEnv {
 public:
  PyScalingEnv(const py::object& config, const py::object& trace, const py::dict& overrides) {
    auto [scenario, workload] = env_inputs(config, trace, overrides);
    catalog_ = catalog_for(scenario);
    env_ = value_or_raise(rl::ScalingEnv::create(scenario, catalog_, std::move(workload)));
    discrete_choices_ = configs::chooses(scenario.rl->action) ? env_->discrete_choices() : 0;
    observation_names_ = observation_names_of(*env_);
    observation_bounds_ = (*env_).observation_bounds();
    action_size_ = env_->action_size();
    steps_per_episode_ = env_->steps_per_episode();
    obs_.resize(env_->observation_size());
  }

  py::tuple reset(std::optional<std::uint64_t> seed, const py::dict& options) {
    const auto lock = gate_.enter_open(env_, "ScalingEnv");
    const rl::ResetOptions reset_options = reset_options_of(options, *env_);
    rl::EnvInfo info;
    {
      const py::gil_scoped_release unlocked;
      info = env_->reset(seed, obs_, reset_options);
    }
    in_episode_ = true;
    return py::make_tuple(observation(), info_of(info));
  }

  py::tuple step(const py::array_t<float, py::array::c_style | py::array::forcecast>& action) {
    const auto lock = gate_.enter_open(env_, "ScalingEnv");
    if (!in_episode_) {
      throw py::value_error(ended_ ? "step: the episode ended (truncated); call reset() to start the next"
                                   : "step: call reset() before the first step");
    }
    const std::size_t a = action_size_;
    if (static_cast<std::size_t>(action.size()) != a || action.ndim() > 1) {
      throw py::value_error("step: expected an action of shape (" + std::to_string(a) + ",), got " +
                            std::to_string(action.size()) + " values in " + std::to_string(action.ndim()) +
                            " dimensions");
    }
    const std::span<const float> flat(action.data(), a);
    rl::StepResult result;
    {
      const py::gil_scoped_release unlocked;
      result = env_->step(flat, obs_);
    }
    in_episode_ = !result.truncated && !result.terminated;
    ended_ = !in_episode_;
    return py::make_tuple(observation(), result.reward, result.terminated, result.truncated, info_of(result.info));
  }

  void close() {
    const auto lock = gate_.enter();
    env_.reset();
  }

  // Fixed at construction, so they still answer once closed.
  std::size_t observation_size() const { return obs_.size(); }
  std::size_t action_size() const { return action_size_; }
  std::uint32_t discrete_choices() const { return discrete_choices_; }
  std::uint32_t steps_per_episode() const { return steps_per_episode_; }
  py::list observation_names() const { return observation_names_; }
  const std::vector<std::pair<double, double>>& observation_bounds() const { return observation_bounds_; }

 private:
  py::array_t<float> observation() const {
    py::array_t<float> out(static_cast<py::ssize_t>(obs_.size()));
    std::memcpy(out.mutable_data(), obs_.data(), obs_.size() * sizeof(float));
    return out;
  }

  configs::Catalog catalog_;  // the environment builds its world from it at every reset
  std::unique_ptr<rl::ScalingEnv> env_;  // null once closed
  std::vector<float> obs_;
  bool in_episode_ = false, ended_ = false;
  std::uint32_t discrete_choices_ = 0;
  std::size_t action_size_ = 0;
  std::uint32_t steps_per_episode_ = 0;
  py::list observation_names_;
  std::vector<std::pair<double, double>> observation_bounds_;
  CallerGate gate_;
};

}  // namespace

void bind_scaling_env(py::module_& m) {
  py::class_<PyScalingEnv>(m, "_ScalingEnv")
      .def(py::init<const py::object&, const py::object&, const py::dict&>(), py::arg("config"), py::arg("trace"),
           py::arg("overrides"))
      .def("reset", &PyScalingEnv::reset, py::arg("seed"), py::arg("options"))
      .def("step", &PyScalingEnv::step, py::arg("action"))
      .def("close", &PyScalingEnv::close)
      .def_property_readonly("observation_size", &PyScalingEnv::observation_size)
      .def_property_readonly("action_size", &PyScalingEnv::action_size)
      .def_property_readonly("discrete_choices", &PyScalingEnv::discrete_choices)
      .def_property_readonly("observation_names", &PyScalingEnv::observation_names)
      .def_property_readonly("observation_bounds", &PyScalingEnv::observation_bounds)
      .def_property_readonly("steps_per_episode", &PyScalingEnv::steps_per_episode);
  // A recipe's episode length in decisions, its workload unread (the registration's
  // max_episode_steps).
  m.def(
      "_episode_steps",
      [](const py::object& config) {
        auto scenario = load_config(config, configs::default_training_path(), py::none(), py::dict());
        return rl::ScalingEnv::episode_steps(scenario.rl.value_or(configs::RlSpec{}));
      },
      py::arg("config"));
}

}  // namespace meshsim::python
