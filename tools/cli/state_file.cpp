#include "tools/cli/state_file.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "configs/config_file.hpp"
#include "sim/script/script_args.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/checked_json.hpp"
#include "traces/json_text.hpp"

namespace meshsim::scheduler {

using nlohmann::json;
// Read through CheckedJson: a number that does not fit its field is refused, never cast.
using StateJson = cli::CheckedJson;

namespace {
template <typename E, std::size_t N>
E enum_from(const StateJson& j, const EnumNames<E, N>& names) {
  const auto text = j.get<std::string>();
  if (auto value = names.parse(text)) return *value;
  throw std::invalid_argument("'" + text + "' is not one of " + names.accepted());
}
}  // namespace

// Amounts are kept in exact milli-units so a round trip cannot round.
void to_json(json& j, const ResourceVector& r) {
  j = {{"cpu_milli", r.cpu_milli()}, {"memory_milli", r.memory_milli()}, {"gpu_milli", r.gpu_milli()},
       {"custom_milli", r.custom_milli_all()}};
}
// One amount in milli-units, within what ResourceVector::of accepts ([0, kMaxAmount]
// units), so that it converts back to the same milli-units.
double amount_at(const StateJson& j) {
  constexpr auto kMaxMilli = static_cast<std::int64_t>(ResourceVector::kMaxAmount * 1000);
  const auto milli = j.get<std::int64_t>();
  if (milli < 0 || milli > kMaxMilli) {
    throw cli::UnfitNumber(&j, "expected milli-units in [0, " + std::to_string(kMaxMilli) + "], got " + j.dump());
  }
  return static_cast<double>(milli) / 1000.0;
}
void from_json(const StateJson& j, ResourceVector& r) {
  r = ResourceVector::of(amount_at(j.at("cpu_milli")), amount_at(j.at("memory_milli")), amount_at(j.at("gpu_milli")));
  for (const auto& entry : j.at("custom_milli")) {
    if (!entry.is_array() || entry.size() != 2) {
      throw std::invalid_argument("custom_milli: expected [name, milli] pairs");
    }
    r.with_custom(entry.at(0).get<std::string>(), amount_at(entry.at(1)));
  }
}

void to_json(json& j, const NodeSpec& n) { j = {{"name", n.name}, {"capacity", n.capacity}, {"labels", n.labels}, {"sku", n.sku}}; }
void from_json(const StateJson& j, NodeSpec& n) {
  n = {j.at("name"), j.at("capacity"), j.at("labels"), j.at("sku")};
}

void to_json(json& j, const PlacementGroup& pg) {
  j = {{"id", pg.id},
       {"name", pg.name},
       {"bundles", pg.bundles},
       {"strategy", kPlacementStrategyNames.name(pg.strategy)},
       {"ready", pg.state == PgState::kReady},
       {"nodes", pg.nodes}};
}
void from_json(const StateJson& j, PlacementGroup& pg) {
  pg.id = j.at("id");
  pg.name = j.at("name");
  pg.bundles = j.at("bundles").get<std::vector<ResourceVector>>();
  pg.strategy = enum_from(j.at("strategy"), kPlacementStrategyNames);
  pg.state = j.at("ready").get<bool>() ? PgState::kReady : PgState::kPending;
  pg.nodes = j.at("nodes").get<std::vector<std::uint32_t>>();
}

void to_json(json& j, const PoolSpec& p) {
  j = {{"name", p.name},
       {"labels", p.labels},
       {"resources", p.resources},
       {"target_agents", p.target_agents},
       {"placement_strategy", kPlacementStrategyNames.name(p.placement_strategy)}};
}
void from_json(const StateJson& j, PoolSpec& p) {
  p.name = j.at("name");
  p.labels = j.at("labels");
  p.resources = j.at("resources");
  p.target_agents = j.at("target_agents");
  p.placement_strategy = enum_from(j.at("placement_strategy"), kPlacementStrategyNames);
}

void to_json(json& j, const Agent& a) {
  j = {{"name", a.spec.name},         {"pool", a.spec.pool},
       {"kind", a.spec.kind},         {"resources", a.spec.resources},
       {"given_pg", a.spec.placement_group ? json(*a.spec.placement_group) : json(nullptr)},
       {"bundle_index", a.spec.bundle_index},
       {"placement_group", a.placement_group}, {"owns_placement_group", a.owns_placement_group},
       {"node", a.node},              {"task", a.task ? json(*a.task) : json(nullptr)},
       {"dedicated", a.dedicated},    {"last_heartbeat", a.last_heartbeat},
       {"held_for", a.held_for},      {"hold_until", a.hold_until}};
}
void from_json(const StateJson& j, Agent& a) {
  a.spec.name = j.at("name");
  a.spec.pool = j.at("pool");
  a.spec.kind = j.at("kind");
  a.spec.resources = j.at("resources");
  if (!j.at("given_pg").is_null()) a.spec.placement_group = j.at("given_pg").get<PgId>();
  a.spec.bundle_index = j.at("bundle_index");
  a.placement_group = j.at("placement_group");
  a.owns_placement_group = j.at("owns_placement_group");
  a.node = j.at("node");
  if (!j.at("task").is_null()) a.task = j.at("task").get<std::string>();
  a.dedicated = j.at("dedicated");
  a.last_heartbeat = j.at("last_heartbeat");
  a.held_for = j.at("held_for");
  a.hold_until = j.at("hold_until");
}

void to_json(json& j, const PgPoolConfig& c) {
  j = {{"enable", c.enable},
       {"high_priority_pg_specs", c.high_priority_pg_specs},
       {"enable_dynamic_pgs", c.enable_dynamic_pgs},
       {"max_dynamic_pgs", c.max_dynamic_pgs},
       {"enable_pg_reuse", c.enable_pg_reuse},
       {"high_priority_threshold", c.high_priority_threshold}};
}
void from_json(const StateJson& j, PgPoolConfig& c) {
  c.enable = j.at("enable");
  c.high_priority_pg_specs = j.at("high_priority_pg_specs").get<std::vector<ResourceVector>>();
  c.enable_dynamic_pgs = j.at("enable_dynamic_pgs");
  c.max_dynamic_pgs = j.at("max_dynamic_pgs");
  c.enable_pg_reuse = j.at("enable_pg_reuse");
  c.high_priority_threshold = j.at("high_priority_threshold");
}

void to_json(json& j, const PgPool::Entry& e) {
  j = {{"shape", e.shape}, {"reserved", e.reserved}, {"in_use", e.in_use}, {"served_before", e.served_before}};
}
void from_json(const StateJson& j, PgPool::Entry& e) {
  e = {j.at("shape").get<ResourceVector>(), j.at("reserved"), j.at("in_use"), j.at("served_before")};
}

void to_json(json& j, const PgPool::State& s) {
  j = {{"pool", s.pool},
       {"config", s.config},
       {"strategy", kPlacementStrategyNames.name(s.strategy)},
       {"pgs", s.pgs},
       {"dynamic_created", s.dynamic_created},
       {"dynamic_destroyed", s.dynamic_destroyed},
       {"reuse_hits", s.reuse_hits}};
}
void from_json(const StateJson& j, PgPool::State& s) {
  s.pool = j.at("pool");
  s.config = j.at("config");
  s.strategy = enum_from(j.at("strategy"), kPlacementStrategyNames);
  s.pgs = j.at("pgs").get<std::map<PgId, PgPool::Entry>>();
  s.dynamic_created = j.at("dynamic_created");
  s.dynamic_destroyed = j.at("dynamic_destroyed");
  s.reuse_hits = j.at("reuse_hits");
}

// Saved states, the policy and the stats keep the names the scenario output uses.
void to_json(json& j, const SavedState& s) { j = script::to_json(s); }
// A task's traits under the keys script::to_json(TaskTraits) writes. A saved state of a
// file from before saved states carried checkpoint_interval reads 0 (none).
void from_json(const StateJson& j, TaskTraits& t) {
  t.priority = j.at("priority");
  t.labels = j.at("labels");
  t.estimated_duration = j.at("estimated_duration");
  t.payload = j.at("payload");
  t.checkpoint_interval = j.value("checkpoint_interval", 0.0);
}

void from_json(const StateJson& j, SavedState& s) {
  from_json(j, static_cast<TaskTraits&>(s));
  s.task_id = j.at("task_id");
  s.pool_name = j.at("pool_name");
  s.agent_name = j.at("agent_name");
  s.elapsed = j.at("elapsed");
  if (j.contains("custom")) s.custom = j.at("custom").get<std::string>();
}

void to_json(json& j, const Task& t) {
  j = script::to_json(static_cast<const TaskTraits&>(t));
  j["id"] = t.id;
  j["pool"] = t.pool;
  j["agent"] = t.agent;
  j["start_time"] = t.start_time;
  j["seq"] = t.seq;
  j["state"] = kTaskStateNames.name(t.state);
  j["saved_state"] = t.saved_state ? json(*t.saved_state) : json(nullptr);
  j["lost_work"] = t.lost_work;
}
void from_json(const StateJson& j, Task& t) {
  from_json(j, static_cast<TaskTraits&>(t));
  t.id = j.at("id");
  t.pool = j.at("pool");
  t.agent = j.at("agent");
  t.start_time = j.at("start_time");
  t.seq = j.at("seq");
  t.state = enum_from(j.at("state"), kTaskStateNames);
  if (!j.at("saved_state").is_null()) t.saved_state = j.at("saved_state").get<SavedState>();
  t.lost_work = j.at("lost_work");
}

void to_json(json& j, const PreemptionPolicy& p) { j = script::to_json(p); }
void from_json(const StateJson& j, PreemptionPolicy& p) {
  for_each_policy_field([&](const char* name, auto field, auto) {
    auto& value = p.*field;
    using Value = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<Value, std::optional<double>>) {
      value = j.at(name).is_null() ? std::nullopt : std::optional(j.at(name).get<double>());
    } else {
      value = j.at(name).get<Value>();
    }
  });
}

void from_json(const StateJson& j, PreemptionRecord& r) {
  r = {j.at("timestamp"), j.at("task_id"), j.at("pool_name"), j.at("priority"),
       j.at("reason"),    j.at("lost_work"), j.at("preemptor")};
}

void to_json(json& j, const PreemptionStats& s) { j = script::to_json(s); }
void from_json(const StateJson& j, PreemptionStats& s) {
  s.total_preemptions = j.at("total_preemptions");
  s.same_pool_preemptions = j.at("same_pool_preemptions");
  s.cross_pool_preemptions = j.at("cross_pool_preemptions");
  s.label_preemptions = j.at("label_preemptions");
  s.manual_preemptions = j.at("manual_preemptions");
  s.restored_tasks = j.at("restored_tasks");
  s.requeued_tasks = j.at("requeued_tasks");
  s.lost_tasks = j.at("lost_tasks");
  s.completed_tasks = j.value("completed_tasks", std::uint64_t{0});  // absent from older files
  s.lost_work = j.at("lost_work");
  s.recent_preemptions = j.at("recent_preemptions").get<std::deque<PreemptionRecord>>();
}

}  // namespace meshsim::scheduler

namespace meshsim::cli {

using nlohmann::json;
namespace sch = meshsim::scheduler;

namespace {
constexpr int kStateFormat = 1;
}

std::string state_file_text(const sch::SchedulerState& state) {
  json nodes = json::array();
  for (const auto& [spec, node_state] : state.agents.cluster.nodes) {
    nodes.push_back({{"spec", spec}, {"state", sch::kNodeStateNames.name(node_state)}});
  }
  json reasons = json::object();
  for (const auto& [task, reason] : state.last_reasons) reasons[task] = sch::kPreemptReasonNames.name(reason);
  const json j = {{"format", kStateFormat},
                  {"saved_at", state.saved_at},
                  {"nodes", nodes},
                  {"placement_groups", state.agents.cluster.placement_groups},
                  {"pending_placement_groups", state.agents.cluster.pending},
                  {"next_placement_group", state.agents.cluster.next_pg},
                  {"pools", state.agents.pools},
                  {"agents", state.agents.agents},
                  {"pg_pools", state.pg_pools},
                  {"tasks", state.tasks},
                  {"next_task_seq", state.next_seq},
                  {"policy", state.policy},
                  {"stats", state.stats},
                  {"last_evaluation_reasons", reasons},
                  {"kept_placement_groups", state.kept_pgs}};
  return j.dump(1) + "\n";
}

Status write_state_file(const std::string& path, const sch::SchedulerState& state) {
  AtomicFile file(path);
  if (!file.is_open()) return Error{path + ": cannot write the state file"};
  file.stream() << state_file_text(state);
  return file.commit();
}

Expected<sch::SchedulerState> read_state_file(const std::string& path) {
  const auto text = configs::read_config_text(path, "state file");
  if (!text) return text.error();
  return parse_state_file(*text, path);
}

namespace {

// The first key of `read` that `written` (the same state written back) lacks where both
// have an object, as a key path; nullopt when every key is one the format has. Arrays are
// walked element by element: objects of one kind share their keys.
std::optional<std::string> unknown_key(const json& read, const json& written, const std::string& path) {
  if (read.is_object() && written.is_object()) {
    for (auto it = read.begin(); it != read.end(); ++it) {
      const std::string key = path.empty() ? it.key() : path + "." + it.key();
      if (!written.contains(it.key())) return key;
      if (auto deeper = unknown_key(*it, written.at(it.key()), key)) return deeper;
    }
  } else if (read.is_array() && written.is_array()) {
    for (std::size_t i = 0; i < read.size() && i < written.size(); ++i) {
      if (auto deeper = unknown_key(read[i], written[i], path + "[" + std::to_string(i) + "]")) return deeper;
    }
  }
  return std::nullopt;
}

}  // namespace

Expected<sch::SchedulerState> parse_state_file(std::string_view text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{path + ": empty, expected a state file written by save_state"};
  }
  sch::StateJson j;
  try {
    j = traces::parse_json_as<sch::StateJson>(text);
    if (!j.is_object()) return Error{path + ": expected a JSON object (a state file written by save_state)"};
    if (j.at("format") != kStateFormat) {
      return Error{path + ": state file format " + j.at("format").dump() + ", this meshsim reads " + std::to_string(kStateFormat)};
    }
    sch::SchedulerState state;
    const auto& saved_at = j.at("saved_at");  // the clock goes back to it: never before 0 nor past its limit
    if (!saved_at.is_number() ||
        !(saved_at.get<double>() >= 0 && saved_at.get<double>() <= engine::SimTime::kMaxSeconds)) {
      return Error{path + ": saved_at: expected seconds in [0, 1e12], got " + saved_at.dump()};
    }
    state.saved_at = saved_at;
    for (const auto& node : j.at("nodes")) {
      state.agents.cluster.nodes.emplace_back(node.at("spec").get<sch::NodeSpec>(),
                                              sch::enum_from(node.at("state"), sch::kNodeStateNames));
    }
    state.agents.cluster.placement_groups = j.at("placement_groups").get<std::map<sch::PgId, sch::PlacementGroup>>();
    state.agents.cluster.pending = j.at("pending_placement_groups").get<std::vector<sch::PgId>>();
    state.agents.cluster.next_pg = j.at("next_placement_group");
    state.agents.pools = j.at("pools").get<std::vector<sch::PoolSpec>>();
    state.agents.agents = j.at("agents").get<std::vector<sch::Agent>>();
    state.pg_pools = j.at("pg_pools").get<std::vector<sch::PgPool::State>>();
    state.tasks = j.at("tasks").get<std::vector<sch::Task>>();
    state.next_seq = j.at("next_task_seq");
    state.policy = j.at("policy");
    state.stats = j.at("stats");
    for (const auto& [task, reason] : j.at("last_evaluation_reasons").items()) {
      state.last_reasons[task] = sch::enum_from(reason, sch::kPreemptReasonNames);
    }
    // Absent from files written before kept placement groups were tracked.
    if (j.contains("kept_placement_groups")) state.kept_pgs = j.at("kept_placement_groups");
    // A key this meshsim does not write would be ignored: a typo or another tool's file.
    if (const auto key = unknown_key(json::parse(text), json::parse(state_file_text(state)), "")) {
      return Error{path + ": " + *key + ": unknown key (not one a state file has)"};
    }
    return state;
  } catch (const UnfitNumber& e) {
    const auto key = json_path_of(j, e.node);
    return Error{path + ": " + (key && !key->empty() ? *key + ": " : "") + e.what()};
  } catch (const std::exception& e) {
    return Error{path + ": not a meshsim state file: " + e.what()};
  }
}

}  // namespace meshsim::cli
