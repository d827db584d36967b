#pragma once

// Shared by the Python bindings (tools/python): turning Python values into the config
// loader's overrides, and errors into Python exceptions.

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "configs/overrides.hpp"
#include "configs/catalog.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::python {

namespace py = pybind11;

// A Python value (None, bool, int, float, str, list/tuple, dict with str keys) as JSON.
nlohmann::json to_json(const py::handle& value, const std::string& where);

// JSON as Python values (dicts, lists, str, int, float, bool, None).
py::object to_python(const nlohmann::json& value);

// Overrides from a dict {"key.path": value} (a key "a__b" also means "a.b", for keyword
// arguments).
std::vector<configs::Override> overrides_from(const py::dict& overrides);

// The path of `config` (None: `fallback`).
std::string config_path(const py::object& config, const std::string& fallback);

// The scenario at `config` (None: `fallback`, a bundled scenario path) with `overrides`,
// and `trace` (None: the config's workload) as its workload's source, read as meshsim
// replay --trace reads it; raises ValueError naming the file and key on a bad config.
configs::ScenarioConfig load_config(const py::object& config, const std::string& fallback, const py::object& trace,
                                    const py::dict& overrides);

// The bundled catalog with the config's own `catalog` folder over it (ValueError naming
// the file when it does not read).
configs::Catalog catalog_for(const configs::ScenarioConfig& config);

// The value, or a ValueError with the error's message.
template <typename T>
T value_or_raise(Expected<T> expected) {
  if (!expected) throw py::value_error(expected.error().message);
  return std::move(*expected);
}

}  // namespace meshsim::python
