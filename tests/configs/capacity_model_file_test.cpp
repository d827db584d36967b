// The capacity model's file (configs/capacity_model_file.hpp): what `meshsim
// capacity-model` writes reads back the same, a broken file is refused naming its key,
// and a scenario's capacity-units target tracking finds its model beside the scenario.
#include "configs/capacity_model_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "configs/scenario_config.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path folder() {
  const fs::path dir = fs::temp_directory_path() / "meshsim_capacity_model_file";
  fs::create_directories(dir);
  return dir;
}

std::string write(const std::string& name, const json& tree) {
  const fs::path path = folder() / name;
  std::ofstream(path) << tree.dump(2);
  return path.string();
}

autoscale::CapacityModel two_sizes() {
  autoscale::CapacityModel m;
  m.features = autoscale::CapacityFeatures::kMix;
  m.sizes = {1, 4};
  m.weights = {{0.25, 1.5, -0.125, 0.0625}, {0.2, 1.0, 0.5, 1e-9}};
  return m;
}

TEST(CapacityModelFileTest, WhatIsWrittenReadsBackTheSame) {
  const auto model = two_sizes();
  const auto read = read_capacity_model(write("model.json", capacity_model_json(model, {"recipe.json", 0.99, 0.12})));
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->features, model.features);
  EXPECT_EQ(read->sizes, model.sizes);
  EXPECT_EQ(read->weights, model.weights);
  const autoscale::WorkFigures mix{1200, 3000, 150, 400, 2.0};
  EXPECT_EQ(read->per_instance(mix, 3), model.per_instance(mix, 3));
}

TEST(CapacityModelFileTest, ABrokenFileIsRefusedNamingTheFileAndKey) {
  const json good = capacity_model_json(two_sizes(), {"recipe.json", 0.99, 0.12});
  const auto error_of = [](const json& tree) {
    const std::string path = write("broken.json", tree);
    const auto read = read_capacity_model(path);
    return read ? std::string() : read.error().message;
  };
  const auto broken = [&](const std::function<void(json&)>& edit) {
    json tree = good;
    edit(tree);
    return error_of(tree);
  };
  EXPECT_NE(broken([](json& t) { t["format"] = 2; }).find("broken.json: format: expected 1"), std::string::npos);
  EXPECT_NE(broken([](json& t) { t["features"] = "tail"; }).find("features: expected one of"), std::string::npos);
  EXPECT_NE(broken([](json& t) { t["sizes"] = json::array(); }).find("sizes: expected a non-empty array"),
            std::string::npos);
  EXPECT_NE(broken([](json& t) { t["sizes"][1]["instances"] = 1; }).find("sizes[1].instances: expected sizes in "
                                                                          "ascending order"),
            std::string::npos);
  EXPECT_NE(broken([](json& t) { t["sizes"][0]["instances"] = 0; }).find("sizes[0].instances: expected an integer"),
            std::string::npos);
  EXPECT_NE(broken([](json& t) { t["sizes"][0]["seconds_per_request"].erase(0); })
                .find("sizes[0].seconds_per_request: expected 4 numbers, one per feature"),
            std::string::npos);
  EXPECT_NE(broken([](json& t) { t["sizes"][1]["seconds_per_request"][2] = "x"; })
                .find("sizes[1].seconds_per_request: expected finite numbers"),
            std::string::npos);
  EXPECT_NE(error_of(json::array()).find("expected a JSON object"), std::string::npos);
  EXPECT_FALSE(read_capacity_model((folder() / "missing.json").string()));
}

TEST(CapacityModelFileTest, AScenarioFindsItsModelBesideItAndNamesTheKeyWhenItCannot) {
  write("beside.json", capacity_model_json(two_sizes(), {"recipe.json", 0.99, 0.12}));
  const json scenario = json::parse(R"({"workload": {"generator": {"arrivals": {"rate_per_s": 2},
      "prompt_tokens": {"value": 10}, "output_tokens": {"value": 5}, "requests": 100}},
      "autoscaler": {"policy": "target_tracking",
      "target_tracking": {"metric": "capacity_units", "target": 0.8, "capacity_model": "beside.json"}}})");
  const std::string path = (folder() / "scenario.json").string();
  auto config = parse_scenario(scenario, path);
  ASSERT_TRUE(config) << config.error().message;
  const auto& t = config->autoscaler.target_tracking;
  ASSERT_TRUE(t.capacity_model);
  EXPECT_EQ(t.capacity_model->sizes, two_sizes().sizes);
  EXPECT_EQ(t.capacity_model_path, (folder() / "beside.json").string());
  auto again = parse_scenario(to_json(*config), path);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(to_json(*again), to_json(*config));

  json without = scenario;
  without["autoscaler"]["target_tracking"].erase("capacity_model");
  auto refused = parse_scenario(without, path);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("autoscaler.target_tracking.capacity_model: required by the capacity_units"),
            std::string::npos)
      << refused.error().message;
  json missing = scenario;
  missing["autoscaler"]["target_tracking"]["capacity_model"] = "nowhere.json";
  refused = parse_scenario(missing, path);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("autoscaler.target_tracking.capacity_model:"), std::string::npos);
  EXPECT_NE(refused.error().message.find("nowhere.json"), std::string::npos) << refused.error().message;
}

}  // namespace
}  // namespace meshsim::configs
