// The serving model against real vLLM measurements (meshsim validate) and the step-time
// model's calibration (meshsim calibrate --reference), end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/reference_commands.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;

const std::string kReference = ::meshsim::testing::shared_path("reference/vllm-h100-measured.csv");

// The issue's bar: over the rows the server kept up with, median |error| of E2E P50 at most
// 10% and of TTFT P50 at most 20%, no row's E2E P50 off by more than 25%.
TEST(ValidateCommandTest, TheServingModelMatchesRealVllmOnH100) {
  MESHSIM_NEED_SHARED_FILE(kReference);
  std::ostringstream out, err;
  ValidateCommandOptions options;
  options.reference = kReference;
  options.json = true;
  ASSERT_EQ(run_validate_command(options, out, err), kExitOk) << err.str();
  const auto report = nlohmann::json::parse(out.str());
  ASSERT_EQ(report["rows"].size(), 17u);  // one per input row, in input order
  std::size_t kept_up = 0;
  for (std::size_t i = 0; i < report["rows"].size(); ++i) {
    const auto& row = report["rows"][i];
    EXPECT_EQ(row["line"], i + 2);
    EXPECT_GT(row["e2e_p50_s"].get<double>(), 0.0);
    if (!row["kept_up"].get<bool>()) {
      // The overloaded rows overload here too: TTFT P50 within 2x (queueing, bounded by
      // the client's timeout), requests given up on.
      const double ratio = 1.0 + row["errors"]["ttft_p50"].get<double>();
      EXPECT_GE(ratio, 0.5) << row.dump();
      EXPECT_LE(ratio, 2.0) << row.dump();
      EXPECT_GT(row["ttft_p50_s"].get<double>(), 10.0) << row.dump();
      continue;
    }
    ++kept_up;
    EXPECT_LE(std::fabs(row["errors"]["e2e_p50"].get<double>()), 0.25) << row.dump();
    EXPECT_EQ(row["failures"], 0) << row.dump();
  }
  EXPECT_EQ(kept_up, 14u);
  EXPECT_LE(report["median_abs_error"]["e2e_p50"].get<double>(), 0.10);
  EXPECT_LE(report["median_abs_error"]["ttft_p50"].get<double>(), 0.20);
}

TEST(ValidateCommandTest, ABadRowIsNamedByLineAndColumn) {
  const fs::path dir = fresh_dir("validate_bad");
  fs::create_directories(dir);
  const fs::path csv = dir / "ref.csv";
  std::ofstream(csv) << "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,"
                        "system_prompt_len,question_len,output_len,num_unique_system_prompts,"
                        "num_users_per_system_prompt,rate_per_s,duration_s\n"
                        "meta-llama/Llama-2-7b-hf,1,H100-SXM-80GB,2048,128,4096,100,400,200,2,2,5,60\n"
                        "meta-llama/Llama-2-7b-hf,1,H100-SXM-80GB,2048,128,4096,100,400,2x0,2,2,5,60\n";
  std::ostringstream out, err;
  ValidateCommandOptions options;
  options.reference = csv.string();
  EXPECT_EQ(run_validate_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("ref.csv:3: output_len"), std::string::npos) << err.str();

  std::ofstream(csv) << "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,"
                        "system_prompt_len,question_len,output_len,num_unique_system_prompts,"
                        "num_users_per_system_prompt,rate_per_s,duration_s\n"
                        "no/such-model,1,H100-SXM-80GB,2048,128,4096,100,400,200,2,2,5,60\n";
  err.str("");
  EXPECT_EQ(run_validate_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("ref.csv:2: model: no model 'no/such-model'"), std::string::npos) << err.str();
}

// The workload columns are honoured or refused: `arrival` constant or poisson (replayed as
// such: they predict differently), `multi_turn_chat` True or False (True needs the measured
// prompt, which holds the history); any other text is named by line and column (it was
// read as "constant" and "no").
TEST(ValidateCommandTest, WorkloadColumnsAreHonouredOrRefused) {
  const fs::path dir = fresh_dir("validate_columns");
  fs::create_directories(dir);
  const auto validate = [&](const std::string& arrival, const std::string& multi, const std::string& prompt_mean) {
    std::ofstream(dir / "ref.csv") << "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,"
                                      "system_prompt_len,question_len,output_len,num_unique_system_prompts,"
                                      "num_users_per_system_prompt,multi_turn_chat,arrival,rate_per_s,duration_s,"
                                      "prompt_len_mean\n"
                                      "meta-llama/Llama-2-7b-hf,1,H100-SXM-80GB,2048,128,4096,100,400,100,2,2,"
                                   << multi << "," << arrival << ",20,60," << prompt_mean << "\n";
    ValidateCommandOptions options;
    options.reference = (dir / "ref.csv").string();
    options.json = true;
    std::ostringstream out, err;
    const int code = run_validate_command(options, out, err);
    return std::tuple(code, out.str(), err.str());
  };
  const auto [constant_code, constant, constant_err] = validate("constant", "False", "");
  ASSERT_EQ(constant_code, kExitOk) << constant_err;
  const auto [poisson_code, poisson, poisson_err] = validate("poisson", "false", "");
  ASSERT_EQ(poisson_code, kExitOk) << poisson_err;
  EXPECT_NE(nlohmann::json::parse(constant)["rows"][0]["ttft_p50_s"],
            nlohmann::json::parse(poisson)["rows"][0]["ttft_p50_s"]);
  EXPECT_EQ(std::get<0>(validate("", "", "")), kExitOk);  // absent: constant, single-turn
  EXPECT_EQ(std::get<0>(validate("constant", "True", "520")), kExitOk);
  for (const auto& [arrival, multi, prompt_mean, expected] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"bursty", "False", "", "ref.csv:2: arrival: expected constant or poisson"},
           {"Constant", "False", "", "ref.csv:2: arrival: expected constant or poisson"},
           {"constant", "yes", "", "ref.csv:2: multi_turn_chat: expected True or False, got 'yes'"},
           {"constant", "True", "", "ref.csv:2: prompt_len_mean: expected the measured mean prompt"},
           // Past 2^32 tokens (a prompt of 0 tokens once reached the scheduler: exit 70).
           {"constant", "False", "4294967296", "ref.csv:2: prompt_len_mean: expected a token count up to 10000000"}}) {
    const auto [code, out, err] = validate(arrival, multi, prompt_mean);
    EXPECT_EQ(code, kExitBadInput) << arrival << " " << multi;
    EXPECT_NE(err.find(expected), std::string::npos) << err;
  }
}

TEST(ValidateCommandTest, AReplayThatCompletesNothingPredictsNothingAndHasNoError) {
  // Measured figures, but a context of 16 tokens: the replay completes no request. Its
  // latencies are null ("-"), never 0.000 s and -100%, and it joins no median.
  const fs::path dir = fresh_dir("validate_nothing");
  fs::create_directories(dir);
  std::ofstream(dir / "ref.csv") << "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,"
                                    "system_prompt_len,question_len,output_len,num_unique_system_prompts,"
                                    "num_users_per_system_prompt,rate_per_s,duration_s,requests,failures,"
                                    "e2e_p50_s,ttft_p50_s\n"
                                    "meta-llama/Llama-2-7b-hf,1,H100-SXM-80GB,2048,128,16,100,400,100,2,2,5,60,300,0,"
                                    "1.8,0.025\n";
  ValidateCommandOptions options;
  options.reference = (dir / "ref.csv").string();
  options.json = true;
  std::ostringstream out, err;
  ASSERT_EQ(run_validate_command(options, out, err), kExitOk) << err.str();
  const auto report = nlohmann::json::parse(out.str());
  const auto row = report["rows"][0];
  EXPECT_EQ(row["requests"], 0);
  for (const char* figure : {"e2e_p50_s", "ttft_p50_s", "inter_token_mean_s", "e2e_mean_s"}) {
    EXPECT_TRUE(row[figure].is_null()) << figure << ": " << row[figure];
  }
  for (const char* figure : {"e2e_p50", "ttft_p50"}) {
    EXPECT_TRUE(row["errors"][figure].is_null()) << figure;
    EXPECT_TRUE(report["median_abs_error"][figure].is_null()) << figure;
  }
  options.json = false;
  std::ostringstream table, table_err;
  ASSERT_EQ(run_validate_command(options, table, table_err), kExitOk) << table_err.str();
  EXPECT_EQ(table.str().find("-100.0%"), std::string::npos) << table.str();
  EXPECT_EQ(table.str().find("0.000"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("(no request completed in the replay)"), std::string::npos) << table.str();
}

TEST(ValidateCommandTest, ARowWithoutMeasurementsIsPredicted) {
  // A user's own deployment: a model from a Hugging Face config.json in --catalog, no
  // measured columns; the command predicts, and reports no error against nothing.
  const fs::path dir = fresh_dir("validate_own");
  fs::create_directories(dir / "hf/acme/tiny-llama");
  std::ofstream(dir / "hf/acme/tiny-llama/config.json")
      << R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 16,
            "num_key_value_heads": 4, "intermediate_size": 5632, "vocab_size": 32000, "torch_dtype": "bfloat16"})";
  std::ofstream(dir / "ref.csv") << "model,tensor_parallel,gpu,max_num_batched_tokens,max_num_seqs,max_model_len,"
                                    "system_prompt_len,question_len,output_len,num_unique_system_prompts,"
                                    "num_users_per_system_prompt,rate_per_s,duration_s\n"
                                    "acme/tiny-llama,1,H100-SXM-80GB,2048,128,4096,100,400,100,2,2,5,60\n";
  std::ostringstream out, err;
  ValidateCommandOptions options;
  options.reference = (dir / "ref.csv").string();
  options.catalog = dir.string();
  options.json = true;
  ASSERT_EQ(run_validate_command(options, out, err), kExitOk) << err.str();
  const auto report = nlohmann::json::parse(out.str());
  const auto row = report["rows"][0];
  EXPECT_EQ(row["requests"], 300);
  EXPECT_GT(row["ttft_p50_s"].get<double>(), 0.0);
  EXPECT_LT(row["ttft_p50_s"].get<double>(), 1.0);
  for (const char* figure : {"e2e_p50", "ttft_p50", "inter_token_mean"}) {
    EXPECT_TRUE(row["errors"][figure].is_null()) << figure;
    EXPECT_TRUE(report["median_abs_error"][figure].is_null()) << figure;
  }
  // The table says there is nothing to compare, never "0.0%" over 0 rows.
  options.json = false;
  std::ostringstream table, table_err;
  ASSERT_EQ(run_validate_command(options, table, table_err), kExitOk) << table_err.str();
  EXPECT_NE(table.str().find("no error to report"), std::string::npos) << table.str();
  EXPECT_EQ(table.str().find("0.0%"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("      -"), std::string::npos) << table.str();
  for (const double bad : {std::nan(""), -1.0, 1e13}) {
    options.client_timeout_s = bad;
    std::ostringstream refused_out, refused_err;
    EXPECT_EQ(run_validate_command(options, refused_out, refused_err), kExitBadInput) << bad;
    EXPECT_NE(refused_err.str().find("--client-timeout: expected seconds in [0, 1e12]"), std::string::npos)
        << refused_err.str();
  }
}

CalibrateReferenceOptions calibrate_options(std::vector<std::string> references, std::vector<std::string> skus = {}) {
  CalibrateReferenceOptions options;
  options.references = std::move(references);
  options.skus = std::move(skus);
  return options;
}

TEST(CalibrateReferenceTest, FitsCoefficientsThatPredictTheRowsItWasFittedOn) {
  MESHSIM_NEED_SHARED_FILE(kReference);
  std::ostringstream out, err;
  ASSERT_EQ(run_calibrate_reference(calibrate_options({kReference}), out, err), kExitOk) << err.str();
  const auto fits = nlohmann::json::parse(out.str());
  ASSERT_EQ(fits["fits"].size(), 1u);
  EXPECT_EQ(fits["fits"][0]["sku"], "h100-80gb");
  // Memory-bound decode: the weights are read at no more than the datasheet's bandwidth.
  EXPECT_GE(fits["fits"][0]["weights"].get<double>(), 1.0);
  EXPECT_NE(err.str().find("vllm-h100-measured.csv: 3 rows the server did not keep up with"), std::string::npos)
      << err.str();
  // A SKU the file does not measure leaves nothing to fit, and --sku names what it lacks.
  std::ostringstream none_out, none_err;
  EXPECT_EQ(run_calibrate_reference(calibrate_options({kReference}, {"b200-180gb"}), none_out, none_err),
            kExitBadInput);
  EXPECT_NE(none_err.str().find("no row to fit"), std::string::npos) << none_err.str();
  std::ostringstream bad_out, bad_err;
  EXPECT_EQ(run_calibrate_reference(calibrate_options({kReference}, {"z100"}), bad_out, bad_err), kExitBadInput);
  EXPECT_NE(bad_err.str().find("--sku: no SKU or alias 'z100'"), std::string::npos) << bad_err.str();
}

}  // namespace
}  // namespace meshsim::cli
