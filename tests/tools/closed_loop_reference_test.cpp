// Closed-loop benchmark tables (AIConfigurator's layout): read, refused by name where they
// cannot be modelled, replayed as their clients by `meshsim validate`, fitted by
// `meshsim calibrate`, and the bundled step_model.json regenerated from them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "configs/closed_loop_reference.hpp"
#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/reference_commands.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using testing::fresh_dir;

const std::string kTable = ::meshsim::testing::shared_path("reference/gpu-skus/aic_vllm_agg.csv");
const std::string kServingReference = ::meshsim::testing::shared_path("reference/vllm-h100-measured.csv");
const std::string kHeader =
    "id,backend,backend_version,model_path,system,precision,mode,isl,osl,gemm_quant_mode,moe_quant_mode,batch_size,"
    "tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n";

fs::path write_table(const std::string& name, const std::string& rows) {
  const fs::path dir = fresh_dir(name);
  fs::create_directories(dir);
  std::ofstream(dir / "table.csv") << kHeader << rows;
  return dir / "table.csv";
}

// A tiny Llama-shaped config.json, as a table's model_configs/ would hold it.
void write_model_config(const fs::path& dir, const std::string& file) {
  fs::create_directories(dir / "model_configs");
  std::ofstream(dir / "model_configs" / file)
      << R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048,
             "intermediate_size": 8192, "num_hidden_layers": 16, "num_attention_heads": 32,
             "num_key_value_heads": 8, "vocab_size": 32000, "max_position_embeddings": 8192,
             "torch_dtype": "bfloat16"})";
}

TEST(ClosedLoopReferenceTest, RowsItCannotModelAreRefusedByNameAndTheRestRead) {
  const fs::path table = write_table(
      "closed_loop_refusals",
      "a,vllm,0.12,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,4,1,100,10\n"
      "b,trtllm,1.0,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,4,1,100,10\n"
      "c,vllm,0.12,meta-llama/Llama-3.1-70B,h100_sxm,fp8,disagg,1024,128,fp8,fp8,8,4,1,1,4,1,100,10\n"
      "d,vllm,0.12,meta-llama/Llama-3.1-70B,b200_sxm,nvfp4,agg,1024,128,nvfp4,nvfp4,8,4,1,1,4,1,100,10\n"
      "e,vllm,0.12,meta-llama/Llama-3.1-70B,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,2,1,4,1,100,10\n"
      "f,vllm,0.12,MiniMaxAI/MiniMax-M2.5,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,4,1,16,100,10\n"
      "g,vllm,0.12,MiniMaxAI/MiniMax-M2.5,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,2,1,100,10\n"
      "h,vllm,0.12,Qwen/Qwen3-32B,h100_sxm,,agg,4096,512,,,16,2,1,1,1,1,100,10\n"
      "i,vllm,0.12,Qwen/Qwen3-32B,h100_sxm,fp8,agg,4096,512,fp8,bf16,16,2,1,1,1,1,100,10\n");
  auto rows = configs::read_closed_loop_reference(table.string());
  ASSERT_TRUE(rows) << rows.error().message;
  ASSERT_EQ(rows->size(), 9u);
  const auto refused = [&](std::size_t i) { return (*rows)[i].refused; };
  EXPECT_EQ(refused(0), "");
  EXPECT_EQ((*rows)[0].weights, cluster::Precision::kFp8);
  EXPECT_EQ((*rows)[0].shape(), "1024x128");
  EXPECT_EQ((*rows)[0].clients, 8u);
  EXPECT_DOUBLE_EQ((*rows)[0].tpot_s, 0.010);
  EXPECT_NE(refused(1).find("backend 'trtllm'"), std::string::npos) << refused(1);
  EXPECT_NE(refused(2).find("mode 'disagg'"), std::string::npos) << refused(2);
  EXPECT_NE(refused(3).find("precision 'nvfp4'"), std::string::npos) << refused(3);
  EXPECT_NE(refused(4).find("pp_size 2"), std::string::npos) << refused(4);
  EXPECT_NE(refused(5).find("attention_dp_size 4"), std::string::npos) << refused(5);
  EXPECT_NE(refused(6).find("moe_tp_size x moe_ep_size 2"), std::string::npos) << refused(6);
  EXPECT_EQ(refused(7), "");  // a dense model's 1 x 1 experts columns, and its own precision
  EXPECT_FALSE((*rows)[7].weights.has_value());
  EXPECT_NE(refused(8).find("moe_quant_mode 'bf16' differs from precision 'fp8'"), std::string::npos) << refused(8);
}

TEST(ClosedLoopReferenceTest, ABadRowIsAnErrorNamingTheFileLineAndColumn) {
  for (const auto& [row, expected] : std::vector<std::pair<std::string, std::string>>{
           {"a,vllm,,m/x,h100_sxm,fp8,agg,1024,128,fp8,fp8,eight,4,1,1,4,1,100,10\n", ":2: batch_size: expected"},
           {"a,vllm,,m/x,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,4,1,100,-3\n", ":2: silicon_tpot_ms: expected"},
           {"a,vllm,,m/x,h100_sxm,fp8,agg,1024,128,fp8,fp8,200000,4,1,1,4,1,100,3\n",
            ":2: batch_size: expected 1 to 100000 clients"},
           {"a,vllm,,m/x,h100_sxm,fp8,agg,1024.5,128,fp8,fp8,8,4,1,1,4,1,100,3\n", ":2: isl: expected a positive integer"},
           {"a,vllm,,,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,4,1,100,3\n", ":2: model_path: expected"},
           {"a,vllm,,m/x,h100_sxm,fp8,agg,1024,128\n", ":2: expected 19 fields"}}) {
    const fs::path table = write_table("closed_loop_bad", row);
    auto rows = configs::read_closed_loop_reference(table.string());
    ASSERT_FALSE(rows) << row;
    EXPECT_NE(rows.error().message.find(table.string() + expected), std::string::npos) << rows.error().message;
  }
}

TEST(ClosedLoopReferenceTest, ValidateReplaysTheClientsWithTheModelConfigsBesideTheTable) {
  // The org's one config whose name ends with the row's (a repository Hugging Face
  // renamed) is the row's model; a refused row is listed, not an error.
  const fs::path table = write_table("closed_loop_validate",
                                     "a,vllm,,acme/Tiny-1B,h100_sxm,,agg,512,64,,,4,1,1,1,1,1,20,4\n"
                                     "b,vllm,,acme/Tiny-1B,h100_sxm,,agg,512,64,,,16,2,1,1,1,1,30,5\n"
                                     "c,sglang,,acme/Tiny-1B,h100_sxm,,agg,512,64,,,16,2,1,1,1,1,30,5\n");
  write_model_config(table.parent_path(), "acme--Old-Name-Tiny-1B.json");
  ValidateCommandOptions options;
  options.reference = table.string();
  options.json = true;
  options.fit_on = "512x64";
  std::ostringstream out, err;
  ASSERT_EQ(run_validate_command(options, out, err), kExitOk) << err.str();
  const auto report = nlohmann::json::parse(out.str());
  ASSERT_EQ(report["rows"].size(), 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& row = report["rows"][i];
    EXPECT_EQ(row["sku"], "h100-80gb") << row.dump();
    EXPECT_TRUE(row["fitted"].get<bool>());
    EXPECT_GT(row["ttft_s"].get<double>(), 0.0) << row.dump();
    EXPECT_GT(row["tpot_s"].get<double>(), 0.0) << row.dump();
  }
  // More clients share each step: each token comes later.
  EXPECT_GT(report["rows"][1]["tpot_s"].get<double>() * 2, report["rows"][0]["tpot_s"].get<double>());
  EXPECT_NE(report["rows"][2]["refused"].get<std::string>().find("backend 'sglang'"), std::string::npos);
  EXPECT_EQ(report["by_sku"]["h100-80gb"]["all"]["tpot"]["rows"], 2);
  EXPECT_EQ(report["by_sku"]["h100-80gb"]["held_out"]["tpot"]["rows"], 0);  // both fitted

  // Without the config the model is named, with where it was looked for.
  fs::remove_all(table.parent_path() / "model_configs");
  std::ostringstream missing_out, missing_err;
  EXPECT_EQ(run_validate_command(options, missing_out, missing_err), kExitBadInput);
  EXPECT_NE(missing_err.str().find(":2: model_path: no model 'acme/Tiny-1B'"), std::string::npos) << missing_err.str();
  EXPECT_NE(missing_err.str().find("model_configs/<org>--<name>.json beside the table"), std::string::npos);
}

TEST(ClosedLoopReferenceTest, ABadShapeListIsNamed) {
  const fs::path table = write_table("closed_loop_shapes", "a,vllm,,m/x,h100_sxm,fp8,agg,1024,128,fp8,fp8,8,4,1,1,4,1,100,10\n");
  ValidateCommandOptions options;
  options.reference = table.string();
  options.fit_on = "1024x1024,8k";
  std::ostringstream out, err;
  EXPECT_EQ(run_validate_command(options, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("--fit-on: expected prompt x output shapes such as 1024x1024,8192x1024, got '8k'"),
            std::string::npos)
      << err.str();
}

// The bundled step_model.json is what the commands its comment names print: H100 from the
// serving reference, H200 and B200 from the closed-loop table's named split.
TEST(ClosedLoopReferenceTest, TheBundledStepFitsAreRegeneratedFromTheData) {
  MESHSIM_NEED_SHARED_FILE(kTable);
  MESHSIM_NEED_SHARED_FILE(kServingReference);
  const auto bundled =
      nlohmann::json::parse(::meshsim::cli::testing::slurp(fs::path(MESHSIM_SOURCE_DIR) / "configs/step_model.json"));
  std::map<std::string, nlohmann::json> expected;
  for (const auto& fit : bundled["fits"]) expected[fit["sku"].get<std::string>()] = fit;
  ASSERT_EQ(expected.size(), 3u);
  CalibrateReferenceOptions h100, newer;
  h100.references = {kServingReference};
  newer.references = {kTable};
  newer.fit_on = "1024x1024,8192x1024";
  newer.skus = {"h200-141gb", "b200-180gb"};
  for (const auto* options : {&h100, &newer}) {
    std::ostringstream out, err;
    ASSERT_EQ(run_calibrate_reference(*options, out, err), kExitOk) << err.str();
    const auto printed = nlohmann::json::parse(out.str());
    for (const auto& fit : printed["fits"]) {
      EXPECT_EQ(fit, expected[fit["sku"].get<std::string>()]) << fit.dump();
      expected.erase(fit["sku"].get<std::string>());
    }
  }
  EXPECT_TRUE(expected.empty());
}

// The fitted SKUs on the table's rows not fitted on: TPOT as the issue's bound nearly has
// it (median 10.1-10.2%, p90 22-33%); TTFT is far off (see sim/serving-model.md), held
// here only so it cannot get worse unnoticed.
TEST(ClosedLoopReferenceTest, TheFittedSkusPredictTheRowsHeldOutOfTheFit) {
  MESHSIM_NEED_SHARED_FILE(kTable);
  ValidateCommandOptions options;
  options.reference = kTable;
  options.json = true;
  options.fit_on = "1024x1024,8192x1024";
  std::ostringstream out, err;
  ASSERT_EQ(run_validate_command(options, out, err), kExitOk) << err.str();
  const auto report = nlohmann::json::parse(out.str());
  EXPECT_EQ(report["rows"].size(), 372u);
  std::size_t refused = 0;
  for (const auto& row : report["rows"]) refused += row.contains("refused");
  EXPECT_EQ(refused, 15u);  // MiniMax's data-parallel attention rows
  for (const char* sku : {"h200-141gb", "b200-180gb"}) {
    const auto& held = report["by_sku"][sku]["held_out"];
    SCOPED_TRACE(sku);
    EXPECT_GE(held["tpot"]["rows"].get<int>(), 20);
    EXPECT_LE(held["tpot"]["median"].get<double>(), 0.11);
    EXPECT_LE(held["tpot"]["p90"].get<double>(), 0.35);
    EXPECT_LE(held["ttft"]["median"].get<double>(), 0.55);
  }
}

}  // namespace
}  // namespace meshsim::cli
