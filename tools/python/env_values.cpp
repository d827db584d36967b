#include "tools/python/env_values.hpp"

#include <limits>

#include "configs/scenario_config.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::python {

namespace {

// Calls visit(name, member) for every EnvInfo field, in the order Python shows them.
template <typename Visit>
void for_each_info_field(Visit&& visit) {
  visit("window_start_s", &rl::EnvInfo::window_start_s);
  visit("rate_scale", &rl::EnvInfo::rate_scale);
  visit("scale_up_delay_s", &rl::EnvInfo::scale_up_delay_s);
  visit("sim_seconds", &rl::EnvInfo::sim_seconds);
  visit("left", &rl::EnvInfo::left);
  visit("slo_met", &rl::EnvInfo::slo_met);
  visit("slo_attainment", &rl::EnvInfo::slo_attainment);
  visit("mean_instances", &rl::EnvInfo::mean_instances);
  visit("gpu_hours", &rl::EnvInfo::gpu_hours);
  visit("scale_ups", &rl::EnvInfo::scale_ups);
  visit("scale_downs", &rl::EnvInfo::scale_downs);
  visit("migrations", &rl::EnvInfo::migrations);
  visit("blocked", &rl::EnvInfo::blocked);
  visit("active", &rl::EnvInfo::active);
  visit("starting", &rl::EnvInfo::starting);
  visit("draining", &rl::EnvInfo::draining);
  visit("late_waiting", &rl::EnvInfo::late_waiting);
  visit("slo_penalty", &rl::EnvInfo::slo_penalty);
  visit("waiting_penalty", &rl::EnvInfo::waiting_penalty);
  visit("cost_penalty", &rl::EnvInfo::cost_penalty);
  visit("churn_penalty", &rl::EnvInfo::churn_penalty);
}

std::string type_name(const py::handle& value) { return py::str(py::type::of(value).attr("__name__")); }

// Python's bool, and numpy's (which is no int subclass): never taken for a number.
bool is_bool(const py::handle& value) {
  if (PyBool_Check(value.ptr())) return true;
  const std::string type = type_name(value);
  return type == "bool_" || type == "bool";
}

// A number option: an int or a float, numpy's too. Wrong types are a TypeError naming the
// key (the ranges are ScalingEnv::check's, a ValueError).
double number_option(const std::string& key, const py::handle& value) {
  const bool number = PyFloat_Check(value.ptr()) || PyIndex_Check(value.ptr()) || py::hasattr(value, "__float__");
  if (is_bool(value) || !number || PyUnicode_Check(value.ptr())) {
    throw py::type_error("reset option " + key + ": expected a number, got " + type_name(value));
  }
  return py::float_(value.cast<py::object>()).cast<double>();
}

// An integer option: an int, numpy's too (not a float, even a whole one).
std::uint32_t count_option(const std::string& key, const py::handle& value) {
  if (is_bool(value) || !PyIndex_Check(value.ptr())) {
    throw py::type_error("reset option " + key + ": expected an integer, got " + type_name(value));
  }
  const py::int_ number(py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr())));
  if (number < py::int_(0) || number > py::int_(std::numeric_limits<std::uint32_t>::max())) {
    throw py::value_error("reset option " + key + ": expected an integer in [1, 2^32), got " +
                          py::repr(number).cast<std::string>());
  }
  return number.cast<std::uint32_t>();
}

}  // namespace

EnvInputs env_inputs(const py::object& config, const py::object& trace, const py::dict& overrides) {
  auto scenario = load_config(config, configs::default_training_path(), trace, overrides);
  if (!scenario.rl) scenario.rl = configs::RlSpec{};
  auto workload = value_or_raise(traces::open_episode_workload(scenario.workload, scenario.seed));
  return {std::move(scenario), std::move(workload)};
}

rl::ResetOptions reset_options_of(const py::dict& options, const rl::ScalingEnv& env) {
  rl::ResetOptions out;
  for (const auto& [key, value] : options) {
    const std::string name = py::str(key);
    if (name == "window_start_s") {
      out.window_start_s = number_option(name, value);
    } else if (name == "rate_scale") {
      out.rate_scale = number_option(name, value);
    } else if (name == "scale_up_delay_s") {
      out.scale_up_delay_s = number_option(name, value);
    } else if (name == "start_instances") {
      out.start_instances = count_option(name, value);
    } else {
      throw py::value_error("reset options: unknown key '" + name +
                            "' (expected window_start_s, rate_scale, scale_up_delay_s, start_instances)");
    }
  }
  if (auto checked = env.check(out); !checked) throw py::value_error(checked.error().message);
  // The engine plays a window past the workload (an episode of no request); asked for
  // by hand it is a mistake, as meshsim eval's windows past the data are.
  if (out.window_start_s && *out.window_start_s >= env.workload_span_s()) {
    throw py::value_error("reset option window_start_s: " + number_text(*out.window_start_s) +
                          " s is past the workload's last request (" + number_text(env.workload_span_s()) +
                          " s): the episode would hold no request");
  }
  return out;
}

py::dict info_of(const rl::EnvInfo& info) {
  py::dict out;
  for_each_info_field([&](const char* name, auto field) { out[name] = info.*field; });
  return out;
}

py::dict infos_of(std::span<const rl::EnvInfo> infos) {
  const auto n = static_cast<py::ssize_t>(infos.size());
  py::dict out;
  for_each_info_field([&](const char* name, auto field) {
    using T = std::decay_t<decltype(infos[0].*field)>;
    py::array_t<T> values(n);
    T* data = values.mutable_data();
    for (py::ssize_t i = 0; i < n; ++i) data[i] = infos[static_cast<std::size_t>(i)].*field;
    out[name] = values;
  });
  return out;
}

py::list observation_names_of(const rl::ScalingEnv& env) {
  py::list out;
  for (const std::string& name : env.observation_names()) out.append(name);
  return out;
}

std::unique_lock<std::mutex> CallerGate::enter() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    const py::gil_scoped_release waiting;
    lock.lock();
  }
  return lock;
}

}  // namespace meshsim::python
