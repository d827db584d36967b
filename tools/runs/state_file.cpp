#include "tools/runs/state_file.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

#include "configs/config_file.hpp"
#include "configs/json_difference.hpp"
#include "sim/script/script_args.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/runs/checked_json.hpp"
#include "traces/json_text.hpp"

namespace meshsim::scheduler {

using nlohmann::json;
// Read through CheckedJson: a number that does not fit its field is refused, never cast.
using StateJson = cli::CheckedJson;
using cli::field;

namespace {
template <typename E, std::size_t N>
E enum_from(const StateJson& j, const EnumNames<E, N>& names) {
  const auto text = j.get<std::string>();
  if (auto value = names.parse(text)) return *value;
  throw cli::UnfitValue(&j, "'" + text + "' is not one of " + names.accepted());
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
    throw cli::UnfitValue(&j, "expected milli-units in [0, " + std::to_string(kMaxMilli) + "], got " + j.dump());
  }
  return static_cast<double>(milli) / 1000.0;
}
// An instant the core's clock saw, in seconds: a whole number of its microseconds, so
// that it reads back as written.
SimTime instant_at(const StateJson& j) {
  const double seconds = j.get<double>();
  if (const auto at = SimTime::from_seconds_checked(seconds); at && at->seconds() == seconds) return *at;
  throw cli::UnfitValue(&j, "expected seconds to the microsecond in [-1e12, 1e12], got " + j.dump());
}
void from_json(const StateJson& j, ResourceVector& r) {
  r = ResourceVector::of(amount_at(field(j, "cpu_milli")), amount_at(field(j, "memory_milli")), amount_at(field(j, "gpu_milli")));
  for (const auto& entry : cli::list_field(j, "custom_milli")) {
    if (!entry.is_array() || entry.size() != 2) throw cli::UnfitValue(&entry, "expected a [name, milli] pair");
    r.with_custom(entry[0].get<std::string>(), amount_at(entry[1]));
  }
}

void to_json(json& j, const NodeSpec& n) { j = {{"name", n.name}, {"capacity", n.capacity}, {"labels", n.labels}, {"sku", n.sku}}; }
void from_json(const StateJson& j, NodeSpec& n) {
  n = {field(j, "name"), field(j, "capacity"), field(j, "labels"), field(j, "sku")};
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
  pg.id = field(j, "id");
  pg.name = field(j, "name");
  pg.bundles = field(j, "bundles").get<std::vector<ResourceVector>>();
  pg.strategy = enum_from(field(j, "strategy"), kPlacementStrategyNames);
  pg.state = field(j, "ready").get<bool>() ? PgState::kReady : PgState::kPending;
  pg.nodes = field(j, "nodes").get<std::vector<std::uint32_t>>();
}

void to_json(json& j, const PoolSpec& p) {
  j = {{"name", p.name},
       {"labels", p.labels},
       {"resources", p.resources},
       {"target_agents", p.target_agents},
       {"placement_strategy", kPlacementStrategyNames.name(p.placement_strategy)}};
}
void from_json(const StateJson& j, PoolSpec& p) {
  p.name = field(j, "name");
  p.labels = field(j, "labels").get<Labels>();
  p.resources = field(j, "resources");
  p.target_agents = field(j, "target_agents");
  p.placement_strategy = enum_from(field(j, "placement_strategy"), kPlacementStrategyNames);
}

void to_json(json& j, const Agent& a) {
  j = {{"name", a.spec.name},         {"pool", a.spec.pool},
       {"kind", a.spec.kind},         {"resources", a.spec.resources},
       {"given_pg", a.spec.placement_group ? json(*a.spec.placement_group) : json(nullptr)},
       {"bundle_index", a.spec.bundle_index},
       {"placement_group", a.placement_group}, {"owns_placement_group", a.owns_placement_group},
       {"node", a.node},              {"task", a.task ? json(*a.task) : json(nullptr)},
       {"dedicated", a.dedicated},    {"last_heartbeat", a.last_heartbeat.seconds()},
       {"held_for", a.held_for},      {"hold_until", a.hold_until.seconds()}};
}
void from_json(const StateJson& j, Agent& a) {
  a.spec.name = field(j, "name");
  a.spec.pool = field(j, "pool");
  a.spec.kind = field(j, "kind");
  a.spec.resources = field(j, "resources");
  if (!field(j, "given_pg").is_null()) a.spec.placement_group = field(j, "given_pg").get<PgId>();
  a.spec.bundle_index = field(j, "bundle_index");
  a.placement_group = field(j, "placement_group");
  a.owns_placement_group = field(j, "owns_placement_group");
  a.node = field(j, "node");
  if (!field(j, "task").is_null()) a.task = field(j, "task").get<std::string>();
  a.dedicated = field(j, "dedicated");
  a.last_heartbeat = instant_at(field(j, "last_heartbeat"));
  a.held_for = field(j, "held_for");
  a.hold_until = instant_at(field(j, "hold_until"));
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
  c.enable = field(j, "enable");
  c.high_priority_pg_specs = field(j, "high_priority_pg_specs").get<std::vector<ResourceVector>>();
  c.enable_dynamic_pgs = field(j, "enable_dynamic_pgs");
  c.max_dynamic_pgs = field(j, "max_dynamic_pgs");
  c.enable_pg_reuse = field(j, "enable_pg_reuse");
  c.high_priority_threshold = field(j, "high_priority_threshold");
}

void to_json(json& j, const PgPool::Entry& e) {
  j = {{"shape", e.shape}, {"reserved", e.reserved}, {"in_use", e.in_use}, {"served_before", e.served_before}};
}
void from_json(const StateJson& j, PgPool::Entry& e) {
  e = {field(j, "shape").get<ResourceVector>(), field(j, "reserved"), field(j, "in_use"), field(j, "served_before")};
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
  s.pool = field(j, "pool");
  s.config = field(j, "config");
  s.strategy = enum_from(field(j, "strategy"), kPlacementStrategyNames);
  s.pgs = field(j, "pgs").get<std::map<PgId, PgPool::Entry>>();
  s.dynamic_created = field(j, "dynamic_created");
  s.dynamic_destroyed = field(j, "dynamic_destroyed");
  s.reuse_hits = field(j, "reuse_hits");
}

// Saved states, the policy and the stats keep the names the scenario output uses.
void to_json(json& j, const SavedState& s) { j = script::to_json(s); }
// A task's traits under the keys script::to_json(TaskTraits) writes. A saved state of a
// file from before saved states carried checkpoint_interval reads 0 (none).
void from_json(const StateJson& j, TaskTraits& t) {
  t.priority = field(j, "priority");
  t.labels = field(j, "labels").get<Labels>();
  t.estimated_duration = field(j, "estimated_duration");
  t.payload = field(j, "payload");
  t.checkpoint_interval = j.contains("checkpoint_interval") ? field(j, "checkpoint_interval").get<double>() : 0.0;
}

void from_json(const StateJson& j, SavedState& s) {
  from_json(j, static_cast<TaskTraits&>(s));
  s.task_id = field(j, "task_id");
  s.pool_name = field(j, "pool_name");
  s.agent_name = field(j, "agent_name");
  s.elapsed = field(j, "elapsed");
  if (j.contains("custom")) s.custom = field(j, "custom").get<std::string>();
}

void to_json(json& j, const Task& t) {
  j = script::to_json(static_cast<const TaskTraits&>(t));
  j["id"] = t.id;
  j["pool"] = t.pool;
  j["agent"] = t.agent;
  j["start_time"] = t.start_time.seconds();
  j["seq"] = t.seq;
  j["state"] = kTaskStateNames.name(t.state);
  j["saved_state"] = t.saved_state ? json(*t.saved_state) : json(nullptr);
  j["lost_work"] = t.lost_work;
}
void from_json(const StateJson& j, Task& t) {
  from_json(j, static_cast<TaskTraits&>(t));
  t.id = field(j, "id");
  t.pool = field(j, "pool");
  t.agent = field(j, "agent");
  t.start_time = instant_at(field(j, "start_time"));
  t.seq = field(j, "seq");
  t.state = enum_from(field(j, "state"), kTaskStateNames);
  if (!field(j, "saved_state").is_null()) t.saved_state = field(j, "saved_state").get<SavedState>();
  t.lost_work = field(j, "lost_work");
}

void to_json(json& j, const PreemptionPolicy& p) { j = script::to_json(p); }
void from_json(const StateJson& j, PreemptionPolicy& p) {
  for_each_policy_field([&](const char* name, auto member, auto) {
    auto& value = p.*member;
    using Value = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<Value, std::optional<double>>) {
      value = field(j, name).is_null() ? std::nullopt : std::optional(field(j, name).template get<double>());
    } else {
      value = field(j, name).template get<Value>();
    }
  });
}

void from_json(const StateJson& j, PreemptionRecord& r) {
  r = {instant_at(field(j, "timestamp")), field(j, "task_id"), field(j, "pool_name"), field(j, "priority"),
       field(j, "reason"),    field(j, "lost_work"), field(j, "preemptor")};
}

void to_json(json& j, const PreemptionStats& s) { j = script::to_json(s); }
void from_json(const StateJson& j, PreemptionStats& s) {
  s.total_preemptions = field(j, "total_preemptions");
  s.same_pool_preemptions = field(j, "same_pool_preemptions");
  s.cross_pool_preemptions = field(j, "cross_pool_preemptions");
  s.label_preemptions = field(j, "label_preemptions");
  s.manual_preemptions = field(j, "manual_preemptions");
  s.restored_tasks = field(j, "restored_tasks");
  s.requeued_tasks = field(j, "requeued_tasks");
  s.lost_tasks = field(j, "lost_tasks");
  // Absent from older files.
  s.completed_tasks = j.contains("completed_tasks") ? field(j, "completed_tasks").get<std::uint64_t>() : 0;
  s.lost_work = field(j, "lost_work");
  s.recent_preemptions = field(j, "recent_preemptions").get<std::deque<PreemptionRecord>>();
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
                  {"saved_at", state.saved_at.seconds()},
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

Expected<sch::SchedulerState> parse_state_file(std::string_view text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Error{path + ": empty, expected a state file written by save_state"};
  }
  sch::StateJson j;
  try {
    j = traces::parse_json_as<sch::StateJson>(text);
    if (!j.is_object()) return Error{path + ": expected a JSON object (a state file written by save_state)"};
    if (field(j, "format") != kStateFormat) {
      return Error{path + ": state file format " + field(j, "format").dump() + ", this meshsim reads " + std::to_string(kStateFormat)};
    }
    sch::SchedulerState state;
    const auto& saved_at = field(j, "saved_at");  // the clock goes back to it: never before 0 nor past its limit
    if (!saved_at.is_number() ||
        !(saved_at.get<double>() >= 0 && saved_at.get<double>() <= engine::SimTime::kMaxSeconds)) {
      return Error{path + ": saved_at: expected seconds in [0, 1e12], got " + saved_at.dump()};
    }
    state.saved_at = sch::instant_at(saved_at);
    for (const auto& node : cli::list_field(j, "nodes")) {
      state.agents.cluster.nodes.emplace_back(field(node, "spec").get<sch::NodeSpec>(),
                                              sch::enum_from(field(node, "state"), sch::kNodeStateNames));
    }
    state.agents.cluster.placement_groups = field(j, "placement_groups").get<std::map<sch::PgId, sch::PlacementGroup>>();
    state.agents.cluster.pending = field(j, "pending_placement_groups").get<std::vector<sch::PgId>>();
    state.agents.cluster.next_pg = field(j, "next_placement_group");
    state.agents.pools = field(j, "pools").get<std::vector<sch::PoolSpec>>();
    state.agents.agents = field(j, "agents").get<std::vector<sch::Agent>>();
    state.pg_pools = field(j, "pg_pools").get<std::vector<sch::PgPool::State>>();
    state.tasks = field(j, "tasks").get<std::vector<sch::Task>>();
    state.next_seq = field(j, "next_task_seq");
    state.policy = field(j, "policy");
    state.stats = field(j, "stats");
    const auto& reasons = field(j, "last_evaluation_reasons");
    if (!reasons.is_object()) throw UnfitValue(&reasons, "expected an object of task: reason, got " + reasons.dump());
    for (const auto& [task, reason] : reasons.items()) {
      state.last_reasons[task] = sch::enum_from(reason, sch::kPreemptReasonNames);
    }
    // Absent from files written before kept placement groups were tracked.
    if (j.contains("kept_placement_groups")) state.kept_pgs = field(j, "kept_placement_groups").get<std::map<sch::PgId, std::string>>();
    // A key this meshsim does not write would be ignored: a typo or another tool's file.
    if (const auto key = configs::first_unknown_key(json::parse(text), json::parse(state_file_text(state)))) {
      return Error{path + ": " + *key + ": unknown key (not one a state file has)"};
    }
    return state;
  } catch (const UnfitValue& e) {
    const auto key = json_path_of(j, e.node);
    return Error{path + ": " + (key && !key->empty() ? *key + ": " : "") + e.what()};
  } catch (const std::exception& e) {
    return Error{path + ": not a meshsim state file: " + e.what()};
  }
}

}  // namespace meshsim::cli
