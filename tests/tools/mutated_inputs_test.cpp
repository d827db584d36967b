// One rule for failures, per command: an input file mutated at random (a value of another
// type or out of every range, a key removed or unknown, a value wrapped in a list, a CSV
// field changed) ends in exit 0 or 2 (1 for a script whose expectations fail, 3 for an
// output the command cannot write), never in an exception (the command line's exit 70)
// or a crash. Runs are kept short by the commands' own --until; each failure prints the
// mutated input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "configs/config_file.hpp"
#include "tests/json_mutation.hpp"
#include "configs/scenario_config.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/capacity_command.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/compare_presets.hpp"
#include "tools/cli/models_command.hpp"
#include "tools/cli/reference_commands.hpp"
#include "tools/cli/scenario_command.hpp"
#include "tools/cli/sweep_command.hpp"
#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::fresh_dir;
using testing::slurp;

// MESHSIM_MUTATION_SEED=N explores other mutations than the suite's (0).
std::uint64_t seed_offset() {
  const char* text = std::getenv("MESHSIM_MUTATION_SEED");
  return text == nullptr ? 0 : std::strtoull(text, nullptr, 10) * 1000;
}

// A CSV with one field of one line (the header too) changed, or a field added or removed.
std::string mutated_csv(const std::string& text, std::mt19937_64& rng) {
  // Bad text, and the edges of what a count takes (1 and 10^7 tokens).
  static const char* kFields[] = {"", "-1", "0", "0.5", "1e300", "nan", "inf", "abc", "4294967296",
                                  "18446744073709551616", "True", "\"", "1,2", "1", "10000000"};
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string& line = lines[rng() % lines.size()];
  std::vector<std::string> fields;
  std::istringstream cells(line);
  for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
  switch (rng() % 3) {
    case 0: fields[rng() % fields.size()] = kFields[rng() % std::size(kFields)]; break;
    case 1: fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(rng() % fields.size())); break;
    default: fields.push_back(kFields[rng() % std::size(kFields)]); break;
  }
  line.clear();
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i > 0 ? "," : "") + fields[i];
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Runs `command` on `trials` inputs drawn by `draw` (each written to `file`), each exit
// code among `allowed`, none throwing; counts the refusals and the runs so the test shows
// it reached the checks and got past them.
void expect_only_exit_codes(const std::string& name, const std::function<std::string(std::mt19937_64&)>& draw,
                            const std::string& file, int trials, const std::set<int>& allowed,
                            const std::function<int(std::ostream&, std::ostream&)>& command, std::uint64_t seed) {
  std::mt19937_64 rng(seed + seed_offset());
  int refused = 0, ran = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const std::string input = draw(rng);
    std::ofstream(file) << input;
    std::ostringstream out, err;
    int code = -1;
    try {
      code = command(out, err);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << " trial " << trial << " threw " << e.what() << " on\n" << input;
      continue;
    }
    EXPECT_TRUE(allowed.contains(code)) << name << " trial " << trial << ": exit " << code << "\n"
                                        << err.str() << "\non\n" << input;
    refused += code == kExitBadInput;
    ran += code == kExitOk;
  }
  EXPECT_GT(refused, trials / 10) << name;
  EXPECT_GT(ran, 0) << name;
  std::printf("%s: %d mutated inputs, %d refused (exit 2), %d ran\n", name.c_str(), trials, refused, ran);
}

// The same on mutations of the JSON document `base`.
void expect_only_exit_codes(const std::string& name, const json& base, const std::string& file, int trials,
                            const std::set<int>& allowed, const std::function<int(std::ostream&, std::ostream&)>& command,
                            std::uint64_t seed) {
  const auto draw = [&](std::mt19937_64& rng) { return meshsim::mutation::mutated(base, rng).dump(1); };
  expect_only_exit_codes(name, draw, file, trials, allowed, command, seed);
}

// Strings naming a file beside `base` made absolute, so the tree can be written elsewhere.
void absolute_paths(json& doc, const fs::path& base) {
  if (doc.is_object() || doc.is_array()) {
    for (auto& item : doc) absolute_paths(item, base);
  } else if (std::error_code error; doc.is_string() && !doc.get<std::string>().empty() &&
                                     fs::is_regular_file(base / doc.get<std::string>(), error)) {
    doc = (base / doc.get<std::string>()).lexically_normal().string();
  }
}

// A shipped scenario, its files named by absolute paths.
json shipped_scenario(const std::string& name) {
  const fs::path file = fs::path(configs::default_scenario_path()).parent_path() / (name + ".json");
  json scenario = json::parse(slurp(file));
  absolute_paths(scenario, file.parent_path());
  return scenario;
}

TEST(MutatedInputsTest, ReplayModelsAndCapacityExitWithAnInputError) {
  const fs::path dir = fresh_dir("mutated_replay");
  fs::create_directories(dir);
  const std::string file = (dir / "scenario.json").string();
  int run = 0;
  std::vector<std::string> names = {"default", "shared-cluster-synthetic"};
  // splitwise-ha replays ../shared's trace on its profile: mutated too where they are (and
  // under MESHSIM_REQUIRE_SHARED, where their absence fails it).
  if (fs::exists(::meshsim::testing::shared_path("reference/splitwise_perf_model.csv")) ||
      ::meshsim::testing::shared_required()) {
    names.insert(names.begin() + 1, "splitwise-ha");
  }
  for (const std::string& name : names) {
    expect_only_exit_codes(
        std::string("replay ") + name, shipped_scenario(name), file, 500, {kExitOk, kExitBadInput},
        [&](std::ostream& out, std::ostream& err) {
          ReplayCommandOptions options;
          options.config_path = file;
          options.out_dir = (dir / ("out" + std::to_string(run++))).string();
          options.until_s = 20;
          options.quiet = true;
          return run_replay_command(options, out, err);
        },
        7);
  }
  expect_only_exit_codes("models", shipped_scenario("default"), file, 300, {kExitOk, kExitBadInput},
                         [&](std::ostream& out, std::ostream& err) {
                           ModelsCommandOptions options;
                           options.config_path = file;
                           return run_models_command(options, out, err);
                         },
                         8);
  expect_only_exit_codes("capacity", shipped_scenario("default"), file, 60, {kExitOk, kExitBadInput},
                         [&](std::ostream& out, std::ostream& err) {
                           CapacityCommandOptions options;
                           options.config_path = file;
                           options.until_s = 20;
                           options.max_instances = 4;
                           options.threads = 1;
                           options.plot = false;
                           options.out_dir = (dir / ("capacity" + std::to_string(run++))).string();
                           return run_capacity_command(options, out, err);
                         },
                         9);
}

TEST(MutatedInputsTest, ComparePresetsAndSweepExitWithAnInputError) {
  const fs::path dir = fresh_dir("mutated_presets");
  fs::create_directories(dir);
  const std::string file = (dir / "scenario.json").string();
  int run = 0;
  expect_only_exit_codes("compare-presets", shipped_scenario("shared-cluster-synthetic"), file, 100,
                         {kExitOk, kExitBadInput},
                         [&](std::ostream& out, std::ostream& err) {
                           ComparePresetsOptions options;
                           options.config_path = file;
                           options.until_s = 20;
                           options.threads = 1;
                           options.plot = false;
                           options.out_dir = (dir / ("presets" + std::to_string(run++))).string();
                           return run_compare_presets_command(options, out, err);
                         },
                         10);
  json base = shipped_scenario("default");
  base["run"]["until_s"] = 20;
  std::ofstream(dir / "base.json") << base.dump();
  const json grid = {{"config", (dir / "base.json").string()},
                     {"grid", {{"workload.rate_scale", {0.5, 1}}, {"serving.start_state.0.count", {1, 2}}}},
                     {"list", json::array({json{{"slo.ttft_ms", 500}}})},
                     {"seeds", {1, 2}}};
  expect_only_exit_codes("sweep", grid, (dir / "grid.json").string(), 150, {kExitOk, kExitBadInput},
                         [&](std::ostream& out, std::ostream& err) {
                           SweepCommandOptions options;
                           options.grid = (dir / "grid.json").string();
                           options.threads = 1;
                           options.quiet = true;
                           options.out_dir = (dir / ("sweep" + std::to_string(run++))).string();
                           return run_sweep_command(options, out, err);
                         },
                         11);
}

TEST(MutatedInputsTest, ScriptsExitWithAnInputErrorOrUnmetExpectations) {
  const fs::path dir = fresh_dir("mutated_scripts");
  fs::create_directories(dir);
  const std::string file = (dir / "script.json").string();
  const fs::path scripts = fs::path(MESHSIM_SOURCE_DIR) / "experiments/scenarios";
  std::uint64_t seed = 20;
  for (const char* name : {"p01_basic_flow", "e2_drain", "e4_scaling_manager", "p05_label_tiers"}) {
    expect_only_exit_codes(std::string("scenario ") + name, json::parse(slurp(scripts / (std::string(name) + ".json"))),
                           file, 400, {kExitOk, kExitExpectationsUnmet, kExitBadInput},
                           [&](std::ostream& out, std::ostream& err) {
                             ScenarioCommandOptions options;
                             options.script = file;
                             options.check = true;
                             options.allow_files = false;
                             return run_scenario_command(options, out, err);
                           },
                           seed++);
  }
}

TEST(MutatedInputsTest, ValidateAndFitTraceExitWithAnInputError) {
  const fs::path dir = fresh_dir("mutated_csv");
  fs::create_directories(dir);
  const std::string reference =
      "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,system_prompt_len,question_len,"
      "output_len,num_unique_system_prompts,num_users_per_system_prompt,multi_turn_chat,arrival,rate_per_s,"
      "duration_s,prompt_len_mean,e2e_p50_s,ttft_p50_s\n"
      "meta-llama/Llama-2-7b-hf,1,H100-SXM-80GB,2048,128,4096,100,400,50,2,2,False,constant,5,20,520,1.1,0.03\n";
  const std::string trace = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"
                            "2023-11-16 18:15:50.1000000,1200,300\n2023-11-16 18:15:51.5000000,80,20\n";
  const std::string ref_csv = (dir / "ref.csv").string(), trace_csv = (dir / "trace.csv").string();
  expect_only_exit_codes(
      "validate", [&](std::mt19937_64& rng) { return mutated_csv(reference, rng); }, ref_csv, 400,
      {kExitOk, kExitBadInput},
      [&](std::ostream& out, std::ostream& err) {
        ValidateCommandOptions options;
        options.reference = ref_csv;
        return run_validate_command(options, out, err);
      },
      30);
  // A closed-loop table (AIConfigurator's layout), two rows of a bundled model.
  const std::string table =
      "id,backend,model_path,system,precision,mode,isl,osl,batch_size,tp_size,pp_size,attention_dp_size,"
      "moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"
      "a,vllm,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,64,4,4,1,1,4,1,90,10\n"
      "b,vllm,meta-llama/Llama-3.1-70B,b200_sxm,fp8,agg,512,32,8,2,1,1,2,1,80,9\n";
  const std::string table_csv = (dir / "table.csv").string();
  expect_only_exit_codes(
      "validate (closed loop)", [&](std::mt19937_64& rng) { return mutated_csv(table, rng); }, table_csv, 300,
      {kExitOk, kExitBadInput},
      [&](std::ostream& out, std::ostream& err) {
        ValidateCommandOptions options;
        options.reference = table_csv;
        options.requests_per_client = 2;
        return run_validate_command(options, out, err);
      },
      32);
  expect_only_exit_codes(
      "fit-trace", [&](std::mt19937_64& rng) { return mutated_csv(trace, rng); }, trace_csv, 400,
      {kExitOk, kExitBadInput},
      [&](std::ostream& out, std::ostream& err) {
        FitCommandOptions options;
        options.trace = trace_csv;
        return run_fit_command(options, out, err);
      },
      31);
}

}  // namespace
}  // namespace meshsim::cli
