// The meshsim command line: subcommands over the library. Exceptions (broken invariants)
// are caught here, once. Built as meshsim and its companions (tools/CMakeLists.txt): a
// command whose library is not linked into this executable is parsed here all the same
// (one --help, one set of errors) and then run by its companion (companion.hpp).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "sim/engine/check.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/companion.hpp"
#include "tools/cli/compare_presets.hpp"
#include "tools/cli/reference_commands.hpp"
#include "tools/cli/scenario_command.hpp"
#include "tools/cli/sweep_command.hpp"
#include "tools/cli/sweep_mpi.hpp"
#if defined(MESHSIM_HAVE_RL) || defined(MESHSIM_RL_COMPANION)
#define MESHSIM_RL_COMMANDS 1
#include "tools/cli/eval_command.hpp"
#include "tools/cli/train_command.hpp"
#endif

int main(int argc, char** argv) {
  using namespace meshsim::cli;
  CLI::App app{"meshsim: a discrete-event simulator and RL testbed for GPU cluster scheduling"};
  app.set_version_flag("--version", MESHSIM_VERSION);
  app.require_subcommand(1);

  ReplayCommandOptions replay;
  auto* replay_cmd = app.add_subcommand("replay", "Replay a trace or generated workload through a scenario");
  replay_cmd->add_option("--config", replay.config_path, "Scenario file (JSON or YAML); default: the bundled default")
      ->check(CLI::ExistingFile);
  replay_cmd->add_option("--trace", replay.trace, "Trace file to replay instead of the config's workload");
  replay_cmd->add_option("--trace-format", replay.trace_format, "auto, azure or mooncake")->capture_default_str();
  replay_cmd->add_option("--out", replay.out_dir, "Run folder for summary.json, requests.csv, timeseries.csv")
      ->capture_default_str();
  replay_cmd->add_option("--seed", replay.seed, "Random seed, an integer in [0, 2^64) (overrides the config's)");
  replay_cmd->add_option("--rate-scale", replay.rate_scale, "Multiply the arrival rate (2 = twice as fast)");
  replay_cmd->add_option("--until", replay.until_s, "Stop at this simulated time, in seconds");
  replay_cmd->add_option("--trace-events", replay.trace_events,
                         "Write instance activity as Chrome/Perfetto trace JSON to this file");
  replay_cmd->add_option("--autoscaler", replay.autoscaler,
                         "Autoscaling policy: none, static, elastic, target_tracking or oracle (parameters "
                         "from the config's autoscaler object)");
  replay_cmd->add_flag("--scaling-log", replay.scaling_log, "Print the ScalingManager's actions on stderr");
  replay_cmd->add_flag("--quiet", replay.quiet, "Print no summary table");
  replay_cmd->add_option("--catalog", replay.catalog,
                         "Folder of your own hardware.json, models.json, perf_fits.json over the bundled ones");
  replay_cmd->add_option("--metrics-port", replay.metrics_listen,
                         "Serve live Prometheus metrics at http://[HOST:]PORT/metrics during the run (HOST: 127.0.0.1)");

  FitCommandOptions fit;
  auto* fit_cmd = app.add_subcommand("fit-trace", "Fit a workload generator to a trace and print it as JSON");
  fit_cmd->add_option("--trace", fit.trace, "Trace file")->required();
  fit_cmd->add_option("--trace-format", fit.trace_format, "auto, azure or mooncake")->capture_default_str();
  fit_cmd->add_option("--name", fit.name, "Name of the generator")->capture_default_str();

  CalibrateCommandOptions calibrate;
  std::string calibrate_reference;
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate",
      "Fit a performance model and print it: the roofline to a profile CSV (perf_fits.json), or the step-time "
      "model to request-level measurements (step_model.json)");
  auto* profile_opt =
      calibrate_cmd->add_option("--profile", calibrate.profile, "Profile CSV (SplitwiseSim perf_model.csv layout)");
  auto* reference_opt = calibrate_cmd->add_option(
      "--reference", calibrate_reference, "Serving reference CSV (the layout of vllm-h100-measured.csv)");
  profile_opt->excludes(reference_opt);
  calibrate_cmd->require_option(1);
  calibrate_cmd->add_option("--catalog", calibrate.catalog, "Folder of your own hardware.json, models.json over the bundled ones");

  ValidateCommandOptions validate;
  auto* validate_cmd = app.add_subcommand(
      "validate", "Replay each row of a serving reference CSV and compare predicted with measured latencies");
  validate_cmd->add_option("--reference", validate.reference, "Serving reference CSV (vllm-h100-measured.csv layout)")
      ->required();
  validate_cmd->add_option("--catalog", validate.catalog,
                           "Folder of your own hardware.json, models.json, hf/, step_model.json over the bundled ones");
  validate_cmd->add_flag("--json", validate.json, "Print {\"rows\": [...]} with the predicted figures instead of a table");
  validate_cmd->add_option("--seed", validate.seed, "Random seed of the workloads")->capture_default_str();
  validate_cmd->add_option("--client-timeout", validate.client_timeout_s,
                           "Seconds after which the load generator gives up on a request, which is then aborted "
                           "(0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));

  ScenarioCommandOptions scenario;
  auto* scenario_cmd = app.add_subcommand(
      "scenario", "Play a script of scheduling-core calls; print one JSON result per step");
  scenario_cmd->add_option("script", scenario.script, "Script file (JSON or YAML)")->required()->check(CLI::ExistingFile);
  scenario_cmd->add_flag("--check", scenario.check, "Check the core's invariants after every step");
  scenario_cmd->add_option("--metrics", scenario.metrics, "Write the Prometheus metrics (text format) to this file");

  ComparePresetsOptions presets;
  auto* presets_cmd = app.add_subcommand(
      "compare-presets", "Run a shared-cluster scenario under each preemption preset and policy file; compare");
  presets_cmd->add_option("--config", presets.config_path,
                          "Scenario with a fixed cluster; default: configs/scenarios/shared-cluster-synthetic.json")
      ->check(CLI::ExistingFile);
  presets_cmd->add_option("--presets", presets.presets, "Presets to run (names or aliases)")
      ->delimiter(',')
      ->capture_default_str();
  presets_cmd->add_option("--policy", presets.policy_files,
                          "A policy file (update_preemption_policy's fields, optional \"name\"); repeatable")
      ->check(CLI::ExistingFile);
  presets_cmd->add_option("--seed", presets.seed, "Random seed, an integer in [0, 2^64) (overrides the config's)");
  presets_cmd->add_option("--until", presets.until_s, "Stop each run at this simulated time, in seconds");
  presets_cmd->add_option("--threads", presets.threads, "Runs at once (0: one per core)")->capture_default_str();
  presets_cmd->add_option("--out", presets.out_dir, "Folder for presets.csv and presets.png")->capture_default_str();
  presets_cmd->add_flag_callback("--no-plot", [&] { presets.plot = false; }, "Do not draw presets.png");

#ifdef MESHSIM_RL_COMMANDS
  TrainCommandOptions train;
  auto* train_cmd = app.add_subcommand("train", "Train a PPO scaling policy on a scenario's RL environment");
  train_cmd->add_option("--config", train.config_path, "Scenario with an rl object; default: configs/scenarios/rl-train.json")
      ->check(CLI::ExistingFile);
  train_cmd->add_option("--trace", train.trace, "Trace file to train on instead of the config's workload");
  train_cmd->add_option("--trace-format", train.trace_format, "auto, azure or mooncake")->capture_default_str();
  train_cmd->add_option("--out", train.out_dir, "Folder for learning_curve.csv/.png, checkpoint/, config.json")
      ->capture_default_str();
  train_cmd->add_option("--seed", train.seed,
                        "The training's seed (rl.ppo.seed), an integer in [0, 2^64); the workload keeps the config's");
  train_cmd->add_option("--total-decisions", train.total_decisions, "Decisions to train for (overrides rl.ppo's)");
  train_cmd->add_option("--threads", train.threads, "Environment threads, 0: one per core (overrides rl.ppo's)");
  train_cmd->add_option("--max-iterations", train.max_iterations,
                        "Stop after this many iterations, checkpointed (continue later with --resume)");
  train_cmd->add_flag("--resume", train.resume, "Continue the run in --out from its checkpoint");
  train_cmd->add_flag("--quiet", train.quiet, "Print no progress");
  train_cmd->add_flag_callback("--no-plot", [&] { train.plot = false; }, "Do not draw learning_curve.png");
  train_cmd->add_option("--world-size", train.world_size,
                        "Data-parallel ranks, each stepping num_envs / world size environments (default: mpirun's, else 1)");
  train_cmd->add_option("--rank", train.rank, "This process's rank, 0 to world size - 1 (default: mpirun's)");
  train_cmd->add_option("--store", train.store,
                        "Where the ranks meet: tcp://HOST:PORT (rank 0 serves it) or file://PATH (a fresh path every ranks reaches)");
  train_cmd->add_option("--timeout", train.timeout_s, "Seconds a rank waits for the others")->capture_default_str();
  train_cmd->add_option("--catalog", train.catalog,
                        "Folder of your own hardware.json, models.json, perf_fits.json over the bundled ones");
  train_cmd->add_option("--metrics-port", train.metrics_listen,
                        "Serve live Prometheus metrics (iteration, reward, losses) at http://[HOST:]PORT/metrics (rank 0)");

  EvalCommandOptions eval;
  auto* eval_cmd = app.add_subcommand(
      "eval", "Judge trained policies against tuned baselines on the recipe's held-out windows");
  eval_cmd->add_option("--config", eval.config_path,
                       "The recipe (scenario with an rl object); default: the policy's run's config.json, else "
                       "configs/scenarios/rl-train.json")
      ->check(CLI::ExistingFile);
  eval_cmd->add_option("--policy", eval.policies, "Checkpoint folder of meshsim train (its --out/checkpoint); repeat for several")
      ->check(CLI::ExistingDirectory);
  eval_cmd->add_option("--split", eval.split, "The recipe's spans to evaluate on: test or validation")->capture_default_str();
  eval_cmd->add_option("--trace", eval.trace, "Evaluate on this trace file instead of the recipe's workload");
  eval_cmd->add_option("--workload", eval.workload_config, "Evaluate on this scenario file's workload instead")
      ->check(CLI::ExistingFile);
  eval_cmd->add_option("--catalog", eval.catalog,
                       "Folder of your own hardware.json, models.json, perf_fits.json over the bundled ones");
  eval_cmd->add_option("--trace-format", eval.trace_format, "auto, azure or mooncake")->capture_default_str();
  eval_cmd->add_option("--out", eval.out_dir, "Folder for the CSVs and eval.png")->capture_default_str();
  eval_cmd->add_option("--seed", eval.seed, "Random seed, an integer in [0, 2^64) (overrides the config's)");
  eval_cmd->add_option("--window-start", eval.window_start_s, "Evaluate one window starting here (workload seconds)");
  eval_cmd->add_option("--window", eval.window_s, "Its length in seconds (default: to the workload's end)");
  eval_cmd->add_flag("--allow-training-overlap", eval.allow_training_overlap,
                     "Judge a window that overlaps the recipe's training windows");
  eval_cmd->add_option("--rate-scale", eval.rate_scale, "Play the windows at this multiple of their rate")
      ->capture_default_str();
  eval_cmd->add_option("--delays", eval.delays_s, "Scale-up delays to evaluate at, seconds (default: every delay the recipe trains at)")
      ->delimiter(',');
  eval_cmd->add_option("--kv-targets", eval.grids.kv_targets, "Target tracking's KV-use targets tuned over (fractions)")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--request-targets", eval.grids.request_targets,
                       "Target tracking's requests-per-instance targets tuned over")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--rate-targets", eval.grids.rate_targets,
                       "Target tracking's arrival-rate targets tuned over (requests/s per instance)")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--token-targets", eval.grids.token_targets,
                       "Target tracking's token-rate targets tuned over (tokens/s per instance)")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--elastic-capacities", eval.grids.elastic_capacities,
                       "Elastic's capacities tuned over (requests per worker)")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--oracle-utilisations", eval.grids.oracle_utilisations,
                       "The oracle's target utilisations tuned over (fractions of its capacity estimate)")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--bound-utilisations", eval.grids.bound_utilisations,
                       "The right-sizing bound's utilisations of the measured capacity, swept into its front")
      ->delimiter(',')
      ->capture_default_str();
  eval_cmd->add_option("--max-static", eval.max_static, "Largest static size swept")->capture_default_str();
  eval_cmd->add_flag_callback("--no-plot", [&] { eval.plot = false; }, "Do not draw eval.png");
#endif

  SweepCommandOptions sweep;
  auto* sweep_cmd = app.add_subcommand(
      "sweep", "Replay every run of a grid of config overrides x traces x seeds; one CSV of headline metrics");
  sweep_cmd->add_option("grid", sweep.grid, "Grid file (JSON or YAML): config, grid, list, traces, seeds")->required();
  sweep_cmd->add_option("--out", sweep.out_dir, "New folder for sweep.csv and runs/NNNN/")->capture_default_str();
  sweep_cmd->add_option("--threads", sweep.threads, "Runs at a time (0: one per core; under mpirun: one per process)")
      ->capture_default_str();
  sweep_cmd->add_flag("--resume", sweep.resume, "Finish a sweep of the same grid in --out, keeping its finished runs");
  sweep_cmd->add_flag("--quiet", sweep.quiet, "Print no summary line");
  sweep_cmd->add_option("--catalog", sweep.catalog,
                        "Folder of your own hardware.json, models.json, perf_fits.json over the bundled ones");
  sweep_cmd->add_option("--metrics-port", sweep.metrics_listen,
                        "Serve live Prometheus metrics (runs finished) at http://[HOST:]PORT/metrics (rank 0 under mpirun)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; any usage error is bad input.
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    if (replay_cmd->parsed()) return run_replay_command(replay, std::cout, std::cerr);
    if (fit_cmd->parsed()) return run_fit_command(fit, std::cout, std::cerr);
    if (scenario_cmd->parsed()) return run_scenario_command(scenario, std::cout, std::cerr);
    if (calibrate_cmd->parsed()) {
      if (!calibrate_reference.empty()) {
        return run_calibrate_reference(calibrate_reference, calibrate.catalog, std::cout, std::cerr);
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
