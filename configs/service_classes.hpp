#pragma once

// The scenario's "classes": classes of service, each a priority and an SLO (configs/
// README.md). One home for reading them and for wiring them into the parts that act on
// them: the workload (a trace's class column or the classes' shares), the serving (each
// class's priority) and the replay (each class's SLO).

#include <nlohmann/json.hpp>
#include <vector>

#include "configs/object_reader.hpp"
#include "configs/scenario_config.hpp"
#include "sim/metrics/service_class.hpp"

namespace meshsim::configs {

// Reads "classes" (after "slo", whose targets a class's SLO starts from) into
// config.replay.classes and wires them; problems go to `reader`'s errors with their key.
void parse_service_classes(ObjectReader& reader, ScenarioConfig& config);
nlohmann::json service_classes_to_json(const std::vector<metrics::ServiceClass>& classes);

}  // namespace meshsim::configs
