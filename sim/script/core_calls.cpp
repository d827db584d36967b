#include <algorithm>

#include "sim/script/script_args.hpp"
#include "sim/script/script_calls.hpp"

// The scheduling core's calls (seeds 001 and 002), with the seeds' argument names.

namespace meshsim::script {
namespace {

using configs::ObjectReader;
using engine::SimTime;
using nlohmann::json;
namespace sch = meshsim::scheduler;

sch::PoolSpec read_pool(ObjectReader& args) {
  sch::PoolSpec spec;
  spec.name = require_string(args, "name");
  spec.labels = read_labels(args, "labels");
  spec.resources = read_resources(args, "resources");
  args.read("target_agents", spec.target_agents);
  args.read_choice("placement_strategy", spec.placement_strategy, sch::kPlacementStrategyNames);
  return spec;
}

sch::TaskSpec read_task(ObjectReader& args) {
  sch::TaskSpec spec;
  spec.task_id = require_string(args, "task_id");
  // The seeds call it pool_name in submit_task_with_preemption and pool elsewhere.
  if (args.has("pool_name")) {
    args.read("pool_name", spec.pool);
  } else {
    spec.pool = require_string(args, "pool");
  }
  args.read("actor_class", spec.actor_class);
  spec.resources = read_resources(args, "resources");
  read_task_traits(args, spec, /*priority_required=*/true);
  args.read("agent_name", spec.agent_name);
  (void)args.raw("ray_options");  // accepted for the seeds' scripts; nothing to do in a simulation
  (void)args.raw("options");
  return spec;
}

json submit_json(const sch::Scheduler& core, const sch::SubmitResult& r) {
  json out = to_json(r.result);
  if (r.result.success) {
    out["agent_name"] = r.agent_name;
    out["placement_group"] = r.placement_group ? json(*r.placement_group) : json(nullptr);
    out["pg_reused"] = r.pg_reused;
  }
  out["preempted"] = core.tasks().names(r.preempted);
  return out;
}

// Pools, agents and the clock.
std::vector<CallSpec> pool_and_agent_calls() {
  return {
      {"advance", "Moves the clock `seconds` ahead; agents that are not hung heartbeat", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         double seconds = 0;
         if (!a.has("seconds")) a.fail("seconds", "required (a number of seconds >= 0)");
         a.read("seconds", seconds, "a number of seconds >= 0", configs::kNonNegative);
         return [&w, seconds] { return w.advance(seconds); };
       }},
      {"create_pool", "Creates a resource pool (its quota, labels, placement strategy, PG pool)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         auto spec = read_pool(a);
         auto pg = read_pg_pool_config(a, "pg_pool_config");
         return [&w, spec, pg] { return to_json(w.scheduler.create_pool(spec, pg.value_or(sch::PgPoolConfig{}))); };
       }},
      {"ensure_pool", "Creates a pool, or checks that an existing one matches", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         auto spec = read_pool(a);
         auto pg = read_pg_pool_config(a, "pg_pool_config");
         return [&w, spec, pg] { return to_json(w.scheduler.ensure_pool(spec, pg)); };
       }},
      {"create_agent", "Creates an agent in a pool (without resources: the pool's quota over target_agents)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         sch::AgentSpec spec;
         spec.name = require_string(a, "name");
         spec.pool = require_string(a, "pool");
         a.read("actor_class", spec.kind);
         const bool sized = a.has("resources");
         spec.resources = read_resources(a, "resources");
         (void)a.raw("ray_options");
         (void)a.raw("options");
         return [&w, spec, sized]() mutable {
           // Without resources an agent takes its pool's quota over target_agents (the
           // seeds' "pool default"), or the whole quota.
           if (!sized) {
             if (const sch::Pool* pool = w.scheduler.agents().pool(spec.pool)) {
               const double n = std::max<double>(1, pool->spec.target_agents);
               const auto& q = pool->spec.resources;
               spec.resources = sch::ResourceVector::of(q.cpu() / n, q.memory_mb() / n, q.gpu() / n);
             }
           }
           json out = to_json(w.scheduler.create_agent(spec));
           if (out["success"]) out["agent"] = to_json(*w.scheduler.agents().agent(spec.name));
           return out;
         };
       }},
      {"delete_agent", "Deletes an agent (force: even with a running task)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string name = require_string(a, "name");
         bool force = false, destroy_pg = true;
         a.read("force", force);
         a.read("destroy_pg", destroy_pg);
         return [&w, name, force, destroy_pg] { return to_json(w.scheduler.delete_agent(name, force, destroy_pg)); };
       }},
      {"list_agents", "The agents, of one pool or all", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         std::optional<std::string> pool;
         a.read_optional("pool_name", pool);
         return [&w, pool] {
           json agents = json::array();
           for (const sch::Agent* agent : w.scheduler.agents().list_agents(pool)) agents.push_back(to_json(*agent));
           return json{{"success", true}, {"agents", agents}};
         };
       }},
  };
}

// Tasks, preemption and the state preservers.
std::vector<CallSpec> task_and_preemption_calls() {
  return {
      {"register_running_task", "Records a task already running on an agent", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         sch::RunningTaskSpec spec;
         spec.task_id = require_string(a, "task_id");
         spec.agent_name = require_string(a, "agent_name");
         a.read("pool_name", spec.pool_name);
         read_task_traits(a, spec, /*priority_required=*/true);
         return [&w, spec] { return to_json(w.scheduler.register_running_task(spec)); };
       }},
      {"complete", "Ends a running task", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string id = require_string(a, "task_id");
         return [&w, id] { return to_json(w.scheduler.complete(id)); };
       }},
      {"update_preemption_policy", "Changes the preemption policy (a preset and field updates)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto update = read_policy_update(a);
         return [&w, update] {
           const auto result = w.scheduler.update_preemption_policy(update);
           json out = to_json(result.result);
           out["warnings"] = result.warnings;
           out["policy"] = to_json(w.scheduler.policy());
           return out;
         };
       }},
      {"evaluate_preemption", "Whether a task would preempt, and the candidates it would", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         sch::IncomingTask incoming;
         incoming.priority = require_number(a, "incoming_task_priority");
         incoming.pool = require_string(a, "incoming_task_pool");
         incoming.labels = read_labels(a, "incoming_task_labels");
         (void)read_resources(a, "resources");  // accepted: evaluation judges permission, not fit
         std::uint64_t k = sch::Scheduler::kDefaultCandidates;
         a.read("k", k, "a positive integer", configs::kAtLeastOne);
         return [&w, incoming, k] {
           const auto evaluation = w.scheduler.evaluate_preemption(incoming, k);
           json candidates = json::array();
           for (const auto& c : evaluation.candidates) {
             candidates.push_back({{"task_id", c.task_id},
                                   {"agent_name", c.agent_name},
                                   {"pool_name", c.pool_name},
                                   {"priority", c.priority},
                                   {"preempt_score", c.preempt_score},
                                   {"reason", sch::kPreemptReasonNames.name(c.reason)}});
           }
           return json{{"success", true},
                       {"should_preempt", evaluation.should_preempt},
                       {"eligible", evaluation.eligible},
                       {"candidates", candidates}};
         };
       }},
      {"execute_preemption", "Preempts one task (cancel, save state, hold its room)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string task = require_string(a, "task_id");
         const std::string agent = require_string(a, "agent_name");
         std::string hold_for;
         a.read("hold_for", hold_for);
         return [&w, task, agent, hold_for] {
           const auto outcome = w.scheduler.execute_preemption(task, agent, hold_for);
           json out = to_json(outcome.result);
           if (!outcome.result.success) return out;
           out["cancel_success"] = outcome.cancel_success;
           out["cancel_wait"] = outcome.cancel_wait.seconds();
           out["saved_state"] = outcome.saved_state ? to_json(*outcome.saved_state) : json(nullptr);
           if (!outcome.state_error.empty()) out["state_error"] = outcome.state_error;
           return out;
         };
       }},
      {"submit_task_with_preemption", "Submits a task, preempting lower-priority ones if it must", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto spec = read_task(a);
         return [&w, spec] { return submit_json(w.scheduler, w.scheduler.submit_task_with_preemption(spec)); };
       }},
      {"submit_with_pg_preemption", "Submits a task into a placement group, preempting for its room", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto spec = read_task(a);
         return [&w, spec] { return submit_json(w.scheduler, w.scheduler.submit_with_pg_preemption(spec)); };
       }},
      {"register_state_handlers", "Simulated state preserver and restorer for a pool", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         // Simulated handlers: the preserver writes a checkpoint name, the restorer
         // accepts it; either can be told to fail.
         const std::string pool = require_string(a, "pool_name");
         bool fail_preserve = false, fail_restore = false;
         a.read("fail_preserve", fail_preserve);
         a.read("fail_restore", fail_restore);
         return [&w, pool, fail_preserve, fail_restore] {
           w.scheduler.register_state_handlers(
               pool,
               [fail_preserve](const sch::SavedState& s) -> Expected<std::string> {
                 if (fail_preserve) return Error{"simulated preserver failure"};
                 return "checkpoint://" + s.task_id;
               },
               [fail_restore](const sch::SavedState& s) -> Status {
                 if (fail_restore) return Error{"simulated restorer failure for " + s.task_id};
                 return Ok();
               });
           return json{{"success", true}};
         };
       }},
  };
}

// Health, saved state and the core's figures.
std::vector<CallSpec> health_and_state_calls() {
  return {
      {"hang_agent", "Makes an agent stop answering (cancels wait out their timeout)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string agent = require_string(a, "agent_name");
         return [&w, agent] {
           w.clock.hanging.insert(agent);
           return json{{"success", true}};
         };
       }},
      {"ensure_agent_health", "Recreates agents without a heartbeat for `timeout` seconds", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         double timeout = 0;
         if (!a.has("timeout")) a.fail("timeout", "required (seconds)");
         a.read("timeout", timeout, "seconds >= 0", configs::kNonNegative);
         return [&w, timeout] {
           // Nothing is older than the clock's limit: a longer timeout finds nobody stale.
           const auto report =
               w.scheduler.ensure_agent_health(SimTime::from_seconds(std::min(timeout, SimTime::kMaxSeconds)));
           for (const auto& name : report.recreated_agents) w.clock.hanging.erase(name);  // a fresh process
           return json{{"success", report.errors.empty()},
                       {"recreated_agents", report.recreated_agents},
                       {"requeued_tasks", report.requeued_tasks},
                       {"errors", report.errors}};
         };
       }},
      {"save_state", "Writes the core's state to a file", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string path = require_string(a, "path");
         return [&w, path] {
           if (w.states == nullptr) return json{{"success", false}, {"error", "state files are disabled in this run"}};
           auto saved = w.states->save(path, w.scheduler.save_state());
           return saved ? json{{"success", true}, {"path", path}}
                        : json{{"success", false}, {"error", saved.error().message}};
         };
       }},
      {"load_state", "Reads the core's state from a file (the clock goes to when it was saved)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string path = require_string(a, "path");
         return [&w, path] {
           if (w.states == nullptr) return json{{"success", false}, {"error", "state files are disabled in this run"}};
           auto state = w.states->load(path);
           if (!state) return json{{"success", false}, {"error", state.error().message}};
           // Checked before the clock moves, so a state that does not load leaves this
           // world's clock and timers as they were.
           if (auto checked = w.scheduler.check_state(*state); !checked) return to_json(checked);
           if (w.serving && state->saved_at != w.clock.now()) {
             return json{
                 {"success", false},
                 {"error", "the state was saved at " + std::to_string(state->saved_at.seconds()) + " s and the clock is at " +
                               std::to_string(w.clock.now_s()) + " s: serving instances cannot follow the clock there"}};
           }
           w.clock.rewind(state->saved_at);
           return to_json(w.scheduler.load_state(*state));
         };
       }},
      {"set_scheduling_strategy", "Chooses the scheduling strategy (binpack, spread)", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::string name = require_string(a, "name");
         return [&w, name] {
           auto strategy = sch::make_scheduling_strategy(name);
           if (!strategy) return json{{"success", false}, {"error", strategy.error().message}};
           w.scheduler.set_scheduling_strategy(std::move(*strategy));
           return json{{"success", true}};
         };
       }},
      {"restore_task", "Restores a preempted task from its saved state", false,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto state = read_saved_state(a, "saved_state");
         return [&w, state] { return to_json(w.scheduler.restore_task(state)); };
       }},
      {"get_preemption_stats", "Preemption counts and recent preemptions", false,
       [](ScriptWorld& w, ObjectReader&) -> Action {
         return [&w] {
           json out = to_json(w.scheduler.get_preemption_stats());
           out["success"] = true;
           return out;
         };
       }},
      {"stats", "The core's counts of pools, agents, tasks and placement groups", false,
       [](ScriptWorld& w, ObjectReader&) -> Action {
         return [&w] {
           json out = to_json(summarize(w.scheduler));
           out["success"] = true;
           return out;
         };
       }},
      {"pg_pool_stats", "Each pool's placement-group pool", false,
       [](ScriptWorld& w, ObjectReader&) -> Action {
         return [&w] {
           json pools = json::object();
           for (const auto& [name, s] : w.scheduler.pg_pools().stats()) pools[name] = to_json(s);
           return json{{"success", true}, {"pools", pools}};
         };
       }},
      {"shutdown", "Stops the core: later calls are refused", false,
       [](ScriptWorld& w, ObjectReader&) -> Action {
         return [&w] {
           w.scheduler.shutdown();
           return json{{"success", true}};
         };
       }},
  };
}

}  // namespace

std::vector<CallSpec> core_calls() {
  std::vector<CallSpec> calls;
  for (auto group : {pool_and_agent_calls, task_and_preemption_calls, health_and_state_calls}) {
    for (auto& call : group()) calls.push_back(std::move(call));
  }
  return calls;
}

}  // namespace meshsim::script
