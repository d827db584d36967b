#include "rl/ppo/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>

#include "rl/ppo/gae.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy.hpp"
#include "rl/ppo/ppo_loss.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A tensor viewing `data` (no copy; `data` must outlive it).
torch::Tensor view(std::vector<float>& data, std::vector<std::int64_t> sizes) {
  return torch::from_blob(data.data(), sizes, torch::kFloat);
}

nlohmann::json cursor_to_json(const EnvCursor& c) {
  nlohmann::json options = nlohmann::json::object();
  if (c.options.window_start_s) options["window_start_s"] = *c.options.window_start_s;
  if (c.options.rate_scale) options["rate_scale"] = *c.options.rate_scale;
  if (c.options.scale_up_delay_s) options["scale_up_delay_s"] = *c.options.scale_up_delay_s;
  if (c.options.start_instances) options["start_instances"] = *c.options.start_instances;
  return {{"rng", c.rng_before_reset}, {"options", options}, {"actions", c.actions}};
}

EnvCursor cursor_from_json(const nlohmann::json& j) {
  EnvCursor c;
  c.rng_before_reset = j.at("rng").get<engine::Rng::State>();
  const auto& options = j.at("options");
  const auto read = [&](const char* key, auto& field) {
    if (options.contains(key)) field = options.at(key).get<typename std::decay_t<decltype(field)>::value_type>();
  };
  read("window_start_s", c.options.window_start_s);
  read("rate_scale", c.options.rate_scale);
  read("scale_up_delay_s", c.options.scale_up_delay_s);
  read("start_instances", c.options.start_instances);
  c.actions = j.at("actions").get<std::vector<float>>();
  return c;
}

}  // namespace

struct PpoTrainer::Impl {
  configs::PpoSpec opt;
  std::uint64_t seed = 0;
  std::unique_ptr<VectorEnv> envs;
  std::size_t n = 0, obs_size = 0, act_size = 0, steps = 0;
  std::int64_t choices = 0;  // 0: continuous
  ActorCritic policy{nullptr};
  EigenPolicy fast;            // the policy's weights as of the rollout under way
  bool torch_rollout = false;  // the rollout's forward passes in LibTorch (a benchmark's baseline)
  std::unique_ptr<torch::optim::Adam> adam;
  ObservationNormalizer obs_norm;
  RewardScaler reward_scaler;
  engine::Rng action_rng, shuffle_rng;
  std::uint32_t iteration = 0, iterations = 0;
  std::uint64_t decisions = 0;
  std::vector<double> episode_returns;  // raw, per environment, of the episode under way

  // The policy's view of the environments' current observations.
  std::vector<float> obs;
  // The rollout, [t * n + i] (obs and actions with their row sizes).
  std::vector<float> b_obs, b_actions, b_log_prob, b_values, b_next_values, b_rewards, b_adv, b_returns;
  std::vector<std::uint8_t> b_ended;

  Impl(const configs::PpoSpec& options, std::uint64_t seed_, std::unique_ptr<VectorEnv> vec, std::int64_t choices_)
      : opt(options),
        seed(seed_),
        envs(std::move(vec)),
        n(envs->num_envs()),
        obs_size(envs->observation_size()),
        act_size(envs->action_size()),
        steps(options.rollout_steps),
        choices(choices_),
        obs_norm(obs_size, options.observation_clip),
        reward_scaler(n, options.gamma, options.reward_clip),
        action_rng(engine::derive_seed(seed_, "ppo/actions")),
        shuffle_rng(engine::derive_seed(seed_, "ppo/minibatches")),
        episode_returns(n, 0.0),
        obs(n * obs_size) {
    const std::uint64_t batch = static_cast<std::uint64_t>(n) * steps;
    iterations = static_cast<std::uint32_t>((opt.total_decisions + batch - 1) / batch);
    torch::manual_seed(engine::derive_seed(seed, "ppo/init"));
    policy = ActorCritic(PolicyShape{static_cast<std::int64_t>(obs_size), static_cast<std::int64_t>(act_size), choices,
                                     opt.hidden});
    adam = std::make_unique<torch::optim::Adam>(policy->parameters(),
                                                torch::optim::AdamOptions(opt.learning_rate).eps(1e-5));
    const std::size_t rows = steps * n;
    b_obs.resize(rows * obs_size);
    b_actions.resize(rows * act_size);
    for (auto* v : {&b_log_prob, &b_values, &b_next_values, &b_rewards, &b_adv, &b_returns}) v->resize(rows);
    b_ended.resize(rows);
    envs->reset(engine::derive_seed(seed, "ppo/envs"));
    observe(true);
  }

  // Takes the environments' current observations into `obs` (normalised, the statistics
  // updated first when `update`).
  void observe(bool update) {
    if (!opt.normalize_observations) {
      std::copy(envs->observations().begin(), envs->observations().end(), obs.begin());
      return;
    }
    if (update) obs_norm.update(envs->observations());
    obs_norm.normalize(envs->observations(), obs);
  }

  // The rollout's forward passes, on the Eigen copy of the weights (refreshed at each
  // rollout) or, for train_bench's baseline, on LibTorch itself. Outputs are row-major:
  // `out` the actor's ([B, A] means or [B, A x choices] logits), `values` [B].
  void forward(std::span<const float> x, std::size_t batch, std::vector<float>* out, std::vector<float>* values) {
    if (torch_rollout) {
      const torch::Tensor x_t =
          torch::from_blob(const_cast<float*>(x.data()), {static_cast<std::int64_t>(batch), static_cast<std::int64_t>(obs_size)});
      const auto copy = [](const torch::Tensor& t, std::vector<float>& into) {
        const torch::Tensor c = t.contiguous();
        into.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
      };
      if (out != nullptr) copy(policy->actor_output(x_t), *out);
      if (values != nullptr) copy(policy->value(x_t), *values);
      return;
    }
    const auto copy = [](const RowMatrix& m, std::vector<float>& into) { into.assign(m.data(), m.data() + m.size()); };
    if (out != nullptr) copy(fast.actor_output(x, batch), *out);
    if (values != nullptr) copy(fast.value(x, batch), *values);
  }

  IterationStats rollout() {
    IterationStats stats;
    std::uint64_t left = 0, met = 0, actions_taken = 0;
    double reward_sum = 0.0, instances_sum = 0.0, episode_return_sum = 0.0;
    const torch::NoGradGuard no_grad;
    fast = policy->to_eigen();
    std::vector<float> final_obs(obs_size), out, values, actions, log_prob;
    for (std::size_t t = 0; t < steps; ++t) {
      const std::size_t row = t * n;
      std::copy(obs.begin(), obs.end(), b_obs.begin() + static_cast<std::ptrdiff_t>(row * obs_size));
      forward(obs, n, &out, &values);
      fast.sample(out, n, action_rng, actions, log_prob);
      std::copy(actions.begin(), actions.end(), b_actions.begin() + static_cast<std::ptrdiff_t>(row * act_size));
      std::copy_n(log_prob.begin(), n, b_log_prob.begin() + static_cast<std::ptrdiff_t>(row));
      std::copy_n(values.begin(), n, b_values.begin() + static_cast<std::ptrdiff_t>(row));

      envs->step(actions);
      std::vector<double> rewards(envs->rewards().begin(), envs->rewards().end());
      for (std::size_t i = 0; i < n; ++i) {
        const EnvInfo& info = envs->infos()[i];
        const bool ended = envs->terminations()[i] || envs->truncations()[i];
        b_ended[row + i] = ended;
        reward_sum += rewards[i];
        episode_returns[i] += rewards[i];
        left += info.left;
        met += info.slo_met;
        instances_sum += info.mean_instances;
        actions_taken += info.scale_ups + info.scale_downs + info.migrations;
        if (ended) {
          episode_return_sum += episode_returns[i];
          ++stats.episodes;
          episode_returns[i] = 0.0;
        }
      }
      if (opt.normalize_rewards) reward_scaler.scale(rewards, std::span(b_ended).subspan(row, n));
      for (std::size_t i = 0; i < n; ++i) b_rewards[row + i] = static_cast<float>(rewards[i]);
      observe(true);
      // Where an episode ended: bootstrap from its last observation's value if it was
      // truncated (the agent's task goes on), 0 if it terminated.
      for (std::size_t i = 0; i < n; ++i) {
        if (!b_ended[row + i]) continue;
        float bootstrap = 0.0f;
        if (envs->truncations()[i] && !envs->terminations()[i]) {
          const auto raw = envs->final_observations().subspan(i * obs_size, obs_size);
          if (opt.normalize_observations) {
            obs_norm.normalize(raw, final_obs);
          } else {
            std::copy(raw.begin(), raw.end(), final_obs.begin());
          }
          forward(final_obs, 1, nullptr, &values);
          bootstrap = values[0];
        }
        b_next_values[row + i] = bootstrap;
      }
    }
    forward(obs, n, nullptr, &values);  // the values after the last step
    for (std::size_t t = 0; t < steps; ++t) {
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = t * n + i;
        if (!b_ended[k]) b_next_values[k] = t + 1 < steps ? b_values[k + n] : values[i];
      }
    }
    const double count = static_cast<double>(steps * n);
    stats.mean_reward = reward_sum / count;
    stats.mean_episode_return = stats.episodes > 0 ? episode_return_sum / stats.episodes : 0.0;
    stats.requests = left;
    stats.slo_attainment = left > 0 ? static_cast<double>(met) / static_cast<double>(left) : 1.0;
    stats.mean_instances = instances_sum / count;
    stats.scaling_actions = static_cast<double>(actions_taken) / count;
    return stats;
  }

  void update(IterationStats& stats) {
    const std::size_t rows = steps * n;
    compute_gae(steps, n, b_values, b_rewards, b_next_values, b_ended, opt.gamma, opt.gae_lambda, b_adv, b_returns);
    const auto rows64 = static_cast<std::int64_t>(rows);
    const torch::Tensor obs_t = view(b_obs, {rows64, static_cast<std::int64_t>(obs_size)});
    const torch::Tensor actions_t = view(b_actions, {rows64, static_cast<std::int64_t>(act_size)});
    const torch::Tensor log_prob_t = view(b_log_prob, {rows64});
    const torch::Tensor values_t = view(b_values, {rows64});
    const torch::Tensor adv_t = view(b_adv, {rows64});
    const torch::Tensor returns_t = view(b_returns, {rows64});

    const double lr = opt.anneal_lr ? opt.learning_rate * (1.0 - static_cast<double>(iteration) / iterations)
                                    : opt.learning_rate;
    for (auto& group : adam->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
    stats.learning_rate = lr;

    std::vector<std::int64_t> order(rows);
    std::uint32_t minibatches = 0;
    for (std::uint32_t epoch = 0; epoch < opt.update_epochs; ++epoch) {
      std::iota(order.begin(), order.end(), 0);
      for (std::size_t i = rows; i > 1; --i) std::swap(order[i - 1], order[shuffle_rng.uniform_int(i)]);
      for (std::uint32_t m = 0; m < opt.minibatches; ++m) {
        const std::size_t begin = rows * m / opt.minibatches, end = rows * (m + 1) / opt.minibatches;
        const torch::Tensor index =
            torch::from_blob(order.data() + begin, {static_cast<std::int64_t>(end - begin)}, torch::kLong);
        const PolicyEval eval = policy->evaluate(obs_t.index_select(0, index), actions_t.index_select(0, index));
        const PpoLoss loss = ppo_loss(opt, eval.log_prob, log_prob_t.index_select(0, index),
                                      adv_t.index_select(0, index), eval.value, values_t.index_select(0, index),
                                      returns_t.index_select(0, index), eval.entropy);
        adam->zero_grad();
        loss.total.backward();
        torch::nn::utils::clip_grad_norm_(policy->parameters(), opt.max_grad_norm);
        adam->step();
        stats.policy_loss += loss.policy.item<double>();
        stats.value_loss += loss.value.item<double>();
        stats.entropy += loss.entropy.item<double>();
        stats.approx_kl += loss.approx_kl;
        stats.clip_fraction += loss.clip_fraction;
        ++minibatches;
      }
    }
    for (double* v : {&stats.policy_loss, &stats.value_loss, &stats.entropy, &stats.approx_kl, &stats.clip_fraction}) {
      *v /= minibatches;
    }
    const double var_returns = returns_t.var().item<double>();
    stats.explained_variance = var_returns > 0 ? 1.0 - (returns_t - values_t).var().item<double>() / var_returns : 0.0;
  }
};

PpoTrainer::PpoTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PpoTrainer::~PpoTrainer() = default;

Expected<std::unique_ptr<PpoTrainer>> PpoTrainer::create(const configs::ScenarioConfig& config,
                                                        const configs::Catalog& catalog, traces::SharedTrace trace,
                                                        std::uint64_t seed) {
  const configs::RlSpec rl = config.rl.value_or(configs::RlSpec{});
  auto envs = VectorEnv::create(config, catalog, std::move(trace), {.num_envs = rl.ppo.num_envs, .threads = rl.ppo.threads});
  if (!envs) return envs.error();
  // Small models on many tiny batches: LibTorch's intra-op pool only adds hand-offs.
  torch::set_num_threads(1);
  const std::int64_t choices = rl.action == configs::ActionKind::kDiscrete ? (*envs)->env(0).discrete_choices() : 0;
  return std::unique_ptr<PpoTrainer>(new PpoTrainer(std::make_unique<Impl>(rl.ppo, seed, std::move(*envs), choices)));
}

std::uint32_t PpoTrainer::iterations() const { return impl_->iterations; }
std::uint32_t PpoTrainer::iteration() const { return impl_->iteration; }
VectorEnv& PpoTrainer::envs() { return *impl_->envs; }
void PpoTrainer::set_torch_rollout(bool torch_rollout) { impl_->torch_rollout = torch_rollout; }

IterationStats PpoTrainer::iterate() {
  MESHSIM_CHECK(!done(), "PpoTrainer::iterate: training is done");
  Impl& m = *impl_;
  const auto start = Clock::now();
  IterationStats stats = m.rollout();
  stats.rollout_seconds = seconds_since(start);
  const auto update_start = Clock::now();
  m.update(stats);
  stats.update_seconds = seconds_since(update_start);
  m.decisions += m.steps * m.n;
  ++m.iteration;
  stats.iteration = m.iteration;
  stats.decisions = m.decisions;
  stats.decisions_per_s = static_cast<double>(m.steps * m.n) / seconds_since(start);
  return stats;
}

void PpoTrainer::save(const fs::path& dir) const {
  const Impl& m = *impl_;
  const fs::path tmp = dir.string() + ".tmp";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  torch::save(m.policy, (tmp / "policy.pt").string());
  torch::save(*m.adam, (tmp / "optimizer.pt").string());
  nlohmann::json state{{"format", kCheckpointFormat},
                       {"seed", m.seed},
                       {"iteration", m.iteration},
                       {"iterations", m.iterations},
                       {"decisions", m.decisions},
                       {"policy",
                        {{"observations", m.obs_size},
                         {"actions", m.act_size},
                         {"choices", m.choices},
                         {"hidden", m.opt.hidden}}},
                       {"rl", configs::rl_to_json(m.envs->env(0).spec())},  // how the policy acts and is rewarded
                       {"normalize_observations", m.opt.normalize_observations},
                       {"observation_clip", m.opt.observation_clip},
                       {"observation_stats", m.obs_norm.stats().to_json()},
                       {"reward_scaler", m.reward_scaler.to_json()},
                       {"action_rng", m.action_rng.state()},
                       {"shuffle_rng", m.shuffle_rng.state()},
                       {"episode_returns", m.episode_returns},
                       {"envs", nlohmann::json::array()}};
  for (const EnvCursor& cursor : m.envs->cursors()) state["envs"].push_back(cursor_to_json(cursor));
  std::ofstream(tmp / "state.json") << state.dump(1) << '\n';
  fs::remove_all(dir);
  fs::rename(tmp, dir);
}

Status PpoTrainer::load(const fs::path& dir) {
  Impl& m = *impl_;
  std::ifstream in(dir / "state.json");
  if (!in) return Error{(dir / "state.json").string() + ": cannot read the checkpoint's state"};
  nlohmann::json state;
  try {
    state = nlohmann::json::parse(in);
    if (state.at("format").get<int>() != kCheckpointFormat) {
      return Error{(dir / "state.json").string() + ": checkpoint format " + state.at("format").dump() +
                   ", this build reads " + std::to_string(kCheckpointFormat)};
    }
    if (state.at("seed").get<std::uint64_t>() != m.seed || state.at("iterations").get<std::uint32_t>() != m.iterations ||
        state.at("envs").size() != m.n) {
      return Error{(dir / "state.json").string() + ": the checkpoint was made with another seed (" +
                   state.at("seed").dump() + "), total or number of environments; resume with the same config and seed"};
    }
    torch::load(m.policy, (dir / "policy.pt").string());
    torch::load(*m.adam, (dir / "optimizer.pt").string());
    m.iteration = state.at("iteration").get<std::uint32_t>();
    m.decisions = state.at("decisions").get<std::uint64_t>();
    m.obs_norm.stats() = RunningMeanStd::from_json(state.at("observation_stats"));
    m.reward_scaler.load_json(state.at("reward_scaler"));
    m.action_rng = engine::Rng::from_state(state.at("action_rng").get<engine::Rng::State>());
    m.shuffle_rng = engine::Rng::from_state(state.at("shuffle_rng").get<engine::Rng::State>());
    m.episode_returns = state.at("episode_returns").get<std::vector<double>>();
    std::vector<EnvCursor> cursors;
    for (const auto& cursor : state.at("envs")) cursors.push_back(cursor_from_json(cursor));
    m.envs->restore(cursors);
  } catch (const std::exception& e) {  // nlohmann's and LibTorch's errors alike
    return Error{dir.string() + ": not a readable checkpoint: " + e.what()};
  }
  m.observe(false);  // the saved statistics already include the current observations
  return Ok{};
}

}  // namespace meshsim::rl
