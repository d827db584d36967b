// Own catalogs: a user's folder of hardware.json, models.json and perf_fits.json is layered
// over the bundled catalog (`--catalog DIR`, or a config's `catalog` key relative to the
// config file); a deployment without its own roofline fit says so on the console and in
// summary.json.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>

#include "configs/catalog.hpp"
#include "configs/scenario_config.hpp"
#include "configs/serving_config.hpp"
#include "sim/cluster/llm_cluster.hpp"
#include "tests/shared_data.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/models_command.hpp"

namespace meshsim::cli {
namespace {

using testing::fresh_dir;
using testing::slurp;
namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A new SKU with a fit for llama2-70b at TP 4, llama3-8b redefined with 40 layers, and a
// fit for llama3-8b on h100-80gb at TP 1 (bundled: none, so it borrows).
fs::path own_catalog(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  fs::create_directories(dir);
  write(dir / "hardware.json", R"({"skus": [{"name": "test-gpu", "gpus_per_node": 8, "hbm_gib_per_gpu": 192,
    "peak_tflops": 2250, "hbm_tb_per_s": 8, "nvlink_gb_per_s": 1800, "network_gb_per_s": 400,
    "power_kw": 14, "cost_per_hour": 120}]})");
  write(dir / "models.json", R"({"models": [{"name": "llama3-8b", "parameters": 8.0e9, "layers": 40,
    "hidden": 4096, "heads": 32, "kv_heads": 8, "dtype_bytes": 2}]})");
  const std::string factors = R"("prefill_overhead_ms": 5, "prefill_efficiency": 0.5, "prefill_knee_tokens": 2000,
    "decode_overhead_ms": 4, "decode_memory_efficiency": 0.8, "decode_compute_efficiency": 0.4)";
  write(dir / "perf_fits.json", R"({"fits": [{"model": "llama2-70b", "sku": "test-gpu", "tensor_parallel": 4, )" +
                                    factors + R"(}, {"model": "llama3-8b", "sku": "h100-80gb", "tensor_parallel": 1, )" +
                                    factors + "}]}");
  return dir;
}

TEST(CatalogTest, AUsersFolderIsLayeredOverTheBundledOne) {
  const auto bundled = configs::load_catalog(configs::default_catalog_folder());
  ASSERT_TRUE(bundled) << bundled.error().message;
  const auto layered = configs::load_catalog(configs::default_catalog_folder(), own_catalog("catalog_own").string());
  ASSERT_TRUE(layered) << layered.error().message;
  EXPECT_EQ(layered->skus.size(), bundled->skus.size() + 1);  // added
  EXPECT_EQ(layered->models.at("llama3-8b").layers, 40u);     // replaced by name
  EXPECT_EQ(layered->models.size(), bundled->models.size());
  EXPECT_EQ(layered->fits.size(), bundled->fits.size() + 2);
  using configs::FactorsSource;
  EXPECT_EQ(layered->lookup_factors("llama2-70b", "test-gpu", 4).source, FactorsSource::kFitted);
  EXPECT_EQ(layered->lookup_factors("llama2-70b", "test-gpu", 8).source, FactorsSource::kBuiltIn);
  EXPECT_EQ(layered->lookup_factors("llama3-8b", "h100-80gb", 1).source, FactorsSource::kFitted);
  EXPECT_EQ(bundled->lookup_factors("llama3-8b", "h100-80gb", 1).source, FactorsSource::kSkuMedian);
  EXPECT_EQ(layered->lookup_factors("llama2-70b", "h100-80gb", 4).source, FactorsSource::kFitted);  // bundled kept
  EXPECT_EQ(layered->factors_for("llama2-70b", "h100-80gb", 4).decode_overhead_ms,
            bundled->factors_for("llama2-70b", "h100-80gb", 4).decode_overhead_ms);
}

TEST(CatalogTest, BadOwnCatalogsAreRefusedNamingTheFolderOrFileAndKey) {
  const auto error = [](const std::string& folder) {
    auto catalog = configs::load_catalog(configs::default_catalog_folder(), folder);
    return catalog ? std::string() : catalog.error().message;
  };
  EXPECT_NE(error("/nonexistent/catalog").find("catalog /nonexistent/catalog: not a folder"), std::string::npos);
  const fs::path empty = fresh_dir("catalog_empty");
  fs::create_directories(empty);
  EXPECT_NE(error(empty.string()).find("holds none of hardware.json, models.json, perf_fits.json"), std::string::npos);
  const fs::path bad = fresh_dir("catalog_bad");
  fs::create_directories(bad);
  write(bad / "models.json", R"({"models": [{"name": "m", "parameters": -1, "layers": 1, "hidden": 8, "heads": 1,
    "kv_heads": 1, "dtype_bytes": 2}]})");
  const std::string message = error(bad.string());
  EXPECT_NE(message.find((bad / "models.json").string()), std::string::npos) << message;
  EXPECT_NE(message.find("models[0].parameters"), std::string::npos) << message;
}

// A model's precision and head size, and a SKU's FP8 peak, as a catalog gives them: read,
// and a precision it cannot serve refused naming the key and what it accepts.
TEST(CatalogTest, PrecisionsHeadSizesAndFp8PeaksAreReadAndOthersRefused) {
  const fs::path dir = fresh_dir("catalog_precision");
  fs::create_directories(dir);
  write(dir / "models.json", R"({"models": [{"name": "qwen-like", "parameters": 32.8e9, "layers": 64,
    "hidden": 5120, "heads": 64, "kv_heads": 8, "head_dim": 128, "weights": "fp8", "kv_cache": "fp8"}]})");
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_TRUE(catalog) << catalog.error().message;
  const auto& m = catalog->models.at("qwen-like");
  EXPECT_EQ(m.weights, cluster::Precision::kFp8);
  EXPECT_EQ(m.kv_cache, cluster::Precision::kFp8);
  EXPECT_EQ(m.kv_bytes_per_token(), 64.0 * 2 * 8 * 128 * 1);  // 5120 / 64 would be 80 per head
  EXPECT_EQ(catalog->skus.at("h100-80gb").peak_tflops_fp8, 1979.0);
  EXPECT_EQ(catalog->skus.at("a100-80gb").peak_tflops_fp8, 0.0);  // no FP8 tensor cores
  write(dir / "models.json", R"({"models": [{"name": "q", "parameters": 1e9, "layers": 4, "hidden": 1024,
    "heads": 8, "kv_heads": 8, "weights": "int4"}]})");
  catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message.find("models[0].weights"), std::string::npos) << catalog.error().message;
  EXPECT_NE(catalog.error().message.find("fp8"), std::string::npos) << catalog.error().message;
}

// An entry the reader would otherwise complete with another's figures (H100's, a cost of
// 0, a model weighing nothing) or replace silently is refused naming the file, entry and key.
TEST(CatalogTest, EntriesWithoutTheirOwnFiguresOrNamedTwiceAreRefused) {
  const auto error = [](const std::string& file, const std::string& text) {
    const fs::path dir = fresh_dir("catalog_gaps");
    fs::create_directories(dir);
    write(dir / file, text);
    auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
    return catalog ? std::string() : catalog.error().message;
  };
  const std::string sku_only = error("hardware.json", R"({"skus": [{"name": "mine"}]})");
  for (const char* key : {"gpus_per_node", "hbm_gib_per_gpu", "peak_tflops", "hbm_tb_per_s", "nvlink_gb_per_s",
                          "network_gb_per_s", "power_kw", "cost_per_hour"}) {
    EXPECT_NE(sku_only.find(std::string("skus[0].") + key + ": missing: a SKU needs its own"), std::string::npos)
        << sku_only;
  }
  const std::string model = R"("parameters": 8e9, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8)";
  for (const char* key : {"parameters", "layers", "hidden", "heads", "kv_heads"}) {
    nlohmann::json entry = nlohmann::json::parse("{\"name\": \"m\", " + model + "}");
    entry.erase(key);
    const std::string message = error("models.json", nlohmann::json{{"models", {entry}}}.dump());
    EXPECT_NE(message.find(std::string("models[0].") + key + ": missing: a model needs its own"), std::string::npos)
        << message;
  }
  const std::string twice =
      error("models.json", R"({"models": [{"name": "m", )" + model + R"(}, {"name": "m", )" + model + "}]}");
  EXPECT_NE(twice.find("models[1].name: 'm' names an earlier model of this file too"), std::string::npos) << twice;
}

// Every name a config can use picks one entry, the bundled catalog's and the user's
// together: each way two entries could answer one name is refused, naming both (they
// passed, and whichever came first was used).
TEST(CatalogTest, ANameThatWouldPickTwoEntriesIsRefused) {
  const auto load = [](const std::string& file, const std::string& text) {
    const fs::path dir = fresh_dir("catalog_names");
    fs::create_directories(dir);
    write(dir / file, text);
    return configs::load_catalog(configs::default_catalog_folder(), dir.string());
  };
  const auto bundled = configs::load_catalog(configs::default_catalog_folder());
  ASSERT_TRUE(bundled) << bundled.error().message;
  const auto sku = [](const std::string& name, const std::string& aliases) {
    return R"({"name": ")" + name + R"(", "aliases": )" + aliases + R"(, "gpus_per_node": 8, "hbm_gib_per_gpu": 80,
      "peak_tflops": 900, "hbm_tb_per_s": 3, "nvlink_gb_per_s": 900, "network_gb_per_s": 400, "power_kw": 10,
      "cost_per_hour": 30})";
  };
  const auto refused = [&](const std::string& file, const std::string& text, const std::string& expected) {
    const auto catalog = load(file, text);
    ASSERT_FALSE(catalog) << text;
    EXPECT_NE(catalog.error().message.find(expected), std::string::npos) << catalog.error().message;
  };
  const std::string bundled_alias = bundled->skus.at("h100-80gb").aliases.front();
  refused("hardware.json", R"({"skus": [)" + sku("mine", R"(["h100-80gb"])") + "]}",
          "alias 'h100-80gb' also names SKU 'h100-80gb'");
  refused("hardware.json", R"({"skus": [)" + sku("mine", "[\"" + bundled_alias + "\"]") + "]}",
          "SKU 'mine': alias '" + bundled_alias + "' also names SKU 'h100-80gb'");
  refused("hardware.json", R"({"skus": [)" + sku("a", R"(["X"])") + "," + sku("b", R"(["X"])") + "]}",
          "alias 'X' also names SKU 'a'");
  // A name no config could mean (empty, or with a space at an end) picks nothing.
  refused("hardware.json", R"({"skus": [)" + sku("mine", R"([""])") + "]}", "skus[0].aliases: '' is not a name");
  refused("hardware.json", R"({"skus": [)" + sku("mine", R"([" h100-80gb"])") + "]}",
          "skus[0].aliases: ' h100-80gb' is not a name");
  refused("hardware.json", R"({"skus": [)" + sku("mine ", "[]") + "]}", "skus[0].name: expected a SKU name");
  const std::string model = R"("parameters": 7e9, "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32)";
  const std::string bundled_id = bundled->models.at("llama2-70b").hf_id;
  refused("models.json", R"({"models": [{"name": "mine", "hf_id": ")" + bundled_id + R"(", )" + model + "}]}",
          "hf_id '" + bundled_id + "' also names model 'llama2-70b'");
  refused("models.json", R"({"models": [{"name": "mine", "hf_id": "llama3-8b", )" + model + "}]}",
          "hf_id 'llama3-8b' also names model 'llama3-8b'");
  // Replacing a bundled entry by its own name, with its own id or alias, is no ambiguity.
  EXPECT_TRUE(load("models.json", R"({"models": [{"name": "llama2-70b", "hf_id": ")" + bundled_id + R"(", )" + model + "}]}"));
  EXPECT_TRUE(load("hardware.json", R"({"skus": [)" + sku("h100-80gb", "[\"" + bundled_alias + "\"]") + "]}"));
  EXPECT_TRUE(load("hardware.json", R"({"skus": [)" + sku("mine", R"(["mine", "MINE-1"])") + "]}"));
}

struct Replayed {
  int code = 0;
  std::string err;
  nlohmann::json summary;
};

Replayed replay(const std::string& config, const std::string& name, std::optional<std::string> catalog = {}) {
  ReplayCommandOptions options;
  options.config_path = config;
  options.out_dir = fresh_dir(name).string();
  options.until_s = 600;
  options.quiet = true;
  options.catalog = std::move(catalog);
  std::ostringstream out, err;
  Replayed r;
  r.code = run_replay_command(options, out, err);
  r.err = err.str();
  if (r.code == kExitOk) r.summary = nlohmann::json::parse(slurp(options.out_dir + "/summary.json"));
  return r;
}

TEST(CatalogTest, ADeploymentWithoutItsOwnFitSaysSoAndAnOwnCatalogFitsIt) {
  // The default scenario on llama3-8b at TP 1 priced by the roofline: no bundled fit for it.
  nlohmann::json scenario = nlohmann::json::parse(slurp(configs::default_scenario_path()));
  scenario["serving"]["backend"] = "roofline";
  scenario["serving"]["model"] = "llama3-8b";
  scenario["serving"]["tensor_parallel"] = 1;
  scenario["workload"]["generator"] = configs::default_catalog_folder() + "/workloads/azure_conv.json";
  const fs::path dir = fresh_dir("catalog_scenario");
  fs::create_directories(dir);
  write(dir / "scenario.json", scenario.dump());

  const Replayed borrowed = replay((dir / "scenario.json").string(), "catalog_borrowed");
  ASSERT_EQ(borrowed.code, kExitOk) << borrowed.err;
  EXPECT_NE(borrowed.err.find("warning: no roofline fit for llama3-8b on h100-80gb at TP 1 in the catalog"),
            std::string::npos) << borrowed.err;
  ASSERT_TRUE(borrowed.summary.contains("roofline_factors"));
  EXPECT_EQ(borrowed.summary["roofline_factors"]["source"], "sku_median");
  EXPECT_NE(borrowed.summary["roofline_factors"]["note"].get<std::string>().find("meshsim calibrate"), std::string::npos);

  const fs::path own = own_catalog("catalog_for_replay");
  const Replayed fitted = replay((dir / "scenario.json").string(), "catalog_fitted", own.string());
  ASSERT_EQ(fitted.code, kExitOk) << fitted.err;
  EXPECT_EQ(fitted.err.find("no roofline fit"), std::string::npos) << fitted.err;
  EXPECT_FALSE(fitted.summary.contains("roofline_factors"));
  EXPECT_NE(fitted.summary["latency_s"], borrowed.summary["latency_s"]);  // its own factors (and 40 layers)
  EXPECT_EQ(fitted.summary["config"]["catalog"], own.string());

  // The same through the config's key, relative to the config file.
  fs::copy(own, dir / "mine", fs::copy_options::recursive);
  scenario["catalog"] = "mine";
  write(dir / "keyed.json", scenario.dump());
  const Replayed keyed = replay((dir / "keyed.json").string(), "catalog_keyed");
  ASSERT_EQ(keyed.code, kExitOk) << keyed.err;
  EXPECT_EQ(keyed.summary["latency_s"], fitted.summary["latency_s"]);
  EXPECT_EQ(keyed.summary["config"]["catalog"], (dir / "mine").string());

  const Replayed missing = replay((dir / "scenario.json").string(), "catalog_missing", "/nonexistent/catalog");
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_NE(missing.err.find("catalog /nonexistent/catalog: not a folder"), std::string::npos) << missing.err;
}

TEST(CatalogTest, CalibrateWritesTheFitsOfAnOwnCatalog) {
  const std::string profile = meshsim::testing::shared_path("reference/splitwise_perf_model.csv");
  MESHSIM_NEED_SHARED_FILE(profile);
  // `meshsim calibrate --catalog DIR > DIR/perf_fits.json`: the shell creates the (empty)
  // output before calibrate reads DIR, which must not trip over it.
  const fs::path dir = own_catalog("catalog_calibrated");
  write(dir / "perf_fits.json", "");
  std::ostringstream fits, err;
  ASSERT_EQ(run_calibrate_command({.profile = profile, .catalog = dir.string()}, fits, err), kExitOk) << err.str();
  write(dir / "perf_fits.json", fits.str());
  const auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_TRUE(catalog) << catalog.error().message;
  EXPECT_EQ(catalog->lookup_factors("llama2-70b", "h100-80gb", 4).source, configs::FactorsSource::kFitted);
  // The calibrated file replaced the hand-written one, and the profile has no test-gpu rows.
  EXPECT_EQ(catalog->lookup_factors("llama2-70b", "test-gpu", 4).source, configs::FactorsSource::kBuiltIn);
}

TEST(CatalogTest, HuggingFaceConfigsBecomeModelsNamedByTheirIds) {
  const std::string mixtral = R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
      "num_local_experts": 8, "num_experts_per_tok": 2, "torch_dtype": "bfloat16", "tie_word_embeddings": false})";
  const fs::path dir = fresh_dir("catalog_hf");
  fs::create_directories(dir / "hf/acme/Mixtral-copy");
  write(dir / "hf/acme/Mixtral-copy/config.json", mixtral);
  const auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_TRUE(catalog) << catalog.error().message;
  const auto* model = catalog->find_model("acme/Mixtral-copy");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->name, "acme/Mixtral-copy");
  EXPECT_NEAR(model->parameters, 46.70e9, 0.01e9);  // the model card's figure
  EXPECT_NEAR(model->expert_parameters, 45.10e9, 0.01e9);
  EXPECT_NEAR(model->active_parameters(), 12.88e9, 0.01e9);
  EXPECT_EQ(model->experts, 8u);
  EXPECT_EQ(model->kv_heads, 8u);
  // The bundled entry made from the same config.json agrees with it.
  const auto* bundled = catalog->find_model("mixtral-8x7b");
  ASSERT_NE(bundled, nullptr);
  EXPECT_NEAR(bundled->parameters, model->parameters, 0.01e9);
  // Under the bundled entry's own id it would make the id name two models: refused.
  fs::create_directories(dir / "hf" / bundled->hf_id);
  write(dir / "hf" / bundled->hf_id / "config.json", mixtral);
  const auto twice = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("hf_id '" + bundled->hf_id + "' also names model"), std::string::npos)
      << twice.error().message;
  // SKUs by alias, as reference files name them.
  ASSERT_NE(catalog->find_sku("H100-SXM-80GB"), nullptr);
  EXPECT_EQ(catalog->find_sku("H100-SXM-80GB")->name, "h100-80gb");
  EXPECT_EQ(catalog->find_sku("no-such-gpu"), nullptr);
}

TEST(CatalogTest, AnUnsupportedOrBrokenHuggingFaceConfigIsNamed) {
  const fs::path dir = fresh_dir("catalog_hf_bad");
  fs::create_directories(dir / "hf/acme/model");
  write(dir / "hf/acme/model/config.json", R"({"model_type": "bert", "hidden_size": 768})");
  auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message.find("acme/model/config.json: model_type: 'bert' is not a decoder-only"),
            std::string::npos)
      << catalog.error().message;
  write(dir / "hf/acme/model/config.json", R"({"model_type": "llama", "hidden_size": 768, "num_hidden_layers": 12,
      "num_attention_heads": 12, "vocab_size": 32000})");
  catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message.find("intermediate_size: expected a positive integer"), std::string::npos)
      << catalog.error().message;
}

// Every field of a Hugging Face config.json given a value of every JSON type (and the
// whole file as a non-object): the catalog loads or says which file is wrong; nothing
// throws (a mistyped "model_type": 5 or "tie_word_embeddings": "yes" once escaped as an
// internal error, exit 70).
TEST(CatalogTest, EveryMistypedHuggingFaceFieldIsNamedWithItsFile) {
  const fs::path dir = fresh_dir("catalog_hf_types");
  fs::create_directories(dir / "hf/acme/m");
  const auto valid = nlohmann::json::parse(
      R"({"model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "num_local_experts": 8,
          "num_experts_per_tok": 2, "max_position_embeddings": 32768, "torch_dtype": "bfloat16",
          "tie_word_embeddings": false, "head_dim": 128, "rope_scaling": null})");
  const std::vector<nlohmann::json> values = {"x", -1, 0, 1.5, 1e30, true, nullptr, nlohmann::json::array({1}),
                                              nlohmann::json::object({{"a", 1}})};
  const auto load = [&](const std::string& text) {
    write(dir / "hf/acme/m/config.json", text);
    try {
      const auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
      return catalog ? std::string() : catalog.error().message;
    } catch (const std::exception& e) {
      return std::string("THREW: ") + e.what();
    }
  };
  ASSERT_EQ(load(valid.dump()), "");
  for (const auto& [key, original] : valid.items()) {
    for (const auto& value : values) {
      auto edited = valid;
      edited[key] = value;
      const std::string error = load(edited.dump());
      EXPECT_TRUE(error.empty() || error.find("acme/m/config.json: ") != std::string::npos)
          << key << " = " << value.dump() << ": " << error;
    }
  }
  for (const std::string text : {"[1, 2]", "5", "\"text\"", "null", ""}) {
    const std::string error = load(text);
    EXPECT_NE(error.find("acme/m/config.json"), std::string::npos) << text << ": " << error;
    EXPECT_EQ(error.find("THREW"), std::string::npos) << text << ": " << error;
  }
}

// At the edge of fitting: for every bundled model, SKU and tensor-parallel degree, the KV
// reserve that leaves exactly one KV token builds a cluster, and the next larger one is
// refused naming the deployment (a reserve of 0.19696 for Llama2-70B on 2 H100s once
// passed the check and failed inside the cluster, exit 70).
TEST(CatalogTest, AModelLeavingNoKvTokenIsRefusedAndOneLeavingOneIsBuilt) {
  const auto catalog = configs::load_catalog(configs::default_catalog_folder());
  ASSERT_TRUE(catalog) << catalog.error().message;
  struct NullSink final : cluster::RequestSink {
    void on_request_finished(const metrics::RequestRecord&) override {}
  } sink;
  int edges = 0;
  for (const auto& [model_name, model] : catalog->models) {
    for (const auto& [sku_name, sku] : catalog->skus) {
      for (const std::uint32_t tp : {1u, 2u, 4u, 8u}) {
        if (sku.gpus_per_node % tp != 0) continue;
        configs::LlmServingSpec spec;
        spec.model = model_name;
        spec.sku = sku_name;
        spec.tensor_parallel = tp;
        const auto tokens = [&](double reserve) {
          spec.kv_reserve_fraction = reserve;
          return cluster::instance_kv_tokens(spec, model, sku, tp);
        };
        if (tokens(0.0) == 0) continue;  // does not fit at all
        // The largest reserve leaving a token, and the next double above it.
        double fits = 0.0, full = 1.0;
        for (int i = 0; i < 100 && std::nextafter(fits, 1.0) < full; ++i) {
          const double mid = (fits + full) / 2;
          (tokens(mid) > 0 ? fits : full) = mid;
        }
        for (const double reserve : {fits, full}) {
          spec.kv_reserve_fraction = reserve;
          const auto resolved = configs::resolve_llm_cluster(spec, *catalog);
          EXPECT_EQ(static_cast<bool>(resolved), reserve == fits) << model_name << " on " << tp << " x " << sku_name;
          if (!resolved) {
            EXPECT_NE(resolved.error().message.find("with room for one KV token"), std::string::npos)
                << resolved.error().message;
            continue;
          }
          engine::Simulation sim(1);
          try {
            cluster::LlmCluster built(sim, *resolved, sink);
            EXPECT_GE(built.fleet().hardware().kind(0).kv_capacity_tokens, 1u);
          } catch (const std::exception& e) {
            ADD_FAILURE() << model_name << " on " << tp << " x " << sku_name << " at reserve " << reserve << ": "
                          << e.what();
          }
        }
        ++edges;
      }
    }
  }
  EXPECT_GT(edges, 20);
  // vLLM's blocks are counted in 32 bits: a capacity of 2^32 blocks or more is refused.
  configs::LlmServingSpec spec;
  spec.scheduler = cluster::BatchScheduler::kVllm;
  spec.kv_capacity_tokens = (1ull << 32) * spec.vllm.block_size;
  const auto too_many = configs::resolve_llm_cluster(spec, *catalog);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("blocks of 16 tokens, more than 2^32 - 1"), std::string::npos)
      << too_many.error().message;
  *spec.kv_capacity_tokens -= spec.vllm.block_size;
  EXPECT_TRUE(configs::resolve_llm_cluster(spec, *catalog));
}

TEST(CatalogTest, MixtureOfExpertsFiguresMustAgree) {
  const fs::path dir = fresh_dir("catalog_moe_bad");
  fs::create_directories(dir);
  write(dir / "models.json", R"({"models": [{"name": "moe", "parameters": 1e9, "layers": 4, "hidden": 512,
      "heads": 8, "kv_heads": 8, "experts": 4, "experts_per_token": 6, "expert_parameters": 2e9}]})");
  const auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message.find("experts_per_token: expected 1 to experts (4)"), std::string::npos)
      << catalog.error().message;
  EXPECT_NE(catalog.error().message.find("expert_parameters"), std::string::npos) << catalog.error().message;
}

// A Llama-shaped config.json of `extra` keys (max_position_embeddings, rope_scaling).
std::string llama_config(const std::string& extra) {
  return R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000)" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

TEST(CatalogTest, TheContextIsTheConfigsMaxPositionEmbeddingsStretchedAsVllmStretchesIt) {
  const fs::path dir = fresh_dir("catalog_context");
  const std::map<std::string, std::pair<std::string, std::uint32_t>> cases = {
      {"none", {"", 0}},
      {"plain", {R"("max_position_embeddings": 32768)", 32768}},
      {"linear", {R"("max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0})", 16384}},
      {"yarn", {R"("max_position_embeddings": 131072, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                 "original_max_position_embeddings": 32768})", 131072}},
      {"llama3", {R"("max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0})", 131072}},
  };
  for (const auto& [name, c] : cases) {
    fs::create_directories(dir / "hf/acme" / name);
    write(dir / "hf/acme" / name / "config.json", llama_config(c.first));
  }
  const auto catalog = configs::load_catalog(configs::default_catalog_folder(), dir.string());
  ASSERT_TRUE(catalog) << catalog.error().message;
  for (const auto& [name, c] : cases) {
    const auto* model = catalog->find_model("acme/" + name);
    ASSERT_NE(model, nullptr) << name;
    EXPECT_EQ(model->max_context_tokens, c.second) << name;
  }
  EXPECT_EQ(catalog->find_model("llama2-70b")->max_context_tokens, 4096u);  // the bundled catalog's
  for (const std::string bad : {R"("max_position_embeddings": -1)", R"("max_position_embeddings": "4k")",
                                R"("max_position_embeddings": 4096, "rope_scaling": {"type": "linear"})",
                                R"("max_position_embeddings": 4096, "rope_scaling": 2)"}) {
    write(dir / "hf/acme/none/config.json", llama_config(bad));
    const auto refused = configs::load_catalog(configs::default_catalog_folder(), dir.string());
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("acme/none/config.json: "), std::string::npos) << refused.error().message;
    EXPECT_TRUE(refused.error().message.find("max_position_embeddings: expected") != std::string::npos ||
                refused.error().message.find("rope_scaling: expected") != std::string::npos)
        << refused.error().message;
  }
  // A scaling kind that is not a name is not the linear default.
  for (const char* key : {"type", "rope_type"}) {
    write(dir / "hf/acme/none/config.json",
          llama_config(std::string(R"("max_position_embeddings": 4096, "rope_scaling": {")") + key + R"(": 7, "factor": 2})"));
    const auto refused = configs::load_catalog(configs::default_catalog_folder(), dir.string());
    ASSERT_FALSE(refused) << key;
    EXPECT_NE(refused.error().message.find(std::string("rope_scaling.") + key + ": expected the scaling's name"),
              std::string::npos)
        << refused.error().message;
  }
}

// Whatever stands where a catalog file or folder belongs (a link to itself, a pipe, a
// folder for a file, a file for a folder) is refused naming its path, never skipped and
// never thrown (a link loop once ended in an internal error, exit 70).
TEST(CatalogTest, AnythingButAFileOrFolderWhereOneBelongsIsRefusedNamingIt) {
  const std::vector<std::string> entries = {"hardware.json", "models.json", "perf_fits.json", "step_model.json",
                                            "hf/acme/m/config.json", "hf/acme/m", "hf/acme", "hf", ""};
  const std::string config = R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 11008, "vocab_size": 32000})";
  for (const std::string& entry : entries) {
    for (const std::string kind : {"loop", "fifo", "folder", "file"}) {
      const bool is_folder = entry.empty() || entry == "hf" || entry == "hf/acme" || entry == "hf/acme/m";
      if ((kind == "folder" && is_folder) || (kind == "file" && !is_folder)) continue;
      const fs::path dir = fresh_dir("catalog_odd_entry");
      fs::create_directories(dir / "hf/acme/m");
      write(dir / "hf/acme/m/config.json", config);
      const fs::path at = entry.empty() ? dir / "catalog" : dir / entry;
      fs::remove_all(at);
      if (kind == "loop") {
        fs::create_symlink(at.filename(), at);
      } else if (kind == "fifo") {
        ASSERT_EQ(mkfifo(at.c_str(), 0600), 0);
      } else if (kind == "folder") {
        fs::create_directories(at);
      } else {
        write(at, "{}");
      }
      const std::string folder = entry.empty() ? at.string() : dir.string();
      std::string error;
      try {
        const auto catalog = configs::load_catalog(configs::default_catalog_folder(), folder);
        error = catalog ? "" : catalog.error().message;
      } catch (const std::exception& e) {
        error = std::string("THREW: ") + e.what();
      }
      // Beside the org and model folders, anything else (a note, a pipe) is not a model.
      if ((kind == "file" || kind == "fifo") && (entry == "hf/acme/m" || entry == "hf/acme")) {
        EXPECT_EQ(error, "") << "[" << entry << "] as a " << kind;
        continue;
      }
      EXPECT_NE(error.find(at.string()), std::string::npos) << "[" << entry << "] as a " << kind << ": " << error;
      EXPECT_EQ(error.find("THREW"), std::string::npos) << error;
    }
  }
}

// The default scenario with its model swapped for `model` (of the catalog in `dir`) and
// the scheduler `scheduler`, written beside the catalog; its path.
fs::path scenario_with_model(const fs::path& dir, const std::string& model, const std::string& scheduler,
                             const std::string& max_model_len = "null") {
  auto scenario = nlohmann::json::parse(slurp(configs::default_scenario_path()));
  scenario["workload"]["generator"] = configs::default_catalog_folder() + "/workloads/azure_conv.json";
  scenario["serving"]["model"] = model;
  scenario["serving"]["scheduler"] = scheduler;
  scenario["serving"]["vllm"]["max_model_len"] = nlohmann::json::parse(max_model_len);
  scenario["catalog"] = dir.string();
  scenario["run"]["until_s"] = 600;
  write(dir / "scenario.json", scenario.dump());
  return dir / "scenario.json";
}

TEST(CatalogTest, VllmServesTheModelsOwnContextAndRefusesLongerRequestsCountingThem) {
  const fs::path dir = fresh_dir("context_limit");
  fs::create_directories(dir / "hf/acme/short");
  fs::create_directories(dir / "hf/acme/unsized");
  write(dir / "hf/acme/short/config.json", llama_config(R"("max_position_embeddings": 2048)"));
  write(dir / "hf/acme/unsized/config.json", llama_config(""));
  const auto resolved = [&](const std::string& model, const std::string& scheduler, const std::string& limit) {
    auto config = configs::load_scenario(scenario_with_model(dir, model, scheduler, limit).string());
    EXPECT_TRUE(config) << config.error().message;
    auto catalog = configs::load_scenario_catalog(*config);
    EXPECT_TRUE(catalog) << catalog.error().message;
    return configs::resolve_llm_cluster(std::get<configs::LlmServingSpec>(config->serving), *catalog, true);
  };
  EXPECT_EQ(resolved("acme/short", "vllm", "null")->max_model_len, 2048u);  // the model's
  EXPECT_EQ(resolved("acme/short", "vllm", "1000")->max_model_len, 1000u);  // less, as asked
  EXPECT_EQ(resolved("acme/unsized", "vllm", "null")->max_model_len, std::nullopt);  // no length known
  EXPECT_EQ(resolved("acme/short", "splitwise", "null")->max_model_len, std::nullopt);  // SplitwiseSim's rules
  // Past the model's context no engine serves, whichever scheduler batches.
  for (const char* scheduler : {"vllm", "splitwise"}) {
    const auto beyond = resolved("acme/short", scheduler, "2049");
    ASSERT_FALSE(beyond) << scheduler;
    EXPECT_NE(beyond.error().message.find("serving.vllm.max_model_len: 2049 tokens is beyond acme/short's context of "
                                          "2048 tokens"),
              std::string::npos)
        << beyond.error().message;
  }
  EXPECT_EQ(resolved("acme/short", "splitwise", "2048")->max_model_len, 2048u);

  // A replay refuses the longer requests at arrival, says so, and judges the SLO over the rest.
  ReplayCommandOptions options;
  options.config_path = scenario_with_model(dir, "acme/short", "vllm").string();
  options.out_dir = (dir / "run").string();
  std::ostringstream out, err;
  ASSERT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  const auto summary = nlohmann::json::parse(slurp(dir / "run/summary.json"));
  const auto over = summary["requests"]["dropped_for"]["over_context"].get<std::uint64_t>();
  EXPECT_GT(over, 0u);
  EXPECT_EQ(summary["requests"]["dropped"].get<std::uint64_t>(), over);
  EXPECT_EQ(summary["deployment"]["context_limit_tokens"], 2048);
  EXPECT_EQ(summary["deployment"]["context_limit_from"], "the model (max_position_embeddings)");
  std::uint64_t refused = 0;
  for (const auto& row : testing::csv_rows(slurp(dir / "run/requests.csv"))) {
    const bool longer = std::stoull(row.at("prompt_tokens")) + std::stoull(row.at("output_tokens")) > 2048;
    EXPECT_EQ(row.at("dropped_for") == "over_context", longer) << "request " << row.at("id");
    refused += longer;
  }
  EXPECT_EQ(refused, over);
  EXPECT_NE(out.str().find("longer than the context limit of 2048 tokens"), std::string::npos) << out.str();
  const auto completed = summary["requests"]["completed"].get<double>();
  EXPECT_GT(completed, 0);
  EXPECT_NEAR(summary["slo"]["attainment"].get<double>(), 1.0, 0.05)
      << "the refused are not misses: a lightly loaded deployment meets its SLO";

  // `meshsim models` shows the deployment before it runs.
  std::ostringstream models_out, models_err;
  ASSERT_EQ(run_models_command({options.config_path, std::nullopt, {}}, models_out, models_err), kExitOk)
      << models_err.str();
  EXPECT_NE(models_out.str().find("context     at most 2048 tokens served, from the model"), std::string::npos)
      << models_out.str();
  EXPECT_NE(models_out.str().find("KV tokens per instance"), std::string::npos) << models_out.str();
}

}  // namespace
}  // namespace meshsim::cli
