#include "rl/env/scaling_env.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"

namespace meshsim::rl {
namespace {

// The q-quantile of `values` (reordered), 0 when empty.
double quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0.0;
  const auto k = static_cast<std::size_t>(q * static_cast<double>(values.size() - 1));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
  return values[k];
}

// Sets every group of the llm start state to `instances` (ACTIVE from the start).
void set_start_size(configs::ScenarioConfig& config, std::uint32_t instances) {
  for (auto& group : std::get<configs::LlmServingSpec>(config.serving).start_state) group.count = instances;
}

}  // namespace

ScalingEnv::ScalingEnv(configs::ScenarioConfig config, const configs::Catalog& catalog, traces::SharedWorkload workload,
                       bool config_autoscaler)
    : config_(std::move(config)),
      catalog_(catalog),
      workload_(std::move(workload)),
      spec_(config_.rl.value_or(configs::RlSpec{})),
      rng_(engine::derive_seed(config_.seed, "rl/env")) {
  const auto& llm = std::get<configs::LlmServingSpec>(config_.serving);
  for (const auto& group : llm.start_state) pools_.push_back(group.tag);
  std::sort(pools_.begin(), pools_.end());
  pools_.erase(std::unique(pools_.begin(), pools_.end()), pools_.end());
  migrates_ = std::find(pools_.begin(), pools_.end(), cluster::InstanceTag::kPrompt) != pools_.end() &&
              std::find(pools_.begin(), pools_.end(), cluster::InstanceTag::kToken) != pools_.end();
  workload_span_s_ = workload_->span_s();
  slos_ = metrics::slo_book(config_.replay.slo, config_.replay.classes);
  for (const auto& c : config_.replay.classes) class_names_.push_back(c.name);
  class_left_.assign(class_names_.size(), 0);
  class_met_.assign(class_names_.size(), 0);
  // The reward's R: the workload's mean requests per decision interval.
  reference_requests_ = std::max(1e-9, workload_->requests() /
                                           std::max(workload_span_s_, spec_.decision_interval.seconds()) *
                                           spec_.decision_interval.seconds());
  steps_per_episode_ = episode_steps(spec_);
  // The episode's own config: the agent scales (no autoscaler unless asked for), the run
  // stops at the window's end, and time-series rows (unused here) come once per episode.
  if (!config_autoscaler) config_.autoscaler = configs::AutoscalerSpec{};
  config_.replay.until = spec_.warmup + SimTime::from_us(spec_.decision_interval.us() * steps_per_episode_);
  config_.replay.timeseries_interval = *config_.replay.until;
  config_.replay.stop_when_served = false;  // the agent acts, and instances cost, to the window's end
}

ScalingEnv::~ScalingEnv() = default;

Expected<std::unique_ptr<ScalingEnv>> ScalingEnv::create(const configs::ScenarioConfig& config,
                                                        const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                        bool config_autoscaler) {
  if (!std::holds_alternative<configs::LlmServingSpec>(config.serving)) {
    return Error{config.name + ": the RL environment scales the llm serving model (serving.kind: llm)"};
  }
  if (workload == nullptr || !(workload->requests() > 0)) {
    return Error{config.name + ": the RL environment needs a non-empty workload"};
  }
  std::unique_ptr<ScalingEnv> env(new ScalingEnv(config, catalog, std::move(workload), config_autoscaler));
  if (env->migrates_ && (env->spec_.action == configs::ActionKind::kTarget || env->residual())) {
    return Error{config.name + ": rl.action: " + std::string(configs::kActionKindNames.name(env->spec_.action)) +
                 " sizes pools but has no migration entry; with both a prompt and a token pool use the discrete or "
                 "continuous action"};
  }
  // Windows that start after the last request would train on empty episodes.
  const configs::RlSpec& spec = env->spec_;
  const double last_start = spec.windows_to_s.value_or(spec.windows_from_s);
  if (last_start >= env->workload_span_s_) {
    return Error{config.name + ": rl." + (spec.windows_to_s ? "windows_to_s" : "windows_from_s") + " (" +
                 std::to_string(last_start) + " s) is past the workload's last request (" +
                 std::to_string(env->workload_span_s_) + " s): every window would be empty"};
  }
  // Build one episode's world now (at the largest start size drawn), so a config the run
  // refuses fails here, not at reset.
  configs::ScenarioConfig largest = env->config_;
  if (!spec.start_instances.empty()) {
    const std::uint32_t size = *std::max_element(spec.start_instances.begin(), spec.start_instances.end());
    const std::uint64_t total = std::uint64_t{size} * std::get<configs::LlmServingSpec>(config.serving).start_state.size();
    if (total > config.scaling.manager.max_total_instances) {
      return Error{config.name + ": rl.start_instances: " + std::to_string(size) + " instances in each start-state group (" +
                   std::to_string(total) + " in all) exceed scaling.max_total_instances (" +
                   std::to_string(config.scaling.manager.max_total_instances) + ")"};
    }
    set_start_size(largest, size);
  }
  auto trial = run::ScenarioRun::create(largest, config.name, catalog, *env, env->episode_hooks(SimTime::zero(), 1.0));
  if (!trial) return trial.error();
  return env;
}

std::uint32_t ScalingEnv::episode_steps(const configs::RlSpec& spec) {
  const double steps = std::ceil(spec.episode_length.seconds() / spec.decision_interval.seconds() - 1e-9);
  return static_cast<std::uint32_t>(std::max(1.0, steps));
}

Status ScalingEnv::check(const ResetOptions& options) const {
  const auto in = [](const std::optional<double>& value, double low, double high) {
    return !value || (std::isfinite(*value) && *value >= low && *value <= high);
  };
  if (!in(options.window_start_s, 0, SimTime::kMaxSeconds)) {
    return Error{"reset option window_start_s: expected a number of seconds in [0, 1e12], got " +
                 number_text(*options.window_start_s)};
  }
  if (!in(options.rate_scale, 1e-6, 1e6)) {
    return Error{"reset option rate_scale: expected a number in [1e-6, 1e6], got " +
                 number_text(*options.rate_scale)};
  }
  if (!in(options.scale_up_delay_s, 0, SimTime::kMaxSeconds)) {
    return Error{"reset option scale_up_delay_s: expected a number of seconds in [0, 1e12], got " +
                 number_text(*options.scale_up_delay_s)};
  }
  if (options.start_instances) {
    const std::uint64_t groups = std::get<configs::LlmServingSpec>(config_.serving).start_state.size();
    const std::uint64_t most = config_.scaling.manager.max_total_instances / std::max<std::uint64_t>(groups, 1);
    if (*options.start_instances < 1 || *options.start_instances > most) {
      return Error{"reset option start_instances: expected an integer in [1, " + std::to_string(most) +
                   "] (instances in each of the " + std::to_string(groups) +
                   " start-state groups, within scaling.max_total_instances " +
                   std::to_string(config_.scaling.manager.max_total_instances) + "), got " +
                   std::to_string(*options.start_instances)};
    }
  }
  return Ok();
}

Status ScalingEnv::check_cursor(const EnvCursor& cursor) const {
  if (const Status options = check(cursor.options); !options) return options;
  if (cursor.actions.size() % action_size() != 0 || cursor.actions.size() / action_size() > steps_per_episode_) {
    return Error{"actions: expected whole steps of " + std::to_string(action_size()) + " entries, at most " +
                 std::to_string(steps_per_episode_) + " steps (an episode), got " +
                 std::to_string(cursor.actions.size()) + " entries"};
  }
  for (std::size_t i = 0; i < cursor.actions.size(); i += action_size()) {
    if (const Status fits = check_action(std::span(cursor.actions).subspan(i, action_size())); !fits) {
      return Error{"actions[" + std::to_string(i) + "...]: " + fits.error().message};
    }
  }
  return Ok();
}

Status ScalingEnv::check_action(std::span<const float> action) const {
  if (action.size() != action_size()) {
    return Error{"expected " + std::to_string(action_size()) + " action entries, got " + std::to_string(action.size())};
  }
  const bool discrete = spec_.action != configs::ActionKind::kContinuous;
  for (const float value : action) {
    if (std::isnan(value)) continue;  // no change (a diverged policy, or evaluation's fixed sizes)
    const bool fits = discrete ? value >= 0 && value < static_cast<float>(discrete_choices()) && value == std::floor(value)
                               : std::isfinite(value);
    if (!fits) {
      return Error{"expected " +
                   (discrete ? "a choice in [0, " + std::to_string(discrete_choices() - 1) + "]"
                             : std::string("a finite number")) +
                   " or NaN per entry, got " + number_text(value)};
    }
  }
  return Ok();
}

EnvInfo ScalingEnv::reset(std::optional<std::uint64_t> seed, std::span<float> obs, const ResetOptions& options) {
  MESHSIM_CHECK(check(options).has_value(), "reset: options that check() refuses");
  if (seed) rng_ = engine::Rng(engine::derive_seed(*seed, "rl/env"));
  cursor_ = EnvCursor{rng_.state(), options, {}};
  rate_scale_ = options.rate_scale.value_or(spec_.rate_scales[rng_.uniform_int(spec_.rate_scales.size())]);
  MESHSIM_CHECK(rate_scale_ > 0 && std::isfinite(rate_scale_), "reset: rate_scale must be > 0");
  const double covered_s = config_.replay.until->seconds() * rate_scale_;
  const double last_start =
      spec_.windows_to_s.value_or(std::max(spec_.windows_from_s, workload_span_s_ - covered_s));
  window_start_s_ = options.window_start_s.value_or(spec_.windows_from_s +
                                                    rng_.uniform() * (last_start - spec_.windows_from_s));
  MESHSIM_CHECK(window_start_s_ >= 0 && window_start_s_ <= SimTime::kMaxSeconds, "reset: window start out of range");

  configs::ScenarioConfig episode = config_;
  scale_up_delay_s_ = options.scale_up_delay_s.value_or(
      spec_.scale_up_delays_s.empty() ? config_.scaling.manager.scale_up_delay.seconds()
                                      : spec_.scale_up_delays_s[rng_.uniform_int(spec_.scale_up_delays_s.size())]);
  MESHSIM_CHECK(scale_up_delay_s_ >= 0 && scale_up_delay_s_ <= SimTime::kMaxSeconds, "reset: scale-up delay out of range");
  episode.scaling.manager.scale_up_delay = SimTime::from_seconds(scale_up_delay_s_);
  if (options.start_instances) {
    MESHSIM_CHECK(*options.start_instances >= 1, "reset: start_instances must be >= 1");
    set_start_size(episode, *options.start_instances);
  } else if (!spec_.start_instances.empty()) {
    set_start_size(episode, spec_.start_instances[rng_.uniform_int(spec_.start_instances.size())]);
  }
  episode.seed = rng_.next_u64();
  work_.clear();
  auto run = run::ScenarioRun::create(episode, config_.name, catalog_, *this,
                                          episode_hooks(SimTime::from_seconds(window_start_s_), rate_scale_));
  MESHSIM_CHECK(run.has_value(), "reset: " + (run ? std::string() : run.error().message));
  run_ = std::move(*run);
  run_->start();

  if (residual()) {
    // The baseline starts with the episode, as the scenario's autoscaler would: a first
    // look at time 0 (it keeps the start size and notes the arrivals), then one at every
    // decision.
    autoscale::TargetTrackingConfig base = spec_.residual_base;
    base.warm_start = true;  // it takes over the start size, as in evaluation
    base.max_instances = config_.scaling.manager.max_total_instances;
    base.min_instances = std::min(base.min_instances, base.max_instances);
    baseline_ = std::make_unique<autoscale::TargetTrackingAutoscaler>(base, pools_, slos_);
    advance(SimTime::zero());  // what arrives at time 0 first, as an autoscaler's timer sees it
    update_baseline();
  }
  step_ = 0;
  begin_interval(SimTime::zero());
  IntervalStats stats = base_stats();
  EnvInfo info;
  if (spec_.warmup > SimTime::zero()) {
    advance(spec_.warmup);
    stats = measure_interval(spec_.warmup);
    info.left = left_;
    info.slo_met = met_;
    begin_interval(spec_.warmup);
  } else {
    stats.phase = phase_at(SimTime::zero());
    stats.mean_instances = static_cast<double>(run_->scaling()->manager().view().get_status_summary().total_instances);
  }
  rates_.start(stats.arrival_rate);
  stats.rates = rates_;
  gpu_us_at_first_decision_ = run_->replay().serving().usage().gpu_us;
  if (residual()) update_baseline();  // for the first decision: the warm-up's rates known
  const auto& manager = run_->scaling()->manager();
  collect_observation(manager, pools_, stats, config_.replay.slo.ttft.seconds(), config_.replay.slo.tbt.seconds(),
                      baseline_view_, obs);
  const auto status = manager.view().get_status_summary();
  info.window_start_s = window_start_s_;
  info.rate_scale = rate_scale_;
  info.scale_up_delay_s = scale_up_delay_s_;
  info.sim_seconds = spec_.warmup.seconds();
  info.slo_attainment = 1.0 - stats.violations;
  info.mean_instances = stats.mean_instances;
  info.active = status.active_instances;
  info.starting = status.scaling_up_instances;
  info.draining = status.draining_instances;
  return info;
}

void ScalingEnv::advance(SimTime to) {
  if (auto ran = run_->advance_until(to); !ran) {
    throw RangeError(config_.name + ": the episode from workload second " + number_text(window_start_s_) + " at rate x" +
                     number_text(rate_scale_) + " stopped: " + ran.error().message);
  }
}

double ScalingEnv::late_waiting(SimTime end) const {
  if (end <= interval_start_) return 0.0;
  // Those that arrived a TTFT target before the interval began were late all through it.
  const SimTime ttft = config_.replay.slo.ttft;
  const auto backlog = run_->replay().serving().awaiting_first_token(interval_start_ - ttft);
  double late = static_cast<double>(backlog.arrived_before);
  for (const SimTime arrival : backlog.recent) {
    late += late_share(arrival.seconds(), interval_start_.seconds(), end.seconds(), ttft.seconds());
  }
  return late;
}

std::optional<double> ScalingEnv::phase_at(SimTime at) const {
  if (spec_.phase_period_s <= 0) return std::nullopt;
  const double cycles = (window_start_s_ + at.seconds() * rate_scale_) / spec_.phase_period_s;
  return cycles - std::floor(cycles);
}

IntervalStats ScalingEnv::base_stats() const {
  IntervalStats stats;
  stats.decision_interval_s = spec_.decision_interval.seconds();
  stats.scale_up_delay_s = scale_up_delay_s_;
  stats.classes.resize(class_names_.size());
  return stats;
}

void ScalingEnv::begin_interval(SimTime at) {
  interval_start_ = at;
  const auto usage = run_->replay().serving().usage();
  usage_at_start_ = usage;
  arrived_at_start_ = run_->replay().metrics().counts().arrived;
  left_ = met_ = 0;
  std::fill(class_left_.begin(), class_left_.end(), 0);
  std::fill(class_met_.begin(), class_met_.end(), 0);
  ttfts_.clear();
  tbts_.clear();
}

IntervalStats ScalingEnv::measure_interval(SimTime end) {
  IntervalStats stats = base_stats();
  const double seconds = (end - interval_start_).seconds();
  const auto usage = run_->replay().serving().usage();
  stats.seconds = seconds;
  stats.arrival_rate = static_cast<double>(run_->replay().metrics().counts().arrived - arrived_at_start_) / seconds;
  stats.ttft_p50 = quantile(ttfts_, 0.5);
  stats.ttft_p99 = quantile(ttfts_, 0.99);
  stats.tbt_p99 = quantile(tbts_, 0.99);
  stats.violations = left_ > 0 ? 1.0 - static_cast<double>(met_) / static_cast<double>(left_) : 0.0;
  for (std::size_t c = 0; c < class_left_.size(); ++c) {
    const double left = static_cast<double>(class_left_[c]), met = static_cast<double>(class_met_[c]);
    stats.classes[c] = {left > 0 ? 1.0 - met / left : 0.0, met / seconds};
  }
  stats.phase = phase_at(end);
  stats.mean_instances = (usage.instance_us - usage_at_start_.instance_us) / (seconds * 1e6);
  stats.roofline = cluster::utilisation_between(usage_at_start_, usage).roofline;
  stats.work = work_.figures(end);
  return stats;
}

run::RunHooks ScalingEnv::episode_hooks(SimTime start, double rate_scale) const {
  const SimTime length = *config_.replay.until;
  run::RunHooks hooks;
  hooks.source = workload_->window(start, length, rate_scale);
  // The agent drives the ScalingManager unless the config's autoscaler does.
  hooks.driver_scales = config_.autoscaler.policy == configs::AutoscalerPolicy::kNone;
  if (config_.autoscaler.policy == configs::AutoscalerPolicy::kOracle) {
    hooks.lookahead = workload_->window(start, length, rate_scale);
  }
  return hooks;
}

std::vector<std::int64_t> ScalingEnv::deltas(std::span<const float> action, std::span<const std::int64_t> sizes) const {
  MESHSIM_CHECK(action.size() == action_size(), "step: expected " + std::to_string(action_size()) +
                                                    " action entries, got " + std::to_string(action.size()));
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < action.size(); ++i) {
    const float raw = action[i];
    // NaN is treated as no change, whatever the action kind (a diverged policy must not
    // crash a run, and evaluation plays static sizes and autoscalers with NaN actions).
    if (std::isnan(raw)) {
      out.push_back(0);
      continue;
    }
    const double value = raw;
    switch (spec_.action) {
      case configs::ActionKind::kDiscrete: {
        const double k = spec_.discrete_max_step;
        out.push_back(static_cast<std::int64_t>(std::llround(std::clamp(value, 0.0, 2.0 * k) - k)));
        break;
      }
      case configs::ActionKind::kResidual: {
        const double k = spec_.discrete_max_step;
        const auto correction = std::llround(std::clamp(value, 0.0, 2.0 * k) - k);
        out.push_back(std::max<std::int64_t>(0, baseline_view_[i].size + correction) - sizes[i]);
        break;
      }
      case configs::ActionKind::kTarget: {
        const auto target = std::llround(std::clamp(value, 0.0, static_cast<double>(spec_.target_max_instances)));
        const std::int64_t step = spec_.target_max_step;
        out.push_back(std::clamp<std::int64_t>(target - sizes[i], -step, step));
        break;
      }
      case configs::ActionKind::kContinuous: {
        const double step = i < pools_.size() ? spec_.action_scale_step : spec_.action_mig_step;
        out.push_back(static_cast<std::int64_t>(std::llround(std::clamp(value, -1.0, 1.0) * step)));
        break;
      }
    }
  }
  return out;
}

StepResult ScalingEnv::step(std::span<const float> action, std::span<float> obs) {
  MESHSIM_CHECK(run_ != nullptr, "step: call reset() first");
  MESHSIM_CHECK(step_ < steps_per_episode_, "step: the episode was truncated; call reset()");
  auto& manager = run_->scaling()->manager();
  const cluster::ScalingCounts before = manager.view().counts();
  std::vector<std::int64_t> sizes;
  for (const cluster::InstanceTag tag : pools_) sizes.push_back(manager.view().snapshot(tag).current());
  const std::vector<std::int64_t> change = deltas(action, sizes);
  cursor_.actions.insert(cursor_.actions.end(), action.begin(), action.end());
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    const std::int64_t desired = std::clamp<std::int64_t>(sizes[i] + change[i], 0, 1'000'000);
    if (desired != sizes[i]) autoscale::scale_pool_to(manager, pools_[i], static_cast<std::uint32_t>(desired));
  }
  if (migrates_) {
    const std::int64_t moves = change.back();
    const auto from = moves > 0 ? cluster::InstanceTag::kPrompt : cluster::InstanceTag::kToken;
    const auto to = moves > 0 ? cluster::InstanceTag::kToken : cluster::InstanceTag::kPrompt;
    for (std::int64_t m = 0; m < std::abs(moves); ++m) {
      if (!manager.migrate_pool(from, to)) break;
    }
  }

  const SimTime end = spec_.warmup + SimTime::from_us(spec_.decision_interval.us() * (step_ + 1));
  advance(end);
  const cluster::ScalingCounts after = manager.view().counts();  // the action's and an autoscaler's
  IntervalStats stats = measure_interval(end);
  rates_.add(stats.arrival_rate, stats.seconds);
  stats.rates = rates_;

  StepResult result;
  EnvInfo& info = result.info;
  info.window_start_s = window_start_s_;
  info.rate_scale = rate_scale_;
  info.scale_up_delay_s = scale_up_delay_s_;
  info.sim_seconds = end.seconds();
  info.left = left_;
  info.slo_met = met_;
  info.slo_attainment = 1.0 - stats.violations;
  info.mean_instances = stats.mean_instances;
  info.gpu_hours = (run_->replay().serving().usage().gpu_us - gpu_us_at_first_decision_) / 3.6e9;
  info.scale_ups = static_cast<std::uint32_t>(after.scale_ups - before.scale_ups);
  info.scale_downs = static_cast<std::uint32_t>(after.scale_downs - before.scale_downs);
  info.blocked = static_cast<std::uint32_t>(after.blocked - before.blocked);
  info.migrations = static_cast<std::uint32_t>(after.migrations - before.migrations);
  const auto status = manager.view().get_status_summary();
  info.active = status.active_instances;
  info.starting = status.scaling_up_instances;
  info.draining = status.draining_instances;
  RewardInputs inputs;
  inputs.missed = left_ - met_;
  inputs.late = late_waiting(end);
  inputs.mean_instances = stats.mean_instances;
  inputs.actions = info.scale_ups + info.scale_downs + info.migrations;
  inputs.reference_requests = reference_requests_;
  const RewardTerms terms = reward_terms(inputs, spec_.reward);
  info.late_waiting = inputs.late;
  info.slo_penalty = terms.slo;
  info.waiting_penalty = terms.waiting;
  info.cost_penalty = terms.cost;
  info.churn_penalty = terms.churn;
  result.reward = terms.reward();

  if (residual()) update_baseline();
  collect_observation(manager, pools_, stats, config_.replay.slo.ttft.seconds(), config_.replay.slo.tbt.seconds(),
                      baseline_view_, obs);
  ++step_;
  result.truncated = step_ == steps_per_episode_;
  begin_interval(end);
  return result;
}

void ScalingEnv::update_baseline() {
  baseline_view_.clear();
  for (const cluster::InstanceTag tag : pools_) {
    const auto look = baseline_->look(run_->scaling()->manager(), tag);
    baseline_view_.push_back({look.size, look.need});
  }
}

void ScalingEnv::restore(const EnvCursor& cursor, std::span<float> obs) {
  MESHSIM_CHECK(cursor.actions.size() % action_size() == 0 &&
                    cursor.actions.size() / action_size() <= steps_per_episode_,
                "restore: the cursor's actions do not fit this environment's episodes");
  rng_ = engine::Rng::from_state(cursor.rng_before_reset);
  reset(std::nullopt, obs, cursor.options);
  for (std::size_t i = 0; i < cursor.actions.size(); i += action_size()) {
    step(std::span(cursor.actions).subspan(i, action_size()), obs);
  }
}

void ScalingEnv::on_arrival(const traces::TraceRequest& request) {
  work_.on_arrival(request.arrival, request.prompt_tokens);
  if (replay::ReplayObserver* watcher = baseline_ ? baseline_->watcher() : nullptr) watcher->on_arrival(request);
}

void ScalingEnv::on_request(const metrics::RequestRecord& record) {
  if (record.status == metrics::RequestStatus::kCompleted) work_.on_completion(*record.finished, record.output_tokens);
  if (replay::ReplayObserver* watcher = baseline_ ? baseline_->watcher() : nullptr) watcher->on_request(record);
  if (!metrics::slo_judges(record)) return;
  const bool met = metrics::judge(record, slos_.of(record)).met();
  ++left_;
  met_ += met;
  if (!class_left_.empty()) {
    ++class_left_.at(record.service_class);
    class_met_.at(record.service_class) += met;
  }
  if (record.status == metrics::RequestStatus::kCompleted) {
    ttfts_.push_back(record.ttft()->seconds());
    tbts_.push_back(record.tbt_mean(config_.replay.slo.tbt_definition)->seconds());
  }
}

}  // namespace meshsim::rl
