#include "tools/cli/compare_presets.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <thread>

#include "configs/config_file.hpp"
#include "sim/run/scenario_run.hpp"
#include "configs/scheduler_args.hpp"
#include "sim/engine/number_text.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/folder_lock.hpp"
#include "tools/cli/plot_script.hpp"

namespace meshsim::cli {
namespace {

// One policy to run: a preset, or a user's policy file applied to the scenario's policy.
struct Candidate {
  std::string name;
  scheduler::PolicyUpdate update;
};

// What the comparison reports of one run.
struct Outcome {
  std::string name;
  std::string error;  // the run failed: nothing else is set
  double slo_attainment = 0, ttft_p99_s = 0;
  std::uint64_t scale_ups = 0, blocked = 0;
  std::uint64_t jobs_completed = 0, jobs_queued = 0, preemptions = 0;
  std::uint64_t same_pool = 0, cross_pool = 0, label = 0;
  double held_gpu_h = 0, useful_gpu_h = 0, lost_gpu_h = 0, lost_share = 0;
  // Wall-clock, so not part of what must repeat exactly.
  double schedule_p50_us = 0, schedule_p99_us = 0;
};

// Replays without writing anything: the outcome is read from the finished run.
class NullObserver final : public replay::ReplayObserver {};

Outcome run_one(const configs::ScenarioConfig& base, const std::string& config_path, const configs::Catalog& catalog,
                const Candidate& candidate) {
  Outcome o;
  o.name = candidate.name;
  configs::ScenarioConfig config = base;
  const auto applied = scheduler::update_policy(config.cluster.policy, candidate.update);
  if (!applied.result.success) {
    o.error = applied.result.error;
    return o;
  }
  NullObserver observer;
  auto run = run::ScenarioRun::create(config, config_path, catalog, observer);
  if (!run) {
    o.error = run.error().message;
    return o;
  }
  (*run)->start();
  (*run)->advance_until(config.replay.until.value_or(engine::SimTime::max()));
  const auto result = (*run)->finish();
  if (!result) {
    o.error = result.error().message;
    return o;
  }
  const auto& metrics = (*run)->replay().metrics();
  o.slo_attainment = metrics.slo_attainment();
  o.ttft_p99_s = metrics.ttft().p99;
  if (const auto* scaling = (*run)->scaling()) {
    o.scale_ups = scaling->manager().counts().scale_ups;
    o.blocked = scaling->manager().counts().blocked;
  }
  const auto& shared = *(*run)->shared();
  const auto& c = shared.batch().counts();
  o.jobs_completed = c.completed;
  o.jobs_queued = c.queued;
  o.preemptions = c.preemptions;
  const auto stats = shared.core().get_preemption_stats();
  o.same_pool = stats.same_pool_preemptions;
  o.cross_pool = stats.cross_pool_preemptions;
  o.label = stats.label_preemptions;
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
  if (!errors.empty()) return Error{errors.to_string()};
  return candidate;
}

std::string csv_row(const Outcome& o) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%s,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%.6f,%.6f,%.6f,%.6f,%.3f,%.3f\n",
                o.name.c_str(), o.slo_attainment, o.ttft_p99_s, o.scale_ups, o.blocked, o.jobs_completed,
                o.jobs_queued, o.preemptions, o.same_pool, o.cross_pool, o.label, o.held_gpu_h, o.useful_gpu_h,
                o.lost_gpu_h, o.lost_share, o.schedule_p50_us, o.schedule_p99_us);
  return line;
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
  auto loaded = configs::load_scenario(config_path);
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
  if (options.until_s) {
    const auto until = engine::SimTime::from_seconds_checked(*options.until_s);
    if (!until || *until < engine::SimTime::zero()) {
      return fail("--until: expected a number of seconds in [0, 1e12], got " + number_text(*options.until_s),
                  kExitBadInput);
    }
    config.replay.until = *until;
  }
  std::vector<Candidate> candidates;
  for (const auto& preset : options.presets) {
    if (!scheduler::parse_aggressiveness(preset)) {
      return fail("--presets: '" + preset + "' is not a preset (" + scheduler::accepted_aggressiveness_names() + ")",
                  kExitBadInput);
    }
    Candidate candidate{preset, {}};
    candidate.update.preemption_aggressiveness = preset;
    candidates.push_back(std::move(candidate));
  }
  for (const auto& path : options.policy_files) {
    auto candidate = read_policy_file(path);
    if (!candidate) return fail(candidate.error().message, kExitBadInput);
    candidates.push_back(std::move(*candidate));
  }
  if (candidates.empty()) return fail("nothing to compare: give --presets or --policy", kExitBadInput);
  auto catalog = configs::load_scenario_catalog(config);  // with the config's own catalog
  if (!catalog) return fail(catalog.error().message, kExitBadInput);
  // Taken before the runs, so a second command on this folder is refused at once.
  auto lock = FolderLock::acquire(options.out_dir, "meshsim compare-presets");
  if (!lock) return fail(lock.error().message, kExitOutputError);

  // Each run is its own simulation; threads take the next candidate as they finish.
  std::vector<Outcome> outcomes(candidates.size());
  std::atomic<std::size_t> next{0};
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads != 0 ? options.threads
                                                                                 : std::thread::hardware_concurrency(),
                                                           static_cast<unsigned>(candidates.size())));
  const auto wall_start = std::chrono::steady_clock::now();
  const auto work = [&] {
    for (std::size_t i = next++; i < candidates.size(); i = next++) {
      outcomes[i] = run_one(config, config_path, *catalog, candidates[i]);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  for (const auto& o : outcomes) {
    if (!o.error.empty()) return fail(o.name + ": " + o.error, kExitBadInput);
  }

  const std::string csv_path = options.out_dir + "/presets.csv";
  AtomicFile csv(csv_path);
  csv.stream() << "policy,slo_attainment,ttft_p99_s,scale_ups,scale_ups_blocked,jobs_completed,jobs_queued,"
                  "preemptions,same_pool_preemptions,cross_pool_preemptions,label_preemptions,batch_gpu_hours,"
                  "useful_gpu_hours,lost_gpu_hours,lost_share,schedule_p50_us,schedule_p99_us\n";
  for (const auto& o : outcomes) csv.stream() << csv_row(o);
  if (auto status = csv.commit(); !status) return fail(status.error().message, kExitOutputError);

  char line[256];
  out << "meshsim compare-presets: " << config.name << " (seed " << config.seed << "), " << candidates.size()
      << " policies on " << threads << " threads in " << number_text(std::round(wall_s * 100) / 100) << " s\n";
  out << "policy        SLO met  P99 TTFT  scale-ups/blocked  jobs done  preempted (same/cross/label)  "
         "useful GPU-h  lost GPU-h (share)  sched p50/p99 us\n";
  for (const auto& o : outcomes) {
    std::snprintf(line, sizeof line,
                  "%-12s %7.2f%% %8.3fs %10" PRIu64 "/%-6" PRIu64 " %9" PRIu64 "  %6" PRIu64 " (%" PRIu64 "/%" PRIu64
                  "/%" PRIu64 ")%*s %12.2f  %9.3f (%4.1f%%)  %6.1f/%.1f\n",
                  o.name.c_str(), 100.0 * o.slo_attainment, o.ttft_p99_s, o.scale_ups, o.blocked, o.jobs_completed,
                  o.preemptions, o.same_pool, o.cross_pool, o.label, 8, "", o.useful_gpu_h, o.lost_gpu_h,
                  100.0 * o.lost_share, o.schedule_p50_us, o.schedule_p99_us);
    out << line;
  }
  out << "outputs       " << csv_path;
  if (options.plot) {
    const std::string png = options.out_dir + "/presets.png";
    if (run_plot_script("plot_presets.py", {csv_path, "--out", png})) {
      out << ", " << png;
    } else {
      err << "note: no presets.png (tools/plot_presets.py needs python3-matplotlib)\n";
    }
  }
  out << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
