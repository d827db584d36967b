// What LlmCluster reports without changing anything: usage integrals, KV and prefix-cache
// use, requests in flight and awaiting their first token, and descriptions for errors
// (counts and loads by pool are the fleet's).

#include <algorithm>
#include <string>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/llm_cluster_state.hpp"

namespace meshsim::cluster {

ServingSystem::Usage LlmCluster::usage() const {
  const SimTime now = sim_.now();
  // Whole iterations first, as integers, then the running ones' shares in instance
  // order: the same sum whether iterations were folded.
  std::int64_t whole = useful_done_ns_, busy_us = busy_done_us_;
  double partial = 0.0;
  for (std::uint32_t id = 0; id < fleet_.size(); ++id) {
    const ServingInstance& in = fleet_.at(id);
    if (!in.busy) continue;
    const StepSegment::Useful so_far = in.segment.useful_so_far(now);
    whole += so_far.whole_ns;
    partial += so_far.partial_ns;
    busy_us += (now - in.segment.start()).us();
  }
  const InstanceFleet::Levels& levels = fleet_.levels();
  const double serving_us = levels.serving.total(now);  // one capacity unit per serving instance
  return Usage{.work_unit_us = (static_cast<double>(whole) + partial) / 1e3,
               .capacity_unit_us = serving_us,
               .busy_instance_us = static_cast<double>(busy_us),
               .serving_instance_us = serving_us,
               .gpu_us = levels.gpus.total(now),
               .cost_usd = levels.cost_per_us.total(now),
               .instance_us = levels.attached.total(now)};
}

std::uint64_t LlmCluster::kv_used_tokens() const {
  std::uint64_t used = 0;
  for (std::uint32_t id = 0; id < fleet_.size(); ++id) used += fleet_.at(id).kv_held(sim_.now());
  return used;
}

std::vector<ServingSystem::PrefixCacheCounts> LlmCluster::prefix_cache_by_instance() const {
  if (!caches_prefixes(config_)) return {};
  std::vector<PrefixCacheCounts> counts;
  counts.reserve(fleet_.size());
  for (std::uint32_t id = 0; id < fleet_.size(); ++id) counts.push_back(fleet_.at(id).prefix);
  return counts;
}

std::string LlmCluster::describe(std::uint32_t instance) const {
  const ServingInstance& in = fleet_.at(instance);
  return "instance " + std::to_string(instance) + " (" + std::string(kInstanceTagNames.name(in.tag)) + ", " +
         std::string(kInstanceStateNames.name(in.state)) + (in.evacuating ? ", evacuating" : "") + ", " +
         (in.busy ? "busy" : "idle") + "): " + in.engine->describe() + ", KV " +
         std::to_string(in.kv_held(sim_.now())) + " of " +
         std::to_string(in.hardware->kv_capacity_tokens) + " tokens held";
}

std::string LlmCluster::describe_waiting() const {
  std::string out;
  for (std::uint32_t i = 0; i < fleet_.size(); ++i) {
    const ServingInstance& in = fleet_.at(i);
    if (!in.busy && !in.engine->has_waiting()) continue;
    if (!out.empty()) out += "; ";
    out += describe(i);
  }
  return out;
}

void LlmCluster::for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const {
  std::vector<RequestRecord> list;
  for (std::size_t slot = 0; slot < live_.size(); ++slot) {
    if (!live_[slot].used) continue;
    list.push_back(live_[slot].record);
    list.back().pauses = seqs_[slot].pauses;
    list.back().kv_evictions = seqs_[slot].kv_evictions;
  }
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (const auto& record : list) visit(record);
}

ServingSystem::FirstTokenBacklog LlmCluster::awaiting_first_token(SimTime cutoff) const {
  return first_tokens_.backlog(cutoff);
}

}  // namespace meshsim::cluster
