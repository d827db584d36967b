#include "configs/scenario_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "configs/catalog.hpp"
#include "configs/config_file.hpp"
#include "configs/serving_config.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;
using engine::SimTime;

std::string parse_error(const std::string& text) {
  auto result = parse_scenario(json::parse(text), "s.json");
  return result ? "" : result.error().message;
}

TEST(ScenarioConfigTest, DefaultScenarioLoadsWithTheFittedGenerator) {
  auto config = load_scenario(default_scenario_path());
  ASSERT_TRUE(config) << config.error().message;
  const auto& generator = std::get<traces::GeneratorSpec>(config->workload.source);
  EXPECT_EQ(generator.name, "azure-conv-2023");
  EXPECT_EQ(generator.arrivals.kind, traces::ArrivalSpec::Kind::kGamma);
  EXPECT_EQ(generator.prompt_tokens.kind, traces::LengthSpec::Kind::kQuantiles);
  ASSERT_TRUE(std::holds_alternative<LlmServingSpec>(config->serving));
}

TEST(ScenarioConfigTest, MissingKeysTakeDefaults) {
  auto config = parse_scenario(json::parse(R"({"workload": {"generator": {"arrivals": {"rate_per_s": 2},
      "prompt_tokens": {"value": 10}, "output_tokens": {"value": 5}, "requests": 100}}})"),
                               "s.json");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->seed, 42u);
  const auto& llm = std::get<LlmServingSpec>(config->serving);
  EXPECT_EQ(llm.batching.max_batch_tokens, 2048u);
  EXPECT_EQ(llm.backend, LlmServingSpec::Backend::kRoofline);
  EXPECT_EQ(config->replay.slo.ttft, SimTime::from_ms(1000));
}

TEST(ScenarioConfigTest, UnknownKeysAreErrorsNamingThePathAndTheKnownKeys) {
  const auto error = parse_error(R"({"serving": {"kind": "fixed_latency", "instancez": 3}})");
  EXPECT_NE(error.find("s.json: serving.instancez: unknown key (known keys here: "), std::string::npos) << error;
  EXPECT_NE(error.find("instances"), std::string::npos);
}

TEST(ScenarioConfigTest, TheFixedLatencyModelRoutesByTheServingRoutingNames) {
  // Its former name for fewest_requests still reads; the resolved config writes the one name.
  for (const auto& [given, written] : {std::pair{"least_loaded", "fewest_requests"}, std::pair{"fewest_requests", "fewest_requests"},
                                       std::pair{"round_robin", "round_robin"}}) {
    const std::string text = std::string(R"({"workload": {"generator": {"arrivals": {"rate_per_s": 2},
        "prompt_tokens": {"value": 10}, "output_tokens": {"value": 5}, "requests": 100}},
        "serving": {"kind": "fixed_latency", "routing": ")") + given + "\"}}";
    auto config = parse_scenario(json::parse(text), "s.json");
    ASSERT_TRUE(config) << config.error().message;
    EXPECT_EQ(serving_to_json(config->serving)["routing"], written) << given;
  }
}

TEST(ScenarioConfigTest, WrongTypesAndRangesNameTheKeyAndWhatWasExpected) {
  EXPECT_NE(parse_error(R"({"serving": {"kind": "fixed_latency", "instances": "four"}})")
                .find("s.json: serving.instances: expected a positive integer, got \"four\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"kind": "fixed_latency", "instances": 0}})").find("serving.instances: expected a positive integer, got 0"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"workload": {"rate_scale": -1}})").find("workload.rate_scale: expected a factor in [1e-06, 1e+06], got -1"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"kind": "fixed_latency", "routing": "random"}})")
                .find("serving.routing: expected one of 'round_robin', 'fewest_requests', "),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"kind": "fixed_latency", "routing": "least_kv_memory"}})")
                .find("serving.routing: the fixed-latency model routes 'round_robin' or 'fewest_requests', got "
                      "'least_kv_memory'"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"seed": 1.5})").find("s.json: seed: expected a non-negative integer, got 1.5"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": 3})").find("s.json: serving: expected an object, got 3"), std::string::npos);
}

TEST(ScenarioConfigTest, AStartStateBeyondTheScalingLimitIsRefusedNotBuilt) {
  // A count of 10^7 exited 70 (bad_alloc) building the instances.
  EXPECT_NE(parse_error(R"({"serving": {"start_state": [{"tag": "mixed", "count": 10000000}]}})")
                .find("serving.start_state: 10000000 instances in all exceed scaling.max_total_instances (100)"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"start_state": [{"tag": "prompt", "count": 3}, {"tag": "token", "count": 3}]},
                            "scaling": {"max_total_instances": 5}})")
                .find("serving.start_state: 6 instances in all exceed scaling.max_total_instances (5)"),
            std::string::npos);
}

TEST(ScenarioConfigTest, AllProblemsAreReportedAtOnce) {
  const auto error = parse_error(R"({"seed": -1, "slo": {"ttft_ms": "x"}, "bogus": 1})");
  EXPECT_NE(error.find("seed:"), std::string::npos);
  EXPECT_NE(error.find("slo.ttft_ms:"), std::string::npos);
  EXPECT_NE(error.find("bogus: unknown key"), std::string::npos);
}

TEST(ScenarioConfigTest, TraceWorkloadsResolveRelativePathsAndColumnMappings) {
  auto config = parse_scenario(json::parse(R"({"workload": {"trace": {"path": "t.csv", "format": "csv",
      "columns": {"arrival": "ts", "arrival_format": "ms", "prompt_tokens": "in", "output_tokens": "out"}},
      "window": {"start_s": 10, "end_s": 20}}})"),
                               "/data/s.json");
  ASSERT_TRUE(config) << config.error().message;
  const auto& file = std::get<traces::TraceFileSpec>(config->workload.source);
  EXPECT_EQ(file.path, "/data/t.csv");
  EXPECT_EQ(file.columns.arrival_format, traces::TimeFormat::kMilliseconds);
  EXPECT_EQ(config->workload.window_end, SimTime::from_seconds(20));
  EXPECT_NE(parse_error(R"({"workload": {"window": {"start_s": 5, "end_s": 5}}})").find("workload.window.end_s"),
            std::string::npos);
}

TEST(ScenarioConfigTest, ServeGenWorkloadsTakeClientLengthsOrALengthModelAndRoundTrip) {
  // By default each client's own lengths: no model, and none accepted.
  auto clients = parse_scenario(json::parse(R"({"workload": {"servegen": {"path": "sg"}}})"), "/data/s.json");
  ASSERT_TRUE(clients) << clients.error().message;
  EXPECT_EQ(std::get<traces::ServeGenSpec>(clients->workload.source).lengths, traces::ServeGenLengths::kClients);
  EXPECT_EQ(to_json(*parse_scenario(to_json(*clients), "/elsewhere/s.json")), to_json(*clients));
  EXPECT_NE(parse_error(R"({"workload": {"servegen": {"path": "sg", "prompt_tokens": {"value": 3}}}})")
                .find("workload.servegen.prompt_tokens: only with lengths: model"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"workload": {"servegen": {"path": "sg", "lengths": "files"}}})")
                .find("workload.servegen.lengths: expected one of"),
            std::string::npos);

  auto config = parse_scenario(json::parse(R"({"workload": {"servegen": {"path": "sg", "load_scale": 0.02,
      "lengths": "model", "prompt_tokens": {"kind": "fixed", "value": 100}, "output_tokens": {"kind": "uniform", "min": 5, "max": 9}},
      "window": {"start_s": 950400}}})"),
                               "/data/s.json");
  ASSERT_TRUE(config) << config.error().message;
  const auto& servegen = std::get<traces::ServeGenSpec>(config->workload.source);
  EXPECT_EQ(servegen.path, "/data/sg");
  EXPECT_DOUBLE_EQ(servegen.load_scale, 0.02);
  EXPECT_EQ(servegen.output_tokens.max, 9u);
  const json resolved = to_json(*config);
  auto again = parse_scenario(resolved, "/elsewhere/s.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), resolved);

  EXPECT_NE(parse_error(R"({"workload": {"servegen": {"path": "sg", "lengths": "model", "prompt_tokens": {"value": 3}}}})")
                .find("workload.servegen.output_tokens: expected a length model"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"workload": {"servegen": {"path": "sg", "load_scale": 500}}})")
                .find("workload.servegen.load_scale: expected a factor in (0, 100]"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"workload": {"servegen": {"path": "sg"}, "generator": {}}})")
                .find("give one of 'trace', 'generator' and 'servegen'"),
            std::string::npos);
}

TEST(ScenarioConfigTest, YamlBecomesTheSameTree) {
  auto tree = parse_yaml("seed: 7\nname: 'yaml run'\nserving:\n  instances: 2\n  routing: round_robin\n", "s.yaml");
  ASSERT_TRUE(tree) << tree.error().message;
  EXPECT_EQ(*tree, json::parse(R"({"seed": 7, "name": "yaml run", "serving": {"instances": 2, "routing": "round_robin"}})"));
  auto quoted = parse_yaml("name: '42'\n", "s.yaml");
  EXPECT_TRUE((*quoted)["name"].is_string());
  auto broken = parse_yaml("a: [1, 2\n", "s.yaml");
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().message.rfind("s.yaml:", 0), 0u);
}

// Found by the config fuzzer: YAML takes bytes that are not UTF-8, and printing them in a
// message (or in summary.json) used to throw from inside nlohmann::json::dump.
TEST(ScenarioConfigTest, YamlThatIsNotUtf8IsAnErrorNamingTheLine) {
  auto result = parse_yaml("name: ok\nseed: \"\x87\xff\"\n", "s.yaml");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "s.yaml:2:7: invalid YAML: text that is not UTF-8");
  auto key = parse_yaml("\xc3\x28: 1\n", "s.yaml");
  ASSERT_FALSE(key);
  EXPECT_TRUE(parse_yaml("name: caf\xc3\xa9\n", "s.yaml"));
}

TEST(ScenarioConfigTest, JsonSyntaxErrorsNameLineAndColumn) {
  const auto path = std::filesystem::temp_directory_path() / "meshsim_bad_config.json";
  std::ofstream(path) << "{\n  \"seed\": 1,\n  \"name\": \n}\n";
  auto result = load_scenario(path.string());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message.rfind(path.string() + ":4:1: invalid JSON", 0), 0u) << result.error().message;
}

TEST(ScenarioConfigTest, NumbersBeyondDoubleRangeAreAnErrorNotACrash) {
  const auto path = std::filesystem::temp_directory_path() / "meshsim_huge_number.json";
  std::ofstream(path) << "{\"seed\": 1e999}\n";
  auto result = load_scenario(path.string());
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("invalid JSON: [json.exception.out_of_range.406] number overflow"),
            std::string::npos)
      << result.error().message;
}

// Issue 8: a config whose name was 100,000 nested arrays crashed (SIGSEGV).
TEST(ScenarioConfigTest, DeepNestingIsAnErrorInJsonAndYaml) {
  const auto path = std::filesystem::temp_directory_path() / "meshsim_deep_config.json";
  std::ofstream(path) << "{\"name\": " << std::string(100'000, '[') << std::string(100'000, ']') << "}\n";
  auto result = load_scenario(path.string());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, path.string() + ": invalid JSON: nested deeper than 64 levels");
  std::string yaml = "name: ";
  for (int i = 0; i < 100; ++i) yaml += "[";
  yaml += std::string(100, ']');
  auto deep_yaml = parse_yaml(yaml, "s.yaml");
  ASSERT_FALSE(deep_yaml);
  EXPECT_EQ(deep_yaml.error().message, "s.yaml: invalid YAML: nested deeper than 64 levels");
  // Past yaml-cpp's own limit its parser refuses first.
  auto deeper = parse_yaml("name: " + std::string(100'000, '['), "s.yaml");
  ASSERT_FALSE(deeper);
}

TEST(ScenarioConfigTest, ResolvedConfigRoundTrips) {
  auto config = load_scenario(default_scenario_path());
  ASSERT_TRUE(config);
  const json resolved = to_json(*config);
  auto again = parse_scenario(resolved, default_scenario_path());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), resolved);
}

// Target tracking on several metrics: each read with its target, round-tripped, and a
// bad entry named by its index.
TEST(ScenarioConfigTest, TargetTrackingOnSeveralMetricsIsReadCheckedAndRoundTrips) {
  const json text = json::parse(R"({"workload": {"generator": {"arrivals": {"rate_per_s": 2},
      "prompt_tokens": {"value": 10}, "output_tokens": {"value": 5}, "requests": 100}},
      "autoscaler": {"policy": "target_tracking", "target_tracking": {
      "metric": "arrival_rate", "target": 2.8,
      "also": [{"metric": "token_rate", "target": 4000}, {"metric": "kv_utilisation", "target": 0.7}]}}})");
  auto config = parse_scenario(text, "s.json");
  ASSERT_TRUE(config) << config.error().message;
  const auto& t = config->autoscaler.target_tracking;
  ASSERT_EQ(t.also.size(), 2u);
  EXPECT_EQ(t.also[0].metric, autoscale::TrackedMetric::kTokenRate);
  EXPECT_DOUBLE_EQ(t.also[1].target, 0.7);
  auto again = parse_scenario(to_json(*config), "s.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*config));
  EXPECT_NE(parse_error(R"({"autoscaler": {"target_tracking": {"also": [{"metric": "token_rate"}]}}})")
                .find("autoscaler.target_tracking.also[0].target: required"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"autoscaler": {"target_tracking": {"also": [{"metric": "qps", "target": 1}]}}})")
                .find("autoscaler.target_tracking.also[0].metric: expected one of"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"autoscaler": {"target_tracking": {"also": {"metric": "token_rate"}}}})")
                .find("autoscaler.target_tracking.also: expected an array"),
            std::string::npos);
}

TEST(ScenarioConfigTest, VllmLimitsAndTimeoutsAreChecked) {
  EXPECT_NE(parse_error(R"({"serving": {"scheduler": "vllm", "vllm": {"max_num_seqs": 256,
                                                                        "max_num_batched_tokens": 128}}})")
                .find("serving.vllm.max_num_batched_tokens: must be at least max_num_seqs (256)"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"max_requests_in_system": 0}})")
                .find("serving.max_requests_in_system: expected an integer in [1, 1e8]"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"scheduler": "vllm", "vllm": {"request_timeout_s": 0}}})")
                .find("serving.vllm.request_timeout_s: expected a positive number of seconds"),
            std::string::npos);
  // A timeout under SplitwiseSim's rules is refused when the world is built.
  auto config = load_scenario(default_scenario_path());
  ASSERT_TRUE(config) << config.error().message;
  auto& serving = std::get<LlmServingSpec>(config->serving);
  serving.scheduler = cluster::BatchScheduler::kSplitwise;
  serving.request_timeout = SimTime::from_seconds(30);
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  const auto factory = resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog);
  ASSERT_FALSE(factory);
  EXPECT_NE(factory.error().message.find("request timeouts need serving.scheduler vllm"), std::string::npos);
  // prefix_affinity reads vLLM's prefix cache, and routes prompts only.
  serving.request_timeout.reset();
  serving.prompt_routing = cluster::RoutePolicy::kPrefixAffinity;
  const auto no_cache = resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog);
  ASSERT_FALSE(no_cache);
  EXPECT_NE(no_cache.error().message.find("serving.routing.prompt: prefix_affinity needs serving.scheduler vllm"),
            std::string::npos);
  serving.scheduler = cluster::BatchScheduler::kVllm;
  EXPECT_TRUE(resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog));
  serving.token_routing = cluster::RoutePolicy::kPrefixAffinity;
  const auto token = resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog);
  ASSERT_FALSE(token);
  EXPECT_NE(token.error().message.find("serving.routing.token: prefix_affinity routes prompts"), std::string::npos);
}

TEST(ScenarioConfigTest, SharedPrefixStagesAndTheStepModelRoundTrip) {
  const json tree = json::parse(R"({"workload": {"generator": {"arrivals": {"kind": "constant"},
      "stages": [{"rate_per_s": 5, "duration_s": 60}, {"rate_per_s": 10, "duration_s": 30}],
      "prompt_tokens": {"kind": "fixed", "value": 400}, "output_tokens": {"kind": "fixed", "value": 200},
      "shared_prefix": {"system_prompts": 4, "users_per_system_prompt": 3, "system_prompt_tokens": 100,
                        "multi_turn": true, "turns_per_conversation": 5}}},
    "serving": {"model": "meta-llama/Llama-2-7b-hf", "sku": "H100-SXM-80GB", "tensor_parallel": 1,
                "backend": "step_model", "scheduler": "vllm", "start_state": [{"tag": "mixed", "count": 1}],
                "vllm": {"request_timeout_s": 300}}})");
  auto config = parse_scenario(tree, "s.json");
  ASSERT_TRUE(config) << config.error().message;
  const auto& generator = std::get<traces::GeneratorSpec>(config->workload.source);
  ASSERT_EQ(generator.stages.size(), 2u);
  EXPECT_EQ(generator.stages[1].duration, SimTime::from_seconds(30));
  ASSERT_TRUE(generator.shared_prefix);
  EXPECT_EQ(generator.shared_prefix->turns_per_conversation, 5u);
  auto again = parse_scenario(to_json(*config), "s.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*config));
  // Model by Hugging Face id, SKU by alias.
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  EXPECT_TRUE(resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog));
}

// Whatever name a config gives the model (its name or Hugging Face id) and the SKU (its
// name or an alias), a fitted deployment is reported fitted, and a borrowed one by the
// catalog's names (an alias once read as "no fit", and the summary said built_in).
TEST(ScenarioConfigTest, RooflineProvenanceDoesNotDependOnWhichNameTheConfigUses) {
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  const auto names_of_model = [&](const std::string& name) {
    std::vector<std::string> names{name};
    if (!catalog->models.at(name).hf_id.empty()) names.push_back(catalog->models.at(name).hf_id);
    return names;
  };
  const auto names_of_sku = [&](const std::string& name) {
    std::vector<std::string> names{name};
    for (const auto& alias : catalog->skus.at(name).aliases) names.push_back(alias);
    return names;
  };
  LlmServingSpec llm;
  llm.backend = LlmServingSpec::Backend::kRoofline;
  std::size_t named = 0;
  for (const auto& fit : catalog->fits) {
    for (const auto& model : names_of_model(fit.model)) {
      for (const auto& sku : names_of_sku(fit.sku)) {
        llm.model = model;
        llm.sku = sku;
        llm.tensor_parallel = fit.tensor_parallel;
        EXPECT_EQ(borrowed_roofline_factors(llm, *catalog), nullptr) << model << " on " << sku;
        ++named;
      }
    }
  }
  EXPECT_GT(named, 2 * catalog->fits.size());  // aliases and ids were among them
  llm.model = catalog->models.at("llama3-8b").hf_id;
  llm.sku = "H100";
  llm.tensor_parallel = 1;
  const json borrowed = borrowed_roofline_factors(llm, *catalog);
  ASSERT_TRUE(borrowed.is_object());
  EXPECT_EQ(borrowed["model"], "llama3-8b");
  EXPECT_EQ(borrowed["sku"], "h100-80gb");
  EXPECT_EQ(borrowed["source"], "sku_median");
}

TEST(ScenarioConfigTest, AStartStateGroupNamesItsPoolsOwnSkuAndTp) {
  auto shipped = load_scenario(default_scenario_path());
  ASSERT_TRUE(shipped);
  json tree = to_json(*shipped);
  tree["serving"].update(json::parse(R"({"model": "llama2-70b", "sku": "h100-80gb", "tensor_parallel": 8,
      "start_state": [{"tag": "prompt", "count": 2, "sku": "a100-80gb", "tensor_parallel": 4},
                      {"tag": "token", "count": 2}, {"tag": "prompt", "count": 1}]})"));
  auto config = parse_scenario(tree, default_scenario_path());
  ASSERT_TRUE(config) << config.error().message;
  const auto& llm = std::get<LlmServingSpec>(config->serving);
  ASSERT_EQ(llm.pool_hardware.size(), 1u);
  EXPECT_EQ(llm.pool_hardware.at(cluster::InstanceTag::kPrompt).sku, "a100-80gb");
  auto again = parse_scenario(to_json(*config), default_scenario_path());
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*config));
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  EXPECT_TRUE(resolve_llm_cluster(std::get<LlmServingSpec>(config->serving), *catalog));

  // One pool, one hardware: the second naming is an error at its key.
  tree["serving"]["start_state"][2]["tensor_parallel"] = 8u;
  const auto twice = parse_scenario(tree, default_scenario_path());
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("serving.start_state[2].tensor_parallel: the prompt pool's hardware is named by "
                                       "serving.start_state[0] already"),
            std::string::npos)
      << twice.error().message;
  // An unknown SKU or a TP that does not divide its servers names the group.
  tree["serving"]["start_state"][2].erase("tensor_parallel");
  tree["serving"]["start_state"][0]["sku"] = "tpu-v5";
  auto unknown = parse_scenario(tree, default_scenario_path());
  ASSERT_TRUE(unknown) << unknown.error().message;
  const auto no_sku = resolve_llm_cluster(std::get<LlmServingSpec>(unknown->serving), *catalog);
  ASSERT_FALSE(no_sku);
  EXPECT_EQ(no_sku.error().message, "serving.start_state[0].sku: no SKU 'tpu-v5' in hardware.json");
  tree["serving"]["start_state"][0]["sku"] = "a100-80gb";
  tree["serving"]["start_state"][0]["tensor_parallel"] = 3u;
  auto odd = parse_scenario(tree, default_scenario_path());
  ASSERT_TRUE(odd) << odd.error().message;
  const auto no_tp = resolve_llm_cluster(std::get<LlmServingSpec>(odd->serving), *catalog);
  ASSERT_FALSE(no_tp);
  EXPECT_NE(no_tp.error().message.find("serving.start_state[0].tensor_parallel: 3 does not divide"), std::string::npos);
  tree["serving"]["start_state"][0]["tensor_parallel"] = 1u;
  auto small = parse_scenario(tree, default_scenario_path());
  ASSERT_TRUE(small) << small.error().message;
  const auto no_fit = resolve_llm_cluster(std::get<LlmServingSpec>(small->serving), *catalog);
  ASSERT_FALSE(no_fit);
  EXPECT_NE(no_fit.error().message.find("serving.start_state[0]: llama2-70b does not fit on 1 x a100-80gb"),
            std::string::npos);
}

TEST(ScenarioConfigTest, RlObjectIsReadCheckedAndRoundTrips) {
  auto config = load_scenario(default_scenario_path());
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->rl);  // absent unless given, and then not in the resolved config
  EXPECT_FALSE(to_json(*config).contains("rl"));
  json tree = to_json(*config);
  tree["rl"] = {{"decision_interval_s", 30}, {"rate_scales", {0.5, 2}}, {"scale_up_delays_s", {0, 60}},
                {"start_instances", {2, 6}}, {"phase_period_s", 7200}, {"warmup_s", 30}, {"action", "discrete"},
                {"reward", {{"cost_weight", 0.02}}}};
  auto with_rl = parse_scenario(tree, default_scenario_path());
  ASSERT_TRUE(with_rl) << with_rl.error().message;
  ASSERT_TRUE(with_rl->rl);
  EXPECT_EQ(with_rl->rl->decision_interval, SimTime::from_seconds(30));
  EXPECT_EQ(with_rl->rl->rate_scales, (std::vector<double>{0.5, 2}));
  EXPECT_EQ(with_rl->rl->scale_up_delays_s, (std::vector<double>{0, 60}));
  EXPECT_EQ(with_rl->rl->start_instances, (std::vector<std::uint32_t>{2, 6}));
  EXPECT_EQ(with_rl->rl->phase_period_s, 7200.0);
  EXPECT_EQ(with_rl->rl->warmup, SimTime::from_seconds(30));
  EXPECT_EQ(with_rl->rl->action, ActionKind::kDiscrete);
  EXPECT_EQ(with_rl->rl->reward.cost_weight, 0.02);
  EXPECT_EQ(with_rl->rl->reward.slo_weight, 1.0);
  auto again = parse_scenario(to_json(*with_rl), default_scenario_path());
  ASSERT_TRUE(again);
  EXPECT_EQ(to_json(*again), to_json(*with_rl));
  EXPECT_FALSE(to_json(*with_rl)["rl"].contains("train_also"));  // absent unless given

  // More recipes to train on: paths against the recipe's own folder, absolute ones kept.
  tree["rl"]["train_also"] = {"other.json", "/abs/third.json"};
  auto mixed = parse_scenario(tree, "/recipes/first.json");
  ASSERT_TRUE(mixed) << mixed.error().message;
  EXPECT_EQ(mixed->rl->train_also, (std::vector<std::string>{"/recipes/other.json", "/abs/third.json"}));
  EXPECT_EQ(to_json(*parse_scenario(to_json(*mixed), "/elsewhere/x.json")), to_json(*mixed));
  for (const json& wrong : {json("other.json"), json{"a.json", 3}, json{""}}) {
    tree["rl"]["train_also"] = wrong;
    const auto refused = parse_scenario(tree, "s.json");
    ASSERT_FALSE(refused) << wrong.dump();
    EXPECT_NE(refused.error().message.find("rl.train_also"), std::string::npos) << refused.error().message;
  }

  tree["rl"] = {{"episode_s", 5}, {"decision_interval_s", 15}, {"rate_scales", {1, -2}}, {"action", "jump"},
                {"scale_up_delays_s", {10, "slow"}}, {"start_instances", {2, 1.5}},
                {"windows_from_s", 100}, {"windows_to_s", 50}, {"reward", {{"churn_weight", -1}}}, {"oops", 1}};
  const auto bad = parse_scenario(tree, "s.json");
  ASSERT_FALSE(bad);
  for (const char* key : {"rl.episode_s", "rl.rate_scales", "rl.action", "rl.windows_to_s", "rl.reward.churn_weight",
                          "rl.scale_up_delays_s", "rl.start_instances", "rl.oops"}) {
    EXPECT_NE(bad.error().message.find(key), std::string::npos) << key << " in " << bad.error().message;
  }
}

}  // namespace
}  // namespace meshsim::configs

namespace meshsim::configs {
namespace {

// workload.max_concurrency (a closed loop's clients) and serving.weights / kv_cache (the
// precision the model is served in) are read, written back, checked and honoured.
TEST(ScenarioConfigTest, ConcurrencyAndServedPrecisionAreReadCheckedAndHonoured) {
  auto config = parse_scenario(nlohmann::json::parse(R"({"workload": {"max_concurrency": 16, "generator": {
        "arrivals": {"rate_per_s": 2}, "requests": 10, "prompt_tokens": {"kind": "fixed", "value": 100},
        "output_tokens": {"kind": "fixed", "value": 10}}},
      "serving": {"model": "llama3.1-70b", "tensor_parallel": 4, "weights": "fp8", "kv_cache": "fp8"}})"),
                               "s.json");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->workload.max_concurrency, 16u);
  const auto& serving = std::get<LlmServingSpec>(config->serving);
  EXPECT_EQ(serving.weights, cluster::Precision::kFp8);
  auto again = parse_scenario(to_json(*config), "s.json");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*config));
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  const auto fp8 = resolve_llm_cluster(serving, *catalog);
  ASSERT_TRUE(fp8) << fp8.error().message;
  EXPECT_EQ(fp8->model.weights, cluster::Precision::kFp8);
  EXPECT_DOUBLE_EQ(fp8->model.weight_bytes(), 70.55e9);
  EXPECT_DOUBLE_EQ(fp8->model.kv_bytes_per_token(), 163840);  // 80 layers x 2 x 8 heads x 128 x 1 B
  LlmServingSpec own = serving;
  own.weights.reset();
  own.kv_cache.reset();
  const auto bf16 = resolve_llm_cluster(own, *catalog);
  ASSERT_TRUE(bf16) << bf16.error().message;
  EXPECT_EQ(bf16->model.weights, cluster::Precision::k16Bit);
  EXPECT_DOUBLE_EQ(bf16->model.kv_bytes_per_token(), 327680);

  EXPECT_NE(parse_error(R"({"workload": {"max_concurrency": 0}})")
                .find("workload.max_concurrency: expected a positive number of requests in the system at once"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"weights": "int4"}})").find("serving.weights: expected one of"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"serving": {"kv_cache": 8}})").find("serving.kv_cache"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::configs

namespace meshsim::configs {
namespace {

// Issue 60: a node of the node list named like one of the node groups' took its place in
// the core's name index, silently.
TEST(ScenarioConfigTest, ANodeListNodeNamedLikeAGroupsNodeIsRefusedByTheName) {
  const auto list = std::filesystem::temp_directory_path() / "meshsim_named_twice_nodes.csv";
  std::ofstream(list) << "sn,cpu_milli,memory_mib,gpu,model\nh100-80gb-1,64000,262144,8,V100M32\n";
  auto config = load_scenario(default_catalog_folder() + "/scenarios/shared-cluster-synthetic.json");
  ASSERT_TRUE(config) << config.error().message;
  auto catalog = load_catalog(default_catalog_folder());
  ASSERT_TRUE(catalog);
  const auto& serving = std::get<LlmServingSpec>(config->serving);
  ASSERT_TRUE(make_shared_cluster_config(config->cluster, serving, *catalog));
  config->cluster.node_list = list.string();
  const auto refused = make_shared_cluster_config(config->cluster, serving, *catalog);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message, "cluster.node_list: " + list.string() +
                                         ": node 'h100-80gb-1' has the name of a node of cluster.nodes (each node "
                                         "needs its own name)");
}

}  // namespace
}  // namespace meshsim::configs
