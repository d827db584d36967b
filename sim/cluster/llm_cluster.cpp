#include "sim/cluster/llm_cluster.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/cluster/llm_cluster_state.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::cluster {

LlmCluster::LlmCluster(engine::Simulation& sim, LlmClusterConfig config, RequestSink& sink)
    : sim_(sim),
      config_(std::move(config)),
      sink_(sink),
      fleet_(sim, config_, *this, kIterationEnd,
             [this](const InstanceHardware& hw) { return make_engine(hw.engine, hw.kv_capacity_tokens, seqs_); }) {
  MESHSIM_CHECK(config_.prompt_routing != RoutePolicy::kPrefixAffinity ||
                    caches_prefixes(config_),
                "prefix_affinity routing needs the vLLM scheduler with prefix caching");
  MESHSIM_CHECK(config_.token_routing != RoutePolicy::kPrefixAffinity,
                "prefix_affinity routes prompts: token instances receive prefilled requests");
  MESHSIM_CHECK(!config_.request_timeout || supports_aborts(config_),
                "request timeouts need the vLLM scheduler");
  request_costs_ = config_.perf->request_costs();
  // The start state, packed onto as few servers of each hardware as hold it, ACTIVE from
  // the start.
  const ServingHardware& hardware = fleet_.hardware();
  ServerPool& servers = fleet_.servers();
  std::vector<std::optional<std::uint32_t>> filling(hardware.kinds());
  bool any_prompt = false, any_token = false, any_routable = false;
  kv_fit_tokens_ = config_.start_state.empty() ? hardware.kind(0).kv_capacity_tokens : ~std::uint64_t{0};
  for (const auto& group : config_.start_state) {
    std::optional<std::uint32_t>& server = filling[hardware.index_of(group.tag)];
    kv_fit_tokens_ = std::min(kv_fit_tokens_, hardware.of(group.tag).kv_capacity_tokens);
    for (std::uint32_t i = 0; i < group.count; ++i) {
      if (!server || servers.load(*server) == servers.room(*server)) server = servers.add(group.tag);
      fleet_.activate(fleet_.add(group.tag, *server));
      any_prompt |= group.tag == InstanceTag::kPrompt;
      any_token |= group.tag == InstanceTag::kToken;
      any_routable |= group.tag != InstanceTag::kToken;
    }
  }
  // An empty start state: the owner adds instances (a shared cluster places them through
  // the scheduling core) before the first request arrives.
  MESHSIM_CHECK(config_.start_state.empty() || any_routable,
                "the start state needs at least one prompt or mixed instance");
  MESHSIM_CHECK(!any_prompt || any_token, "prompt instances need at least one token instance");
}

LlmCluster::~LlmCluster() = default;

Expected<std::uint32_t> LlmCluster::add_placed_instance(InstanceTag tag, InstancePlacement& placement) {
  const std::uint32_t id = fleet_.size();  // the id add() gives next
  auto where = placement.place(id, tag, fleet_.servers());
  if (!where) return where.error();
  fleet_.activate(fleet_.add(tag, where->server));
  return id;
}

std::function<std::unique_ptr<ServingSystem>(engine::Simulation&, RequestSink&)> llm_cluster_factory(
    LlmClusterConfig config, LlmCluster** built) {
  return [config = std::move(config), built](engine::Simulation& sim, RequestSink& sink) {
    auto cluster = std::make_unique<LlmCluster>(sim, config, sink);
    if (built != nullptr) *built = cluster.get();
    return std::unique_ptr<ServingSystem>(std::move(cluster));
  };
}

void LlmCluster::submit(const traces::TraceRequest& request) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(live_.size());
    live_.emplace_back();
    seqs_.add();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    live_[slot] = Live{};
    seqs_[slot] = Sequence{};
  }
  Live& r = live_[slot];
  r.used = true;
  r.record.id = request.id;
  r.record.arrival = sim_.now();
  r.record.prompt_tokens = request.prompt_tokens;
  r.record.output_tokens = request.output_tokens;
  r.record.service_class = request.service_class;
  Sequence& seq = seqs_[slot];
  seq.id = request.id;
  if (request.service_class < config_.class_priorities.size()) {
    seq.priority = config_.class_priorities[request.service_class];
  }
  seq.prompt_tokens = request.prompt_tokens;
  seq.output_tokens = request.output_tokens;
  ++in_system_;
  first_tokens_.arrived(slot, r.record.arrival);
  const std::uint64_t length = std::uint64_t{request.prompt_tokens} + request.output_tokens;
  // Longer than the model's context: refused, as vLLM refuses it.
  if (config_.max_model_len && length > *config_.max_model_len) {
    r.record.dropped_for = metrics::DropReason::kOverContext;
    finish(slot, metrics::RequestStatus::kDropped);
    return;
  }
  // A request whose KV cache can never fit on an instance is dropped, and counted.
  if (length > kv_fit_tokens_) {
    r.record.dropped_for = metrics::DropReason::kOverKvCapacity;
    finish(slot, metrics::RequestStatus::kDropped);
    return;
  }
  // A full system sheds the arrival (this one counts in in_system_ until finish()).
  if (in_system_ > config_.max_requests_in_system) {
    r.record.dropped_for = metrics::DropReason::kQueueFull;
    finish(slot, metrics::RequestStatus::kDropped);
    return;
  }
  if (reads_tokens(config_)) {
    seqs_.stream(slot) = TokenStream(request.id, request.prompt_tokens, request.prefix, request.output_content);
  }
  if (config_.request_timeout) {
    r.deadline = sim_.now() + *config_.request_timeout;
    // Ends a folded run at the deadline, so the abort comes at the same step boundary
    // as without folding.
    sim_.schedule_at(r.deadline, *this, engine::EventPayload{kDeadline, slot});
  }
  // The API server's work before the request reaches an engine's queue.
  const double pre_queue_s = request_costs_.pre_queue_s(request.prompt_tokens);
  if (pre_queue_s > 0) {
    sim_.schedule_after(SimTime::from_seconds(pre_queue_s), *this, engine::EventPayload{kAdmit, slot});
    return;
  }
  admit(slot);
}

void LlmCluster::admit(std::uint32_t slot) {
  Live& r = live_[slot];
  if (r.deadline <= sim_.now()) {  // its client gave up before the API server was done
    r.record.dropped_for = metrics::DropReason::kTimedOut;
    finish(slot, metrics::RequestStatus::kDropped);
    return;
  }
  const std::uint32_t instance = route_prompt(slot);
  r.record.prompt_instance = instance;
  assign(instance, slot);
  fleet_.arrived(fleet_.at(instance).tag, std::uint64_t{r.record.prompt_tokens} + r.record.output_tokens);
  enqueue_prefill(instance, slot);
  wake(instance);
}

std::uint32_t LlmCluster::route_prompt(std::uint32_t slot) {
  PoolRouter& prompts = fleet_.router(InstanceTag::kPrompt);
  if (config_.prompt_routing != RoutePolicy::kPrefixAffinity) return prompts.pick();
  const Sequence& seq = seqs_[slot];
  const std::uint32_t prompt = seq.prompt_tokens + seq.generated;
  std::optional<std::uint32_t> best;
  std::int64_t best_cost = 0;
  for (const std::uint32_t id : prompts.members()) {
    ServingInstance& in = fleet_.at(id);
    const std::uint32_t begun = in.busy && in.engine->step().prefill.empty() ? in.segment.begun(sim_.now()) : 0;
    const std::int64_t cost =
        in.pending_tokens + std::int64_t{prompt} - in.engine->cached_prefix_tokens(slot, prompt, begun);
    if (!best || cost < best_cost) {
      best = id;
      best_cost = cost;
    }
  }
  MESHSIM_CHECK(best.has_value(), "route_prompt: the prompt pool has no instance taking requests");
  return *best;
}

// The request in `slot` is now `instance`'s to serve: its routing loads count it.
void LlmCluster::assign(std::uint32_t instance, std::uint32_t slot) {
  Live& r = live_[slot];
  const Sequence& seq = seqs_[slot];
  ServingInstance& in = fleet_.at(instance);
  r.instance = instance;
  r.record.instance = instance;
  ++in.requests;
  in.pending_tokens += seq.generated == 0 ? std::int64_t{seq.prompt_tokens} + 1 : 1;
  in.kv_promised += in.kv_need(seq);
  fleet_.refresh_load(instance);
}

void LlmCluster::unassign(std::uint32_t slot) {
  const Sequence& seq = seqs_[slot];
  ServingInstance& in = fleet_.at(live_[slot].instance);
  in.engine->remove(slot);
  --in.requests;
  in.pending_tokens -= seq.generated == 0 ? std::int64_t{seq.prompt_tokens} + 1
                                          : 1 + (seq.recomputing ? std::int64_t{seq.prefill_tokens()} : 0);
  in.kv_promised -= in.kv_need(seq);
  fleet_.report_if_drained(live_[slot].instance);
}

void LlmCluster::abort_expired(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  while (!in.deadlines.empty() && in.deadlines.top().first <= sim_.now()) {
    const auto [deadline, slot] = in.deadlines.top();
    in.deadlines.pop();
    Live& r = live_[slot];
    // Still here (a slot reused by a later request has a later deadline; one whose KV is
    // on its way here has not joined the engine yet).
    if (!r.used || r.deadline != deadline || r.instance != instance || r.in_transit) continue;
    unassign(slot);
    r.record.dropped_for = metrics::DropReason::kTimedOut;
    finish(slot, metrics::RequestStatus::kDropped);
  }
  fleet_.refresh_load(instance);
}

// New work for an instance: it joins the next batch formed there.
void LlmCluster::wake(std::uint32_t instance) {
  ServingInstance& in = fleet_.at(instance);
  if (in.busy) {
    interrupt_fold(in);
  } else {
    start_step(instance);
  }
}

void LlmCluster::on_event(const engine::EventPayload& payload) {
  ++events_handled_;
  if (payload.a == kIterationEnd) {
    end_step(static_cast<std::uint32_t>(payload.b));
  } else if (payload.a == kMigrate) {
    migrate_all(static_cast<std::uint32_t>(payload.b));
  } else if (payload.a == kHostLoad) {
    ServingInstance& in = fleet_.at(static_cast<std::uint32_t>(payload.b));
    if (in.host_wake == sim_.now()) in.host_wake.reset();
    if (!in.removed) wake(static_cast<std::uint32_t>(payload.b));
  } else if (payload.a == kAdmit) {
    admit(static_cast<std::uint32_t>(payload.b));
  } else if (payload.a == kDeadline) {
    const Live& r = live_[payload.b];
    // Routed (past its pre-queue cost) and on an instance in the middle of a step.
    if (r.used && r.deadline == sim_.now() && r.record.prompt_instance && fleet_.at(r.instance).busy) {
      interrupt_fold(fleet_.at(r.instance));
    }
  } else {
    arrive_for_decode(static_cast<std::uint32_t>(payload.b >> 32), static_cast<std::uint32_t>(payload.b));
  }
}

void LlmCluster::prefill_done(std::uint32_t instance, std::uint32_t slot) {
  ServingInstance& in = fleet_.at(instance);
  Live& r = live_[slot];
  Sequence& seq = seqs_[slot];
  if (seq.recomputing) {
    // The rerun prefill rebuilt the KV cache and produced the next token.
    in.pending_tokens -= seq.prefill_tokens();
    seq.recomputing = false;
    ++seq.generated;
    r.tbt_max = std::max(r.tbt_max, sim_.now() - r.last_token);
    r.last_token = sim_.now();
    if (seq.generated >= seq.output_tokens) {
      finish(slot, metrics::RequestStatus::kCompleted);
    } else {
      in.engine->decode_here(slot);
      fleet_.refresh_load(instance);
    }
    return;
  }
  seq.generated = 1;
  first_tokens_.done(slot);
  r.record.first_token = sim_.now();
  r.last_token = sim_.now();
  if (r.record.output_tokens == 1) {
    in.pending_tokens -= r.record.prompt_tokens;
    finish(slot, metrics::RequestStatus::kCompleted);
    return;
  }
  if (in.tag == InstanceTag::kMixed) {
    in.pending_tokens -= r.record.prompt_tokens;
    in.engine->decode_here(slot);
    fleet_.refresh_load(instance);
    return;
  }
  // Splitwise: the KV cache moves to a token instance, then this instance lets it go.
  in.pending_tokens -= std::int64_t{r.record.prompt_tokens} + 1;
  --in.requests;
  in.kv_promised -= in.kv_need(seq);
  in.engine->remove(slot);
  fleet_.refresh_load(instance);
  const std::uint32_t target = fleet_.router(InstanceTag::kToken).pick();
  assign(target, slot);
  r.in_transit = true;
  fleet_.arrived(InstanceTag::kToken, std::uint64_t{r.record.prompt_tokens} + r.record.output_tokens);
  // Over the slower of the two servers' networks.
  const double network =
      std::min(in.hardware->sku.network_gb_per_s, fleet_.at(target).hardware->sku.network_gb_per_s);
  const double bandwidth = config_.kv_transfer_gb_per_s.value_or(network) * 1e9;
  const double bytes = config_.model.kv_bytes_per_token() * r.record.prompt_tokens;
  const double transfer_s = bytes / bandwidth;
  if (!(transfer_s <= SimTime::kMaxSeconds)) {
    throw RangeError("moving request " + std::to_string(r.record.id) + "'s KV cache takes " + number_text(transfer_s) +
                     " s, past the simulated time limit of 1e12 s: check kv.transfer_gb_per_s");
  }
  const auto transfer_us = std::max<std::int64_t>(1, std::llround(transfer_s * 1e6));
  if (activity_ != nullptr) {
    activity_->on_transfer(r.record.id, instance, target, sim_.now(), sim_.now() + SimTime::from_us(transfer_us));
  }
  sim_.schedule_after(SimTime::from_us(transfer_us), *this,
                      engine::EventPayload{kTransferDone, (std::uint64_t{target} << 32) | slot});
}

void LlmCluster::arrive_for_decode(std::uint32_t instance, std::uint32_t slot) {
  Live& r = live_[slot];
  r.in_transit = false;
  if (fleet_.at(instance).evacuating) {
    // Shipped here before the instance was evacuated: it goes on to an ACTIVE one.
    migrate(instance, slot);
    return;
  }
  ServingInstance& in = fleet_.at(instance);
  in.engine->enqueue_transferred(slot);
  if (config_.request_timeout) in.deadlines.emplace(r.deadline, slot);
  wake(instance);
}

void LlmCluster::enqueue_prefill(std::uint32_t instance, std::uint32_t slot) {
  ServingInstance& in = fleet_.at(instance);
  in.engine->enqueue_prefill(slot);
  if (config_.request_timeout) in.deadlines.emplace(live_[slot].deadline, slot);
}

void LlmCluster::finish(std::uint32_t slot, metrics::RequestStatus status) {
  Live& r = live_[slot];
  Sequence& seq = seqs_[slot];
  RequestRecord& record = r.record;
  record.status = status;
  record.pauses = seq.pauses;
  record.kv_evictions = seq.kv_evictions;
  if (status == metrics::RequestStatus::kCompleted) {
    ServingInstance& in = fleet_.at(r.instance);
    in.engine->remove(slot);
    --in.requests;
    in.pending_tokens -= 1;
    in.kv_promised -= in.kv_need(seq);
    fleet_.refresh_load(r.instance);
    record.finished = sim_.now();
    record.tbt_max = r.tbt_max;
  }
  --in_system_;
  first_tokens_.done(slot);
  r.used = false;
  seqs_.stream(slot) = TokenStream();
  free_slots_.push_back(slot);
  sink_.on_request_finished(record);
}

void LlmCluster::set_activity_sink(ActivitySink* sink) {
  activity_ = sink;
  fleet_.set_activity_sink(sink);
}

}  // namespace meshsim::cluster
