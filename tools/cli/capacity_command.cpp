#include "tools/cli/capacity_command.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include "sim/engine/number_text.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/capacity_search.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/folder_lock.hpp"
#include "tools/cli/plot_script.hpp"
#include "tools/cli/replay_to_end.hpp"
#include "tools/cli/run_outputs.hpp"

namespace meshsim::cli {
namespace {

// What one replay of the search reports.
struct Probe {
  std::uint32_t instances = 0;
  double rate_scale = 0;
  std::string error;  // the replay failed: nothing else is set
  double attainment = 0, ttft_p99_s = 0, tbt_p99_s = 0, goodput_per_s = 0, offered_per_s = 0;
  std::uint64_t arrived = 0, judged = 0, over_context = 0, other_drops = 0;
  double gpu_hours = 0, cost_usd = 0;
  bool overloaded = false;
};

class QuietObserver final : public replay::ReplayObserver {};

// The scenario the search replays, and the start-state group it sizes.
struct Setup {
  configs::ScenarioConfig config;
  std::string config_path;
  std::size_t group = 0;
  std::string pool_name, hardware;
};

Probe replay_probe(const Setup& setup, const configs::Catalog& catalog, std::uint32_t instances, double rate) {
  Probe p;
  p.instances = instances;
  p.rate_scale = rate;
  configs::ScenarioConfig config = setup.config;
  std::get<configs::LlmServingSpec>(config.serving).start_state[setup.group].count = instances;
  config.workload.rate_scale = rate;
  QuietObserver observer;
  auto finished = replay_to_end(config, setup.config_path, catalog, observer);
  if (!finished) {
    p.error = finished.error().message;
    return p;
  }
  const metrics::RunMetrics& m = finished->run->replay().metrics();
  const auto& counts = m.counts();
  const double duration = finished->result.end_time.seconds();
  p.attainment = m.slo_attainment();
  p.ttft_p99_s = m.ttft().p99;
  p.tbt_p99_s = m.tbt().p99;
  p.goodput_per_s = duration > 0 ? static_cast<double>(m.slo_met()) / duration : 0.0;
  p.offered_per_s = m.offered_per_s();
  p.arrived = counts.arrived;
  p.judged = counts.judged();
  p.over_context = counts.dropped_by(metrics::DropReason::kOverContext);
  p.other_drops = counts.dropped - p.over_context;
  p.gpu_hours = finished->result.gpu_hours;
  p.cost_usd = finished->result.cost;
  p.overloaded = finished->result.overload.overloaded;
  return p;
}

// Probes (instances, rate) points on up to `threads` threads, each point once (a point
// asked again is answered from what it found).
class Prober {
 public:
  Prober(const Setup& setup, const configs::Catalog& catalog, unsigned threads)
      : setup_(setup), catalog_(catalog), threads_(threads) {}

  std::vector<const Probe*> run(const std::vector<std::pair<std::uint32_t, double>>& points) {
    std::vector<std::pair<std::uint32_t, double>> fresh;
    for (const auto& point : points) {
      if (!probes_.count(point) && std::find(fresh.begin(), fresh.end(), point) == fresh.end()) fresh.push_back(point);
    }
    std::vector<Probe> done(fresh.size());
    std::atomic<std::size_t> next{0};
    const auto work = [&] {
      for (std::size_t i = next++; i < fresh.size(); i = next++) {
        done[i] = replay_probe(setup_, catalog_, fresh[i].first, fresh[i].second);
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < std::min<std::size_t>(threads_, fresh.size()); ++t) pool.emplace_back(work);
    work();
    for (auto& thread : pool) thread.join();
    for (std::size_t i = 0; i < fresh.size(); ++i) probes_[fresh[i]] = std::move(done[i]);
    std::vector<const Probe*> out;
    for (const auto& point : points) out.push_back(&probes_.at(point));
    return out;
  }
  // Every probe, by instances then rate.
  const std::map<std::pair<std::uint32_t, double>, Probe>& probes() const { return probes_; }

 private:
  const Setup& setup_;
  const configs::Catalog& catalog_;
  unsigned threads_;
  std::map<std::pair<std::uint32_t, double>, Probe> probes_;
};

Expected<Setup> make_setup(const CapacityCommandOptions& options, std::ostream& err) {
  Setup setup;
  setup.config_path = options.config_path.empty() ? configs::default_scenario_path() : options.config_path;
  auto loaded = load_scenario_for_command(setup.config_path, options.trace, options.trace_format, options.seed,
                                          options.sets);
  if (!loaded) return loaded.error();
  setup.config = std::move(*loaded);
  configs::ScenarioConfig& config = setup.config;
  auto* llm = std::get_if<configs::LlmServingSpec>(&config.serving);
  if (llm == nullptr) return Error{setup.config_path + ": capacity sizes the llm serving model (serving.kind: llm)"};
  if (config.cluster.mode == configs::ClusterMode::kFixed) {
    return Error{setup.config_path + ": capacity sizes serving alone; a fixed shared cluster has its nodes already"};
  }
  if (config.autoscaler.policy != configs::AutoscalerPolicy::kNone) {
    err << "note: the search sizes a static deployment: the scenario's autoscaler ("
        << configs::kAutoscalerPolicyNames.name(config.autoscaler.policy) << ") is off\n";
    config.autoscaler.policy = configs::AutoscalerPolicy::kNone;
  }
  if (auto scaled = apply_rate_scale(config, options.rate_scale); !scaled) return scaled.error();
  if (options.until_s) {
    const auto until = engine::SimTime::from_seconds_checked(*options.until_s);
    if (!until || *until <= engine::SimTime::zero()) {
      return Error{"--until: expected a positive number of seconds up to 1e12, got " + number_text(*options.until_s)};
    }
    config.replay.until = *until;
  }
  if (!(options.target > 0 && options.target <= 1)) {
    return Error{"--target: expected an SLO attainment in (0, 1], got " + number_text(options.target)};
  }
  if (options.find == "rate" && !(options.precision >= 1e-3 && options.precision <= 1)) {
    return Error{"--precision: expected a relative precision in [0.001, 1], got " + number_text(options.precision)};
  }
  if (options.max_instances == 0 || options.max_instances > 100'000) {
    return Error{"--max-instances: expected 1 to 100000, got " + std::to_string(options.max_instances)};
  }
  const auto& groups = llm->start_state;
  if (options.pool.empty()) {
    setup.group = 0;
  } else {
    const auto tag = cluster::kInstanceTagNames.parse(options.pool);
    const auto it = tag ? std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.tag == *tag; })
                        : groups.end();
    if (it == groups.end()) {
      std::string named;
      for (const auto& g : groups) named += (named.empty() ? "" : ", ") + std::string(cluster::kInstanceTagNames.name(g.tag));
      return Error{"--pool: expected a pool of the start state (" + named + "), got '" + options.pool + "'"};
    }
    setup.group = static_cast<std::size_t>(it - groups.begin());
  }
  setup.pool_name = std::string(cluster::kInstanceTagNames.name(groups[setup.group].tag));
  const auto hardware = llm->pool_hardware.find(groups[setup.group].tag);
  const std::string sku = hardware != llm->pool_hardware.end() && !hardware->second.sku.empty() ? hardware->second.sku
                                                                                                 : llm->sku;
  const std::uint32_t tp = hardware != llm->pool_hardware.end() && hardware->second.tensor_parallel != 0
                               ? hardware->second.tensor_parallel
                               : llm->tensor_parallel;
  setup.hardware = llm->model + " on " + sku + " at TP " + std::to_string(tp);
  return setup;
}

std::string csv_row(const Probe& p, double target) {
  char line[512];
  std::snprintf(line, sizeof line,
                "%u,%.6g,%.6f,%d,%.6f,%.6f,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.4f,%d\n",
                p.instances, p.rate_scale, p.attainment, p.attainment >= target ? 1 : 0, p.ttft_p99_s, p.tbt_p99_s,
                p.goodput_per_s, p.offered_per_s, p.arrived, p.judged, p.over_context, p.other_drops, p.gpu_hours,
                p.cost_usd, p.overloaded ? 1 : 0);
  return line;
}

// "1 mixed instance meets", "4 mixed instances meet".
std::string instances_text(std::uint32_t n, const std::string& pool, const std::string& verb_one,
                           const std::string& verb_many) {
  return std::to_string(n) + " " + pool + (n == 1 ? " instance " + verb_one : " instances " + verb_many);
}

// "17754 requests judged (1612 refused for length)": what the attainment is over.
std::string judged_text(const Probe& p) {
  std::string out = "over the " + std::to_string(p.judged) + " requests within the context";
  if (p.over_context > 0) out += "; " + std::to_string(p.over_context) + " refused for length";
  return out;
}

}  // namespace

int run_capacity_command(const CapacityCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.find != "instances" && options.find != "rate") {
    return fail(err, "--find: expected instances or rate, got '" + options.find + "'", kExitBadInput);
  }
  auto setup = make_setup(options, err);
  if (!setup) return fail(err, setup.error().message, kExitBadInput);
  auto catalog = configs::load_scenario_catalog(setup->config);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  auto lock = FolderLock::acquire(options.out_dir, "meshsim capacity");
  if (!lock) return fail(err, lock.error().message, kExitOutputError);

  const unsigned threads = std::max(1u, options.threads != 0 ? options.threads : std::thread::hardware_concurrency());
  Prober prober(*setup, *catalog, threads);
  const double rate = setup->config.workload.rate_scale;
  const std::uint32_t instances = std::get<configs::LlmServingSpec>(setup->config.serving).start_state[setup->group].count;
  std::string failure;
  const auto meets = [&](const std::vector<const Probe*>& probes) {
    std::vector<bool> out_of(probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (!probes[i]->error.empty() && failure.empty()) failure = probes[i]->error;
      out_of[i] = probes[i]->error.empty() && probes[i]->attainment >= options.target;
    }
    return out_of;
  };
  const auto wall_start = std::chrono::steady_clock::now();
  std::optional<std::int64_t> fewest;
  std::optional<double> most;
  if (options.find == "instances") {
    fewest = fewest_meeting(options.max_instances, [&](const std::vector<std::int64_t>& xs) {
      std::vector<std::pair<std::uint32_t, double>> points;
      for (const auto x : xs) points.emplace_back(static_cast<std::uint32_t>(x), rate);
      return meets(prober.run(points));
    });
  } else {
    // Down to a thousandth of the load: below it an idle deployment's figures no longer move.
    most = highest_meeting(rate, std::max(traces::kMinRateScale, rate / 1024), traces::kMaxRateScale, options.precision,
                           [&](const std::vector<double>& rates) {
                             std::vector<std::pair<std::uint32_t, double>> points;
                             for (const double r : rates) points.emplace_back(instances, r);
                             return meets(prober.run(points));
                           });
  }
  if (!failure.empty()) return fail(err, failure, kExitBadInput);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const std::string csv_path = options.out_dir + "/capacity.csv";
  AtomicFile csv(csv_path);
  csv.stream() << "instances,rate_scale,slo_attainment,meets_target,ttft_p99_s,tbt_p99_s,goodput_per_s,"
                  "offered_per_s,arrived,judged,refused_over_context,other_drops,gpu_hours,cost_usd,overloaded\n";
  for (const auto& [point, probe] : prober.probes()) csv.stream() << csv_row(probe, options.target);
  if (auto status = csv.commit(); !status) return fail(err, status.error().message, kExitOutputError);

  out << "meshsim capacity: " << setup->config.name << " (" << setup->hardware << ", seed " << setup->config.seed
      << "), " << prober.probes().size() << " replays on " << threads << " threads in "
      << number_text(std::round(wall_s * 10) / 10) << " s\n";
  const std::string target = percent_text(options.target, 1);
  if (options.find == "instances") {
    if (!fewest) {
      const Probe& best = prober.probes().rbegin()->second;
      out << "capacity    not reached: " << instances_text(options.max_instances, setup->pool_name, "meets", "meet") << " "
          << percent_text(best.attainment, 1) << " of the " << target << " target at rate x" << number_text(rate)
          << " (" << judged_text(best) << ")\n";
    } else {
      const Probe& at = prober.probes().at({static_cast<std::uint32_t>(*fewest), rate});
      out << "capacity    " << instances_text(static_cast<std::uint32_t>(*fewest), setup->pool_name, "meets", "meet") << " the " << target
          << " SLO target at rate x" << number_text(rate) << ": " << percent_text(at.attainment, 1) << " met "
          << judged_text(at) << "; goodput " << number_text(std::round(at.goodput_per_s * 100) / 100) << " of "
          << number_text(std::round(at.offered_per_s * 100) / 100) << " req/s offered";
      if (const auto below = prober.probes().find({static_cast<std::uint32_t>(*fewest - 1), rate});
          below != prober.probes().end()) {
        out << "; " << *fewest - 1 << " meet " << percent_text(below->second.attainment, 1);
      }
      out << '\n';
    }
  } else if (!most) {
    const Probe& idle = prober.probes().begin()->second;  // the lowest rate probed
    out << "capacity    not reached: " << instances_text(instances, setup->pool_name, "misses", "miss") << " the " << target
        << " SLO target even at rate x" << number_text(idle.rate_scale) << ", nearly idle: "
        << percent_text(idle.attainment, 1) << " met " << judged_text(idle)
        << " (requests the deployment cannot serve within the SLO at any load: see ttft_p99_s, tbt_p99_s)\n";
  } else {
    const Probe& at = prober.probes().at({instances, *most});
    out << "capacity    " << instances_text(instances, setup->pool_name, "sustains", "sustain") << " rate x"
        << number_text(*most) << " (" << number_text(std::round(at.offered_per_s * 100) / 100)
        << " req/s offered, goodput " << number_text(std::round(at.goodput_per_s * 100) / 100) << " req/s) at the "
        << target << " SLO target: " << percent_text(at.attainment, 1) << " met " << judged_text(at) << '\n';
  }
  out << "outputs     " << csv_path;
  const std::string png = options.out_dir + "/capacity.png";
  if (options.plot && draw_plot("plot_capacity.py", {csv_path, "--target", number_text(options.target)}, png, err)) {
    out << ", " << png;
  }
  out << '\n';
  return kExitOk;
}

}  // namespace meshsim::cli
