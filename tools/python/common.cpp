#include "tools/python/common.hpp"

#include <pybind11/stl.h>

#include "tools/runs/command_inputs.hpp"

namespace meshsim::python {

nlohmann::json to_json(const py::handle& value, const std::string& where) {
  if (value.is_none()) return nullptr;
  // bool before int: Python's True is an int too (numpy's bool is not, but is a bool).
  if (py::isinstance<py::bool_>(value) || py::isinstance(value, py::module_::import("numpy").attr("bool_"))) {
    return py::bool_(py::reinterpret_borrow<py::object>(value)).cast<bool>();
  }
  // Integers as integers, numpy's too (their __float__ would make 5 a 5.0 that an integer
  // key refuses), within the 64 bits a config holds.
  if (py::isinstance(value, py::module_::import("numbers").attr("Integral"))) {
    const py::int_ number(py::reinterpret_borrow<py::object>(value));
    try {
      if (number >= py::int_(0)) return number.cast<std::uint64_t>();
      return number.cast<std::int64_t>();
    } catch (const py::cast_error&) {
      const std::string digits = py::repr(value).cast<std::string>();
      throw py::value_error(where + ": " + (digits.size() > 24 ? digits.substr(0, 20) + "..." : digits) +
                            " (" + std::to_string(digits.size()) + " digits) is beyond the 64-bit integers a config holds");
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& item : value) list.push_back(to_json(item, where));
    return list;
  }
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) object[py::str(key).cast<std::string>()] = to_json(item, where);
    return object;
  }
  // numpy scalars and anything else with a float value.
  if (py::hasattr(value, "__float__")) return value.cast<double>();
  throw py::type_error(where + ": cannot use a " + py::str(py::type::handle_of(value)).cast<std::string>() + " as a config value");
}

py::object to_python(const nlohmann::json& value) {
  // json.loads keeps big integers exact; bytes that are not UTF-8 (a path) are replaced.
  return py::module_::import("json").attr("loads")(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::vector<configs::Override> overrides_from(const py::dict& overrides) {
  std::vector<configs::Override> out;
  for (const auto& [key, value] : overrides) {
    std::string path = py::str(key).cast<std::string>();
    for (std::size_t at = path.find("__"); at != std::string::npos; at = path.find("__", at + 1)) {
      path.replace(at, 2, ".");
    }
    out.push_back({path, to_json(value, path)});
  }
  return out;
}

std::string config_path(const py::object& config, const std::string& fallback) {
  return config.is_none() ? fallback : py::str(config).cast<std::string>();
}

configs::ScenarioConfig load_config(const py::object& config, const std::string& fallback, const py::object& trace,
                                    const py::dict& overrides) {
  auto loaded = value_or_raise(configs::load_scenario_with(config_path(config, fallback), overrides_from(overrides)));
  if (!trace.is_none()) loaded.workload.source = value_or_raise(cli::trace_file_spec(py::str(trace), "auto"));
  return loaded;
}

configs::Catalog catalog_for(const configs::ScenarioConfig& config) {
  return value_or_raise(configs::load_scenario_catalog(config));
}

}  // namespace meshsim::python
