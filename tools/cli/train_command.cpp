#include "tools/cli/train_command.hpp"

#include "sim/engine/number_text.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "configs/scenario_config.hpp"
#include "configs/config_file.hpp"
#include "rl/ppo/checkpoint_folder.hpp"
#include "rl/ppo/trainer.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/checkpoint_selection.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/cli/metrics_server.hpp"
#include "tools/runs/plot_script.hpp"
#include "tools/runs/run_inputs.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kCurveHeader =
    "iteration,decisions,learning_rate,mean_reward,episodes,mean_episode_return,slo_attainment,mean_instances,"
    "scaling_actions_per_decision,policy_loss,value_loss,entropy,approx_kl,clip_fraction,explained_variance,lagrange,"
    "decisions_per_s,rollout_s,update_s";

std::string curve_row(const rl::IterationStats& s) {
  char line[640];
  std::snprintf(line, sizeof line,
                "%" PRIu32 ",%" PRIu64 ",%.9g,%.9g,%" PRIu32 ",%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.1f,"
                "%.4f,%.4f",
                s.iteration, s.decisions, s.learning_rate, s.mean_reward, s.episodes, s.mean_episode_return,
                s.slo_attainment, s.mean_instances, s.scaling_actions, s.policy_loss, s.value_loss, s.entropy,
                s.approx_kl, s.clip_fraction, s.explained_variance, s.lagrange, s.decisions_per_s, s.rollout_seconds,
                s.update_seconds);
  return line;
}

// The learning curve's rows up to `iterations`, checked (a resumed run drops the rows
// written after its checkpoint: they are about to be trained again, identically).
Expected<std::string> curve_rows_to_keep(const fs::path& csv, std::uint32_t iterations) {
  std::ifstream in(csv);
  if (!in) return Error{csv.string() + ": cannot read the learning curve to resume it"};
  std::string line, kept;
  std::getline(in, line);
  if (line != kCurveHeader) return Error{csv.string() + ": not a learning curve of this meshsim (header differs)"};
  kept = line + '\n';
  // Every iteration the checkpoint has trained has its row, in order, with every column:
  // the resumed curve continues them as they are.
  const auto columns = std::count(line.begin(), line.end(), ',');
  for (std::uint32_t i = 1; i <= iterations; ++i) {
    const std::string where = csv.string() + ":" + std::to_string(i + 1) + ": ";
    if (!std::getline(in, line)) {
      return Error{where + "expected iteration " + std::to_string(i) + "'s row (the checkpoint is after iteration " +
                   std::to_string(iterations) + "): remove the folder to train again"};
    }
    if (line.substr(0, line.find(',')) != std::to_string(i) || std::count(line.begin(), line.end(), ',') != columns) {
      return Error{where + "expected iteration " + std::to_string(i) + "'s row with " + std::to_string(columns + 1) +
                   " columns: remove the folder to train again"};
    }
    kept += line + '\n';
  }
  return kept;
}

std::string progress_line(const rl::IterationStats& s, std::uint32_t iterations) {
  char line[256];
  std::snprintf(line, sizeof line,
                "iteration %" PRIu32 "/%" PRIu32 "  decisions %" PRIu64 "  %.0f/s  reward %.4f  SLO %s  "
                "instances %.2f  ",
                s.iteration, iterations, s.decisions, s.decisions_per_s, s.mean_reward,
                percent_text(s.slo_attainment).c_str(),
                s.mean_instances);
  char episodes[96];
  if (s.episodes == 0) {  // a return of 0 would read as a result
    std::snprintf(episodes, sizeof episodes, "episode return - (no episode ended)");
  } else {
    std::snprintf(episodes, sizeof episodes, "episode return %.2f (%" PRIu32 " episodes)", s.mean_episode_return,
                  s.episodes);
  }
  return std::string(line) + episodes;
}

// What --metrics-port publishes after each iteration: progress and the learning curve's
// latest figures.
std::string train_metrics(const rl::IterationStats& s, std::uint32_t iterations, double wall_s) {
  std::string text;
  const auto gauge = [&](const char* name, const char* help, double value) {
    append_metric(text, name, "gauge", help, value);
  };
  gauge("meshsim_train_iteration", "PPO iterations done", s.iteration);
  gauge("meshsim_train_iterations", "PPO iterations of the run", iterations);
  gauge("meshsim_train_progress", "Fraction of the run's iterations done",
        iterations > 0 ? static_cast<double>(s.iteration) / iterations : 1.0);
  append_metric(text, "meshsim_train_decisions_total", "counter", "Decisions taken over all environments",
                static_cast<double>(s.decisions));
  gauge("meshsim_train_decisions_per_second", "Decisions per wall second in the last iteration", s.decisions_per_s);
  gauge("meshsim_train_mean_reward", "Mean raw reward per decision in the last rollout", s.mean_reward);
  gauge("meshsim_train_mean_episode_return", "Mean return of the episodes that ended in the last rollout",
        s.mean_episode_return);
  gauge("meshsim_train_slo_attainment", "SLO attainment of the requests that left in the last rollout",
        s.slo_attainment);
  gauge("meshsim_train_mean_instances", "Mean instances per environment in the last rollout", s.mean_instances);
  gauge("meshsim_train_policy_loss", "Mean policy loss of the last update", s.policy_loss);
  gauge("meshsim_train_value_loss", "Mean value loss of the last update", s.value_loss);
  gauge("meshsim_train_entropy", "Mean entropy of the last update", s.entropy);
  gauge("meshsim_train_approx_kl", "Mean approximate KL of the last update", s.approx_kl);
  gauge("meshsim_train_explained_variance", "Explained variance of the last update", s.explained_variance);
  gauge("meshsim_wall_seconds", "Wall-clock time since training started", wall_s);
  return text;
}

// The ranks of this run: the options', else mpirun's (Open MPI's or MPICH's environment),
// else one.
rl::RankGroupOptions rank_group_options(const TrainCommandOptions& options) {
  rl::RankGroupOptions group{.store = options.store, .timeout_s = options.timeout_s};
  const auto from_env = [](std::initializer_list<const char*> names) -> std::optional<int> {
    for (const char* name : names) {
      if (const char* value = std::getenv(name)) return std::atoi(value);
    }
    return std::nullopt;
  };
  group.world_size = options.world_size.value_or(from_env({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}).value_or(1));
  group.rank = options.rank.value_or(from_env({"OMPI_COMM_WORLD_RANK", "PMI_RANK"}).value_or(0));
  return group;
}

// A step that can fail on one rank alone (code kExitOk: it did not).
struct StepFailure {
  std::string message;
  int code = kExitOk;
};

// kExitOk when every rank passed the step; else this rank's failure, or the news that
// another rank failed, so no rank is left waiting for one that stopped.
int all_passed(rl::RankGroup& group, const StepFailure& mine, std::ostream& err) {
  int failed = -1;
  if (group.all_ok(mine.code == kExitOk, &failed)) return kExitOk;
  if (mine.code != kExitOk) return fail(err, mine.message, mine.code);
  return fail(err, "rank " + std::to_string(failed) + " could not start (its own messages say why)", kExitBadInput);
}

// The resolved config as it shapes results: without the threads, which change only speed.
nlohmann::json results_config(nlohmann::json config) {
  if (config.contains("rl") && config["rl"].contains("ppo")) config["rl"]["ppo"].erase("threads");
  return config;
}

// The output folder of a new run (config.json, inputs.json, the curve's header); on
// --resume, the check that it was started with the same inputs.
StepFailure prepare_folder(const TrainCommandOptions& options, const std::vector<rl::EnvMember>& members,
                           const fs::path& dir, const fs::path& csv) {
  const configs::ScenarioConfig& config = members.front().config;
  std::error_code mkdir_error;
  fs::create_directories(dir, mkdir_error);
  if (mkdir_error) return {options.out_dir + ": " + mkdir_error.message(), kExitOutputError};
  std::vector<const configs::ScenarioConfig*> configs;
  for (const rl::EnvMember& member : members) configs.push_back(&member.config);
  auto digests = input_digests(configs);
  // The other recipes as resolved: a resumed run must train on the same ones.
  if (digests && members.size() > 1) {
    for (const rl::EnvMember& member : members) {
      if (&member != &members.front()) (*digests)["train_also"].push_back(configs::to_json(member.config));
    }
  }
  if (!digests) return {digests.error().message, kExitBadInput};
  if (options.resume) {  // config.json and inputs.json hold what the run was started with
    auto recorded_config = configs::read_config_file((dir / "config.json").string());
    if (!recorded_config) return {recorded_config.error().message, kExitBadInput};
    auto recorded_digests = configs::read_config_file((dir / "inputs.json").string());
    if (!recorded_digests) return {recorded_digests.error().message, kExitBadInput};
    const nlohmann::json recorded{{"config", results_config(*recorded_config)}, {"inputs", *recorded_digests}};
    const nlohmann::json now{{"config", results_config(configs::to_json(config))}, {"inputs", *digests}};
    if (const Status same = same_inputs(recorded, now, options.out_dir); !same) {
      return {same.error().message, kExitBadInput};
    }
    return {};
  }
  AtomicFile resolved((dir / "config.json").string());
  resolved.stream() << configs::to_json(config).dump(2) << '\n';
  AtomicFile inputs((dir / "inputs.json").string());
  inputs.stream() << digests->dump(2) << '\n';
  AtomicFile header(csv.string());
  header.stream() << kCurveHeader << '\n';
  for (AtomicFile* file : {&resolved, &inputs, &header}) {
    if (const Status written = file->commit(); !written) return {written.error().message, kExitOutputError};
  }
  return {};
}

// The recipe and its rl.train_also recipes, each with its workload: the scenarios the
// training's environments play (rl/env/vector_env.hpp).
Expected<std::vector<rl::EnvMember>> load_members(const configs::ScenarioConfig& config,
                                                  const TrainCommandOptions& options) {
  std::vector<rl::EnvMember> members{{config, nullptr}};
  for (const std::string& path : config.rl->train_also) {
    if (options.trace) {
      return Error{"--trace replaces one workload, and rl.train_also trains on several: leave one out"};
    }
    auto other = load_scenario_for_command(path, {.trace_format = options.trace_format, .catalog = options.catalog});
    if (!other) return Error{"rl.train_also: " + other.error().message};
    if (!other->rl) return Error{"rl.train_also: " + path + ": expected a recipe (a scenario with an rl object)"};
    if (!other->rl->train_also.empty()) {
      return Error{"rl.train_also: " + path + ": lists rl.train_also itself; expected a plain recipe"};
    }
    members.push_back({*other, nullptr});
  }
  for (rl::EnvMember& member : members) {
    auto workload = traces::open_episode_workload(member.config.workload, member.config.seed);
    if (!workload) return workload.error();
    member.workload = *workload;
  }
  return members;
}

// The recipe a training runs: the config file (or the default) with the command line's
// overrides applied and checked. Errors name the option.
Expected<configs::ScenarioConfig> train_config(const TrainCommandOptions& options, const std::string& config_path,
                                               std::ostream& err) {
  // --seed is the training's (rl.ppo.seed): the scenario's seed, which draws a synthetic
  // workload, stays the recipe's, so every seed trains and is judged on the same load.
  auto loaded = load_scenario_for_command(
      config_path, {options.trace, options.trace_format, std::nullopt, options.sets, options.catalog});
  if (!loaded) return loaded.error();
  configs::ScenarioConfig config = std::move(*loaded);
  if (!config.rl) config.rl = configs::RlSpec{};
  if (options.seed) {
    const auto seed = parse_seed(*options.seed);
    if (!seed) return Error{"--seed: expected an integer in [0, 2^64), got '" + *options.seed + "'"};
    config.rl->ppo.seed = *seed;
  }
  if (options.trace && (config.rl->windows_to_s || !config.rl->validation.empty() || !config.rl->test.empty())) {
    // The config's windows and held-out spans were chosen for its own workload; on
    // another trace, windows cover all of it.
    err << "note: --trace: training windows over the whole trace, no validation or test spans (the config's are for "
           "its own workload)\n";
    config.rl->windows_to_s.reset();
    config.rl->validation.clear();
    config.rl->test.clear();
  }
  if (options.total_decisions) {
    if (*options.total_decisions == 0) return Error{"--total-decisions: expected at least 1"};
    config.rl->ppo.total_decisions = *options.total_decisions;
  }
  if (options.threads) config.rl->ppo.threads = *options.threads;
  const int ranks = rank_group_options(options).world_size;
  if (ranks > 1 && static_cast<std::uint32_t>(ranks) > config.rl->ppo.num_envs) {
    // Refused before meeting: every rank needs an environment, and waiting for ranks that
    // cannot train would take the timeout once per rank.
    return Error{"--world-size " + std::to_string(ranks) + ": more ranks than rl.ppo.num_envs (" +
                 std::to_string(config.rl->ppo.num_envs) + "); every rank steps at least one environment"};
  }
  return config;
}

// Rank 0 takes the output folder for the whole run (`lock`): a fresh run refuses one
// holding an earlier training, a resumed one first puts an interrupted checkpoint's newest
// complete copy back in place.
StepFailure claim_folder(const TrainCommandOptions& options, const fs::path& dir, std::optional<FolderLock>& lock) {
  auto locked = FolderLock::acquire(options.out_dir, "meshsim train");
  if (!locked) return {locked.error().message, kExitOutputError};
  lock.emplace(std::move(*locked));
  const fs::path checkpoint = dir / "checkpoint";
  const auto present = [](const fs::path& path) { return configs::path_kind(path) != configs::PathKind::kMissing; };
  const bool earlier =
      present(dir / "learning_curve.csv") || present(checkpoint) || present(rl::fresh_checkpoint(checkpoint));
  if (!options.resume && earlier) {
    return {options.out_dir + " holds an earlier training run: pass --resume to continue it, or another --out",
            kExitOutputError};
  }
  for (const fs::path& folder : {checkpoint, dir / "best"}) {
    if (!options.resume) break;
    if (const Status recovered = rl::recover_checkpoint(folder); !recovered) {
      return {recovered.error().message, kExitOutputError};
    }
  }
  return {};
}

// Rank 0's watchers of a training: the selector that plays each checkpoint on the
// recipes' validation spans and keeps the best (its baselines on the console), and the
// metrics endpoint when asked for.
StepFailure open_watchers(const TrainCommandOptions& options, const std::vector<rl::EnvMember>& members,
                          const configs::Catalog& catalog, const rl::PpoTrainer& ppo,
                          std::unique_ptr<CheckpointSelector>& selector, std::unique_ptr<MetricsServer>& server,
                          std::ostream& out, std::ostream& err) {
  auto selecting = CheckpointSelector::create(members, catalog, options.out_dir, options.resume ? ppo.iteration() : 0);
  if (!selecting) return {selecting.error().message, kExitBadInput};
  selector = std::move(*selecting);
  if (selector && !options.quiet) out << selector->baseline_summary() << '\n';
  if (!options.metrics_listen) return {};
  auto serving = MetricsServer::start(*options.metrics_listen);
  if (!serving) return {serving.error().message, kExitBadInput};
  server = std::move(*serving);
  err << "metrics at " << server->url() << '\n';
  return {};
}

// The console's account of a finished invocation: decisions trained and their speed, what
// is left, the outputs (and the learning curve's plot when asked for).
Status print_train_report(const TrainCommandOptions& options, const rl::PpoTrainer& ppo, std::uint64_t decisions,
                        double seconds, std::uint32_t stop, bool validated, std::ostream& out, std::ostream& err) {
  const fs::path dir(options.out_dir);
  const fs::path csv = dir / "learning_curve.csv";
  if (!options.quiet) {
    char line[160];
    std::snprintf(line, sizeof line, "trained %" PRIu64 " decisions in %.1f s (%.0f decisions/s, updates included)\n",
                  decisions, seconds, seconds > 0 ? static_cast<double>(decisions) / seconds : 0.0);
    out << line;
    if (!ppo.done()) out << "stopped after iteration " << stop << " of " << ppo.iterations() << ": continue with --resume\n";
    out << "outputs       " << csv.string() << ", " << (dir / "checkpoint").string();
    if (validated) out << ", " << (dir / "validation.csv").string() << ", " << (dir / "best").string();
  }
  const std::string png = (dir / "learning_curve.png").string();
  const auto drawn =
      options.plot ? draw_plot("plot_learning_curve.py", {csv.string()}, png, err) : Expected<bool>(false);
  if (!options.quiet) out << (drawn && *drawn ? ", " + png : "") << '\n';
  if (!drawn) return drawn.error();
  return Ok{};
}

// --resume: the checkpoint loaded into `ppo` (when there is one), and on rank 0 the learning
// curve cut back to the rows it had trained.
StepFailure resume_from(const TrainCommandOptions& options, rl::PpoTrainer& ppo, bool from_checkpoint, bool lead,
                        const fs::path& csv, std::ostream& err) {
  if (!from_checkpoint && lead) {
    err << "note: --resume: " << options.out_dir
        << " was stopped before its first checkpoint: training restarts from iteration 0\n";
  }
  const Status loaded_checkpoint = from_checkpoint ? ppo.load(fs::path(options.out_dir) / "checkpoint") : Status(Ok{});
  if (!loaded_checkpoint) return {loaded_checkpoint.error().message, kExitBadInput};
  if (!lead) return {};
  auto kept = from_checkpoint ? curve_rows_to_keep(csv, ppo.iteration())
                              : Expected<std::string>(std::string(kCurveHeader) + '\n');
  if (!kept) return {kept.error().message, kExitBadInput};
  AtomicFile rewritten(csv.string());
  rewritten.stream() << *kept;
  if (const Status written = rewritten.commit(); !written) return {written.error().message, kExitOutputError};
  return {};
}

// What is trained, on how many environments, ranks and threads.
std::string training_banner(const configs::ScenarioConfig& config, const rl::RankGroup& group, rl::PpoTrainer& ppo,
                            bool resumed) {
  std::ostringstream out;
  out << "training " << config.name << ": " << config.rl->ppo.num_envs << " environments";
  if (group.size() > 1) out << " over " << group.size() << " ranks (" << ppo.envs().num_envs() << " each)";
  out << " on " << ppo.envs().threads() << " threads" << (group.size() > 1 ? " per rank, " : ", ") << ppo.iterations()
      << " iterations" << (resumed ? " (resumed after " + std::to_string(ppo.iteration()) + ")" : std::string());
  return out.str();
}

}  // namespace

int run_train_command(const TrainCommandOptions& options, std::ostream& out, std::ostream& err) {
  const std::string config_path =
      options.config_path.empty() ? configs::default_training_path() : options.config_path;
  auto loaded = train_config(options, config_path, err);
  if (!loaded) return fail(err, loaded.error().message, kExitBadInput);
  const configs::ScenarioConfig& config = *loaded;

  auto connected = rl::RankGroup::connect(rank_group_options(options));
  if (!connected) return fail(err, connected.error().message, kExitBadInput);
  rl::RankGroup& group = **connected;
  const bool lead = group.rank() == 0;  // rank 0 owns the output folder and the console
  const bool quiet = options.quiet || !lead;

  const fs::path dir(options.out_dir);
  const fs::path csv = dir / "learning_curve.csv", checkpoint = dir / "checkpoint";
  std::optional<FolderLock> lock;  // rank 0 holds the folder for the whole run
  StepFailure refused;
  if (lead) refused = claim_folder(options, dir, lock);
  if (const int code = all_passed(group, refused, err); code != kExitOk) return code;
  // A training stopped before its first checkpoint (its config.json written, no
  // checkpoint yet) resumes from iteration 0: nothing it trained was kept.
  const bool from_checkpoint = options.resume && rl::complete_checkpoint(checkpoint);  // every rank reads it
  if (options.resume && !from_checkpoint && configs::path_kind(dir / "config.json") == configs::PathKind::kMissing) {
    refused = {"--resume: " + options.out_dir + " holds no training to resume (no config.json, no checkpoint)",
               kExitBadInput};
  }
  if (const int code = all_passed(group, refused, err); code != kExitOk) return code;

  auto catalog = configs::load_scenario_catalog(config);
  StepFailure loading;
  std::vector<rl::EnvMember> members;
  if (!catalog) loading = {catalog.error().message, kExitBadInput};
  if (!loading.code) {
    auto loaded_members = load_members(config, options);
    if (loaded_members) {
      members = std::move(*loaded_members);
    } else {
      loading = {loaded_members.error().message, kExitBadInput};
    }
  }
  if (const int code = all_passed(group, loading, err); code != kExitOk) return code;
  auto trainer = rl::PpoTrainer::create(members, *catalog, config.rl->ppo.seed.value_or(config.seed), *connected);
  if (!trainer) return fail(err, trainer.error().message, kExitBadInput);  // the same verdict on every rank
  rl::PpoTrainer& ppo = **trainer;

  StepFailure started;
  if (lead) started = prepare_folder(options, members, dir, csv);
  if (!started.code && options.resume) started = resume_from(options, ppo, from_checkpoint, lead, csv, err);
  std::unique_ptr<CheckpointSelector> selector;
  std::unique_ptr<MetricsServer> server;
  if (lead && !started.code) started = open_watchers(options, members, *catalog, ppo, selector, server, out, err);
  if (const int code = all_passed(group, started, err); code != kExitOk) return code;
  if (!quiet) out << training_banner(config, group, ppo, options.resume) << '\n';

  // Rows are appended and flushed as they come, so an interrupted run keeps its curve.
  std::ofstream curve;
  if (lead) curve.open(csv, std::ios::app);
  const std::uint32_t every = config.rl->ppo.checkpoint_every;
  using Clock = std::chrono::steady_clock;
  auto last_print = Clock::now() - std::chrono::seconds(2);
  const auto start = Clock::now();
  const std::uint32_t first = ppo.iteration();
  const std::uint32_t stop = options.max_iterations ? std::min(ppo.iterations(), first + *options.max_iterations)
                                                    : ppo.iterations();
  if (server) {
    rl::IterationStats none;  // nothing trained yet in this invocation
    none.iteration = first;
    server->publish(train_metrics(none, ppo.iterations(), 0.0));
  }
  const auto validate = [&](std::uint32_t iteration) {
    if (!selector) return kExitOk;
    auto row = selector->consider(checkpoint, iteration);
    if (!row) return fail(err, row.error().message, kExitOutputError);
    if (!quiet) out << *row << '\n' << std::flush;
    return kExitOk;
  };
  // A run stopped while validating its last checkpoint resumes by validating it, as an
  // uninterrupted run did.
  if (options.resume && first > 0 && selector && !selector->validated(first)) {
    if (const int code = validate(first); code != kExitOk) return code;
  }
  try {  // the ranks' collectives throw when another rank is lost
    while (ppo.iteration() < stop) {
      const rl::IterationStats stats = ppo.iterate();
      if (server) {
        server->publish(train_metrics(stats, ppo.iterations(),
                                      std::chrono::duration<double>(Clock::now() - start).count()));
      }
      if (lead) {
        curve << curve_row(stats) << '\n' << std::flush;
        if (!curve) return fail(err, csv.string() + ": write failed", kExitOutputError);
      }
      if (!quiet && (Clock::now() - last_print >= std::chrono::seconds(1) || stats.iteration == stop)) {
        out << progress_line(stats, ppo.iterations()) << '\n' << std::flush;
        last_print = Clock::now();
      }
      if (every > 0 && stats.iteration % every == 0 && stats.iteration < stop) {
        if (const Status saved = ppo.save(checkpoint); !saved) return fail(err, saved.error().message, kExitOutputError);
        if (const int code = validate(stats.iteration); code != kExitOk) return code;
      }
    }
    if (const Status saved = ppo.save(checkpoint); !saved) return fail(err, saved.error().message, kExitOutputError);
    if (const int code = validate(stop); code != kExitOk) return code;
  } catch (const std::exception& e) {
    return fail(err, e.what(), kExitOutputError);
  }
  if (!lead) return kExitOk;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t decisions =
      static_cast<std::uint64_t>(stop - first) * config.rl->ppo.num_envs * config.rl->ppo.rollout_steps;
  if (const Status reported = print_train_report(options, ppo, decisions, seconds, stop, selector != nullptr, out, err);
      !reported) {
    return fail(err, reported.error().message, kExitOutputError);
  }
  return kExitOk;
}

}  // namespace meshsim::cli
