#include "configs/scaling_config.hpp"
#include "sim/script/script_args.hpp"
#include "sim/script/script_calls.hpp"

// The serving instances' calls (seeds 003 and 004): they need the setup's "serving" object.

namespace meshsim::script {
namespace {

using configs::ObjectReader;
using nlohmann::json;

// An instance tag (prompt, token, mixed); `required` reports it when absent.
std::optional<cluster::InstanceTag> read_tag(ObjectReader& a, std::string_view key, bool required) {
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
std::uint32_t read_instance(ObjectReader& a) {
  std::uint32_t id = 0;
  if (!a.has("instance")) a.fail("instance", "required (an instance id)");
  a.read("instance", id, "an instance id (an integer >= 0)");
  return id;
}

}  // namespace

std::vector<CallSpec> serving_calls() {
  return {
      {"submit_requests", "`count` LLM requests arriving now", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         std::uint32_t count = 1, prompt = 0, output = 0;
         const auto tokens = [](std::uint64_t v) { return v >= 1 && v <= 10'000'000; };
         a.read("count", count, "an integer in [1, 1000000]", [](std::uint64_t v) { return v >= 1 && v <= 1'000'000; });
         if (!a.has("prompt_tokens")) a.fail("prompt_tokens", "required (tokens)");
         if (!a.has("output_tokens")) a.fail("output_tokens", "required (tokens)");
         a.read("prompt_tokens", prompt, "a token count in [1, 10000000]", tokens);
         a.read("output_tokens", output, "a token count in [1, 10000000]", tokens);
         return [&w, count, prompt, output] { return w.serving->submit(count, prompt, output); };
       }},
      {"scale_up_full", "Starts a serving instance of a pool", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto tag = read_tag(a, "tag", true);
         std::optional<std::uint32_t> parallelism;
         std::optional<std::string> sku;
         // The instance config comes from the start state (seed 004's start_state_manager);
         // parallelism and server_sku, when given, must match it.
         a.read_optional("parallelism", parallelism);
         a.read_optional("server_sku", sku);
         return [&w, tag, parallelism, sku] { return w.serving->scale_up_full(*tag, parallelism, sku); };
       }},
      {"scale_down_full", "Drains and removes a serving instance (by id, or the least loaded of a tag)", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         std::optional<std::uint32_t> instance;
         a.read_optional("instance", instance);
         const auto tag = read_tag(a, "tag", false);
         if (instance.has_value() == tag.has_value())
           a.fail("instance", "give either instance or tag (the least-loaded)");
         return [&w, instance, tag] { return w.serving->scale_down_full(instance, tag); };
       }},
      {"deactivate_instance", "Takes an instance out of routing (INACTIVE)", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::uint32_t instance = read_instance(a);
         return [&w, instance] { return w.serving->deactivate(instance); };
       }},
      {"reactivate_instance", "Puts an INACTIVE instance back in routing", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::uint32_t instance = read_instance(a);
         return [&w, instance] { return w.serving->reactivate(instance); };
       }},
      {"get_status_summary", "Instances by pool and state, and the scaling limits", true,
       [](ScriptWorld& w, ObjectReader&) -> Action { return [&w] { return w.serving->status_summary(); }; }},
      {"get_active_instances", "The ACTIVE instances, of one tag or all", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto tag = read_tag(a, "tag", false);
         return [&w, tag] { return w.serving->active_instances(tag); };
       }},
      {"get_instance", "One instance's state and load", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const std::uint32_t instance = read_instance(a);
         return [&w, instance] { return w.serving->instance(instance); };
       }},
      {"get_request_counts", "Requests submitted, finished, dropped and in flight", true,
       [](ScriptWorld& w, ObjectReader&) -> Action { return [&w] { return w.serving->request_counts(); }; }},
      {"configure_elastic", "Starts (or reconfigures) a pool's elastic scheduler", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto pool = read_tag(a, "pool", true);
         autoscale::ElasticConfig config;
         configs::read_elastic_config(a, config);
         return [&w, pool, config] { return w.serving->configure_elastic(*pool, config); };
       }},
      {"get_metrics", "A pool's elastic-scheduler metrics", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto pool = read_tag(a, "pool", true);
         return [&w, pool] { return w.serving->elastic_metrics(*pool); };
       }},
      {"wake_up_all_workers", "Makes a pool's INACTIVE workers ACTIVE again", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto pool = read_tag(a, "pool", true);
         return [&w, pool] { return w.serving->wake_up_all_workers(*pool); };
       }},
      {"resume_elastic_scheduling", "Resumes a pool's paused elastic scheduling", true,
       [](ScriptWorld& w, ObjectReader& a) -> Action {
         const auto pool = read_tag(a, "pool", true);
         return [&w, pool] { return w.serving->resume_elastic_scheduling(*pool); };
       }},
  };
}

}  // namespace meshsim::script
