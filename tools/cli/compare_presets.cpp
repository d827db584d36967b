#include "tools/cli/compare_presets.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>
#include <thread>

#include "configs/config_file.hpp"
#include "sim/run/scenario_run.hpp"
#include "configs/scheduler_args.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/runs/plot_script.hpp"
#include "tools/cli/presets_report.hpp"
#include "tools/runs/replay_to_end.hpp"
#include "tools/runs/run_outputs.hpp"
#include "sim/shared/shared_cluster.hpp"

namespace meshsim::cli {
namespace {

// One policy to run: a preset, or a user's policy file applied to the scenario's policy.
struct Candidate {
  std::string name;
  scheduler::PolicyUpdate update;
};

// Replays the scenario under one candidate into `folder` (a replay's run folder:
// summary.json, requests.csv, timeseries.csv); the outcome is read from the finished run.
PresetOutcome run_one(const configs::ScenarioConfig& base, const std::string& config_path,
                      const configs::Catalog& catalog, const Candidate& candidate, std::uint64_t seed,
                      const std::string& folder) {
  PresetOutcome o;
  o.name = candidate.name;
  o.seed = seed;
  configs::ScenarioConfig config = base;
  config.seed = seed;
  const auto applied = scheduler::update_policy(config.cluster.policy, candidate.update);
  if (!applied.result.success) {
    o.error = applied.result.error;
    return o;
  }
  std::error_code created;
  std::filesystem::create_directories(folder, created);
  o.unwritten = true;  // until the run starts, and again from its commit
  if (created) {
    o.error = folder + ": cannot create the run folder: " + created.message();
    return o;
  }
  std::ostringstream warnings;  // not printed: the comparison reports its table, as before
  RunFolderWriter writer(folder, config.replay, warnings, /*progress=*/false);
  if (auto status = writer.open_status(); !status) {
    o.error = status.error().message;
    return o;
  }
  o.unwritten = false;
  auto finished = replay_to_end(config, config_path, catalog, writer);
  if (!finished) {
    o.error = finished.error().message;
    return o;
  }
  if (auto status = writer.commit(finished->summary); !status) {
    o.error = status.error().message;
    o.unwritten = true;
    return o;
  }
  const run::ScenarioRun* run = finished->run.get();
  const replay::ReplayResult* result = &finished->result;
  const auto& metrics = run->replay().metrics();
  if (metrics.counts().judged() > 0) o.slo_attainment = metrics.slo_attainment();
  if (metrics.ttft().count > 0) o.ttft_p99_s = metrics.ttft().p99;
  for (std::size_t c = 0; c < metrics.classes().size(); ++c) {
    const metrics::ClassFigures& f = metrics.classes()[c];
    o.classes.emplace_back(config.replay.classes.at(c).name,
                           f.counts.judged() > 0 ? std::optional<double>(f.attainment()) : std::nullopt);
  }
  if (const auto* scaling = run->scaling()) {
    o.scale_ups = scaling->manager().view().counts().scale_ups;
    o.blocked = scaling->manager().view().counts().blocked;
  }
  const auto& shared = *run->shared();
  const auto& c = shared.batch().counts();
  o.jobs_completed = c.completed;
  o.jobs_queued = c.queued;
  o.preemptions = c.preemptions;
  const auto stats = shared.core().get_preemption_stats();
  o.same_pool = stats.same_pool_preemptions;
  o.cross_pool = stats.cross_pool_preemptions;
  o.label = stats.label_preemptions;
  o.preempted_by = shared.batch().preemptions_by_class();
  o.held_gpu_h = shared.batch().held_gpu_s(result->end_time) / 3600.0;
  o.useful_gpu_h = c.useful_gpu_s / 3600.0;
  o.lost_gpu_h = c.lost_gpu_s / 3600.0;
  o.lost_share = c.useful_gpu_s + c.lost_gpu_s > 0 ? c.lost_gpu_s / (c.useful_gpu_s + c.lost_gpu_s) : 0.0;
  const auto& latency = shared.core().metrics().task_schedule_latency_ms;
  o.schedule_p50_us = latency.quantile(0.5) * 1000.0;
  o.schedule_p99_us = latency.quantile(0.99) * 1000.0;
  return o;
}

Expected<Candidate> read_policy_file(const std::string& path) {
  auto tree = configs::read_config_file(path);
  if (!tree) return tree.error();
  configs::ConfigErrors errors(path);
  Candidate candidate{std::filesystem::path(path).stem().string(), {}};
  {
    configs::ObjectReader reader(&*tree, "", errors);
    reader.read("name", candidate.name);
    candidate.update = configs::read_policy_update(reader);
  }
  // The name is also the policy's run folder under --out.
  const auto safe = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  if (candidate.name.empty() || candidate.name.size() > 64 || candidate.name.front() == '.' ||
      !std::all_of(candidate.name.begin(), candidate.name.end(), safe)) {
    errors.add("name", "expected 1 to 64 letters, digits, '-', '_' or '.' (not first), as it names the policy's run "
                       "folder, got '" + candidate.name + "'");
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return candidate;
}

// The presets and policy files to compare, each checked against the scenario's pools.
Expected<std::vector<Candidate>> read_candidates(const ComparePresetsOptions& options,
                                                 const configs::ScenarioConfig& config) {
  std::vector<Candidate> candidates;
  for (const auto& preset : options.presets) {
    if (!scheduler::parse_aggressiveness(preset)) {
      return Error{"--presets: '" + preset + "' is not a preset (" + scheduler::accepted_aggressiveness_names() + ")"};
    }
    Candidate candidate{preset, {}};
    candidate.update.preemption_aggressiveness = preset;
    candidates.push_back(std::move(candidate));
  }
  for (const auto& path : options.policy_files) {
    auto candidate = read_policy_file(path);
    if (!candidate) return candidate.error();
    candidates.push_back(std::move(*candidate));
  }
  if (candidates.empty()) return Error{"nothing to compare: give --presets or --policy"};
  for (const auto& candidate : candidates) {
    scheduler::PreemptionPolicy policy = config.cluster.policy;
    const auto applied = scheduler::update_policy(policy, candidate.update);
    if (!applied.result.success) return Error{candidate.name + ": " + applied.result.error};
    if (const auto problem = configs::unknown_protected_pool(config.cluster, policy)) {
      return Error{candidate.name + ": protected_pools: " + *problem};
    }
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (candidates[i].name == candidates[j].name) {
        return Error{"two policies are named '" + candidates[i].name + "': each needs its own run folder"};
      }
    }
  }
  return candidates;
}

}  // namespace

int run_compare_presets_command(const ComparePresetsOptions& options, std::ostream& out, std::ostream& err) {
  const auto fail = [&](const std::string& message, int code) {
    err << "error: " << message << '\n';
    return code;
  };
  const std::string config_path = options.config_path.empty()
                                      ? configs::default_catalog_folder() + "/scenarios/shared-cluster-synthetic.json"
                                      : options.config_path;
  auto loaded = load_scenario_for_command(config_path, {.sets = options.sets});
  if (!loaded) return fail(loaded.error().message, kExitBadInput);
  configs::ScenarioConfig config = *loaded;
  if (config.cluster.mode != configs::ClusterMode::kFixed) {
    return fail(config_path + ": compare-presets needs a shared cluster (cluster.mode: fixed, with batch jobs)",
                kExitBadInput);
  }
  if (options.seed) {
    const auto seed = parse_seed(*options.seed);
    if (!seed) return fail("--seed: expected an integer in [0, 2^64), got '" + *options.seed + "'", kExitBadInput);
    config.seed = *seed;
  }
  if (options.seeds < 1 || options.seeds > 1000) {
    return fail("--seeds: expected a number of seeds in [1, 1000], got " + std::to_string(options.seeds),
                kExitBadInput);
  }
  if (config.seed > std::numeric_limits<std::uint64_t>::max() - (options.seeds - 1)) {
    return fail("--seeds: seed " + std::to_string(config.seed) + " and the " + std::to_string(options.seeds - 1) +
                    " after it pass 2^64",
                kExitBadInput);
  }
  if (options.until_s) {
    const auto until = engine::SimTime::from_seconds_checked(*options.until_s);
    if (!until || *until < engine::SimTime::zero()) {
      return fail("--until: expected a number of seconds in [0, 1e12], got " + number_text(*options.until_s),
                  kExitBadInput);
    }
    config.replay.until = *until;
  }
  auto read = read_candidates(options, config);
  if (!read) return fail(read.error().message, kExitBadInput);
  const std::vector<Candidate>& candidates = *read;
  auto catalog = configs::load_scenario_catalog(config);  // with the config's own catalog
  if (!catalog) return fail(catalog.error().message, kExitBadInput);
  // Taken before the runs, so a second command on this folder is refused at once.
  auto lock = FolderLock::acquire(options.out_dir, "meshsim compare-presets");
  if (!lock) return fail(lock.error().message, kExitOutputError);

  // Each run (a policy under a seed) is its own simulation; threads take the next run as
  // they finish. Runs are ordered policy by policy, seeds in order within each.
  const std::size_t runs = candidates.size() * options.seeds;
  const auto run_folder = [&](std::size_t i) {
    const std::string policy = options.out_dir + "/" + candidates[i / options.seeds].name;
    return options.seeds == 1 ? policy : policy + "/seed-" + std::to_string(config.seed + i % options.seeds);
  };
  std::vector<PresetOutcome> outcomes(runs);
  std::atomic<std::size_t> next{0};
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads != 0 ? options.threads
                                                                                 : std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(runs)));
  const auto wall_start = std::chrono::steady_clock::now();
  const auto work = [&] {
    for (std::size_t i = next++; i < runs; i = next++) {
      outcomes[i] = run_one(config, config_path, *catalog, candidates[i / options.seeds],
                            config.seed + i % options.seeds, run_folder(i));
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (const auto& o : outcomes) {
    if (!o.error.empty()) return fail(o.name + ": " + o.error, o.unwritten ? kExitOutputError : kExitBadInput);
  }

  const std::string csv_path = options.out_dir + "/presets.csv";
  const std::string by_class_path = options.out_dir + "/preemptions.csv";
  AtomicFile csv(csv_path), by_class(by_class_path);
  write_presets_csv(csv.stream(), outcomes);
  write_preemptions_csv(by_class.stream(), outcomes);
  for (auto* file : {&csv, &by_class}) {
    if (auto status = file->commit(); !status) return fail(status.error().message, kExitOutputError);
  }
  if (!config.replay.classes.empty()) {  // classes of service: each one's SLO per run
    AtomicFile classes(options.out_dir + "/classes.csv");
    write_classes_csv(classes.stream(), outcomes);
    if (auto status = classes.commit(); !status) return fail(status.error().message, kExitOutputError);
  }

  out << "meshsim compare-presets: " << config.name << " (seed " << config.seed;
  if (options.seeds > 1) out << " to " << config.seed + options.seeds - 1;
  out << "), " << candidates.size() << " policies" << (options.seeds > 1 ? " x " + std::to_string(options.seeds) + " seeds" : "")
      << " on " << threads << " threads in " << number_text(std::round(wall_s * 100) / 100) << " s\n";
  print_presets_table(out, outcomes, options.seeds);
  out << "each policy's run (summary.json, requests.csv, timeseries.csv) is in " << options.out_dir
      << (options.seeds == 1 ? "/<policy>/\n" : "/<policy>/seed-<seed>/\n");
  out << "outputs       " << csv_path << ", " << by_class_path;
  const std::string png = options.out_dir + "/presets.png";
  const auto drawn = options.plot ? draw_plot("plot_presets.py", {csv_path}, png, err) : Expected<bool>(false);
  out << (drawn && *drawn ? ", " + png : "") << '\n';
  return drawn ? kExitOk : fail(drawn.error().message, kExitOutputError);
}

}  // namespace meshsim::cli
