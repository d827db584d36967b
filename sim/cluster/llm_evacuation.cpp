// LlmCluster's evacuation of a draining instance: its requests move to ACTIVE instances,
// never dropped. The ScalingManager decides when (through the fleet's lifecycle calls,
// instance_fleet.cpp); evacuation waits for the running batch's next iteration boundary
// (the requests then move one microsecond later, from an ordinary event), so folded and
// unfolded runs move the same requests at the same time.

#include <algorithm>
#include <string>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/llm_cluster_state.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::cluster {

void LlmCluster::evacuate(std::uint32_t instance) {
  ServingInstance& in = fleet_.existing(instance, "evacuate");
  MESHSIM_CHECK(in.state == InstanceState::kDraining, "evacuate: instance " + std::to_string(instance) +
                                                          " is not DRAINING");
  if (in.evacuating) return;
  in.evacuating = true;
  if (in.busy) {
    // The running batch ends at its next iteration boundary (end_step migrates).
    interrupt_fold(in);
  } else {
    migrate_all(instance);
  }
}

// Moves every request waiting on an idle evacuated instance, oldest first.
void LlmCluster::migrate_all(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  MESHSIM_CHECK(!in.busy, "migrate_all: the instance is running a batch");
  std::vector<std::uint32_t> slots = in.engine->evacuate();
  std::sort(slots.begin(), slots.end(),
            [&](std::uint32_t a, std::uint32_t b) { return live_[a].record.id < live_[b].record.id; });
  for (const std::uint32_t slot : slots) migrate(instance, slot);
}

// Moves one request off `from` to an ACTIVE instance: one that has not been prefilled
// goes to the prompt pool as if it had just arrived; one that has recomputes its KV
// (prompt and tokens so far) where it will decode: the token pool, or the mixed pool when
// the cluster has no token instance.
void LlmCluster::migrate(std::uint32_t from, std::uint32_t slot) {
  Live& r = live_[slot];
  MESHSIM_CHECK(r.instance == from, "migrate: request " + std::to_string(r.record.id) + " is not on instance " +
                                         std::to_string(from));
  unassign(slot);
  ++r.record.migrations;
  std::uint32_t target;
  Sequence& seq = seqs_[slot];
  if (seq.generated == 0) {
    target = route_prompt(slot);
    r.record.prompt_instance = target;
    assign(target, slot);
  } else {
    PoolRouter& tokens = fleet_.router(InstanceTag::kToken);
    target = tokens.empty() ? fleet_.router(InstanceTag::kPrompt).pick() : tokens.pick();
    seq.recomputing = true;
    seq.reserve_all = config_.kv_allocation == KvAllocation::kReserve;
    assign(target, slot);
    fleet_.at(target).pending_tokens += seq.prefill_tokens();
    fleet_.refresh_load(target);
  }
  enqueue_prefill(target, slot);
  wake(target);
}

std::vector<std::string> LlmCluster::check_invariants() const {
  std::vector<std::string> problems = fleet_.check_invariants();
  for (std::size_t slot = 0; slot < live_.size(); ++slot) {
    const Live& r = live_[slot];
    if (!r.used) continue;
    const bool on_instance = r.instance < fleet_.size() && !fleet_.at(r.instance).removed;
    const auto state = on_instance ? std::optional(fleet_.at(r.instance).state) : std::nullopt;
    if (r.record.prompt_instance &&
        (state != InstanceState::kActive && state != InstanceState::kDraining)) {
      problems.push_back("request " + std::to_string(r.record.id) + " is on instance " + std::to_string(r.instance) +
                         ", which does not serve");
    }
  }
  return problems;
}

}  // namespace meshsim::cluster
