#include "sim/script/script_world.hpp"

#include <set>
#include <utility>

#include "sim/script/script_args.hpp"

namespace meshsim::script {
namespace {

using configs::ObjectReader;
using nlohmann::json;
namespace sch = meshsim::scheduler;

// Every custom resource name the script mentions, so the default node carries them.
void collect_custom(const json& node, std::set<std::string>& names) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "custom" && value.is_object()) {
        for (const auto& [name, amount] : value.items()) names.insert(name);
      }
      collect_custom(value, names);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) collect_custom(item, names);
  }
}

// The script's nodes; without a "nodes" array, one large default node.
void add_nodes(sch::Scheduler& scheduler, const json& script, const std::string& file) {
  if (!script.contains("nodes")) {
    std::set<std::string> custom;
    collect_custom(script, custom);
    auto capacity = sch::ResourceVector::of(1e6, 1e9, 1e6);
    for (const auto& name : custom) capacity.with_custom(name, 1e6);
    scheduler.cluster().add_node({"default-node", capacity, {}, "default"});
    return;
  }
  const json& nodes = script["nodes"];
  if (!nodes.is_array()) throw ScriptError{file + ": nodes: expected an array of {name, resources, labels}"};
  configs::ConfigErrors errors(file);
  std::set<std::string> named;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ObjectReader node(&nodes[i], "nodes[" + std::to_string(i) + "]", errors);
    sch::NodeSpec spec;
    spec.name = require_string(node, "name");
    spec.capacity = read_resources(node, "resources");
    spec.labels = read_labels(node, "labels");
    node.read("sku", spec.sku);
    if (!named.insert(spec.name).second) node.fail("name", "'" + spec.name + "' names an earlier node too");
    node.finish();
    if (errors.empty()) scheduler.cluster().add_node(std::move(spec));
  }
  if (!errors.empty()) throw ScriptError{errors.to_string()};
}

}  // namespace

ScriptWorld::ScriptWorld(const json& setup, std::string file_name, StateStore* state_store)
    : file(std::move(file_name)), states(state_store) {
  add_nodes(scheduler, setup, file);
  if (setup.contains("serving")) {
    auto world = ServingWorld::create(setup, file, sim);
    if (!world) throw ScriptError{world.error().message};
    serving = std::move(*world);
  } else if (setup.contains("scaling")) {
    throw ScriptError{file + ": scaling: needs a \"serving\" object (the cluster it scales)"};
  }
}

json ScriptWorld::advance(double seconds) {
  if (auto moved = clock.advance(seconds); !moved) return json{{"success", false}, {"error", moved.error().message}};
  // Simulated agents heartbeat as time passes, unless hung.
  for (const sch::Agent* agent : scheduler.agents().list_agents()) {
    if (clock.hanging.count(agent->spec.name) == 0) scheduler.record_heartbeat(agent->spec.name);
  }
  return json{{"success", true}, {"time", clock.now_s()}};
}

std::vector<std::string> ScriptWorld::check_invariants() const {
  auto problems = scheduler.check_invariants();
  if (serving) {
    for (auto& problem : serving->check_invariants()) problems.push_back("serving: " + problem);
  }
  return problems;
}

}  // namespace meshsim::script
