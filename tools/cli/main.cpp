// The meshsim command line: subcommands over the library. Exceptions (broken invariants)
// are caught here, once. Built as meshsim and its companions (tools/CMakeLists.txt): a
// command whose library is not linked into this executable is parsed here all the same
// (one --help, one set of errors) and then run by its companion (companion.hpp).
#include <CLI/CLI.hpp>
#include <csignal>
#include <exception>
#include <iostream>

#include "sim/engine/check.hpp"
#include "tools/cli/capacity_command.hpp"
#include "tools/cli/capacity_model_command.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/companion.hpp"
#include "tools/cli/compare_presets.hpp"
#include "tools/cli/models_command.hpp"
#include "tools/cli/reference_commands.hpp"
#include "tools/cli/scenario_command.hpp"
#include "tools/runs/signal_cleanup.hpp"
#include "tools/cli/sweep_command.hpp"
#include "tools/cli/sweep_mpi.hpp"
#if defined(MESHSIM_HAVE_RL) || defined(MESHSIM_RL_COMPANION)
#define MESHSIM_RL_COMMANDS 1
#include "tools/cli/eval_command.hpp"
#include "tools/cli/train_command.hpp"
#endif

namespace {

using namespace meshsim::cli;

// Options several commands share, said the same way by each.
template <class T>
void add_trace_format(CLI::App* cmd, T& format) {
  cmd->add_option("--trace-format", format, "auto, azure or mooncake")->capture_default_str();
}
template <class T>
void add_seed(CLI::App* cmd, T& seed) {
  cmd->add_option("--seed", seed, "Random seed, an integer in [0, 2^64) (overrides the config's)");
}
CLI::Option* add_set(CLI::App* cmd, std::vector<std::string>& sets) {
  return cmd->add_option("--set", sets,
                  "key.path=value: change the scenario before it is checked, as sweep grids do "
                  "(e.g. serving.vllm.prefix_caching=false); repeatable, applied in order")
      ->allow_extra_args(false);
}
// Work at once: 0 is one per core; more than the interrupt handler can clean up after
// (or any machine has cores for) is refused.
template <class T>
CLI::Option* add_threads(CLI::App* cmd, T& threads, const std::string& help) {
  return cmd->add_option("--threads", threads, help)->check(CLI::Range(0u, kMaxConcurrentRuns));
}
template <class T>
void add_catalog(CLI::App* cmd, T& catalog) {
  cmd->add_option("--catalog", catalog,
                  "Folder of your own hardware.json, models.json, perf_fits.json over the bundled ones");
}

CLI::App* add_replay(CLI::App& app, ReplayCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("replay", "Replay a trace or generated workload through a scenario");
  cmd->add_option("--config", o.config_path, "Scenario file (JSON or YAML); default: the bundled default")
      ->check(CLI::ExistingFile);
  cmd->add_option("--trace", o.trace, "Trace file to replay instead of the config's workload");
  add_trace_format(cmd, o.trace_format);
  cmd->add_option("--out", o.out_dir, "Run folder for summary.json, requests.csv, timeseries.csv")
      ->capture_default_str();
  add_seed(cmd, o.seed);
  add_set(cmd, o.sets);
  cmd->add_option("--rate-scale", o.rate_scale, "Multiply the arrival rate (2 = twice as fast)");
  cmd->add_option("--until", o.until_s, "Stop at this simulated time, in seconds");
  cmd->add_option("--trace-events", o.trace_events,
                  "Write instance activity as Chrome/Perfetto trace JSON to this file");
  cmd->add_option("--autoscaler", o.autoscaler,
                  "Autoscaling policy: none, static, elastic, target_tracking or oracle (parameters "
                  "from the config's autoscaler object)");
  cmd->add_flag("--scaling-log", o.scaling_log, "Print the ScalingManager's actions on stderr");
  cmd->add_flag("--quiet", o.quiet, "Print no summary table");
  add_catalog(cmd, o.catalog);
  cmd->add_option("--metrics-port", o.metrics_listen,
                  "Serve live Prometheus metrics at http://[HOST:]PORT/metrics during the run (HOST: 127.0.0.1)");
  return cmd;
}

CLI::App* add_fit(CLI::App& app, FitCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("fit-trace", "Fit a workload generator to a trace and print it as JSON");
  cmd->add_option("--trace", o.trace, "Trace file")->required();
  add_trace_format(cmd, o.trace_format);
  cmd->add_option("--name", o.name, "Name of the generator")->capture_default_str();
  return cmd;
}

CLI::App* add_models(CLI::App& app, ModelsCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "models", "List the catalog's models, or show what a scenario's model and servers become (--config)");
  auto* config = cmd->add_option("--config", o.config_path,
                                 "Scenario file: its model, context limit, KV capacity per instance and step-time source")
                     ->check(CLI::ExistingFile);
  add_set(cmd, o.sets)->needs(config);  // the catalog's list has no scenario to change
  add_catalog(cmd, o.catalog);
  return cmd;
}

CLI::App* add_capacity_model(CLI::App& app, CapacityModelCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "capacity-model",
      "Fit what an instance sustains at the SLO to the arriving work, on a recipe's training days, judged on its "
      "validation days");
  cmd->add_option("--config", o.config_path, "The recipe (a scenario with an rl object and validation spans)")
      ->required()
      ->check(CLI::ExistingFile);
  add_set(cmd, o.sets);
  add_seed(cmd, o.seed);
  cmd->add_option("--stretches", o.stretches, "Training stretches measured")->capture_default_str();
  cmd->add_option("--validation-stretches", o.validation_stretches, "Validation stretches measured")
      ->capture_default_str();
  cmd->add_option("--stretch", o.stretch_s, "A stretch's length, in seconds")->capture_default_str();
  cmd->add_option("--least-requests", o.least_requests, "A stretch with fewer requests is not a sample")
      ->capture_default_str();
  cmd->add_option("--features", o.features, "The model written: constant, tokens, mix or burstiness")
      ->capture_default_str();
  cmd->add_option("--accept", o.accept_error, "The validation error a model is accepted at (a fraction)")
      ->capture_default_str();
  cmd->add_option("--out", o.out_dir, "Folder for capacity_labels.csv and capacity_model.json")->capture_default_str();
  add_catalog(cmd, o.catalog);
  return cmd;
}

CLI::App* add_capacity(CLI::App& app, CapacityCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "capacity", "Find the fewest instances that meet an SLO target at a load, or the most load a deployment takes");
  cmd->add_option("--config", o.config_path, "Scenario file (its autoscaler is off); default: the bundled default")
      ->check(CLI::ExistingFile);
  add_set(cmd, o.sets);
  cmd->add_option("--trace", o.trace, "Trace file to replay instead of the config's workload");
  add_trace_format(cmd, o.trace_format);
  add_seed(cmd, o.seed);
  cmd->add_option("--find", o.find, "instances (the fewest for the load) or rate (the most load)")->capture_default_str();
  cmd->add_option("--pool", o.pool, "The start-state pool to size (prompt, token or mixed; default: the first)");
  cmd->add_option("--target", o.target, "SLO attainment to reach, in (0, 1]")->capture_default_str();
  cmd->add_option("--rate-scale", o.rate_scale, "The load (x the trace's rate) instances are found for");
  cmd->add_option("--max-instances", o.max_instances, "The most instances tried")->capture_default_str();
  cmd->add_option("--precision", o.precision, "--find rate: the answer within a factor of 1 + this [0.02]");
  cmd->add_option("--until", o.until_s, "Replay each probe up to this simulated time, in seconds");
  cmd->add_option("--warmup", o.warmup_s,
                  "Serve, but do not judge, the requests of the workload's first seconds (at its own rate)")
      ->capture_default_str();
  add_threads(cmd, o.threads, "Replays at a time (0: one per core)")->capture_default_str();
  cmd->add_option("--compare-skus", o.compare_skus,
                  "SKU[:TP] entries (h100-80gb:4,h200-141gb:2,b200-180gb:1): the fewest instances on each meeting the "
                  "target, with GPUs, servers and $/hour, in one table (compare.csv, compare.png)")
      ->delimiter(',');
  cmd->add_option("--out", o.out_dir, "Folder for capacity.csv and capacity.png")->capture_default_str();
  cmd->add_flag_callback("--no-plot", [&] { o.plot = false; }, "Do not draw capacity.png");
  add_catalog(cmd, o.catalog);
  return cmd;
}

CLI::App* add_calibrate(CLI::App& app, CalibrateCommandOptions& o, CalibrateReferenceOptions& reference) {
  CLI::App* cmd = app.add_subcommand(
                                     "calibrate",
                                     "Fit a performance model and print it: the roofline to a profile CSV (perf_fits.json), or the step-time "
                                     "model to request-level measurements (step_model.json)");
  // One source to fit (a group of its own, so that --catalog is not counted as one).
  CLI::Option_group* source = cmd->add_option_group("source", "What to fit");
  source->add_option("--profile", o.profile, "Profile CSV (SplitwiseSim perf_model.csv layout)");
  source->add_option("--reference", reference.references,
                     "Serving reference CSV (the layout of vllm-h100-measured.csv, or a closed-loop table's: "
                     "AIConfigurator's aic_vllm_agg.csv); repeat it to fit several together, per SKU");
  source->require_option(1);
  cmd->add_option("--sku", reference.skus, "With --reference: fit only these SKUs' rows (repeatable)");
  cmd->add_option("--fit-on", reference.fit_on,
                  "Closed-loop tables: fit only the rows of these prompt x output shapes (1024x1024,8192x1024), "
                  "holding the rest out for validate");
  cmd->add_option("--catalog", o.catalog, "Folder of your own hardware.json, models.json over the bundled ones");
  return cmd;
}

CLI::App* add_validate(CLI::App& app, ValidateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
                                     "validate", "Replay each row of a serving reference CSV and compare predicted with measured latencies");
  cmd->add_option("--reference", o.reference,
                  "Serving reference CSV (vllm-h100-measured.csv layout) or closed-loop table (AIConfigurator's "
                  "aic_vllm_agg.csv layout, its model configs read from model_configs/ beside it)")
      ->required();
  cmd->add_option("--fit-on", o.fit_on,
                  "Closed-loop tables: the prompt x output shapes the fit took (1024x1024,8192x1024); the summary "
                  "judges the other rows apart");
  cmd->add_option("--requests-per-client", o.requests_per_client,
                  "Closed-loop tables: requests each client sends, its first left out as warm-up (default 8)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--catalog", o.catalog,
                  "Folder of your own hardware.json, models.json, hf/, step_model.json over the bundled ones");
  cmd->add_flag("--json", o.json, "Print {\"rows\": [...]} with the predicted figures instead of a table");
  cmd->add_option("--seed", o.seed, "Random seed of the workloads")->capture_default_str();
  cmd->add_option("--client-timeout", o.client_timeout_s,
                  "Seconds after which the load generator gives up on a request, which is then aborted "
                  "(0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  return cmd;
}

CLI::App* add_scenario(CLI::App& app, ScenarioCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
                                     "scenario", "Play a script of scheduling-core calls; print one JSON result per step");
  cmd->add_option("script", o.script, "Script file (JSON or YAML)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--check", o.check, "Check the core's invariants after every step");
  cmd->add_option("--metrics", o.metrics, "Write the Prometheus metrics (text format) to this file");
  return cmd;
}

CLI::App* add_compare_presets(CLI::App& app, ComparePresetsOptions& o) {
  CLI::App* cmd = app.add_subcommand(
                                     "compare-presets", "Run a shared-cluster scenario under each preemption preset and policy file; compare");
  cmd->add_option("--config", o.config_path,
                  "Scenario with a fixed cluster; default: configs/scenarios/shared-cluster-synthetic.json")
      ->check(CLI::ExistingFile);
  add_set(cmd, o.sets);
  cmd->add_option("--presets", o.presets, "Presets to run (names or aliases)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--policy", o.policy_files,
                  "A policy file (update_preemption_policy's fields, optional \"name\"); repeatable")
      ->check(CLI::ExistingFile);
  add_seed(cmd, o.seed);
  cmd->add_option("--seeds", o.seeds,
                  "Run each policy under this many seeds (the first, then the next ones); the table shows means "
                  "and the spread")
      ->capture_default_str();
  cmd->add_option("--until", o.until_s, "Stop each run at this simulated time, in seconds");
  add_threads(cmd, o.threads, "Runs at once (0: one per core)")->capture_default_str();
  cmd->add_option("--out", o.out_dir, "Folder for presets.csv, preemptions.csv (classes.csv with classes of service) and presets.png")
      ->capture_default_str();
  cmd->add_flag_callback("--no-plot", [&] { o.plot = false; }, "Do not draw presets.png");
  return cmd;
}

#ifdef MESHSIM_RL_COMMANDS
CLI::App* add_train(CLI::App& app, TrainCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a PPO scaling policy on a scenario's RL environment");
  cmd->add_option("--config", o.config_path, "Scenario with an rl object; default: configs/scenarios/rl-train.json")
      ->check(CLI::ExistingFile);
  add_set(cmd, o.sets);
  cmd->add_option("--trace", o.trace, "Trace file to train on instead of the config's workload");
  add_trace_format(cmd, o.trace_format);
  cmd->add_option("--out", o.out_dir, "Folder for learning_curve.csv/.png, checkpoint/, config.json")
      ->capture_default_str();
  cmd->add_option("--seed", o.seed,
                  "The training's seed (rl.ppo.seed), an integer in [0, 2^64); the workload keeps the config's");
  cmd->add_option("--total-decisions", o.total_decisions, "Decisions to train for (overrides rl.ppo's)");
  add_threads(cmd, o.threads, "Environment threads, 0: one per core (overrides rl.ppo's)");
  cmd->add_option("--max-iterations", o.max_iterations,
                  "Stop after this many iterations, checkpointed (continue later with --resume)");
  cmd->add_flag("--resume", o.resume, "Continue the run in --out from its checkpoint");
  cmd->add_flag("--quiet", o.quiet, "Print no progress");
  cmd->add_flag_callback("--no-plot", [&] { o.plot = false; }, "Do not draw learning_curve.png");
  cmd->add_option("--world-size", o.world_size,
                  "Data-parallel ranks, each stepping num_envs / world size environments (default: mpirun's, else 1)");
  cmd->add_option("--rank", o.rank, "This process's rank, 0 to world size - 1 (default: mpirun's)");
  cmd->add_option("--store", o.store,
                  "Where the ranks meet: tcp://HOST:PORT (rank 0 serves it) or file://PATH (a fresh path every ranks reaches)");
  cmd->add_option("--timeout", o.timeout_s, "Seconds a rank waits for the others")->capture_default_str();
  add_catalog(cmd, o.catalog);
  cmd->add_option("--metrics-port", o.metrics_listen,
                  "Serve live Prometheus metrics (iteration, reward, losses) at http://[HOST:]PORT/metrics (rank 0)");
  return cmd;
}

CLI::App* add_eval(CLI::App& app, EvalCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
                                     "eval", "Judge trained policies against tuned baselines on the recipe's held-out windows");
  cmd->add_option("--config", o.config_path,
                  "The recipe (scenario with an rl object); default: the policy's run's config.json, else "
                  "configs/scenarios/rl-train.json")
      ->check(CLI::ExistingFile);
  add_set(cmd, o.sets);
  cmd->add_option("--policy", o.policies, "Checkpoint folder of meshsim train (its --out/checkpoint); repeat for several")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--split", o.split, "The recipe's spans to evaluate on: test or validation (default: test)");
  cmd->add_option("--trace", o.trace, "Evaluate on this trace file instead of the recipe's workload");
  cmd->add_option("--workload", o.workload_config, "Evaluate on this scenario file's workload instead")
      ->check(CLI::ExistingFile);
  add_catalog(cmd, o.catalog);
  add_trace_format(cmd, o.trace_format);
  cmd->add_option("--out", o.out_dir, "Folder for the CSVs and eval.png")->capture_default_str();
  add_seed(cmd, o.seed);
  cmd->add_option("--window-start", o.window_start_s, "Evaluate one window starting here (workload seconds)");
  cmd->add_option("--window", o.window_s, "Its length in seconds (default: to the workload's end)");
  cmd->add_flag("--allow-training-overlap", o.allow_training_overlap,
                "Judge a window that overlaps the recipe's training windows");
  cmd->add_option("--rate-scale", o.rate_scale, "Play the windows at this multiple of their rate")
      ->capture_default_str();
  cmd->add_option("--delays", o.delays_s, "Scale-up delays to evaluate at, seconds (default: every delay the recipe trains at)")
      ->delimiter(',');
  cmd->add_option("--kv-targets", o.grids.kv_targets, "Target tracking's KV-use targets tuned over (fractions)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--request-targets", o.grids.request_targets,
                  "Target tracking's requests-per-instance targets tuned over")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--rate-targets", o.grids.rate_targets,
                  "Target tracking's arrival-rate targets tuned over (requests/s per instance)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--token-targets", o.grids.token_targets,
                  "Target tracking's token-rate targets tuned over (tokens/s per instance)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--elastic-capacities", o.grids.elastic_capacities,
                  "Elastic's capacities tuned over (requests per worker)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--oracle-utilisations", o.grids.oracle_utilisations,
                  "The oracle's target utilisations tuned over (fractions of its capacity estimate)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--bound-utilisations", o.grids.bound_utilisations,
                  "The right-sizing bound's utilisations of the measured capacity, swept into its front")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--bound-prices", o.grids.bound_prices,
                  "How many prices of a miss the priced right-sizing bound is swept over")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--multi-metric-scales", o.grids.multi_metric_scales,
                  "Multi-metric target tracking's scales of the one-metric families' tuned targets, tuned over")
      ->delimiter(',')
      ->capture_default_str();
  auto* capacity_model = cmd->add_option(
      "--capacity-model", o.capacity_model,
      "A capacity model (meshsim capacity-model's capacity_model.json): capacity-units target tracking is tuned on "
      "the training windows and judged like a policy");
  cmd->add_option("--capacity-targets", o.grids.capacity_targets,
                  "Capacity-units target tracking's targets tuned over (fractions of the model's SLO capacity)")
      ->delimiter(',')
      ->capture_default_str()
      ->needs(capacity_model);  // played only with a model: never accepted and unused
  cmd->add_option("--max-static", o.max_static, "Largest static size swept")->capture_default_str();
  cmd->add_flag_callback("--no-plot", [&] { o.plot = false; }, "Do not draw eval.png");
  return cmd;
}

#endif

CLI::App* add_sweep(CLI::App& app, SweepCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
                                     "sweep", "Replay every run of a grid of config overrides x traces x seeds; one CSV of headline metrics");
  cmd->add_option("grid", o.grid, "Grid file (JSON or YAML): config, grid, list, traces, seeds")->required();
  add_set(cmd, o.sets);
  cmd->add_option("--out", o.out_dir, "New folder for sweep.csv and runs/NNNN/")->capture_default_str();
  add_threads(cmd, o.threads, "Runs at a time (0: one per core; under mpirun: one per process)")
      ->capture_default_str();
  cmd->add_flag("--resume", o.resume, "Finish a sweep of the same grid in --out, keeping its finished runs");
  cmd->add_flag("--quiet", o.quiet, "Print no summary line");
  add_catalog(cmd, o.catalog);
  cmd->add_option("--metrics-port", o.metrics_listen,
                  "Serve live Prometheus metrics (runs finished) at http://[HOST:]PORT/metrics (rank 0 under mpirun)");
  return cmd;
}

// An empty value is never meant: CLI11 reads "" as 0 for a number (`--until ''` would
// stop at once) and as nothing for a list (`--delays ''` would evaluate at 0 s), so every
// option that takes a value refuses one, and each element of a list.
void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) { return value.empty() ? std::string("expected a value, got an empty string") : ""; }, "");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_size() != 0) option->check(non_empty);
  }
  for (CLI::App* inner : app.get_subcommands({})) refuse_empty_values(*inner);  // commands and option groups
}

}  // namespace

int main(int argc, char** argv) {
  using namespace meshsim::cli;
  // Under a file-size limit (ulimit -f) a write then fails (EFBIG), which every writer
  // reports as an output error (exit 3, its temporary file removed), where SIGXFSZ's
  // default action would kill the process mid-write and leave .tmp files. The plot
  // scripts inherit it, so a PNG past the limit is an output error too.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"meshsim: a discrete-event simulator and RL testbed for GPU cluster scheduling"};
  app.set_version_flag("--version", MESHSIM_VERSION);
  app.require_subcommand(1);
  ReplayCommandOptions replay;
  CLI::App* replay_cmd = add_replay(app, replay);
  FitCommandOptions fit;
  CLI::App* fit_cmd = add_fit(app, fit);
  CapacityCommandOptions capacity;
  CLI::App* capacity_cmd = add_capacity(app, capacity);
  CapacityModelCommandOptions capacity_model;
  CLI::App* capacity_model_cmd = add_capacity_model(app, capacity_model);
  ModelsCommandOptions models;
  CLI::App* models_cmd = add_models(app, models);
  CalibrateCommandOptions calibrate;
  CalibrateReferenceOptions calibrate_reference;
  CLI::App* calibrate_cmd = add_calibrate(app, calibrate, calibrate_reference);
  ValidateCommandOptions validate;
  CLI::App* validate_cmd = add_validate(app, validate);
  ScenarioCommandOptions scenario;
  CLI::App* scenario_cmd = add_scenario(app, scenario);
  ComparePresetsOptions presets;
  CLI::App* presets_cmd = add_compare_presets(app, presets);
#ifdef MESHSIM_RL_COMMANDS
  TrainCommandOptions train;
  CLI::App* train_cmd = add_train(app, train);
  EvalCommandOptions eval;
  CLI::App* eval_cmd = add_eval(app, eval);
#endif
  SweepCommandOptions sweep;
  CLI::App* sweep_cmd = add_sweep(app, sweep);
  refuse_empty_values(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; any usage error is bad input.
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (replay_cmd->parsed()) return run_replay_command(replay, std::cout, std::cerr);
    if (fit_cmd->parsed()) return run_fit_command(fit, std::cout, std::cerr);
    if (models_cmd->parsed()) return run_models_command(models, std::cout, std::cerr);
    if (capacity_cmd->parsed()) return run_capacity_command(capacity, std::cout, std::cerr);
    if (capacity_model_cmd->parsed()) return run_capacity_model_command(capacity_model, std::cout, std::cerr);
    if (scenario_cmd->parsed()) return run_scenario_command(scenario, std::cout, std::cerr);
    if (calibrate_cmd->parsed()) {
      if (!calibrate_reference.references.empty()) {
        calibrate_reference.catalog = calibrate.catalog;
        return run_calibrate_reference(calibrate_reference, std::cout, std::cerr);
      }
      return run_calibrate_command(calibrate, std::cout, std::cerr);
    }
    if (validate_cmd->parsed()) return run_validate_command(validate, std::cout, std::cerr);
    if (presets_cmd->parsed()) return run_compare_presets_command(presets, std::cout, std::cerr);
    if (sweep_cmd->parsed()) {
#ifdef MESHSIM_MPI_COMPANION
      if (launched_by_mpi()) return run_companion("meshsim-mpi", argv, std::cerr);
#endif
      return run_sweep_command(sweep, std::cout, std::cerr);
    }
#ifdef MESHSIM_HAVE_RL
    if (train_cmd->parsed()) return run_train_command(train, std::cout, std::cerr);
    if (eval_cmd->parsed()) return run_eval_command(eval, std::cout, std::cerr);
#elif defined(MESHSIM_RL_COMMANDS)
    if (train_cmd->parsed() || eval_cmd->parsed()) return run_companion("meshsim-rl", argv, std::cerr);
#endif
  } catch (const meshsim::RangeError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return 70;  // EX_SOFTWARE
  }
  return 1;
}
