#include "tools/cli/models_command.hpp"

#include <ostream>
#include <variant>

#include "configs/catalog.hpp"
#include "configs/serving_config.hpp"
#include "tools/cli/commands.hpp"
#include "tools/runs/deployment_report.hpp"

namespace meshsim::cli {

int run_models_command(const ModelsCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (options.config_path.empty()) {
    auto catalog = configs::load_catalog(configs::default_catalog_folder(), options.catalog.value_or(""));
    if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
    out << models_text(*catalog);
    return kExitOk;
  }
  auto config = load_scenario_for_command(options.config_path, {.sets = options.sets, .catalog = options.catalog});
  if (!config) return fail(err, config.error().message, kExitBadInput);
  auto catalog = configs::load_scenario_catalog(*config);
  if (!catalog) return fail(err, catalog.error().message, kExitBadInput);
  const auto* llm = std::get_if<configs::LlmServingSpec>(&config->serving);
  if (llm == nullptr) {
    return fail(err, options.config_path + ": serving.kind is fixed_latency, which models no LLM", kExitBadInput);
  }
  auto resolved = configs::resolve_llm_cluster(*llm, *catalog, /*place_start_state=*/true);
  if (!resolved) return fail(err, options.config_path + ": " + resolved.error().message, kExitBadInput);
  out << deployment_text(deployment_json(*resolved));
  return kExitOk;
}

}  // namespace meshsim::cli
