#include "rl/ppo/trainer.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "rl/ppo/checkpoint_folder.hpp"
#include "rl/ppo/checkpoint_state.hpp"
#include "rl/ppo/normalizers.hpp"
#include "rl/ppo/policy.hpp"
#include "rl/ppo/ppo_loss.hpp"
#include "rl/ppo/lagrangian.hpp"
#include "rl/ppo/rollout_buffer.hpp"
#include "rl/ppo/step_exchange.hpp"
#include "rl/ppo/torch_message.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/number_text.hpp"
#include "sim/engine/rng.hpp"

namespace meshsim::rl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Residual actions: the neutral choice's initial logit over the others (about 0), so an
// untrained policy keeps the baseline's size three times in four with 5 choices
// (e^2.5 / (e^2.5 + 4)), and deterministically always.
constexpr float kNeutralLogit = 2.5f;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sums of one rank's minibatch losses and statistics, then of all ranks'.
struct UpdateTotals {
  double policy_loss = 0, value_loss = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
};

// Sums a struct of doubles field by field over the ranks, in one all-reduce.
template <class Totals>
void sum_over_ranks(RankGroup& group, Totals& totals) {
  auto packed = std::bit_cast<std::array<double, sizeof(Totals) / sizeof(double)>>(totals);
  group.all_reduce_sum(packed);
  totals = std::bit_cast<Totals>(packed);
}

// A tensor viewing `data` (no copy; `data` must outlive it).
torch::Tensor view(std::vector<float>& data, std::vector<std::int64_t> sizes) {
  return torch::from_blob(data.data(), sizes, torch::kFloat);
}

}  // namespace

struct PpoTrainer::Impl {
  configs::PpoSpec opt;
  std::uint64_t seed = 0;
  std::shared_ptr<RankGroup> group;
  std::unique_ptr<VectorEnv> envs;
  // Every trained recipe's rl spec, the run's own first: what checkpoints record (this
  // rank's first environment may play another recipe).
  std::vector<configs::RlSpec> specs;
  // This rank's environments are [first, first + n) of all n_all (over the ranks).
  std::size_t n = 0, n_all = 0, first = 0, obs_size = 0, act_size = 0, steps = 0;
  std::int64_t choices = 0;  // 0: continuous
  ActorCritic policy{nullptr};
  EigenPolicy fast;            // the policy's weights as of the rollout under way
  bool torch_rollout = false;  // the rollout's forward passes in LibTorch (a benchmark's baseline)
  std::unique_ptr<torch::optim::Adam> adam;
  double slo_target;  // the attainment PPO-Lagrangian holds on training rollouts
  double lagrange;  // PPO-Lagrangian's multiplier of the SLO terms (opt.lagrange_rate > 0)
  std::vector<engine::Rng> action_rngs;  // this rank's environments'
  engine::Rng shuffle_rng;               // the same on every rank
  std::uint32_t iteration = 0, iterations = 0;
  std::uint64_t decisions = 0;
  std::vector<double> episode_returns;  // raw, per environment of this rank, of the episode under way

  StepExchange exchange;  // every environment's steps, and the normalisers over them
  std::span<const float> obs;  // this rank's current observations, as the policy sees them
  RolloutBuffer b;  // this rank's rollout

  Impl(const configs::PpoSpec& options, double slo_target_, std::uint64_t seed_, std::shared_ptr<RankGroup> group_,
       std::unique_ptr<VectorEnv> vec, std::int64_t choices_, std::int64_t neutral_choice)
      : opt(options),
        seed(seed_),
        group(std::move(group_)),
        envs(std::move(vec)),
        n(envs->num_envs()),
        n_all(n * static_cast<std::size_t>(group->size())),
        first(n * static_cast<std::size_t>(group->rank())),
        obs_size(envs->observation_size()),
        act_size(envs->action_size()),
        steps(options.rollout_steps),
        choices(choices_),
        slo_target(options.lagrange_target.value_or(slo_target_)),
        lagrange(options.lagrange_initial),
        shuffle_rng(engine::derive_seed(seed_, "ppo/minibatches")),
        episode_returns(n, 0.0),
        exchange(*group, *envs, first, options.normalize_observations, options.observation_clip, options.gamma,
                 options.reward_clip),
        b(steps, n, obs_size, act_size) {
    const std::uint64_t batch = static_cast<std::uint64_t>(n_all) * steps;
    iterations = static_cast<std::uint32_t>((opt.total_decisions + batch - 1) / batch);
    for (std::size_t i = 0; i < n; ++i) {
      action_rngs.emplace_back(engine::derive_seed(seed, "ppo/actions/" + std::to_string(first + i)));
    }
    {
      // LibTorch initialises modules from its global generator: one trainer at a time.
      static std::mutex init;
      const std::lock_guard lock(init);
      torch::manual_seed(engine::derive_seed(seed, "ppo/init"));
      policy = ActorCritic(PolicyShape{static_cast<std::int64_t>(obs_size), static_cast<std::int64_t>(act_size),
                                       choices, opt.hidden});
      // Residual actions start at the baseline's point: the neutral choice most likely.
      if (neutral_choice >= 0) policy->favour_choice(neutral_choice, kNeutralLogit);
    }
    adam = std::make_unique<torch::optim::Adam>(policy->parameters(),
                                                torch::optim::AdamOptions(opt.learning_rate).eps(1e-5));
    // Environment i of a VectorEnv is seeded with seed + i: offset by `first`, this rank's
    // are the same environments as in one process.
    envs->reset(engine::derive_seed(seed, "ppo/envs") + first);
    exchange.gather({}, {});
    obs = exchange.observe(true);
  }

  GatherOverRanks gather_over_ranks() {
    return [this](std::span<const double> mine) {
      std::vector<double> all(mine.size() * static_cast<std::size_t>(group->size()));
      group->all_gather(mine, std::span(all));
      return all;
    };
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
    RolloutTotals totals;
    const torch::NoGradGuard no_grad;
    fast = policy->to_eigen();
    std::vector<float> final_obs(obs_size), out, values, actions, log_prob;
    for (std::size_t t = 0; t < steps; ++t) {
      const std::size_t row = t * n;
      std::copy(obs.begin(), obs.end(), b.obs.begin() + static_cast<std::ptrdiff_t>(row * obs_size));
      forward(obs, n, &out, &values);
      fast.sample(out, n, action_rngs, actions, log_prob);
      std::copy(actions.begin(), actions.end(), b.actions.begin() + static_cast<std::ptrdiff_t>(row * act_size));
      std::copy_n(log_prob.begin(), n, b.log_prob.begin() + static_cast<std::ptrdiff_t>(row));
      std::copy_n(values.begin(), n, b.values.begin() + static_cast<std::ptrdiff_t>(row));

      envs->step(actions);
      std::vector<double> rewards(envs->rewards().begin(), envs->rewards().end());
      // What the policy learns from: with PPO-Lagrangian, the SLO terms weighed by the
      // multiplier (the reported rewards stay the environment's).
      std::vector<double> learned = rewards;
      if (opt.lagrange_rate > 0) {
        for (std::size_t i = 0; i < n; ++i) learned[i] = lagrangian_reward(lagrange, envs->infos()[i]);
      }
      for (std::size_t i = 0; i < n; ++i) {
        const bool ended = envs->terminations()[i] || envs->truncations()[i];
        b.ended[row + i] = ended;
        totals.add_step(rewards[i], envs->infos()[i]);
        episode_returns[i] += rewards[i];
        if (ended) totals.add_episode(std::exchange(episode_returns[i], 0.0));
      }
      exchange.gather(learned, std::span(b.ended).subspan(row, n));
      if (opt.normalize_rewards) exchange.scale_rewards(learned);
      for (std::size_t i = 0; i < n; ++i) b.rewards[row + i] = static_cast<float>(learned[i]);
      obs = exchange.observe(true);
      // Where an episode ended: bootstrap from its last observation's value if it was
      // truncated (the agent's task goes on), 0 if it terminated.
      for (std::size_t i = 0; i < n; ++i) {
        if (!b.ended[row + i]) continue;
        float bootstrap = 0.0f;
        if (envs->truncations()[i] && !envs->terminations()[i]) {
          exchange.normalize(envs->final_observations().subspan(i * obs_size, obs_size), final_obs);
          forward(final_obs, 1, nullptr, &values);
          bootstrap = values[0];
        }
        b.next_values[row + i] = bootstrap;
      }
    }
    forward(obs, n, nullptr, &values);  // the values after the last step
    b.link_next_values(values);
    sum_over_ranks(*group, totals);
    totals.fill(stats, static_cast<double>(steps * n_all));
    stats.lagrange = lagrange;
    return stats;
  }

  // The ranks' gradients summed, so each holds the whole minibatch's (one collective).
  void sum_gradients() {
    if (group->size() == 1) return;
    std::vector<float> flat;
    for (auto& p : policy->parameters()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);  // unused by an empty share
      const torch::Tensor g = p.grad().contiguous();
      flat.insert(flat.end(), g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
    }
    group->all_reduce_sum(flat);
    std::size_t offset = 0;
    for (auto& p : policy->parameters()) {
      p.grad().copy_(torch::from_blob(flat.data() + offset, p.sizes()));
      offset += static_cast<std::size_t>(p.numel());
    }
  }

  // The ranks must hold the same weights after every update; a difference would mean a
  // rank trained on something else, and every later figure would be wrong.
  void check_weights_agree() {
    if (group->size() == 1) return;
    const std::vector<float> w = weights();
    const std::string mine(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float));
    const auto all = group->all_gather(std::to_string(std::hash<std::string>{}(mine)));
    for (std::size_t r = 1; r < all.size(); ++r) {
      if (all[r] != all[0]) {
        throw std::runtime_error("rank " + std::to_string(r) + "'s policy weights differ from rank 0's after iteration " +
                                 std::to_string(iteration + 1));
      }
    }
  }

  std::vector<float> weights() const {
    std::vector<float> flat;
    for (const auto& p : policy->parameters()) {
      const torch::Tensor c = p.detach().contiguous();
      flat.insert(flat.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return flat;
  }

  void update(IterationStats& stats) {
    const std::size_t rows = steps * n, rows_all = steps * n_all;
    b.compute_advantages(opt.gamma, opt.gae_lambda);
    const auto rows64 = static_cast<std::int64_t>(rows);
    const torch::Tensor obs_t = view(b.obs, {rows64, static_cast<std::int64_t>(obs_size)});
    const torch::Tensor actions_t = view(b.actions, {rows64, static_cast<std::int64_t>(act_size)});
    const torch::Tensor log_prob_t = view(b.log_prob, {rows64});
    const torch::Tensor values_t = view(b.values, {rows64});
    const torch::Tensor adv_t = view(b.advantages, {rows64});
    const torch::Tensor returns_t = view(b.returns, {rows64});

    const double lr = opt.anneal_lr ? opt.learning_rate * (1.0 - static_cast<double>(iteration) / iterations)
                                    : opt.learning_rate;
    for (auto& group_options : adam->param_groups()) {
      static_cast<torch::optim::AdamOptions&>(group_options.options()).lr(lr);
    }
    stats.learning_rate = lr;

    // The same permutation of all ranks' rows on every rank (the same generator).
    std::vector<std::int64_t> order(rows_all), local;
    std::uint32_t minibatches = 0;
    UpdateTotals sums;
    const GatherOverRanks gather = gather_over_ranks();
    for (std::uint32_t epoch = 0; epoch < opt.update_epochs; ++epoch) {
      std::iota(order.begin(), order.end(), 0);
      for (std::size_t i = rows_all; i > 1; --i) std::swap(order[i - 1], order[shuffle_rng.uniform_int(i)]);
      for (std::uint32_t m = 0; m < opt.minibatches; ++m) {
        const std::size_t begin = rows_all * m / opt.minibatches, end = rows_all * (m + 1) / opt.minibatches;
        b.local_rows(std::span(order).subspan(begin, end - begin), n_all, first, local);
        const double size = static_cast<double>(end - begin);
        const torch::Tensor index =
            torch::from_blob(local.data(), {static_cast<std::int64_t>(local.size())}, torch::kLong);
        torch::Tensor adv = adv_t.index_select(0, index);
        if (opt.normalize_advantages) adv = normalize_advantages(adv, gather);
        const PolicyEval eval = policy->evaluate(obs_t.index_select(0, index), actions_t.index_select(0, index));
        const PpoLoss loss = ppo_loss(opt, eval.log_prob, log_prob_t.index_select(0, index), adv, eval.value,
                                      values_t.index_select(0, index), returns_t.index_select(0, index), eval.entropy,
                                      size);
        adam->zero_grad();
        loss.total.backward();
        sum_gradients();
        torch::nn::utils::clip_grad_norm_(policy->parameters(), opt.max_grad_norm);
        adam->step();
        sums.policy_loss += loss.policy.item<double>();
        sums.value_loss += loss.value.item<double>();
        sums.entropy += loss.entropy.item<double>();
        sums.approx_kl += loss.approx_kl;
        sums.clip_fraction += loss.clip_fraction;
        ++minibatches;
      }
    }
    check_weights_agree();
    sum_over_ranks(*group, sums);
    stats.policy_loss = sums.policy_loss / minibatches;
    stats.value_loss = sums.value_loss / minibatches;
    stats.entropy = sums.entropy / minibatches;
    stats.approx_kl = sums.approx_kl / minibatches;
    stats.clip_fraction = sums.clip_fraction / minibatches;
    stats.explained_variance = explained_variance(returns_t, values_t);
  }

  // 1 - Var(returns - values) / Var(returns) over all ranks' rows (0 when the returns do
  // not vary). Two passes (means, then squares about them), in double.
  double explained_variance(const torch::Tensor& returns, const torch::Tensor& values) {
    const torch::Tensor r = returns.to(torch::kDouble), d = r - values.to(torch::kDouble);
    const double count = static_cast<double>(steps * n_all);
    std::vector<double> means{r.sum().item<double>(), d.sum().item<double>()};
    group->all_reduce_sum(means);
    std::vector<double> squares{(r - means[0] / count).pow(2).sum().item<double>(),
                                (d - means[1] / count).pow(2).sum().item<double>()};
    group->all_reduce_sum(squares);
    return squares[0] > 0 ? 1.0 - squares[1] / squares[0] : 0.0;
  }
};

PpoTrainer::PpoTrainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PpoTrainer::~PpoTrainer() = default;

namespace {

// A digest of what must be the same on every rank for their training to be one run.
std::string run_digest(std::span<const EnvMember> members, std::uint64_t seed) {
  std::string run = std::to_string(seed);
  for (const EnvMember& m : members) {
    run += '|' + configs::to_json(m.config).dump() + '|' +
           (m.workload ? number_text(m.workload->requests()) + '|' + number_text(m.workload->span_s()) : "");
  }
  return std::to_string(std::hash<std::string>{}(run));
}

}  // namespace

Expected<std::unique_ptr<PpoTrainer>> PpoTrainer::create(const configs::ScenarioConfig& config,
                                                        const configs::Catalog& catalog, traces::SharedWorkload workload,
                                                        std::uint64_t seed, std::shared_ptr<RankGroup> group) {
  const EnvMember only{config, std::move(workload)};
  return create(std::span(&only, 1), catalog, seed, std::move(group));
}

Expected<std::unique_ptr<PpoTrainer>> PpoTrainer::create(std::span<const EnvMember> members,
                                                        const configs::Catalog& catalog, std::uint64_t seed,
                                                        std::shared_ptr<RankGroup> group) {
  if (members.empty()) return Error{"training needs at least one scenario"};
  if (!group) group = RankGroup::single();
  const configs::RlSpec rl = members.front().config.rl.value_or(configs::RlSpec{});
  const Status same = check_same_on_every_rank(*group, run_digest(members, seed), "config, trace or seed",
                                               "train the same run");
  if (!same) return same.error();
  const auto ranks = static_cast<std::size_t>(group->size());
  if (rl.ppo.num_envs % ranks != 0) {
    return Error{"rl.ppo.num_envs: " + std::to_string(rl.ppo.num_envs) + " environments do not split over " +
                 std::to_string(ranks) + " ranks; expected a multiple of the world size"};
  }
  const std::size_t per_rank = rl.ppo.num_envs / ranks;
  auto envs = VectorEnv::create(members, catalog,
                                {.num_envs = per_rank,
                                 .threads = rl.ppo.threads,
                                 .first_env = per_rank * static_cast<std::size_t>(group->rank())});
  if (!envs) return envs.error();
  // Small models on many tiny batches: LibTorch's intra-op pool only adds hand-offs. The
  // BLAS below it runs on the caller's thread too: OpenBLAS's threaded build would split
  // a product over as many threads as it finds cores, and so sum in another order on
  // another machine (or under mpirun's binding), where results must be the same bits.
  torch::set_num_threads(1);
  using SetThreads = void (*)(int);
  if (auto openblas = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) openblas(1);
  const std::int64_t choices = configs::chooses(rl.action) ? (*envs)->env(0).discrete_choices() : 0;
  const std::int64_t neutral = (*envs)->env(0).neutral_choice();
  auto impl = std::make_unique<Impl>(rl.ppo, rl.slo_target, seed, std::move(group), std::move(*envs), choices, neutral);
  for (const EnvMember& member : members) impl->specs.push_back(member.config.rl.value_or(configs::RlSpec{}));
  return std::unique_ptr<PpoTrainer>(new PpoTrainer(std::move(impl)));
}

std::uint32_t PpoTrainer::iterations() const { return impl_->iterations; }
std::uint32_t PpoTrainer::iteration() const { return impl_->iteration; }
VectorEnv& PpoTrainer::envs() { return *impl_->envs; }
const RankGroup& PpoTrainer::group() const { return *impl_->group; }
std::vector<float> PpoTrainer::weights() const { return impl_->weights(); }
void PpoTrainer::set_torch_rollout(bool torch_rollout) { impl_->torch_rollout = torch_rollout; }

IterationStats PpoTrainer::iterate() {
  MESHSIM_CHECK(!done(), "PpoTrainer::iterate: training is done");
  Impl& m = *impl_;
  const auto start = Clock::now();
  IterationStats stats = m.rollout();
  m.lagrange = next_lagrange(m.opt, m.slo_target, m.lagrange, stats);
  stats.rollout_seconds = seconds_since(start);
  const auto update_start = Clock::now();
  m.update(stats);
  stats.update_seconds = seconds_since(update_start);
  m.decisions += m.steps * m.n_all;
  ++m.iteration;
  stats.iteration = m.iteration;
  stats.decisions = m.decisions;
  stats.decisions_per_s = static_cast<double>(m.steps * m.n_all) / seconds_since(start);
  return stats;
}

Status PpoTrainer::save(const fs::path& dir) const {
  const Impl& m = *impl_;
  // Each environment's cursor, action generator and episode return, gathered from the ranks
  // in environment order.
  nlohmann::json mine = nlohmann::json::array();
  const std::vector<EnvCursor> cursors = m.envs->cursors();
  for (std::size_t i = 0; i < m.n; ++i) {
    mine.push_back(to_json(CheckpointEnv{cursors[i], m.action_rngs[i].state(), m.episode_returns[i]}));
  }
  const std::vector<std::string> ranks = m.group->all_gather(mine.dump());
  if (m.group->rank() != 0) return Ok{};
  CheckpointState state;
  state.seed = m.seed;
  state.iteration = m.iteration;
  state.iterations = m.iterations;
  state.decisions = m.decisions;
  state.policy = m.policy->shape();
  state.rl = m.specs.front();
  state.train_also_rl.assign(m.specs.begin() + 1, m.specs.end());
  state.normalize_observations = m.opt.normalize_observations;
  state.observation_clip = m.opt.observation_clip;
  state.observation_stats = m.exchange.observation_normalizer().stats();
  state.reward_returns = m.exchange.reward_scaler().returns();
  state.reward_stats = m.exchange.reward_scaler().stats();
  state.shuffle_rng = m.shuffle_rng.state();
  state.lagrange = m.lagrange;
  nlohmann::json document = to_json(state);  // its envs are the ranks' gathered ones
  for (const std::string& rank : ranks) {
    for (auto& env : nlohmann::json::parse(rank)) document["envs"].push_back(std::move(env));
  }

  // LibTorch's archives are made in memory: its file writer reports a failed write from
  // a destructor, which ends the process. Written by write_checkpoint, a full disk is an
  // error.
  std::ostringstream policy, optimizer;
  try {
    torch::save(m.policy, policy);
    torch::save(*m.adam, optimizer);
  } catch (const std::exception& e) {
    return Error{fresh_checkpoint(dir).string() + ": cannot write the checkpoint: " + torch_message(e)};
  }
  return write_checkpoint(dir, {{"policy.pt", policy.str()}, {"optimizer.pt", optimizer.str()}}, document.dump(1) + '\n');
}

Status PpoTrainer::load(const fs::path& dir) {
  Impl& m = *impl_;
  const std::string file = (dir / kCheckpointStateFile).string();
  auto read = read_checkpoint_state(dir / kCheckpointStateFile);
  if (!read) return read.error();
  CheckpointState& state = *read;
  ResumedRun run{m.seed, m.iterations, m.n_all, m.policy->shape(), m.specs,
                 static_cast<std::uint64_t>(m.steps) * m.n_all};
  if (const Status resumes = check_resumes(state, run, file); !resumes) return resumes;
  std::vector<const ScalingEnv*> envs;  // this rank's
  for (std::size_t i = 0; i < m.n; ++i) envs.push_back(&m.envs->env(i));
  auto cursors = resumed_cursors(state, envs, m.first, m.steps, file);
  if (!cursors) return cursors.error();
  try {
    torch::load(m.policy, (dir / "policy.pt").string());
    torch::load(*m.adam, (dir / "optimizer.pt").string());
  } catch (const std::exception& e) {  // LibTorch's errors
    return Error{dir.string() + ": not a readable checkpoint: " + torch_message(e)};
  }
  m.iteration = state.iteration;
  m.decisions = state.decisions;
  m.exchange.observation_normalizer().stats() = std::move(state.observation_stats);
  m.exchange.reward_scaler().restore(std::move(state.reward_returns), std::move(state.reward_stats));
  m.shuffle_rng = engine::Rng::from_state(state.shuffle_rng);
  m.lagrange = state.lagrange;
  for (std::size_t i = 0; i < m.n; ++i) {
    m.action_rngs[i] = engine::Rng::from_state(state.envs[m.first + i].action_rng);
    m.episode_returns[i] = state.envs[m.first + i].episode_return;
  }
  m.envs->restore(*cursors);
  m.obs = m.exchange.observe(false);  // the saved statistics already include the current observations
  return Ok{};
}

}  // namespace meshsim::rl
