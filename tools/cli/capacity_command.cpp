#include "tools/cli/capacity_command.hpp"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <thread>

#include "sim/engine/number_text.hpp"
#include "sim/engine/thread_pool.hpp"
#include "sim/run/capacity_search.hpp"
#include "sim/run/slo_capacity.hpp"
#include "tools/runs/atomic_file.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/figure_text.hpp"
#include "tools/runs/folder_lock.hpp"
#include "tools/runs/plot_script.hpp"
#include "tools/runs/run_outputs.hpp"

namespace meshsim::cli {
namespace {

// The scenario the search replays, and the start-state group it sizes.
struct Setup {
  configs::ScenarioConfig config;
  std::string config_path;
  std::size_t group = 0;
  std::string pool_name, hardware;
  engine::SimTime warmup;
};

configs::ScenarioConfig sized(const Setup& setup, std::uint32_t instances) {
  configs::ScenarioConfig config = setup.config;
  std::get<configs::LlmServingSpec>(config.serving).start_state[setup.group].count = instances;
  return config;
}

// Every replay of the search by (instances, rate), each point replayed once (a point
// asked again is answered from what it found), each round's new points on the pool.
class Prober {
 public:
  Prober(const Setup& setup, const configs::Catalog& catalog, engine::ThreadPool& pool)
      : setup_(setup), catalog_(catalog), pool_(pool) {}

  std::vector<const run::SloProbe*> run(const std::vector<std::pair<std::uint32_t, double>>& points) {
    std::vector<std::pair<std::uint32_t, double>> fresh;
    for (const auto& point : points) {
      if (!probes_.count(point) && std::find(fresh.begin(), fresh.end(), point) == fresh.end()) fresh.push_back(point);
    }
    std::vector<run::SloProbe> done(fresh.size());
    pool_.for_each(fresh.size(), [&](std::size_t i) {
      done[i] = run::probe_slo(sized(setup_, fresh[i].first), catalog_, fresh[i].second, {}, setup_.warmup,
                               setup_.config_path);
    });
    for (std::size_t i = 0; i < fresh.size(); ++i) add(fresh[i].first, std::move(done[i]));
    std::vector<const run::SloProbe*> out;
    for (const auto& point : points) out.push_back(&probes_.at(point));
    return out;
  }
  void add(std::uint32_t instances, run::SloProbe probe) { probes_[{instances, probe.rate_scale}] = std::move(probe); }
  // Every probe, by instances then rate.
  const std::map<std::pair<std::uint32_t, double>, run::SloProbe>& probes() const { return probes_; }

 private:
  const Setup& setup_;
  const configs::Catalog& catalog_;
  engine::ThreadPool& pool_;
  std::map<std::pair<std::uint32_t, double>, run::SloProbe> probes_;
};

Expected<Setup> make_setup(const CapacityCommandOptions& options, std::ostream& err) {
  Setup setup;
  setup.config_path = options.config_path.empty() ? configs::default_scenario_path() : options.config_path;
  auto loaded = load_scenario_for_command(
      setup.config_path, {options.trace, options.trace_format, options.seed, options.sets, options.catalog});
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
  const auto warmup = engine::SimTime::from_seconds_checked(options.warmup_s);
  if (!warmup || *warmup < engine::SimTime::zero()) {
    return Error{"--warmup: expected seconds in [0, 1e12], got " + number_text(options.warmup_s)};
  }
  setup.warmup = *warmup;
  if (!(options.target > 0 && options.target <= 1)) {
    return Error{"--target: expected an SLO attainment in (0, 1], got " + number_text(options.target)};
  }
  if (options.precision && options.find != "rate") {
    return Error{"--precision: applies to --find rate (the fewest instances is an exact count)"};
  }
  if (options.precision && !(*options.precision >= 1e-3 && *options.precision <= 1)) {
    return Error{"--precision: expected a relative precision in [0.001, 1], got " + number_text(*options.precision)};
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

// A probe's row; its attainment and latency cells are empty where it judged no request
// (a figure over nothing is no figure).
std::string csv_row(std::uint32_t instances, const run::SloProbe& p, double target) {
  const auto judged_figure = [&](double value) {
    return fixed_or(p.judged > 0 ? std::optional(value) : std::nullopt, 6, "");
  };
  char line[512];
  std::snprintf(line, sizeof line,
                "%u,%.6g,%s,%d,%s,%s,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.4f,%d\n",
                instances, p.rate_scale, judged_figure(p.attainment).c_str(),
                p.judged > 0 && p.attainment >= target ? 1 : 0, judged_figure(p.ttft_p99_s).c_str(),
                judged_figure(p.tbt_p99_s).c_str(), p.goodput_per_s, p.offered_per_s, p.arrived, p.judged,
                p.unfinished, p.over_context, p.other_drops, p.gpu_hours, p.cost_usd, p.overloaded ? 1 : 0);
  return line;
}

// "99.5%", or "-" where the probe judged no request.
std::string attainment_text(const run::SloProbe& p) { return p.judged > 0 ? percent_text(p.attainment, 1) : "-"; }

// "1 mixed instance meets", "4 mixed instances meet".
std::string instances_text(std::uint32_t n, const std::string& pool, const std::string& verb_one,
                           const std::string& verb_many) {
  return std::to_string(n) + " " + pool + (n == 1 ? " instance " + verb_one : " instances " + verb_many);
}

// "17754 requests judged (1612 refused for length)": what the attainment is over.
std::string judged_text(const run::SloProbe& p) {
  std::string out = "over the " + std::to_string(p.judged) + " requests within the context";
  if (p.unfinished > 0) out += " (" + std::to_string(p.unfinished) + " unfinished at the end: misses)";
  if (p.over_context > 0) out += "; " + std::to_string(p.over_context) + " refused for length";
  return out;
}

// The fewest instances of the setup's pool meeting the target at `rate`, probing on the
// prober's pool; `failure` gets the first probe's error.
std::optional<std::int64_t> find_fewest(Prober& prober, const CapacityCommandOptions& options, double rate,
                                        std::string& failure) {
  return run::fewest_meeting(options.max_instances, [&](const std::vector<std::int64_t>& xs) {
    std::vector<std::pair<std::uint32_t, double>> points;
    for (const auto x : xs) points.emplace_back(static_cast<std::uint32_t>(x), rate);
    const auto probes = prober.run(points);
    std::vector<bool> met(probes.size());
    for (std::size_t i = 0; i < probes.size(); ++i) {
      if (!probes[i]->error.empty() && failure.empty()) failure = probes[i]->error;
      met[i] = probes[i]->error.empty() && probes[i]->judged > 0 && probes[i]->attainment >= options.target;
    }
    return met;
  });
}

// Writes a search's probes as capacity.csv's rows.
Status write_probes(const std::string& path, const Prober& prober, double target) {
  AtomicFile csv(path);
  csv.stream() << "instances,rate_scale,slo_attainment,meets_target,ttft_p99_s,tbt_p99_s,goodput_per_s,"
                  "offered_per_s,arrived,judged,unfinished,refused_over_context,other_drops,gpu_hours,cost_usd,overloaded\n";
  for (const auto& [point, probe] : prober.probes()) csv.stream() << csv_row(point.first, probe, target);
  return csv.commit();
}

}  // namespace

int run_capacity_command(const CapacityCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (!options.compare_skus.empty()) return run_compare_skus(options, out, err);
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
  engine::ThreadPool pool(threads);
  Prober prober(*setup, *catalog, pool);
  const double rate = setup->config.workload.rate_scale;
  const std::uint32_t instances = std::get<configs::LlmServingSpec>(setup->config.serving).start_state[setup->group].count;
  std::string failure;
  const auto wall_start = std::chrono::steady_clock::now();
  std::optional<std::int64_t> fewest;
  std::optional<double> most;
  if (options.find == "instances") {
    fewest = find_fewest(prober, options, rate, failure);
  } else {
    // The one search of what a deployment sustains (sim/run/slo_capacity.hpp), down to a
    // thousandth of the load: below it an idle deployment's figures no longer move.
    run::SloCapacityQuestion question;
    question.config = setup->config;
    question.target = options.target;
    question.start_rate = rate;
    question.lowest_rate = std::max(traces::kMinRateScale, rate / 1024);
    question.highest_rate = traces::kMaxRateScale;
    if (options.precision) question.precision = *options.precision;
    question.warmup = setup->warmup;
    question.config_file = setup->config_path;
    run::SloCapacity found = run::slo_capacity(question, *catalog, &pool);
    failure = found.error;
    most = found.rate_scale;
    for (run::SloProbe& probe : found.probes) prober.add(instances, std::move(probe));
  }
  if (!failure.empty()) return fail(err, failure, kExitBadInput);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const std::string csv_path = options.out_dir + "/capacity.csv";
  if (auto status = write_probes(csv_path, prober, options.target); !status) {
    return fail(err, status.error().message, kExitOutputError);
  }

  out << "meshsim capacity: " << setup->config.name << " (" << setup->hardware << ", seed " << setup->config.seed
      << "), " << prober.probes().size() << " replays on " << threads << " threads in "
      << number_text(std::round(wall_s * 10) / 10) << " s\n";
  const std::string target = percent_text(options.target, 1);
  if (options.find == "instances") {
    if (!fewest) {
      const run::SloProbe& best = prober.probes().rbegin()->second;
      out << "capacity    not reached: " << instances_text(options.max_instances, setup->pool_name, "meets", "meet") << " "
          << attainment_text(best) << " of the " << target << " target at rate x" << number_text(rate)
          << " (" << judged_text(best) << ")\n";
    } else {
      const run::SloProbe& at = prober.probes().at({static_cast<std::uint32_t>(*fewest), rate});
      out << "capacity    " << instances_text(static_cast<std::uint32_t>(*fewest), setup->pool_name, "meets", "meet") << " the " << target
          << " SLO target at rate x" << number_text(rate) << ": " << attainment_text(at) << " met "
          << judged_text(at) << "; goodput " << number_text(std::round(at.goodput_per_s * 100) / 100) << " of "
          << number_text(std::round(at.offered_per_s * 100) / 100) << " req/s offered";
      if (const auto below = prober.probes().find({static_cast<std::uint32_t>(*fewest - 1), rate});
          below != prober.probes().end()) {
        out << "; " << *fewest - 1 << " meet " << attainment_text(below->second);
      }
      out << '\n';
    }
  } else if (!most) {
    const run::SloProbe& idle = prober.probes().begin()->second;  // the lowest rate probed
    out << "capacity    not reached: " << instances_text(instances, setup->pool_name, "misses", "miss") << " the " << target
        << " SLO target even at rate x" << number_text(idle.rate_scale) << ", nearly idle: "
        << attainment_text(idle) << " met " << judged_text(idle)
        << " (requests the deployment cannot serve within the SLO at any load: see ttft_p99_s, tbt_p99_s)\n";
  } else {
    const run::SloProbe& at = prober.probes().at({instances, *most});
    out << "capacity    " << instances_text(instances, setup->pool_name, "sustains", "sustain") << " rate x"
        << number_text(*most) << " (" << number_text(std::round(at.offered_per_s * 100) / 100)
        << " req/s offered, goodput " << number_text(std::round(at.goodput_per_s * 100) / 100) << " req/s) at the "
        << target << " SLO target: " << attainment_text(at) << " met " << judged_text(at) << '\n';
  }
  out << "outputs     " << csv_path;
  const std::string png = options.out_dir + "/capacity.png";
  const auto drawn = options.plot
                        ? draw_plot("plot_capacity.py", {csv_path, "--target", number_text(options.target)}, png, err)
                        : Expected<bool>(false);
  out << (drawn && *drawn ? ", " + png : "") << '\n';
  return drawn ? kExitOk : fail(err, drawn.error().message, kExitOutputError);
}

namespace {

// One entry of --compare-skus: a SKU and the TP degree its instances run at (0: the
// scenario's).
struct SkuChoice {
  std::string sku;
  std::uint32_t tensor_parallel = 0;
};

Expected<std::vector<SkuChoice>> parse_sku_choices(const std::vector<std::string>& entries) {
  std::vector<SkuChoice> out;
  for (const std::string& entry : entries) {
    SkuChoice choice;
    const auto colon = entry.find(':');
    choice.sku = entry.substr(0, colon);
    if (colon != std::string::npos) {
      const std::string tp = entry.substr(colon + 1);
      if (tp.empty() || tp.size() > 3 || !std::all_of(tp.begin(), tp.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          std::stoul(tp) == 0) {
        return Error{"--compare-skus: expected SKU or SKU:TP (h200-141gb:2), got '" + entry + "'"};
      }
      choice.tensor_parallel = static_cast<std::uint32_t>(std::stoul(tp));
    }
    if (choice.sku.empty()) return Error{"--compare-skus: expected a SKU name, got '" + entry + "'"};
    out.push_back(choice);
  }
  return out;
}

}  // namespace

int run_compare_skus(const CapacityCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.find != "instances") {
    return fail(err, "--compare-skus: compares the fewest instances (--find instances), not --find " + options.find,
                kExitBadInput);
  }
  auto choices = parse_sku_choices(options.compare_skus);
  if (!choices) return fail(err, choices.error().message, kExitBadInput);
  auto lock = FolderLock::acquire(options.out_dir, "meshsim capacity");
  if (!lock) return fail(err, lock.error().message, kExitOutputError);
  const unsigned threads = std::max(1u, options.threads != 0 ? options.threads : std::thread::hardware_concurrency());
  engine::ThreadPool pool(threads);
  const std::string csv_path = options.out_dir + "/compare.csv";
  AtomicFile csv(csv_path);
  csv.stream() << "sku,tensor_parallel,instances,gpus,servers,cost_per_hour,gpu_cost_per_hour,slo_attainment,"
                  "ttft_p99_s,tbt_p99_s,goodput_per_s,offered_per_s,step_time_factors\n";
  // Two prices: the whole servers the instances need (what one deployment rents), and
  // their GPUs' share of them (what the deployment costs where servers are shared, or at
  // scale, where the last server fills up); the cheapest is by the second.
  std::string table = "SKU                TP  instances  GPUs  servers  $/h servers  $/h GPUs  SLO met  TTFT p99  "
                      "TBT p99  step-time factors\n";
  std::optional<std::pair<double, std::string>> cheapest;
  std::string load;
  char line[512];
  // Every entry is checked before any is searched: a typo in the last one costs no search.
  struct Entry {
    CapacityCommandOptions options;
    Setup setup;
    configs::Catalog catalog;
    const cluster::SkuSpec* sku = nullptr;
  };
  std::vector<Entry> entries;
  entries.reserve(choices->size());
  for (const SkuChoice& choice : *choices) {
    CapacityCommandOptions one = options;
    one.sets.push_back("serving.sku=" + choice.sku);
    if (choice.tensor_parallel) one.sets.push_back("serving.tensor_parallel=" + std::to_string(choice.tensor_parallel));
    auto setup = make_setup(one, err);
    if (!setup) return fail(err, "--compare-skus " + choice.sku + ": " + setup.error().message, kExitBadInput);
    const auto& llm = std::get<configs::LlmServingSpec>(setup->config.serving);
    if (!llm.pool_hardware.empty()) {
      return fail(err, "--compare-skus: the scenario's start state names its own SKUs per pool; compare a scenario "
                       "whose pools share serving.sku", kExitBadInput);
    }
    auto catalog = configs::load_scenario_catalog(setup->config);
    if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
    if (catalog->find_sku(llm.sku) == nullptr) {
      return fail(err, "--compare-skus: no SKU or alias '" + choice.sku + "' in hardware.json", kExitBadInput);
    }
    const std::string sku_name = llm.sku;  // before the setup moves
    entries.push_back({std::move(one), std::move(*setup), std::move(*catalog), nullptr});
    entries.back().sku = entries.back().catalog.find_sku(sku_name);
  }
  for (Entry& entry : entries) {
    const CapacityCommandOptions& one = entry.options;
    const Setup* setup = &entry.setup;
    const configs::Catalog* catalog = &entry.catalog;
    const cluster::SkuSpec* sku = entry.sku;
    const auto& llm = std::get<configs::LlmServingSpec>(setup->config.serving);
    Prober prober(*setup, *catalog, pool);
    const double rate = setup->config.workload.rate_scale;
    std::string failure;
    const auto fewest = find_fewest(prober, one, rate, failure);
    if (!failure.empty()) return fail(err, "--compare-skus " + sku->name + ": " + failure, kExitBadInput);
    const std::string name = sku->name + "-tp" + std::to_string(llm.tensor_parallel);
    if (auto status = write_probes(options.out_dir + "/capacity-" + name + ".csv", prober, options.target); !status) {
      return fail(err, status.error().message, kExitOutputError);
    }
    const std::string factors = catalog->step_fit(sku->name) != nullptr ? "fitted" : "uncalibrated";
    load = setup->config.name + ", " + llm.model + ", rate x" + number_text(rate);
    if (!fewest) {
      std::snprintf(line, sizeof line, "%-18s %2u  not within %u instances%62s%s\n", sku->name.c_str(),
                    llm.tensor_parallel, options.max_instances, "", factors.c_str());
      table += line;
      csv.stream() << sku->name << ',' << llm.tensor_parallel << ",,,,,,,,,,," << factors << '\n';
      continue;
    }
    const auto n = static_cast<std::uint32_t>(*fewest);
    const run::SloProbe& at = prober.probes().at({n, rate});
    const std::uint32_t per_server = sku->gpus_per_node / llm.tensor_parallel;
    const std::uint32_t servers = (n + per_server - 1) / per_server;
    const double per_hour = servers * sku->cost_per_hour;
    const double gpus_per_hour = double(n) * llm.tensor_parallel / sku->gpus_per_node * sku->cost_per_hour;
    if (!cheapest || gpus_per_hour < cheapest->first) {
      cheapest = {gpus_per_hour, sku->name + " at TP " + std::to_string(llm.tensor_parallel)};
    }
    std::snprintf(line, sizeof line, "%-18s %2u  %9u %5u %8u %12.2f %9.2f %8s %8.3fs %7.3fs  %s\n", sku->name.c_str(),
                  llm.tensor_parallel, n, n * llm.tensor_parallel, servers, per_hour, gpus_per_hour,
                  attainment_text(at).c_str(), at.ttft_p99_s, at.tbt_p99_s, factors.c_str());
    table += line;
    csv.stream() << sku->name << ',' << llm.tensor_parallel << ',' << n << ',' << n * llm.tensor_parallel << ','
                 << servers << ',' << fixed_text(per_hour, 2) << ',' << fixed_text(gpus_per_hour, 2) << ','
                 << fixed_text(at.attainment, 6) << ','
                 << fixed_text(at.ttft_p99_s, 6) << ',' << fixed_text(at.tbt_p99_s, 6) << ','
                 << fixed_text(at.goodput_per_s, 6) << ',' << fixed_text(at.offered_per_s, 6) << ',' << factors << '\n';
  }
  if (auto status = csv.commit(); !status) return fail(err, status.error().message, kExitOutputError);
  out << "meshsim capacity --compare-skus: " << load << ", the fewest instances meeting the "
      << percent_text(options.target, 1) << " SLO target on each\n"
      << table;
  out << (cheapest ? "cheapest    " + cheapest->second + ": $" + fixed_text(cheapest->first, 2) +
                         " an hour for the GPUs it holds"
                   : std::string("cheapest    none: no SKU met the target"))
      << '\n';
  out << "outputs     " << csv_path;
  const std::string png = options.out_dir + "/compare.png";
  const auto drawn = options.plot ? draw_plot("plot_skus.py", {csv_path}, png, err) : Expected<bool>(false);
  out << (drawn && *drawn ? ", " + png : "") << '\n';
  return drawn ? kExitOk : fail(err, drawn.error().message, kExitOutputError);
}

}  // namespace meshsim::cli
