// LlmCluster's servers and instance lifecycle: STARTING -> ACTIVE -> DRAINING -> INACTIVE
// -> removed, and the evacuation of a draining instance. The ScalingManager decides when;
// this file keeps every step safe: routing only ever picks ACTIVE instances, a pool that
// takes requests always keeps one, and a request on an evacuated instance moves to an
// ACTIVE one (never dropped). Evacuation waits for the running batch's next iteration
// boundary (the requests then move one microsecond later, from an ordinary event), so
// folded and unfolded runs move the same requests at the same time.

#include <algorithm>
#include <string>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/cluster/llm_cluster_state.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::cluster {

void LlmCluster::account_levels() {
  const SimTime now = sim_.now();
  capacity_.set(serving_, now);
  gpus_.set(static_cast<double>(attached_gpus_), now);
  attached_level_.set(attached_, now);
  cost_.set(servers_.cost_per_hour() / 3.6e9, now);  // USD per microsecond
}

LlmCluster::Instance& LlmCluster::existing(std::uint32_t instance, const char* call) {
  MESHSIM_CHECK(instance < instances_.size() && !instances_[instance]->removed,
                std::string(call) + ": no instance " + std::to_string(instance));
  return *instances_[instance];
}

void LlmCluster::set_state(std::uint32_t instance, InstanceState state) {
  Instance& in = *instances_[instance];
  // Leaving ACTIVE: out of the pool's load.
  if (pools_.tracks_loads() && in.state == InstanceState::kActive) pools_.recount(in.tag, in.counted, ActiveLoad{});
  // A new instance enters the counts here (its state field starts as STARTING).
  const auto from = std::exchange(in.counted_state, true) ? std::optional(in.state) : std::nullopt;
  pools_.move(instance, in.tag, from, state);
  in.state = state;
  in.drain_reported = false;  // leaving DRAINING, or entering it undrained
  if (pools_.tracks_loads() && state == InstanceState::kActive) count_active_load(in);
  account_levels();
  if (activity_ != nullptr) activity_->on_instance_state(instance, kInstanceStateNames.name(state), sim_.now());
}

void LlmCluster::attach(Instance& in, std::uint32_t server) {
  servers_.hold(server, in.tag);
  in.server = server;
  ++attached_;
  attached_gpus_ += hardware_of(in).tensor_parallel;
}

std::uint32_t LlmCluster::detach(Instance& in) {
  const std::uint32_t server = in.server;
  servers_.release(server);
  --attached_;
  attached_gpus_ -= hardware_of(in).tensor_parallel;
  in.server = kNoServer;
  return server;
}

std::uint32_t LlmCluster::add_instance(InstanceTag tag, std::uint32_t server) {
  const auto id = static_cast<std::uint32_t>(instances_.size());
  auto in = std::make_unique<Instance>();
  in->tag = tag;
  in->hardware = hardware_.index_of(tag);
  attach(*in, server);
  engine::EventHandler& self = *this;
  // Ranked: iteration ends at one microsecond run after arrivals and transfers, in
  // instance order, however often a timer was re-armed (folded and unfolded runs then
  // see the same order of events).
  in->timer = std::make_unique<engine::Timer>(sim_, self, engine::EventPayload{kIterationEnd, id}, id);
  in->engine = make_engine(config_, hardware_of(*in).kv_capacity_tokens, seqs_);
  instances_.push_back(std::move(in));
  ++existing_;
  if (tag == InstanceTag::kPrompt) ++prompt_side_;
  if (activity_ != nullptr) activity_->on_instance(id, server, kInstanceTagNames.name(tag));
  set_state(id, InstanceState::kStarting);
  return id;
}

void LlmCluster::activate(std::uint32_t instance) {
  Instance& in = existing(instance, "activate");
  MESHSIM_CHECK(in.state == InstanceState::kStarting, "activate: instance " + std::to_string(instance) +
                                                          " is not STARTING");
  ++serving_;
  serving_kv_tokens_ += hardware_of(in).kv_capacity_tokens;
  PoolRouter& router = router_for(in.tag);
  router.add(instance, in.load(router.policy()));
  set_state(instance, InstanceState::kActive);
}

Status LlmCluster::drain(std::uint32_t instance) {
  Instance& in = existing(instance, "drain");
  MESHSIM_CHECK(in.state == InstanceState::kActive, "drain: instance " + std::to_string(instance) +
                                                        " is not ACTIVE");
  PoolRouter& router = router_for(in.tag);
  const bool needed = in.tag == InstanceTag::kToken ? prompt_side_ > 0 : true;
  if (needed && router.size() == 1) {
    return Error{"instance " + std::to_string(instance) + " is the last ACTIVE " +
                 (in.tag == InstanceTag::kToken ? "token instance (prompt instances ship their KV to one)"
                                                : "prompt or mixed instance (new requests go to one)")};
  }
  router.remove(instance);
  set_state(instance, InstanceState::kDraining);
  report_if_drained(instance);
  return Ok{};
}

void LlmCluster::evacuate(std::uint32_t instance) {
  Instance& in = existing(instance, "evacuate");
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
  Instance& in = *instances_[instance];
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
    target = token_router_.empty() ? prompt_router_.pick() : token_router_.pick();
    seq.recomputing = true;
    seq.reserve_all = config_.kv_allocation == KvAllocation::kReserve;
    assign(target, slot);
    instances_[target]->pending_tokens += seq.prefill_tokens();
    refresh_load(target);
  }
  enqueue_prefill(target, slot);
  wake(target);
}

bool LlmCluster::drained(std::uint32_t instance) const {
  MESHSIM_CHECK(instance < instances_.size() && !instances_[instance]->removed,
                "drained: no instance " + std::to_string(instance));
  return instances_[instance]->drained();
}

std::uint32_t LlmCluster::deactivate(std::uint32_t instance) {
  Instance& in = existing(instance, "deactivate");
  MESHSIM_CHECK(drained(instance), "deactivate: instance " + std::to_string(instance) + " is not drained");
  MESHSIM_CHECK(in.holds_nothing(),
                "deactivate: a drained instance still holds work: " + describe(instance));
  // The KV cache is flushed and the GPUs released.
  in.evacuating = false;
  in.engine = make_engine(config_, hardware_of(in).kv_capacity_tokens, seqs_);
  --serving_;
  serving_kv_tokens_ -= hardware_of(in).kv_capacity_tokens;
  const std::uint32_t server = detach(in);
  set_state(instance, InstanceState::kInactive);
  return server;
}

void LlmCluster::retag(std::uint32_t instance, InstanceTag tag) {
  Instance& in = existing(instance, "retag");
  MESHSIM_CHECK(drained(instance), "retag: instance " + std::to_string(instance) + " is not drained");
  MESHSIM_CHECK(in.tag != InstanceTag::kMixed && tag != InstanceTag::kMixed && tag != in.tag,
                "retag: instance " + std::to_string(instance) + " can only swap between prompt and token");
  MESHSIM_CHECK(hardware_.same(in.tag, tag), "retag: the prompt and token pools run on different hardware");
  MESHSIM_CHECK(in.holds_nothing(),
                "retag: a drained instance still holds work: " + describe(instance));
  in.evacuating = false;
  in.engine = make_engine(config_, hardware_of(in).kv_capacity_tokens, seqs_);  // the KV cache is flushed
  // Leaves the old pool's DRAINING count; set_state below enters the new pool's ACTIVE.
  pools_.move(instance, in.tag, in.state, std::nullopt);
  pools_.move(instance, tag, std::nullopt, in.state);
  prompt_side_ = tag == InstanceTag::kPrompt ? prompt_side_ + 1 : prompt_side_ - 1;
  in.tag = tag;
  if (activity_ != nullptr) activity_->on_instance(instance, in.server, kInstanceTagNames.name(tag));
  PoolRouter& router = router_for(tag);
  router.add(instance, in.load(router.policy()));
  set_state(instance, InstanceState::kActive);
}

void LlmCluster::restart(std::uint32_t instance, std::uint32_t server) {
  Instance& in = existing(instance, "restart");
  MESHSIM_CHECK(in.state == InstanceState::kInactive, "restart: instance " + std::to_string(instance) +
                                                          " is not INACTIVE");
  attach(in, server);
  if (activity_ != nullptr) activity_->on_instance(instance, server, kInstanceTagNames.name(in.tag));
  set_state(instance, InstanceState::kStarting);
}

std::optional<std::uint32_t> LlmCluster::remove_instance(std::uint32_t instance) {
  Instance& in = existing(instance, "remove_instance");
  MESHSIM_CHECK(in.state == InstanceState::kInactive || in.state == InstanceState::kStarting,
                "remove_instance: instance " + std::to_string(instance) + " is still serving");
  std::optional<std::uint32_t> server;
  if (in.state == InstanceState::kStarting) server = detach(in);
  in.removed = true;
  pools_.move(instance, in.tag, in.state, std::nullopt);
  --existing_;
  if (in.tag == InstanceTag::kPrompt) --prompt_side_;
  account_levels();
  if (activity_ != nullptr) activity_->on_instance_state(instance, "removed", sim_.now());
  return server;
}

std::vector<std::string> LlmCluster::check_invariants() const {
  std::vector<std::string> problems;
  const auto fail = [&](const std::string& what) { problems.push_back(what); };
  std::array<PoolTotals, 3> totals{};
  std::array<ActiveLoad, 3> active{};
  std::vector<std::uint32_t> held(servers_.ids(), 0);
  std::uint32_t existing = 0, attached = 0, serving = 0, prompt_side = 0;
  std::uint64_t attached_gpus = 0, serving_kv = 0;
  for (std::uint32_t id = 0; id < instances_.size(); ++id) {
    const Instance& in = *instances_[id];
    const std::string name = "instance " + std::to_string(id);
    const bool is_active = !in.removed && in.state == InstanceState::kActive;
    if (router_for(in.tag).contains(id) != is_active) fail(name + ": routed to exactly when ACTIVE");
    if (in.removed && pools_.listed_inactive(in.tag, id)) fail(name + ": removed, yet in an INACTIVE index");
    if (in.removed) continue;
    ++existing;
    const auto tag = static_cast<std::size_t>(in.tag);
    ++totals[tag].by_state[static_cast<std::size_t>(in.state)];
    if (is_active) {
      active[tag].requests += in.requests;
      active[tag].pending_tokens += in.pending_tokens;
    }
    if (pools_.listed_inactive(in.tag, id) != (in.state == InstanceState::kInactive)) {
      fail(name + ": in its pool's INACTIVE index exactly when INACTIVE");
    }
    const bool serves = in.state == InstanceState::kActive || in.state == InstanceState::kDraining;
    serving += serves;
    serving_kv += serves ? hardware_of(in).kv_capacity_tokens : 0;
    if (in.hardware != hardware_.index_of(in.tag)) fail(name + ": not on its pool's hardware");
    prompt_side += in.tag == InstanceTag::kPrompt;
    const bool on_server = in.state != InstanceState::kInactive;
    if (on_server != (in.server != kNoServer)) fail(name + ": on a server exactly when not INACTIVE");
    if (in.server != kNoServer) {
      ++attached;
      attached_gpus += hardware_of(in).tensor_parallel;
      if (in.server >= held.size() || !servers_.exists(in.server)) {
        fail(name + ": on server " + std::to_string(in.server) + ", which does not exist");
      } else {
        ++held[in.server];
      }
    }
    for (const auto& problem : in.engine->check_invariants()) fail(name + ": " + problem);
    if (in.drain_reported != in.drained()) {
      fail(name + ": reported drained exactly when DRAINING with nothing assigned and idle");
    }
    if ((in.state == InstanceState::kInactive || in.state == InstanceState::kStarting) &&
        (in.requests != 0 || in.busy || !in.holds_nothing())) {
      fail(name + " holds work while " + std::string(kInstanceStateNames.name(in.state)));
    }
  }
  for (auto& problem : pools_.check_invariants(totals, active)) fail(std::move(problem));
  for (auto& problem : servers_.check_invariants(held)) fail(std::move(problem));
  if (existing != existing_ || attached != attached_ || serving != serving_ || prompt_side != prompt_side_ ||
      attached_gpus != attached_gpus_ || serving_kv != serving_kv_tokens_) {
    fail("instance counts disagree with the instances");
  }
  return problems;
}

std::optional<InstanceState> LlmCluster::state_of(std::uint32_t id) const {
  if (id >= instances_.size() || instances_[id]->removed) return std::nullopt;
  return instances_[id]->state;
}

InstanceTag LlmCluster::tag_of(std::uint32_t id) const {
  MESHSIM_CHECK(id < instances_.size(), "tag_of: no instance " + std::to_string(id));
  return instances_[id]->tag;
}

std::optional<LlmCluster::InstanceView> LlmCluster::instance(std::uint32_t id) const {
  if (id >= instances_.size() || instances_[id]->removed) return std::nullopt;
  const Instance& in = *instances_[id];
  const EngineStep& step = in.engine->step();
  const auto running = in.busy ? static_cast<std::uint32_t>(step.prefill.size() + step.decode.size()) : 0u;
  InstanceView view{id,      in.tag,           in.state, std::nullopt, in.requests, running, in.pending_tokens,
                    in.kv_held(sim_.now()), in.evacuating};
  if (in.server != kNoServer) view.server = in.server;
  return view;
}

std::vector<LlmCluster::InstanceView> LlmCluster::instance_views() const {
  std::vector<InstanceView> views;
  for (std::uint32_t id = 0; id < instances_.size(); ++id) {
    if (auto view = instance(id)) views.push_back(*view);
  }
  return views;
}

}  // namespace meshsim::cluster
