// meshsim.replay's native half: a scenario replayed in memory with the GIL released, its
// requests and intervals gathered into typed columns (the run folder's CSV columns from
// tools/cli/run_columns, so the two never disagree) and handed over as numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "tools/runs/replay_to_end.hpp"
#include "tools/runs/run_columns.hpp"
#include "tools/python/bindings.hpp"
#include "tools/python/common.hpp"

namespace meshsim::python {

namespace {

using cli::Cell;
using cli::ColumnType;

// One column's values in the type numpy will get: int64 (absent ids -1), float64 (absent
// seconds NaN) or words.
struct StoredColumn {
  ColumnType type;
  std::vector<std::int64_t> integers;
  std::vector<double> reals;
  std::vector<std::string_view> words;  // to_string()'s literals: they outlive the run

  void push(const Cell& cell) {
    switch (type) {
      case ColumnType::kCount:
      case ColumnType::kOptionalId:
        integers.push_back(std::holds_alternative<std::uint64_t>(cell)
                               ? static_cast<std::int64_t>(std::get<std::uint64_t>(cell))
                               : -1);
        break;
      case ColumnType::kSeconds:
      case ColumnType::kFraction:
      case ColumnType::kGpus:
        reals.push_back(std::holds_alternative<double>(cell) ? std::get<double>(cell)
                                                              : std::numeric_limits<double>::quiet_NaN());
        break;
      case ColumnType::kWord:
        words.push_back(std::holds_alternative<std::string_view>(cell) ? std::get<std::string_view>(cell) : "");
        break;
    }
  }

  py::object to_numpy() const {
    const auto copy = [](const auto& values) {
      using T = typename std::decay_t<decltype(values)>::value_type;
      py::array_t<T> out(static_cast<py::ssize_t>(values.size()));
      if (!values.empty()) std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(T));
      return py::object(out);
    };
    switch (type) {
      case ColumnType::kCount:
      case ColumnType::kOptionalId:
        return copy(integers);
      case ColumnType::kWord: {
        py::list list;
        for (const auto word : words) list.append(py::str(word.data(), word.size()));
        return py::module_::import("numpy").attr("array")(list, py::arg("dtype") = "U");
      }
      default:
        return copy(reals);
    }
  }
};

// A table's columns filled row by row.
template <typename Columns>
class ColumnTable {
 public:
  explicit ColumnTable(const Columns& columns) : columns_(columns) {
    for (const auto& column : columns) stored_.push_back(StoredColumn{column.type, {}, {}, {}});
  }

  template <typename Row, typename... Context>
  void add(const Row& row, Context... context) {
    for (std::size_t i = 0; i < columns_.size(); ++i) stored_[i].push(columns_[i].get(row, context...));
  }

  // {name: array} in the CSV's column order.
  py::dict to_numpy() const {
    py::dict out;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      out[py::str(columns_[i].name.data(), columns_[i].name.size())] = stored_[i].to_numpy();
    }
    return out;
  }

 private:
  const Columns& columns_;
  std::vector<StoredColumn> stored_;
};

// Thrown out of the run when Python has a signal to handle (Ctrl-C): the run is dropped
// and the signal's exception (KeyboardInterrupt) raised in its place. Not a
// std::exception, so nothing on the way mistakes it for a simulation error.
struct Interrupted {};

class InMemoryObserver final : public replay::ReplayObserver {
 public:
  explicit InMemoryObserver(metrics::TbtDefinition tbt) : tbt_(tbt) {}
  void on_request(const metrics::RequestRecord& record) override {
    requests.add(record, tbt_);
    classes.push_back(record.service_class);
  }
  void on_interval(const metrics::TimeseriesRow& row) override { timeseries.add(row); }
  void on_warning(const std::string& message) override { warnings.push_back(message); }
  // The run reports progress every few thousand events; about ten times a wall second it
  // takes the GIL to let Python see signals (only the main thread runs their handlers),
  // so Ctrl-C stops a long replay at once rather than when it ends.
  void on_progress(double /*fraction*/, engine::SimTime /*now*/) override {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_signal_check_) return;
    next_signal_check_ = now + std::chrono::milliseconds(100);
    const py::gil_scoped_acquire python;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
  }

  ColumnTable<decltype(cli::kRequestColumns)> requests{cli::kRequestColumns};
  ColumnTable<decltype(cli::kTimeseriesColumns)> timeseries{cli::kTimeseriesColumns};
  std::vector<std::string> warnings;
  std::vector<std::uint8_t> classes;  // each request's class of service, as requests' rows

 private:
  metrics::TbtDefinition tbt_;
  std::chrono::steady_clock::time_point next_signal_check_{};
};

// (summary dict, requests columns, timeseries columns, warnings)
py::tuple replay(const py::object& config, const py::object& trace, const py::dict& overrides) {
  const std::string path = config_path(config, configs::default_scenario_path());
  const auto scenario = load_config(config, configs::default_scenario_path(), trace, overrides);
  const configs::Catalog catalog = catalog_for(scenario);
  InMemoryObserver observer(scenario.replay.slo.tbt_definition);
  Expected<cli::FinishedReplay> finished = Error{""};
  try {
    py::gil_scoped_release release;
    finished = cli::replay_to_end(scenario, path, catalog, observer);
  } catch (const Interrupted&) {
    throw py::error_already_set();  // the handler's exception, set by PyErr_CheckSignals
  }
  if (!finished) throw py::value_error(finished.error().message);
  py::dict requests = observer.requests.to_numpy();
  // With classes of service, each request's class by name (as requests.csv's last column).
  if (!scenario.replay.classes.empty()) {
    py::list names;
    for (const std::uint8_t c : observer.classes) names.append(scenario.replay.classes.at(c).name);
    requests["class"] = names;
  }
  return py::make_tuple(to_python(finished->summary), requests, observer.timeseries.to_numpy(), observer.warnings);
}

}  // namespace

void bind_replay(py::module_& m) {
  m.def("replay", &replay, py::arg("config"), py::arg("trace"), py::arg("overrides"),
        "Replays a scenario in memory: (summary, requests columns, timeseries columns, warnings)");
}

}  // namespace meshsim::python
