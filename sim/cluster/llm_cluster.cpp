#include "sim/cluster/llm_cluster.hpp"

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"

namespace meshsim::cluster {

struct LlmCluster::Live {
  RequestRecord record;
  bool used = false;
  std::uint32_t instance = 0;        // where it is now
  std::uint32_t generated = 0;       // output tokens so far (the first comes from prefill)
  std::uint64_t kv_reserved = 0;     // KV tokens held on `instance`
  bool recomputing = false;          // evicted: its prefill reruns over prompt + generated
  SimTime last_token;
  SimTime tbt_max;
};

struct LlmCluster::Instance {
  InstanceTag tag = InstanceTag::kMixed;
  std::unique_ptr<engine::Timer> timer;
  std::deque<std::uint32_t> prompts;   // waiting for prefill, arrival order
  std::deque<std::uint32_t> blocked;   // decoding, left out of a batch (KV held)
  std::deque<std::uint32_t> fresh;     // ready to decode, KV not yet reserved here
  std::vector<std::uint32_t> prefill_batch;
  std::vector<std::uint32_t> decode_batch;
  std::uint64_t kv_used = 0;
  bool busy = false;
  // The iteration (or folded run of decode iterations) in progress.
  SimTime segment_start;
  std::uint32_t segment_iterations = 0;
  std::uint64_t segment_context = 0;   // KV tokens read by the first decode iteration
  // Routing loads.
  std::int64_t requests = 0;
  std::int64_t pending_tokens = 0;
  std::int64_t kv_promised = 0;  // KV tokens the routed requests will need here
};

namespace {

// The KV tokens a request holds at most on an instance of the given tag.
std::int64_t kv_need_of(std::uint32_t prompt, std::uint32_t output, InstanceTag tag) {
  return tag == InstanceTag::kPrompt ? std::int64_t{prompt} + 1 : std::int64_t{prompt} + output;
}

}  // namespace

std::int64_t LlmCluster::kv_need(const Live& r, InstanceTag tag) {
  return kv_need_of(r.record.prompt_tokens, r.record.output_tokens, tag);
}

LlmCluster::LlmCluster(engine::Simulation& sim, LlmClusterConfig config, RequestSink& sink)
    : sim_(sim), config_(std::move(config)), sink_(sink) {
  MESHSIM_CHECK(config_.perf != nullptr, "LlmCluster needs a performance model");
  MESHSIM_CHECK(config_.tensor_parallel > 0 && config_.sku.gpus_per_node % config_.tensor_parallel == 0,
                "the tensor-parallel degree must divide the GPUs per node");
  const double kv_per_token = config_.model.kv_bytes_per_token();
  if (config_.kv_capacity_tokens) {
    kv_capacity_tokens_ = *config_.kv_capacity_tokens;
  } else {
    const double hbm = config_.tensor_parallel * config_.sku.hbm_gib_per_gpu * 1024.0 * 1024.0 * 1024.0;
    const double free_bytes = hbm * (1.0 - config_.kv_reserve_fraction) - config_.model.weight_bytes();
    kv_capacity_tokens_ = free_bytes > 0 ? static_cast<std::uint64_t>(free_bytes / kv_per_token) : 0;
  }
  MESHSIM_CHECK(kv_capacity_tokens_ > 0, "the model's weights leave no HBM for the KV cache");
  const std::uint32_t per_server = config_.sku.gpus_per_node / config_.tensor_parallel;
  for (const auto& group : config_.start_state) {
    for (std::uint32_t i = 0; i < group.count; ++i) {
      const auto index = static_cast<std::uint32_t>(instances_.size());
      auto in = std::make_unique<Instance>();
      in->tag = group.tag;
      engine::EventHandler& self = *this;
      in->timer = std::make_unique<engine::Timer>(sim_, self, engine::EventPayload{kIterationEnd, index});
      instances_.push_back(std::move(in));
      if (group.tag == InstanceTag::kToken) {
        token_pool_.push_back(index);
        token_index_.add(index, 0);
      } else {
        prompt_pool_.push_back(index);
        prompt_index_.add(index, 0);
      }
    }
  }
  MESHSIM_CHECK(!prompt_pool_.empty(), "the start state needs at least one prompt or mixed instance");
  const bool splits = std::any_of(instances_.begin(), instances_.end(),
                                  [](const auto& in) { return in->tag == InstanceTag::kPrompt; });
  MESHSIM_CHECK(!splits || !token_pool_.empty(), "prompt instances need at least one token instance");
  servers_ = static_cast<std::uint32_t>((instances_.size() + per_server - 1) / per_server);
  busy_accounted_until_ = sim_.now();
}

LlmCluster::~LlmCluster() = default;

double LlmCluster::busy_unit_us() {
  busy_us_ += static_cast<double>(busy_instances_) * static_cast<double>((sim_.now() - busy_accounted_until_).us());
  busy_accounted_until_ = sim_.now();
  return busy_us_;
}

void LlmCluster::set_busy(Instance& in, bool busy) {
  if (in.busy == busy) return;
  busy_unit_us();
  in.busy = busy;
  if (busy) {
    ++busy_instances_;
  } else {
    --busy_instances_;
  }
}

std::int64_t LlmCluster::load_of(const Instance& in, RoutePolicy policy) const {
  switch (policy) {
    case RoutePolicy::kRoundRobin:
    case RoutePolicy::kFewestRequests: return in.requests;
    case RoutePolicy::kFewestPendingTokens: return in.pending_tokens;
    case RoutePolicy::kLeastKvMemory: return in.kv_promised;
  }
  return 0;
}

void LlmCluster::refresh_load(std::uint32_t instance) {
  const Instance& in = *instances_[instance];
  if (in.tag == InstanceTag::kToken) {
    token_index_.update(instance, load_of(in, config_.token_routing));
  } else {
    prompt_index_.update(instance, load_of(in, config_.prompt_routing));
  }
}

std::uint32_t LlmCluster::route(RoutePolicy policy, LoadIndex& index, std::uint32_t& round_robin,
                                const std::vector<std::uint32_t>& members) {
  if (policy == RoutePolicy::kRoundRobin) {
    const std::uint32_t chosen = members[round_robin];
    round_robin = (round_robin + 1) % static_cast<std::uint32_t>(members.size());
    return chosen;
  }
  return index.least();
}

void LlmCluster::submit(const traces::TraceRequest& request) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(live_.size());
    live_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    live_[slot] = Live{};
  }
  Live& r = live_[slot];
  r.used = true;
  r.record.id = request.id;
  r.record.arrival = sim_.now();
  r.record.prompt_tokens = request.prompt_tokens;
  r.record.output_tokens = request.output_tokens;
  ++in_system_;
  // A request whose KV cache can never fit on an instance is dropped, and counted.
  if (std::uint64_t{request.prompt_tokens} + request.output_tokens > kv_capacity_tokens_) {
    finish(slot, metrics::RequestStatus::kDropped);
    return;
  }
  const std::uint32_t instance = route(config_.prompt_routing, prompt_index_, prompt_round_robin_, prompt_pool_);
  r.instance = instance;
  r.record.prompt_instance = instance;
  r.record.instance = instance;
  Instance& in = *instances_[instance];
  in.prompts.push_back(slot);
  ++in.requests;
  in.pending_tokens += request.prompt_tokens + 1;
  in.kv_promised += kv_need(r, in.tag);
  refresh_load(instance);
  if (in.busy) {
    interrupt_fold(instance);
  } else {
    start_iteration(instance);
  }
}

SimTime LlmCluster::iteration_time(const PrefillWork& prefill, const DecodeWork& decode) const {
  // Whole microseconds, at least one, so every iteration moves the clock.
  const double ms = config_.perf->iteration_ms(prefill, decode);
  return SimTime::from_us(std::max<std::int64_t>(1, std::llround(ms * 1000.0)));
}

SimTime LlmCluster::decode_iteration_time(std::uint32_t batch, std::uint64_t context) const {
  return iteration_time(PrefillWork{}, DecodeWork{batch, context});
}

void LlmCluster::start_iteration(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  if (in.busy) return;
  const BatchingConfig& limits = config_.batching;
  std::vector<std::uint32_t> previous;
  previous.swap(in.decode_batch);
  in.prefill_batch.clear();
  std::uint32_t size = 0;
  std::uint64_t tokens = 0;
  const auto room = [&](std::uint64_t more) {
    return size < limits.max_batch_size && (size == 0 || tokens + more <= limits.max_batch_tokens);
  };
  const auto take_decode = [&](std::uint32_t slot) {
    in.decode_batch.push_back(slot);
    ++size;
    ++tokens;
  };
  // 1. Decoding sequences left out of too many batches go first.
  for (auto it = in.blocked.begin(); it != in.blocked.end();) {
    if (live_[*it].record.preemptions < limits.max_preemptions || !room(1)) {
      ++it;
      continue;
    }
    take_decode(*it);
    it = in.blocked.erase(it);
  }
  // 2. Prompts, first come first served; a prompt over the token budget runs alone; the
  //    queue waits (head of line) when the next prompt's KV does not fit. On demand, a
  //    prompt must also leave a token free for each sequence already decoding here, or
  //    admitting it would only evict one of them (thrashing).
  const std::uint64_t keep_free =
      config_.kv_allocation == KvAllocation::kOnDemand ? previous.size() + in.blocked.size() + in.decode_batch.size() : 0;
  while (!in.prompts.empty()) {
    const std::uint32_t slot = in.prompts.front();
    Live& r = live_[slot];
    const std::uint32_t pass = prefill_tokens(r);
    const std::uint64_t need = std::uint64_t{pass} + 1;
    if (!room(pass) || in.kv_used + need + keep_free > kv_capacity_tokens_) break;
    in.prompts.pop_front();
    in.kv_used += need;
    r.kv_reserved += need;
    if (!r.record.started) r.record.started = sim_.now();
    in.prefill_batch.push_back(slot);
    ++size;
    tokens += pass;
  }
  // 3. Sequences preempted earlier, 4. the previous batch, 5. newly ready sequences.
  while (!in.blocked.empty() && room(1)) {
    take_decode(in.blocked.front());
    in.blocked.pop_front();
  }
  for (const std::uint32_t slot : previous) {
    if (room(1)) {
      take_decode(slot);
    } else {
      // Left out: preempted for this iteration (its KV stays reserved).
      ++live_[slot].record.preemptions;
      in.blocked.push_back(slot);
    }
  }
  // Newly ready sequences in order; one whose KV does not fit stops the newcomers behind
  // it, but not those that already hold all they need here (on demand, a sequence
  // recomputed here), which could otherwise wait forever behind it holding memory.
  bool newcomers_blocked = false;
  for (auto it = in.fresh.begin(); it != in.fresh.end() && room(1);) {
    const std::uint32_t slot = *it;
    Live& r = live_[slot];
    // A sequence prefilled here holds its prompt's KV already; one shipped from a prompt
    // instance brings it now. Reserving takes the rest of the output up front too.
    const bool holds_prompt = r.kv_reserved > 0;
    std::uint64_t need = 0;
    if (config_.kv_allocation == KvAllocation::kReserve) {
      need = holds_prompt ? std::uint64_t{r.record.output_tokens} - 1
                          : std::uint64_t{r.record.prompt_tokens} + r.record.output_tokens;
    } else if (!holds_prompt) {
      need = std::uint64_t{r.record.prompt_tokens} + 1;
    }
    if (need > 0 && (newcomers_blocked || in.kv_used + need > kv_capacity_tokens_)) {
      newcomers_blocked = true;
      ++it;
      continue;
    }
    it = in.fresh.erase(it);
    in.kv_used += need;
    r.kv_reserved += need;
    take_decode(slot);
  }
  // On demand, every decoding sequence needs one more KV token per iteration: evict the
  // latest arrivals until the rest fit.
  bool evicted = false;
  if (config_.kv_allocation == KvAllocation::kOnDemand) {
    while (!in.decode_batch.empty() && in.kv_used + in.decode_batch.size() > kv_capacity_tokens_) {
      evicted = true;
      const auto latest = std::max_element(in.decode_batch.begin(), in.decode_batch.end(),
                                           [&](std::uint32_t a, std::uint32_t b) { return live_[a].record.id < live_[b].record.id; });
      const std::uint32_t slot = *latest;
      in.decode_batch.erase(latest);
      --size;
      --tokens;
      evict_for_recompute(in, slot);
    }
  }
  if (size == 0) {
    refresh_load(instance);
    // Evicting the whole batch freed memory for the recomputations: select again.
    if (evicted) start_iteration(instance);
    return;
  }
  running_ += size;
  set_busy(in, true);
  refresh_load(instance);

  PrefillWork prefill;
  for (const std::uint32_t slot : in.prefill_batch) {
    const std::uint32_t tokens_in_pass = prefill_tokens(live_[slot]);
    prefill.tokens += tokens_in_pass;
    ++prefill.sequences;
    prefill.squared_tokens += static_cast<double>(tokens_in_pass) * tokens_in_pass;
  }
  std::uint64_t context = 0;
  std::uint32_t iterations = 1;
  for (const std::uint32_t slot : in.decode_batch) {
    const Live& r = live_[slot];
    context += std::uint64_t{r.record.prompt_tokens} + r.generated;
  }
  in.segment_start = sim_.now();
  in.segment_context = context;
  SimTime length;
  if (!in.prefill_batch.empty()) {
    length = iteration_time(prefill, DecodeWork{static_cast<std::uint32_t>(in.decode_batch.size()), context});
  } else {
    // On-demand KV is not folded yet: a folded run diverged from the unfolded one in a test
    // (under eviction and recomputation), so it runs iteration by iteration.
    if (config_.fold_decode && config_.kv_allocation == KvAllocation::kReserve) {
      // Nothing changes the batch until its first sequence finishes (or new work arrives,
      // see interrupt_fold): run until then in one event.
      iterations = ~0u;
      for (const std::uint32_t slot : in.decode_batch) {
        iterations = std::min(iterations, live_[slot].record.output_tokens - live_[slot].generated);
      }
    }
    const auto batch = static_cast<std::uint32_t>(in.decode_batch.size());
    for (std::uint32_t i = 0; i < iterations; ++i) length += decode_iteration_time(batch, context + std::uint64_t{i} * batch);
  }
  MESHSIM_CHECK(iterations >= 1, "an iteration must make progress");
  in.segment_iterations = iterations;
  if (config_.kv_allocation == KvAllocation::kOnDemand) {
    for (const std::uint32_t slot : in.decode_batch) live_[slot].kv_reserved += iterations;
    in.kv_used += std::uint64_t{iterations} * in.decode_batch.size();
  }
  in.timer->arm_at(in.segment_start + length);
}

void LlmCluster::interrupt_fold(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  if (!in.busy || !in.prefill_batch.empty() || in.segment_iterations <= 1) return;
  // End the folded run at the first iteration boundary at or after now, so the new work
  // joins where it would have joined without folding.
  const auto batch = static_cast<std::uint32_t>(in.decode_batch.size());
  SimTime boundary = in.segment_start;
  for (std::uint32_t i = 0; i < in.segment_iterations; ++i) {
    boundary += decode_iteration_time(batch, in.segment_context + std::uint64_t{i} * batch);
    if (boundary >= sim_.now()) {
      in.segment_iterations = i + 1;
      in.timer->arm_at(boundary);
      return;
    }
  }
}

void LlmCluster::on_event(const engine::EventPayload& payload) {
  ++events_handled_;
  if (payload.a == kIterationEnd) {
    end_iteration(static_cast<std::uint32_t>(payload.b));
  } else {
    arrive_for_decode(static_cast<std::uint32_t>(payload.b >> 32), static_cast<std::uint32_t>(payload.b));
  }
}

void LlmCluster::end_iteration(std::uint32_t instance) {
  Instance& in = *instances_[instance];
  const SimTime now = sim_.now();
  running_ -= in.prefill_batch.size() + in.decode_batch.size();
  set_busy(in, false);
  if (activity_ != nullptr) {
    activity_->on_iteration(instance, in.segment_start, now, static_cast<std::uint32_t>(in.prefill_batch.size()),
                            static_cast<std::uint32_t>(in.decode_batch.size()),
                            in.prefill_batch.empty() ? in.segment_iterations : 1);
  }

  // Token gaps inside the run: the first iteration's end minus the sequence's previous
  // token, then each later iteration's length.
  const auto batch = static_cast<std::uint32_t>(in.decode_batch.size());
  SimTime first_boundary = now;
  SimTime longest_later;
  if (in.prefill_batch.empty() && batch > 0) {
    first_boundary = in.segment_start + decode_iteration_time(batch, in.segment_context);
    for (std::uint32_t i = 1; i < in.segment_iterations; ++i) {
      longest_later = std::max(longest_later, decode_iteration_time(batch, in.segment_context + std::uint64_t{i} * batch));
    }
  }
  const std::uint32_t steps = in.prefill_batch.empty() ? in.segment_iterations : 1;
  std::vector<std::uint32_t> still_decoding;
  for (const std::uint32_t slot : in.decode_batch) {
    Live& r = live_[slot];
    r.tbt_max = std::max({r.tbt_max, first_boundary - r.last_token, longest_later});
    r.generated += steps;
    r.last_token = now;
    if (r.generated >= r.record.output_tokens) {
      finish(slot, metrics::RequestStatus::kCompleted);
    } else {
      still_decoding.push_back(slot);
    }
  }
  in.decode_batch.swap(still_decoding);
  std::vector<std::uint32_t> prefilled;
  prefilled.swap(in.prefill_batch);
  for (const std::uint32_t slot : prefilled) prefill_done(instance, slot);
  start_iteration(instance);
}

void LlmCluster::prefill_done(std::uint32_t instance, std::uint32_t slot) {
  Instance& in = *instances_[instance];
  Live& r = live_[slot];
  if (r.recomputing) {
    // The rerun prefill rebuilt the KV cache and produced the next token.
    in.pending_tokens -= prefill_tokens(r);
    r.recomputing = false;
    ++r.generated;
    r.tbt_max = std::max(r.tbt_max, sim_.now() - r.last_token);
    r.last_token = sim_.now();
    if (r.generated >= r.record.output_tokens) {
      finish(slot, metrics::RequestStatus::kCompleted);
    } else {
      in.fresh.push_back(slot);
      refresh_load(instance);
    }
    return;
  }
  r.generated = 1;
  r.record.first_token = sim_.now();
  r.last_token = sim_.now();
  if (r.record.output_tokens == 1) {
    in.pending_tokens -= r.record.prompt_tokens;
    finish(slot, metrics::RequestStatus::kCompleted);
    return;
  }
  if (in.tag == InstanceTag::kMixed) {
    in.pending_tokens -= r.record.prompt_tokens;
    in.fresh.push_back(slot);
    refresh_load(instance);
    return;
  }
  // Splitwise: the KV cache moves to a token instance, then this instance lets it go.
  in.pending_tokens -= std::int64_t{r.record.prompt_tokens} + 1;
  --in.requests;
  in.kv_promised -= kv_need(r, in.tag);
  in.kv_used -= r.kv_reserved;
  r.kv_reserved = 0;
  refresh_load(instance);
  const std::uint32_t target = route(config_.token_routing, token_index_, token_round_robin_, token_pool_);
  Instance& to = *instances_[target];
  ++to.requests;
  to.pending_tokens += 1;
  to.kv_promised += kv_need(r, to.tag);
  r.instance = target;
  r.record.instance = target;
  refresh_load(target);
  const double bandwidth = config_.kv_transfer_gb_per_s.value_or(config_.sku.network_gb_per_s) * 1e9;
  const double bytes = config_.model.kv_bytes_per_token() * r.record.prompt_tokens;
  const auto transfer_us = std::max<std::int64_t>(1, std::llround(bytes / bandwidth * 1e6));
  if (activity_ != nullptr) {
    activity_->on_transfer(r.record.id, instance, target, sim_.now(), sim_.now() + SimTime::from_us(transfer_us));
  }
  sim_.schedule_after(SimTime::from_us(transfer_us), *this,
                      engine::EventPayload{kTransferDone, (std::uint64_t{target} << 32) | slot});
}

std::uint32_t LlmCluster::prefill_tokens(const Live& r) const {
  return r.record.prompt_tokens + (r.recomputing ? r.generated : 0);
}

void LlmCluster::evict_for_recompute(Instance& in, std::uint32_t slot) {
  Live& r = live_[slot];
  in.kv_used -= r.kv_reserved;
  r.kv_reserved = 0;
  r.recomputing = true;
  ++r.record.preemptions;
  in.pending_tokens += prefill_tokens(r);
  in.prompts.push_front(slot);
}

void LlmCluster::arrive_for_decode(std::uint32_t instance, std::uint32_t slot) {
  Instance& in = *instances_[instance];
  in.fresh.push_back(slot);
  if (in.busy) {
    interrupt_fold(instance);
  } else {
    start_iteration(instance);
  }
}

void LlmCluster::finish(std::uint32_t slot, metrics::RequestStatus status) {
  Live& r = live_[slot];
  RequestRecord& record = r.record;
  record.status = status;
  if (status == metrics::RequestStatus::kCompleted) {
    Instance& in = *instances_[r.instance];
    in.kv_used -= r.kv_reserved;
    --in.requests;
    in.pending_tokens -= 1;
    in.kv_promised -= kv_need(r, in.tag);
    refresh_load(r.instance);
    record.finished = sim_.now();
    record.tbt_max = r.tbt_max;
  }
  --in_system_;
  r.used = false;
  free_slots_.push_back(slot);
  sink_.on_request_finished(record);
}

ServingSystem::InstanceCounts LlmCluster::instance_counts() const {
  InstanceCounts counts;
  for (const auto& in : instances_) {
    switch (in->tag) {
      case InstanceTag::kPrompt: ++counts.prompt; break;
      case InstanceTag::kToken: ++counts.token; break;
      case InstanceTag::kMixed: ++counts.mixed; break;
    }
  }
  return counts;
}

std::uint64_t LlmCluster::kv_used_tokens() const {
  std::uint64_t used = 0;
  for (const auto& in : instances_) used += in->kv_used;
  return used;
}

void LlmCluster::set_activity_sink(ActivitySink* sink) {
  activity_ = sink;
  if (activity_ == nullptr) return;
  const std::uint32_t per_server = config_.sku.gpus_per_node / config_.tensor_parallel;
  for (std::uint32_t i = 0; i < instances_.size(); ++i) {
    activity_->on_instance(i, i / per_server, kInstanceTagNames.name(instances_[i]->tag));
  }
}

void LlmCluster::for_each_in_flight(const std::function<void(const RequestRecord&)>& visit) const {
  std::vector<const RequestRecord*> list;
  for (const auto& r : live_) {
    if (r.used) list.push_back(&r.record);
  }
  std::sort(list.begin(), list.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  for (const auto* record : list) visit(*record);
}

}  // namespace meshsim::cluster
