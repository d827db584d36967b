#include "tools/cli/scenario_command.hpp"

#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "configs/config_file.hpp"
#include "scheduler/manual_world.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/scenario_args.hpp"
#include "tools/cli/scheduler_prometheus.hpp"
#include "tools/cli/script_expectations.hpp"
#include "tools/cli/serving_world.hpp"
#include "tools/cli/state_file.hpp"
#include "tools/cli/atomic_file.hpp"

namespace meshsim::cli {
namespace {

using configs::ObjectReader;
using nlohmann::json;
namespace sch = meshsim::scheduler;

// Thrown for a step the script got wrong (not for a call that fails in the API).
struct ScriptError {
  std::string message;
};

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

class ScenarioRunner {
 public:
  ScenarioRunner(std::string file, const json& script, bool allow_files)
      : file_(std::move(file)), allow_files_(allow_files) {
    add_nodes(script);
    if (script.contains("serving")) {
      auto world = ServingWorld::create(script, file_);
      if (!world) throw ScriptError{world.error().message};
      serving_ = std::move(*world);
    } else if (script.contains("scaling")) {
      throw ScriptError{file_ + ": scaling: needs a \"serving\" object (the cluster it scales)"};
    }
  }

  // A step's call with its arguments read and checked, ready to run: the whole script is
  // parsed this way before step 0 runs, so a bad step changes nothing.
  struct ParsedStep {
    std::function<json()> run;
  };

  // `where` names the step in messages ("steps[3]").
  ParsedStep parse_step(std::size_t index, const json& step, const std::string& where) {
    if (!step.is_object() || !step.contains("call") || !step["call"].is_string()) {
      throw ScriptError{file_ + ": " + where + ": expected {\"call\": NAME, \"args\": {...}}"};
    }
    const std::string call = step["call"].get<std::string>();
    for (const auto& [key, value] : step.items()) {
      if (key != "call" && key != "args" && key != "comment" && key != "name" && key != "expect" &&
          key != "expect_time") {
        throw ScriptError{file_ + ": " + where + "." + key +
                          ": unknown key (expected call, args, name, expect, expect_time, comment)"};
      }
    }
    if (step.contains("name") && !step["name"].is_string()) throw ScriptError{file_ + ": " + where + ".name: expected a string"};
    if (step.contains("expect") && !step["expect"].is_object()) {
      throw ScriptError{file_ + ": " + where + ".expect: expected an object (what the result must contain)"};
    }
    if (step.contains("expect_time") && !step["expect_time"].is_number()) {
      throw ScriptError{file_ + ": " + where + ".expect_time: expected a number of seconds"};
    }
    const json empty = json::object();
    const json& args_json = step.contains("args") ? step["args"] : empty;
    if (!args_json.is_object()) throw ScriptError{file_ + ": " + where + ".args: expected an object"};
    const auto handler = handlers().find(call);
    if (handler == handlers().end()) {
      std::string names;
      for (const auto& [name, fn] : handlers()) names += (names.empty() ? "" : ", ") + name;
      throw ScriptError{file_ + ": " + where + ".call: unknown call '" + call +
                        "'; expected one of " + names};
    }
    if (!serving_ && serving_calls().count(call) > 0) {
      throw ScriptError{file_ + ": " + where + ".call: '" + call +
                        "' acts on serving instances: the script needs a \"serving\" object"};
    }
    configs::ConfigErrors errors(file_);
    ObjectReader args(&args_json, where + ".args", errors);
    auto action = handler->second(*this, args);
    args.finish();
    if (!errors.empty()) throw ScriptError{errors.to_string()};
    return ParsedStep{[this, index, call, action = std::move(action), name = step.value("name", json())] {
      json line{{"step", index}, {"call", call}, {"result", action()}, {"time", world_.now()}};
      if (!name.is_null()) line["name"] = name;
      return line;
    }};
  }

  // The step's "expect" and "expect_time" checked against what it printed.
  static std::vector<std::string> unmet(const json& step, const json& line) {
    std::vector<std::string> out;
    if (step.contains("expect")) out = unmet_expectations(step["expect"], line["result"]);
    if (step.contains("expect_time")) {
      for (auto& message : unmet_expectations(step["expect_time"], line["time"], "time")) out.push_back(std::move(message));
    }
    return out;
  }

  std::vector<std::string> check() const {
    auto problems = scheduler_.check_invariants();
    if (serving_) {
      for (auto& problem : serving_->check_invariants()) problems.push_back("serving: " + problem);
    }
    return problems;
  }
  const sch::Scheduler& scheduler() const { return scheduler_; }
  double now() const { return world_.now(); }

  static std::vector<std::string> call_names() {
    std::vector<std::string> names;
    for (const auto& [name, handler] : handlers()) names.push_back(name);
    return names;
  }

 private:
  using Action = std::function<json()>;
  using Handler = std::function<Action(ScenarioRunner&, ObjectReader&)>;

  void add_nodes(const json& script) {
    if (!script.contains("nodes")) {
      std::set<std::string> custom;
      collect_custom(script, custom);
      auto capacity = sch::ResourceVector::of(1e6, 1e9, 1e6);
      for (const auto& name : custom) capacity.with_custom(name, 1e6);
      scheduler_.cluster().add_node({"default-node", capacity, {}, "default"});
      return;
    }
    const json& nodes = script["nodes"];
    if (!nodes.is_array()) throw ScriptError{file_ + ": nodes: expected an array of {name, resources, labels}"};
    configs::ConfigErrors errors(file_);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      ObjectReader node(&nodes[i], "nodes[" + std::to_string(i) + "]", errors);
      sch::NodeSpec spec;
      spec.name = require_string(node, "name");
      spec.capacity = read_resources(node, "resources");
      spec.labels = read_labels(node, "labels");
      node.read("sku", spec.sku);
      node.finish();
      if (errors.empty()) scheduler_.cluster().add_node(std::move(spec));
    }
    if (!errors.empty()) throw ScriptError{errors.to_string()};
  }

  static sch::PoolSpec read_pool(ObjectReader& args) {
    sch::PoolSpec spec;
    spec.name = require_string(args, "name");
    spec.labels = read_labels(args, "labels");
    spec.resources = read_resources(args, "resources");
    args.read("target_agents", spec.target_agents);
    args.read_choice("placement_strategy", spec.placement_strategy, sch::kPlacementStrategyNames);
    return spec;
  }

  static sch::TaskSpec read_task(ObjectReader& args) {
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
    spec.priority = require_number(args, "priority");
    spec.labels = read_labels(args, "labels");
    args.read("estimated_duration", spec.estimated_duration, "seconds >= 0", configs::kNonNegative);
    if (const json* payload = args.raw("payload"); payload != nullptr && !payload->is_null()) {
      spec.payload = payload->is_string() ? payload->get<std::string>() : payload->dump();
    }
    args.read("checkpoint_interval", spec.checkpoint_interval, "seconds >= 0", configs::kNonNegative);
    args.read("agent_name", spec.agent_name);
    (void)args.raw("ray_options");  // accepted for the seeds' scripts; nothing to do in a simulation
    (void)args.raw("options");
    return spec;
  }

  static json submit_json(const sch::SubmitResult& r) {
    json out = to_json(r.result);
    if (r.result.success) {
      out["agent_name"] = r.agent_name;
      out["placement_group"] = r.placement_group ? json(*r.placement_group) : json(nullptr);
      out["pg_reused"] = r.pg_reused;
    }
    out["preempted"] = r.preempted;
    return out;
  }

  // An instance tag (prompt, token, mixed); `required` reports it when absent.
  static std::optional<cluster::InstanceTag> read_tag(ObjectReader& a, std::string_view key, bool required) {
    if (!a.has(key)) {
      if (required) a.fail(key, "required (prompt, token or mixed)");
      return std::nullopt;
    }
    cluster::InstanceTag tag = cluster::InstanceTag::kMixed;
    a.read_choice(key, tag, cluster::kInstanceTagNames);
    return tag;
  }

  // A required instance id, checked as an integer (a negative or fractional number is bad
  // input, not a cast).
  static std::uint32_t read_instance(ObjectReader& a) {
    std::uint32_t id = 0;
    if (!a.has("instance")) a.fail("instance", "required (an instance id)");
    a.read("instance", id, "an instance id (an integer >= 0)");
    return id;
  }

  static const std::map<std::string, Handler>& handlers() {
    static const std::map<std::string, Handler> table = {
        {"advance",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           double seconds = 0;
           if (!a.has("seconds")) a.fail("seconds", "required (a number of seconds >= 0)");
           a.read("seconds", seconds, "a number of seconds >= 0", configs::kNonNegative);
           return [&r, seconds] {
             r.world_.advance(seconds);
             if (r.serving_) r.serving_->advance_to(r.world_.now());
             // Simulated agents heartbeat as time passes, unless hung.
             for (const sch::Agent* agent : r.scheduler_.list_agents()) {
               if (r.world_.hanging.count(agent->spec.name) == 0) r.scheduler_.record_heartbeat(agent->spec.name);
             }
             return json{{"success", true}, {"time", r.world_.now()}};
           };
         }},
        {"create_pool",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           auto spec = read_pool(a);
           auto pg = read_pg_pool_config(a, "pg_pool_config");
           return [&r, spec, pg] { return to_json(r.scheduler_.create_pool(spec, pg.value_or(sch::PgPoolConfig{}))); };
         }},
        {"ensure_pool",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           auto spec = read_pool(a);
           auto pg = read_pg_pool_config(a, "pg_pool_config");
           return [&r, spec, pg] { return to_json(r.scheduler_.ensure_pool(spec, pg)); };
         }},
        {"create_agent",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           sch::AgentSpec spec;
           spec.name = require_string(a, "name");
           spec.pool = require_string(a, "pool");
           a.read("actor_class", spec.kind);
           const bool sized = a.has("resources");
           spec.resources = read_resources(a, "resources");
           (void)a.raw("ray_options");
           (void)a.raw("options");
           return [&r, spec, sized]() mutable {
             // Without resources an agent takes its pool's quota over target_agents (the
             // seeds' "pool default"), or the whole quota.
             if (!sized) {
               if (const sch::Pool* pool = r.scheduler_.agents().pool(spec.pool)) {
                 const double n = std::max<double>(1, pool->spec.target_agents);
                 const auto& q = pool->spec.resources;
                 spec.resources = sch::ResourceVector::of(q.cpu() / n, q.memory_mb() / n, q.gpu() / n);
               }
             }
             json out = to_json(r.scheduler_.create_agent(spec));
             if (out["success"]) out["agent"] = to_json(*r.scheduler_.agents().agent(spec.name));
             return out;
           };
         }},
        {"delete_agent",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string name = require_string(a, "name");
           bool force = false, destroy_pg = true;
           a.read("force", force);
           a.read("destroy_pg", destroy_pg);
           return [&r, name, force, destroy_pg] { return to_json(r.scheduler_.delete_agent(name, force, destroy_pg)); };
         }},
        {"list_agents",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           std::optional<std::string> pool;
           a.read_optional("pool_name", pool);
           return [&r, pool] {
             json agents = json::array();
             for (const sch::Agent* agent : r.scheduler_.list_agents(pool)) agents.push_back(to_json(*agent));
             return json{{"success", true}, {"agents", agents}};
           };
         }},
        {"register_running_task",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           sch::RunningTaskSpec spec;
           spec.task_id = require_string(a, "task_id");
           spec.agent_name = require_string(a, "agent_name");
           a.read("pool_name", spec.pool_name);
           spec.priority = require_number(a, "priority");
           spec.labels = read_labels(a, "labels");
           a.read("estimated_duration", spec.estimated_duration, "seconds >= 0", configs::kNonNegative);
           if (const json* payload = a.raw("payload"); payload != nullptr && !payload->is_null()) {
             spec.payload = payload->is_string() ? payload->get<std::string>() : payload->dump();
           }
           a.read("checkpoint_interval", spec.checkpoint_interval, "seconds >= 0", configs::kNonNegative);
           return [&r, spec] { return to_json(r.scheduler_.register_running_task(spec)); };
         }},
        {"complete",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string id = require_string(a, "task_id");
           return [&r, id] { return to_json(r.scheduler_.complete(id)); };
         }},
        {"update_preemption_policy",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto update = read_policy_update(a);
           return [&r, update] {
             const auto result = r.scheduler_.update_preemption_policy(update);
             json out = to_json(result.result);
             out["warnings"] = result.warnings;
             out["policy"] = to_json(r.scheduler_.policy());
             return out;
           };
         }},
        {"evaluate_preemption",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           sch::IncomingTask incoming;
           incoming.priority = require_number(a, "incoming_task_priority");
           incoming.pool = require_string(a, "incoming_task_pool");
           incoming.labels = read_labels(a, "incoming_task_labels");
           (void)read_resources(a, "resources");  // accepted: evaluation judges permission, not fit
           std::uint64_t k = sch::Scheduler::kDefaultCandidates;
           a.read("k", k, "a positive integer", configs::kAtLeastOne);
           return [&r, incoming, k] {
             const auto evaluation = r.scheduler_.evaluate_preemption(incoming, k);
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
        {"execute_preemption",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string task = require_string(a, "task_id");
           const std::string agent = require_string(a, "agent_name");
           std::string hold_for;
           a.read("hold_for", hold_for);
           return [&r, task, agent, hold_for] {
             const auto outcome = r.scheduler_.execute_preemption(task, agent, hold_for);
             json out = to_json(outcome.result);
             if (!outcome.result.success) return out;
             out["cancel_success"] = outcome.cancel_success;
             out["cancel_wait"] = outcome.cancel_wait;
             out["saved_state"] = outcome.saved_state ? to_json(*outcome.saved_state) : json(nullptr);
             if (!outcome.state_error.empty()) out["state_error"] = outcome.state_error;
             return out;
           };
         }},
        {"submit_task_with_preemption",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto spec = read_task(a);
           return [&r, spec] { return submit_json(r.scheduler_.submit_task_with_preemption(spec)); };
         }},
        {"submit_with_pg_preemption",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto spec = read_task(a);
           return [&r, spec] { return submit_json(r.scheduler_.submit_with_pg_preemption(spec)); };
         }},
        {"register_state_handlers",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           // Simulated handlers: the preserver writes a checkpoint name, the restorer
           // accepts it; either can be told to fail.
           const std::string pool = require_string(a, "pool_name");
           bool fail_preserve = false, fail_restore = false;
           a.read("fail_preserve", fail_preserve);
           a.read("fail_restore", fail_restore);
           return [&r, pool, fail_preserve, fail_restore] {
             r.scheduler_.register_state_handlers(
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
        {"hang_agent",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string agent = require_string(a, "agent_name");
           return [&r, agent] {
             r.world_.hanging.insert(agent);
             return json{{"success", true}};
           };
         }},
        {"ensure_agent_health",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           double timeout = 0;
           if (!a.has("timeout")) a.fail("timeout", "required (seconds)");
           a.read("timeout", timeout, "seconds >= 0", configs::kNonNegative);
           return [&r, timeout] {
             const auto report = r.scheduler_.ensure_agent_health(timeout);
             for (const auto& name : report.recreated_agents) r.world_.hanging.erase(name);  // a fresh process
             return json{{"success", report.errors.empty()},
                         {"recreated_agents", report.recreated_agents},
                         {"requeued_tasks", report.requeued_tasks},
                         {"errors", report.errors}};
           };
         }},
        {"save_state",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string path = require_string(a, "path");
           return [&r, path] {
             if (!r.allow_files_) return json{{"success", false}, {"error", "state files are disabled in this run"}};
             auto written = write_state_file(path, r.scheduler_.save_state());
             return written ? json{{"success", true}, {"path", path}} : json{{"success", false}, {"error", written.error().message}};
           };
         }},
        {"load_state",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string path = require_string(a, "path");
           return [&r, path] {
             if (!r.allow_files_) return json{{"success", false}, {"error", "state files are disabled in this run"}};
             auto state = read_state_file(path);
             if (!state) return json{{"success", false}, {"error", state.error().message}};
             // Checked before the clock is rewound, so a state that does not load
             // leaves this world's clock and timers as they were.
             if (auto checked = r.scheduler_.check_state(*state); !checked) return to_json(checked);
             r.world_.rewind(state->saved_at);
             return to_json(r.scheduler_.load_state(*state));
           };
         }},
        {"set_scheduling_strategy",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::string name = require_string(a, "name");
           return [&r, name] {
             auto strategy = sch::make_scheduling_strategy(name);
             if (!strategy) return json{{"success", false}, {"error", strategy.error().message}};
             r.scheduler_.set_scheduling_strategy(std::move(*strategy));
             return json{{"success", true}};
           };
         }},
        {"restore_task",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto state = read_saved_state(a, "saved_state");
           return [&r, state] { return to_json(r.scheduler_.restore_task(state)); };
         }},
        {"get_preemption_stats",
         [](ScenarioRunner& r, ObjectReader&) -> Action {
           return [&r] {
             json out = to_json(r.scheduler_.get_preemption_stats());
             out["success"] = true;
             return out;
           };
         }},
        {"stats",
         [](ScenarioRunner& r, ObjectReader&) -> Action {
           return [&r] {
             json out = to_json(r.scheduler_.stats());
             out["success"] = true;
             return out;
           };
         }},
        {"pg_pool_stats",
         [](ScenarioRunner& r, ObjectReader&) -> Action {
           return [&r] {
             json pools = json::object();
             for (const auto& [name, s] : r.scheduler_.pg_pool_stats()) pools[name] = to_json(s);
             return json{{"success", true}, {"pools", pools}};
           };
         }},
        // Serving instances, seeds 003 and 004 (the script's "serving" object).
        {"submit_requests",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           std::uint32_t count = 1, prompt = 0, output = 0;
           const auto tokens = [](std::uint64_t v) { return v >= 1 && v <= 10'000'000; };
           a.read("count", count, "an integer in [1, 1000000]", [](std::uint64_t v) { return v >= 1 && v <= 1'000'000; });
           if (!a.has("prompt_tokens")) a.fail("prompt_tokens", "required (tokens)");
           if (!a.has("output_tokens")) a.fail("output_tokens", "required (tokens)");
           a.read("prompt_tokens", prompt, "a token count in [1, 10000000]", tokens);
           a.read("output_tokens", output, "a token count in [1, 10000000]", tokens);
           return [&r, count, prompt, output] { return r.serving_->submit(count, prompt, output); };
         }},
        {"scale_up_full",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto tag = read_tag(a, "tag", true);
           std::optional<std::uint32_t> parallelism;
           std::optional<std::string> sku;
           // The instance config comes from the start state (seed 004's start_state_manager);
           // parallelism and server_sku, when given, must match it.
           a.read_optional("parallelism", parallelism);
           a.read_optional("server_sku", sku);
           return [&r, tag, parallelism, sku] { return r.serving_->scale_up_full(*tag, parallelism, sku); };
         }},
        {"scale_down_full",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           std::optional<std::uint32_t> instance;
           a.read_optional("instance", instance);
           const auto tag = read_tag(a, "tag", false);
           if (instance.has_value() == tag.has_value()) a.fail("instance", "give either instance or tag (the least-loaded)");
           return [&r, instance, tag] { return r.serving_->scale_down_full(instance, tag); };
         }},
        {"deactivate_instance",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::uint32_t instance = read_instance(a);
           return [&r, instance] { return r.serving_->deactivate(instance); };
         }},
        {"reactivate_instance",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::uint32_t instance = read_instance(a);
           return [&r, instance] { return r.serving_->reactivate(instance); };
         }},
        {"get_status_summary",
         [](ScenarioRunner& r, ObjectReader&) -> Action { return [&r] { return r.serving_->status_summary(); }; }},
        {"get_active_instances",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto tag = read_tag(a, "tag", false);
           return [&r, tag] { return r.serving_->active_instances(tag); };
         }},
        {"get_instance",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const std::uint32_t instance = read_instance(a);
           return [&r, instance] { return r.serving_->instance(instance); };
         }},
        {"get_request_counts",
         [](ScenarioRunner& r, ObjectReader&) -> Action { return [&r] { return r.serving_->request_counts(); }; }},
        {"configure_elastic",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto pool = read_tag(a, "pool", true);
           autoscale::ElasticConfig config;
           configs::read_elastic_config(a, config);
           return [&r, pool, config] { return r.serving_->configure_elastic(*pool, config); };
         }},
        {"get_metrics",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto pool = read_tag(a, "pool", true);
           return [&r, pool] { return r.serving_->elastic_metrics(*pool); };
         }},
        {"wake_up_all_workers",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto pool = read_tag(a, "pool", true);
           return [&r, pool] { return r.serving_->wake_up_all_workers(*pool); };
         }},
        {"resume_elastic_scheduling",
         [](ScenarioRunner& r, ObjectReader& a) -> Action {
           const auto pool = read_tag(a, "pool", true);
           return [&r, pool] { return r.serving_->resume_elastic_scheduling(*pool); };
         }},
        {"shutdown",
         [](ScenarioRunner& r, ObjectReader&) -> Action {
           return [&r] {
             r.scheduler_.shutdown();
             return json{{"success", true}};
           };
         }},
    };
    return table;
  }

  static const std::set<std::string>& serving_calls() {
    static const std::set<std::string> names = {
        "submit_requests",    "scale_up_full",        "scale_down_full",  "deactivate_instance",
        "reactivate_instance", "get_status_summary",  "get_active_instances", "get_instance",
        "get_request_counts", "configure_elastic",    "get_metrics",      "wake_up_all_workers",
        "resume_elastic_scheduling"};
    return names;
  }

  std::string file_;
  bool allow_files_;
  std::unique_ptr<ServingWorld> serving_;
  sch::ManualWorld world_;
  sch::Scheduler scheduler_{world_, &world_, &world_};
};

// A script's top-level keys (a session's setup has no steps).
void check_script_keys(const json& script, const std::string& file, bool steps) {
  for (const auto& [key, value] : script.items()) {
    if ((key == "steps" && steps) || key == "nodes" || key == "comment" || key == "serving" || key == "scaling") continue;
    throw ScriptError{file + ": " + key + ": unknown key (expected nodes, serving, scaling" +
                      (steps ? ", steps" : "") + ", comment)"};
  }
}

}  // namespace

struct ScenarioSession::Impl {
  Impl(const std::string& name, const json& setup, bool allow_files) : runner(name, setup, allow_files) {}
  ScenarioRunner runner;  // not movable: the scheduler holds references into it
  std::size_t calls = 0;
};

Expected<std::unique_ptr<ScenarioSession>> ScenarioSession::create(const json& setup, const std::string& name,
                                                                   bool allow_files) {
  try {
    if (!setup.is_object()) throw ScriptError{name + ": expected an object with nodes, serving, scaling"};
    check_script_keys(setup, name, false);
    auto session = std::unique_ptr<ScenarioSession>(new ScenarioSession());
    session->impl_ = std::make_unique<Impl>(name, setup, allow_files);
    return session;
  } catch (const ScriptError& e) {
    return Error{e.message};
  }
}

ScenarioSession::ScenarioSession() = default;
ScenarioSession::~ScenarioSession() = default;

Expected<json> ScenarioSession::call(const std::string& name, const json& args) {
  try {
    auto step = impl_->runner.parse_step(impl_->calls, json{{"call", name}, {"args", args}}, name);
    ++impl_->calls;
    return step.run()["result"];
  } catch (const ScriptError& e) {
    return Error{e.message};
  }
}

double ScenarioSession::now() const { return impl_->runner.now(); }

std::vector<std::string> ScenarioSession::check_invariants() const { return impl_->runner.check(); }

std::string ScenarioSession::prometheus_text() const {
  std::ostringstream out;
  write_scheduler_metrics(out, impl_->runner.scheduler());
  return out.str();
}

std::vector<std::string> ScenarioSession::call_names() { return ScenarioRunner::call_names(); }

int run_scenario_command(const ScenarioCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto script = configs::read_config_file(options.script);
  if (!script) {
    err << "error: " << script.error().message << "\n";
    return kExitBadInput;
  }
  return run_scenario(*script, options, out, err);
}

int run_scenario(const json& script, const ScenarioCommandOptions& options, std::ostream& out, std::ostream& err) {
  try {
    if (!script.is_object() || !script.contains("steps") || !script["steps"].is_array()) {
      throw ScriptError{options.script + ": expected {\"nodes\": [...] (optional), \"steps\": [...]}"};
    }
    check_script_keys(script, options.script, true);
    ScenarioRunner runner(options.script, script, options.allow_files);
    const json& steps = script["steps"];
    // The whole script is checked before step 0 runs.
    std::vector<ScenarioRunner::ParsedStep> parsed;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      parsed.push_back(runner.parse_step(i, steps[i], "steps[" + std::to_string(i) + "]"));
    }
    std::size_t unmet = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const json line = parsed[i].run();
      out << line.dump() << "\n";
      for (const auto& message : ScenarioRunner::unmet(steps[i], line)) {
        ++unmet;
        err << "unmet: " << options.script << ": steps[" << i << "]"
            << (line.contains("name") ? " (" + line["name"].get<std::string>() + ")" : "") << ": " << message << "\n";
      }
      if (const auto& result = line["result"]; result.contains("warnings")) {
        for (const auto& warning : result["warnings"]) err << "warning: steps[" << i << "]: " << warning.get<std::string>() << "\n";
      }
      if (options.check) {
        if (const auto problems = runner.check(); !problems.empty()) {
          err << "error: invariant broken after steps[" << i << "]: " << problems.front() << "\n";
          return 70;
        }
      }
    }
    if (!options.metrics.empty()) {
      AtomicFile file(options.metrics);
      write_scheduler_metrics(file.stream(), runner.scheduler());
      if (auto written = file.commit(); !written) {
        err << "error: " << options.metrics << ": " << written.error().message << "\n";
        return kExitOutputError;
      }
    }
    if (unmet > 0) return kExitExpectationsUnmet;
  } catch (const ScriptError& e) {
    out.flush();
    err << "error: " << e.message << "\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace meshsim::cli
