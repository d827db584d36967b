#include "configs/service_classes.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace meshsim::configs {
namespace {

using nlohmann::json;

// vLLM takes any integer; a bound keeps a typo (a timestamp pasted in) from passing.
constexpr double kMaxPriority = 1e6;

metrics::ServiceClass read_class(ObjectReader& entry, const metrics::SloTargets& defaults) {
  metrics::ServiceClass c;
  c.slo = defaults;
  entry.read("name", c.name);
  if (c.name.empty()) entry.fail("name", "expected the class's name");
  double priority = 0;
  entry.read("priority", priority, "an integer in [-1e6, 1e6] (lower goes first)",
             [](double v) { return v == std::floor(v) && std::abs(v) <= kMaxPriority; });
  c.priority = static_cast<std::int32_t>(priority);
  entry.read_optional("share", c.share, "a fraction in (0, 1]", [](double v) { return v > 0 && v <= 1; });
  if (const json* clients = entry.raw("clients")) {
    const bool names = clients->is_array() && !clients->empty() &&
                       std::all_of(clients->begin(), clients->end(),
                                   [](const json& v) { return v.is_string() && !v.get<std::string>().empty(); });
    if (names) {
      c.clients = clients->get<std::vector<std::string>>();
    } else {
      entry.fail("clients", "expected a list of ServeGen client names (\"chunk-3\")");
    }
  }
  ObjectReader slo(entry.raw("slo"), entry.path_of("slo"), entry.errors());
  slo.read_duration("ttft_ms", c.slo.ttft, 1e-3);
  double per_token_ms = c.slo.ttft_per_prompt_token_s * 1e3;
  slo.read("ttft_ms_per_prompt_token", per_token_ms, "a number of milliseconds in [0, 1e6]",
           [](double v) { return v >= 0 && v <= 1e6; });
  c.slo.ttft_per_prompt_token_s = per_token_ms * 1e-3;
  slo.read_duration("tbt_ms", c.slo.tbt, 1e-3);
  slo.finish();
  return c;
}

// By client (a ServeGen workload): classes name their clients, and at most one names none
// (it takes the others).
void wire_clients(ObjectReader& reader, ScenarioConfig& config) {
  auto* servegen = std::get_if<traces::ServeGenSpec>(&config.workload.source);
  if (servegen == nullptr) {
    reader.fail("classes", "classes by \"clients\" need a ServeGen workload (workload.servegen)");
    return;
  }
  std::set<std::string> seen;
  for (std::size_t c = 0; c < config.replay.classes.size(); ++c) {
    const auto& service_class = config.replay.classes[c];
    if (service_class.share) {
      reader.fail("classes", "expected either shares or clients, not both");
      return;
    }
    if (service_class.clients.empty()) {
      if (servegen->other_class) {
        reader.fail("classes", "at most one class may name no clients (it takes the clients no class names)");
        return;
      }
      servegen->other_class = static_cast<std::uint8_t>(c);
    }
    for (const std::string& client : service_class.clients) {
      if (!seen.insert(client).second) {
        reader.fail("classes", "client '" + client + "' is named by two classes");
        return;
      }
      servegen->client_classes.emplace_back(client, static_cast<std::uint8_t>(c));
    }
  }
}

// Shares for every class (summing to 1), or for none: then the trace names each
// request's class, or the classes name a ServeGen workload's clients.
void wire_workload(ObjectReader& reader, ScenarioConfig& config) {
  const auto& classes = config.replay.classes;
  if (std::any_of(classes.begin(), classes.end(), [](const auto& c) { return !c.clients.empty(); })) {
    wire_clients(reader, config);
    return;
  }
  std::size_t shared = 0;
  double sum = 0;
  for (const auto& c : classes) {
    shared += c.share.has_value();
    sum += c.share.value_or(0.0);
  }
  auto* file = std::get_if<traces::TraceFileSpec>(&config.workload.source);
  const bool column = file != nullptr && file->columns.service_class.has_value();
  if (shared == 0 && !column) {
    reader.fail("classes", "expected a share for each class, a trace naming each request's class "
                           "(workload.trace.columns.class), or a ServeGen workload's clients for each class");
  } else if (shared > 0 && column) {
    reader.fail("classes", "expected either shares or the trace's class column (workload.trace.columns.class), "
                           "not both");
  } else if (shared > 0 && shared < classes.size()) {
    reader.fail("classes", "expected a share for every class or for none (" + std::to_string(shared) + " of " +
                               std::to_string(classes.size()) + " have one)");
  } else if (shared > 0 && std::abs(sum - 1.0) > 1e-6) {
    reader.fail("classes", "expected shares summing to 1, got " + std::to_string(sum));
  } else if (shared > 0) {
    for (const auto& c : classes) config.workload.class_shares.push_back(*c.share);
  } else {
    for (const auto& c : classes) file->columns.class_names.push_back(c.name);
  }
}

}  // namespace

void parse_service_classes(ObjectReader& reader, ScenarioConfig& config) {
  const json* list = reader.raw("classes");
  auto* file = std::get_if<traces::TraceFileSpec>(&config.workload.source);
  if (list == nullptr || list->is_null()) {
    if (file != nullptr && file->columns.service_class) {
      reader.errors().add("workload.trace.columns.class", "a class column needs the scenario's classes (\"classes\")");
    }
    return;
  }
  if (!list->is_array() || list->empty() || list->size() > metrics::kMaxServiceClasses) {
    reader.fail("classes", "expected a list of 1 to " + std::to_string(metrics::kMaxServiceClasses) +
                               " classes {\"name\", \"priority\", \"share\", \"slo\"}");
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string where = reader.path_of("classes") + "[" + std::to_string(i) + "]";
    ObjectReader entry(&(*list)[i], where, reader.errors());
    metrics::ServiceClass c = read_class(entry, config.replay.slo);
    if (!c.name.empty() && !names.insert(c.name).second) entry.fail("name", "'" + c.name + "' names two classes");
    entry.finish();
    config.replay.classes.push_back(std::move(c));
  }
  wire_workload(reader, config);
  config.workload.class_count = config.replay.classes.size();
  if (auto* llm = std::get_if<LlmServingSpec>(&config.serving)) {
    for (const auto& c : config.replay.classes) llm->class_priorities.push_back(c.priority);
  }
}

json service_classes_to_json(const std::vector<metrics::ServiceClass>& classes) {
  json out = json::array();
  for (const auto& c : classes) {
    json entry{{"name", c.name},
               {"priority", c.priority},
               {"slo",
                {{"ttft_ms", c.slo.ttft.ms()},
                 {"ttft_ms_per_prompt_token", c.slo.ttft_per_prompt_token_s * 1e3},
                 {"tbt_ms", c.slo.tbt.ms()}}}};
    if (c.share) entry["share"] = *c.share;
    if (!c.clients.empty()) entry["clients"] = c.clients;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace meshsim::configs
