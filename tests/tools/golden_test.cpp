// Golden runs: every shipped scenario (configs/scenarios/*.json replayed, the scripts in
// experiments/scenarios/ played) has a fingerprint of its outputs checked in at
// tests/golden/fingerprints.json. A change in behaviour changes a fingerprint and fails
// here; when the change is intended, rerun with MESHSIM_UPDATE_GOLDEN=1 (which rewrites
// the file) and commit it with the change, saying why the outputs moved.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/shared_data.hpp"
#include "tests/test_paths.hpp"
#include "tests/tools/tool_test_support.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/scenario_command.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource = MESHSIM_SOURCE_DIR;
const fs::path kGoldenFile = kSource / "tests" / "golden" / "fingerprints.json";

using testing::slurp;

// FNV-1a, 64 bits, as 16 hex digits: stable across compilers and libraries.
std::string fingerprint(const std::string& bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

// A replay's outputs, less what depends on where the checkout is (paths in the resolved
// config and the workload's name): requests.csv, timeseries.csv and summary.json's figures.
std::string replay_outputs(const std::string& scenario) {
  const fs::path dir = fs::temp_directory_path() / ("meshsim_golden_" + scenario);
  fs::remove_all(dir);
  ReplayCommandOptions options;
  options.config_path = (kSource / "configs" / "scenarios" / (scenario + ".json")).string();
  options.out_dir = dir.string();
  options.quiet = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_replay_command(options, out, err), kExitOk) << err.str();
  json summary = json::parse(slurp(dir / "summary.json"));
  summary.erase("config");
  summary.erase("workload_source");
  summary.erase("meshsim_version");
  // Nothing else may depend on the checkout's place: the same run elsewhere fingerprints the same.
  const std::string figures = summary.dump();
  EXPECT_EQ(figures.find("/shared/"), std::string::npos) << scenario << "'s summary names a path: " << figures;
  EXPECT_EQ(figures.find(kSource.string()), std::string::npos) << scenario << "'s summary names the checkout";
  return slurp(dir / "requests.csv") + "\n" + slurp(dir / "timeseries.csv") + "\n" + figures;
}

std::string script_outputs(const fs::path& script) {
  std::ostringstream out, err;
  EXPECT_EQ(run_scenario_command({script.string(), /*check=*/true, /*metrics=*/"", /*allow_files=*/false}, out, err),
            kExitOk)
      << err.str();
  return out.str();
}

TEST(GoldenTest, ShippedScenariosKeepTheirFingerprints) {
  std::map<std::string, std::string> now;
  for (const auto& entry : fs::directory_iterator(kSource / "configs" / "scenarios")) {
    const std::string name = entry.path().stem().string();
    // Scenarios that read the shared data (the SplitwiseSim ones, the shared cluster).
    if (slurp(entry.path()).find("/shared/") != std::string::npos) {
      MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("traces/azure2023_conv.csv"));
      MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("traces/alibaba_gpu2023_openb_pod_list_default.csv"));
      MESHSIM_NEED_SHARED_FILE(meshsim::testing::shared_path("reference/splitwise_perf_model.csv"));
    }
    now["replay/" + name] = fingerprint(replay_outputs(name));
  }
  ::unsetenv("SCHEDULEMESH_PREEMPTION_LEVEL");  // p10 reads it
  for (const auto& entry : fs::directory_iterator(kSource / "experiments" / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    now["scenario/" + entry.path().stem().string()] = fingerprint(script_outputs(entry.path()));
  }
  const char* update = std::getenv("MESHSIM_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(kGoldenFile) << json(now).dump(2) << '\n';
    GTEST_SKIP() << "rewrote " << kGoldenFile << " with " << now.size() << " fingerprints";
  }
  const json recorded = json::parse(slurp(kGoldenFile));
  for (const auto& [name, value] : now) {
    ASSERT_TRUE(recorded.contains(name)) << name << " has no recorded fingerprint: run with MESHSIM_UPDATE_GOLDEN=1";
    EXPECT_EQ(recorded[name].get<std::string>(), value)
        << name << " produces different outputs; if that is intended, rerun with MESHSIM_UPDATE_GOLDEN=1 and commit "
        << kGoldenFile;
  }
  for (const auto& [name, value] : recorded.items()) {
    EXPECT_TRUE(now.count(name) != 0) << name << " is recorded but no longer shipped";
  }
}

}  // namespace
}  // namespace meshsim::cli
