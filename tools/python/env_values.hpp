#pragma once

// Shared by meshsim.VectorEnv and meshsim.ScalingEnv's native halves: the scaling
// environment's inputs, its reset options and infos as Python values, and the gate that
// lets one Python caller in at a time.

#include <pybind11/numpy.h>

#include <mutex>
#include <span>
#include <string>

#include "rl/env/scaling_env.hpp"
#include "tools/python/common.hpp"

namespace meshsim::python {

// What an environment is built from: the scenario (None: the default training recipe)
// with `overrides` and `trace`, with an rl object, and its workload held in memory.
struct EnvInputs {
  configs::ScenarioConfig scenario;
  traces::SharedWorkload workload;
};
EnvInputs env_inputs(const py::object& config, const py::object& trace, const py::dict& overrides);

// reset()'s options {"window_start_s": 600, ...}, checked as config values are: an
// unknown key or a value out of range is a ValueError, a wrong type a TypeError, each
// naming the option. `env` checks the ranges.
rl::ResetOptions reset_options_of(const py::dict& options, const rl::ScalingEnv& env);

// One environment's info as a dict of Python scalars (rl/env/scaling_env.hpp's EnvInfo).
py::dict info_of(const rl::EnvInfo& info);
// Several environments' infos as one dict of arrays, one entry per environment
// (Gymnasium 1.x's vector layout).
py::dict infos_of(std::span<const rl::EnvInfo> infos);

// The observation names as a Python list (rl::observation_names).
py::list observation_names_of(const rl::ScalingEnv& env);

// One caller at a time: an environment and its buffers are shared, so a second Python
// thread waits for the first to finish (two threads stepping one VectorEnv crashed
// before). It waits with the GIL released, so the thread inside can take the GIL back
// to build its results.
class CallerGate {
 public:
  std::unique_lock<std::mutex> enter();
  // enter(), then ValueError("<name> is closed") when `env` (checked inside) was freed.
  template <typename Owner>
  std::unique_lock<std::mutex> enter_open(const Owner& env, const char* name) {
    auto lock = enter();
    if (!env) throw py::value_error(std::string(name) + " is closed");
    return lock;
  }

 private:
  std::mutex mutex_;
};

}  // namespace meshsim::python
