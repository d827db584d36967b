#include "sim/cluster/instance_fleet.hpp"

#include <array>
#include <string>
#include <utility>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

InstanceFleet::InstanceFleet(engine::Simulation& sim, const LlmClusterConfig& config, engine::EventHandler& steps,
                             std::uint64_t step_event, EngineFactory fresh_engine)
    : sim_(sim),
      steps_(steps),
      step_event_(step_event),
      fresh_engine_(std::move(fresh_engine)),
      hardware_(config),
      servers_(hardware_, [this] { account_levels(); }),
      levels_{metrics::LevelIntegral(sim.now()), metrics::LevelIntegral(sim.now()), metrics::LevelIntegral(sim.now()),
              metrics::LevelIntegral(sim.now())},
      prompt_router_(config.prompt_routing),
      token_router_(config.token_routing) {}

void InstanceFleet::account_levels() {
  const SimTime now = sim_.now();
  levels_.serving.set(counts_.serving, now);
  levels_.gpus.set(static_cast<double>(counts_.attached_gpus), now);
  levels_.attached.set(counts_.attached, now);
  levels_.cost_per_us.set(servers_.cost_per_hour() / 3.6e9, now);  // USD per microsecond
}

ServingInstance& InstanceFleet::existing(std::uint32_t id, const char* call) {
  MESHSIM_CHECK(id < instances_.size() && !instances_[id]->removed, std::string(call) + ": no instance " + std::to_string(id));
  return *instances_[id];
}

void InstanceFleet::set_state(std::uint32_t id, InstanceState state) {
  ServingInstance& in = *instances_[id];
  // Leaving ACTIVE: out of the pool's load.
  if (pools_.tracks_loads() && in.state == InstanceState::kActive) pools_.recount(in.tag, in.counted, ActiveLoad{});
  // A new instance enters the counts here (its state field starts as STARTING).
  const auto from = std::exchange(in.counted_state, true) ? std::optional(in.state) : std::nullopt;
  pools_.move(id, in.tag, from, state);
  in.state = state;
  in.drain_reported = false;  // leaving DRAINING, or entering it undrained
  if (pools_.tracks_loads() && state == InstanceState::kActive) count_active_load(in);
  account_levels();
  if (activity_ != nullptr) activity_->on_instance_state(id, kInstanceStateNames.name(state), sim_.now());
}

void InstanceFleet::attach(ServingInstance& in, std::uint32_t server) {
  servers_.hold(server, in.tag);
  in.server = server;
  ++counts_.attached;
  counts_.attached_gpus += in.hardware->tensor_parallel;
}

std::uint32_t InstanceFleet::detach(ServingInstance& in) {
  const std::uint32_t server = in.server;
  servers_.release(server);
  --counts_.attached;
  counts_.attached_gpus -= in.hardware->tensor_parallel;
  in.server = ServingInstance::kNoServer;
  return server;
}

std::uint32_t InstanceFleet::add(InstanceTag tag, std::uint32_t server) {
  const auto id = static_cast<std::uint32_t>(instances_.size());
  auto in = std::make_unique<ServingInstance>();
  in->tag = tag;
  in->hardware = &hardware_.of(tag);
  attach(*in, server);
  // Ranked: iteration ends at one microsecond run after arrivals and transfers, in
  // instance order, however often a timer was re-armed (folded and unfolded runs then
  // see the same order of events).
  in->timer = std::make_unique<engine::Timer>(sim_, steps_, engine::EventPayload{step_event_, id}, id);
  in->engine = fresh_engine_(*in->hardware);
  instances_.push_back(std::move(in));
  ++counts_.existing;
  if (tag == InstanceTag::kPrompt) ++counts_.prompt_side;
  if (activity_ != nullptr) activity_->on_instance(id, server, kInstanceTagNames.name(tag));
  set_state(id, InstanceState::kStarting);
  return id;
}

void InstanceFleet::activate(std::uint32_t id) {
  ServingInstance& in = existing(id, "activate");
  MESHSIM_CHECK(in.state == InstanceState::kStarting, "activate: instance " + std::to_string(id) + " is not STARTING");
  ++counts_.serving;
  counts_.serving_kv_tokens += in.hardware->kv_capacity_tokens;
  PoolRouter& pool = router(in.tag);
  pool.add(id, in.load(pool.policy()));
  scale_down_[static_cast<std::size_t>(in.tag)].add(id, in.scale_down_load());
  set_state(id, InstanceState::kActive);
}

Status InstanceFleet::drain(std::uint32_t id) {
  ServingInstance& in = existing(id, "drain");
  MESHSIM_CHECK(in.state == InstanceState::kActive, "drain: instance " + std::to_string(id) + " is not ACTIVE");
  PoolRouter& pool = router(in.tag);
  const bool needed = in.tag == InstanceTag::kToken ? counts_.prompt_side > 0 : true;
  if (needed && pool.size() == 1) {
    return Error{"instance " + std::to_string(id) + " is the last ACTIVE " +
                 (in.tag == InstanceTag::kToken ? "token instance (prompt instances ship their KV to one)"
                                                : "prompt or mixed instance (new requests go to one)")};
  }
  pool.remove(id);
  scale_down_[static_cast<std::size_t>(in.tag)].remove(id);
  set_state(id, InstanceState::kDraining);
  report_if_drained(id);
  return Ok{};
}

bool InstanceFleet::drained(std::uint32_t id) const {
  MESHSIM_CHECK(id < instances_.size() && !instances_[id]->removed, "drained: no instance " + std::to_string(id));
  return instances_[id]->drained();
}

void InstanceFleet::report_if_drained(std::uint32_t id) {
  ServingInstance& in = *instances_[id];
  if (in.drain_reported || !in.drained()) return;
  in.drain_reported = true;
  if (drained_listener_) drained_listener_(id);
}

std::uint32_t InstanceFleet::deactivate(std::uint32_t id) {
  ServingInstance& in = existing(id, "deactivate");
  MESHSIM_CHECK(in.drained(), "deactivate: instance " + std::to_string(id) + " is not drained");
  MESHSIM_CHECK(in.holds_nothing(), "deactivate: a drained instance still holds work: instance " + std::to_string(id) +
                                        ": " + in.engine->describe());
  // The KV cache is flushed and the GPUs released.
  in.evacuating = false;
  in.engine = fresh_engine_(*in.hardware);
  --counts_.serving;
  counts_.serving_kv_tokens -= in.hardware->kv_capacity_tokens;
  const std::uint32_t server = detach(in);
  set_state(id, InstanceState::kInactive);
  return server;
}

void InstanceFleet::retag(std::uint32_t id, InstanceTag tag) {
  ServingInstance& in = existing(id, "retag");
  MESHSIM_CHECK(in.drained(), "retag: instance " + std::to_string(id) + " is not drained");
  MESHSIM_CHECK(in.tag != InstanceTag::kMixed && tag != InstanceTag::kMixed && tag != in.tag,
                "retag: instance " + std::to_string(id) + " can only swap between prompt and token");
  MESHSIM_CHECK(hardware_.same(in.tag, tag), "retag: the prompt and token pools run on different hardware");
  MESHSIM_CHECK(in.holds_nothing(), "retag: a drained instance still holds work: instance " + std::to_string(id) +
                                        ": " + in.engine->describe());
  in.evacuating = false;
  in.engine = fresh_engine_(*in.hardware);  // the KV cache is flushed
  // Leaves the old pool's DRAINING count; set_state below enters the new pool's ACTIVE.
  pools_.move(id, in.tag, in.state, std::nullopt);
  pools_.move(id, tag, std::nullopt, in.state);
  counts_.prompt_side = tag == InstanceTag::kPrompt ? counts_.prompt_side + 1 : counts_.prompt_side - 1;
  in.tag = tag;
  if (activity_ != nullptr) activity_->on_instance(id, in.server, kInstanceTagNames.name(tag));
  PoolRouter& pool = router(tag);
  pool.add(id, in.load(pool.policy()));
  scale_down_[static_cast<std::size_t>(tag)].add(id, in.scale_down_load());
  set_state(id, InstanceState::kActive);
}

void InstanceFleet::restart(std::uint32_t id, std::uint32_t server) {
  ServingInstance& in = existing(id, "restart");
  MESHSIM_CHECK(in.state == InstanceState::kInactive, "restart: instance " + std::to_string(id) + " is not INACTIVE");
  attach(in, server);
  if (activity_ != nullptr) activity_->on_instance(id, server, kInstanceTagNames.name(in.tag));
  set_state(id, InstanceState::kStarting);
}

std::optional<std::uint32_t> InstanceFleet::remove(std::uint32_t id) {
  ServingInstance& in = existing(id, "remove_instance");
  MESHSIM_CHECK(in.state == InstanceState::kInactive || in.state == InstanceState::kStarting,
                "remove_instance: instance " + std::to_string(id) + " is still serving");
  std::optional<std::uint32_t> server;
  if (in.state == InstanceState::kStarting) server = detach(in);
  in.removed = true;
  pools_.move(id, in.tag, in.state, std::nullopt);
  --counts_.existing;
  if (in.tag == InstanceTag::kPrompt) --counts_.prompt_side;
  account_levels();
  if (activity_ != nullptr) activity_->on_instance_state(id, "removed", sim_.now());
  return server;
}

void InstanceFleet::refresh_load(std::uint32_t id) {
  ServingInstance& in = *instances_[id];
  PoolRouter& pool = router(in.tag);
  pool.update(id, in.load(pool.policy()));
  // Only marked here (a load changes at every request event); the index catches up when a
  // scale-down asks (an O(log n) tree update per change cost up to a quarter of a
  // 400-server replay's speed).
  if (id >= scale_down_stale_.size()) scale_down_stale_.resize(id + 1, 0);
  if (scale_down_stale_[id] == 0) {
    scale_down_stale_[id] = 1;
    stale_ids_.push_back(id);
  }
  if (pools_.tracks_loads() && in.state == InstanceState::kActive) count_active_load(in);
  if (in.state == InstanceState::kDraining) report_if_drained(id);
}

ActiveLoad InstanceFleet::active_load(InstanceTag tag) const {
  if (pools_.tracks_loads()) return pools_.tracked_load(tag);
  ActiveLoad load;
  for (const std::uint32_t id : router(tag).members()) {  // ACTIVE
    const ServingInstance& in = *instances_[id];
    if (in.tag != tag) continue;
    load.requests += in.requests;
    load.pending_tokens += in.pending_tokens;
  }
  return load;
}

void InstanceFleet::track_active_loads() {
  if (pools_.tracks_loads()) return;
  pools_.track_loads();
  for (const auto& in : instances_) {
    if (!in->removed && in->state == InstanceState::kActive) count_active_load(*in);
  }
}

std::optional<std::uint32_t> InstanceFleet::least_loaded(InstanceTag tag) const {
  for (const std::uint32_t id : stale_ids_) {  // loads changed since the last ask
    const ServingInstance& in = *instances_[id];
    scale_down_[static_cast<std::size_t>(in.tag)].update(id, in.scale_down_load());  // no-op unless indexed
    scale_down_stale_[id] = 0;
  }
  stale_ids_.clear();
  const LoadIndex& active = scale_down_[static_cast<std::size_t>(tag)];
  if (active.empty()) return std::nullopt;
  return active.least();  // the lowest id among the least loaded
}

std::optional<InstanceState> InstanceFleet::state_of(std::uint32_t id) const {
  if (id >= instances_.size() || instances_[id]->removed) return std::nullopt;
  return instances_[id]->state;
}

InstanceTag InstanceFleet::tag_of(std::uint32_t id) const {
  MESHSIM_CHECK(id < instances_.size(), "tag_of: no instance " + std::to_string(id));
  return instances_[id]->tag;
}

std::optional<InstanceView> InstanceFleet::view(std::uint32_t id) const {
  if (id >= instances_.size() || instances_[id]->removed) return std::nullopt;
  const ServingInstance& in = *instances_[id];
  const EngineStep& step = in.engine->step();
  const auto running = in.busy ? static_cast<std::uint32_t>(step.prefill.size() + step.decode.size()) : 0u;
  InstanceView out{id,      in.tag,           in.state, std::nullopt, in.requests, running, in.pending_tokens,
                   in.kv_held(sim_.now()), in.evacuating};
  if (in.server != ServingInstance::kNoServer) out.server = in.server;
  return out;
}

std::vector<InstanceView> InstanceFleet::views() const {
  std::vector<InstanceView> out;
  for (std::uint32_t id = 0; id < instances_.size(); ++id) {
    if (auto one = view(id)) out.push_back(*one);
  }
  return out;
}

void InstanceFleet::set_activity_sink(ActivitySink* sink) {
  activity_ = sink;
  if (activity_ == nullptr) return;
  for (std::uint32_t id = 0; id < instances_.size(); ++id) {
    const ServingInstance& in = *instances_[id];
    if (in.removed) continue;
    if (in.server != ServingInstance::kNoServer) activity_->on_instance(id, in.server, kInstanceTagNames.name(in.tag));
    activity_->on_instance_state(id, kInstanceStateNames.name(in.state), sim_.now());
  }
}

std::vector<std::string> InstanceFleet::check_invariants() const {
  std::vector<std::string> problems;
  const auto fail = [&](const std::string& what) { problems.push_back(what); };
  std::array<PoolTotals, 3> totals{};
  std::array<ActiveLoad, 3> active{};
  std::vector<std::uint32_t> held(servers_.ids(), 0);
  Counts want;
  for (std::uint32_t id = 0; id < instances_.size(); ++id) {
    const ServingInstance& in = *instances_[id];
    const std::string name = "instance " + std::to_string(id);
    const bool is_active = !in.removed && in.state == InstanceState::kActive;
    if (router(in.tag).contains(id) != is_active) fail(name + ": routed to exactly when ACTIVE");
    const LoadIndex& scale_down = scale_down_[static_cast<std::size_t>(in.tag)];
    const bool caught_up = id >= scale_down_stale_.size() || scale_down_stale_[id] == 0;
    if (scale_down.contains(id) != is_active ||
        (is_active && caught_up && scale_down.load_of(id) != in.scale_down_load())) {
      fail(name + ": in its tag's scale-down index, at its load, exactly when ACTIVE");
    }
    if (in.removed && pools_.listed_inactive(in.tag, id)) fail(name + ": removed, yet in an INACTIVE index");
    if (in.removed) continue;
    ++want.existing;
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
    want.serving += serves;
    want.serving_kv_tokens += serves ? in.hardware->kv_capacity_tokens : 0;
    if (in.hardware != &hardware_.of(in.tag)) fail(name + ": not on its pool's hardware");
    want.prompt_side += in.tag == InstanceTag::kPrompt;
    const bool on_server = in.state != InstanceState::kInactive;
    if (on_server != (in.server != ServingInstance::kNoServer)) fail(name + ": on a server exactly when not INACTIVE");
    if (in.server != ServingInstance::kNoServer) {
      ++want.attached;
      want.attached_gpus += in.hardware->tensor_parallel;
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
  if (want.existing != counts_.existing || want.attached != counts_.attached || want.serving != counts_.serving ||
      want.prompt_side != counts_.prompt_side || want.attached_gpus != counts_.attached_gpus ||
      want.serving_kv_tokens != counts_.serving_kv_tokens) {
    fail("instance counts disagree with the instances");
  }
  return problems;
}

}  // namespace meshsim::cluster
