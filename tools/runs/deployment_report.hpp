#pragma once

// What a scenario's model and deployment became once the catalog resolved them: the
// model's size, its KV bytes per token and context limit, and per kind of server the
// SKU, TP degree, KV capacity per instance and where the step times come from (fitted,
// borrowed or measured). summary.json's "deployment" section and `meshsim models`.

#include <nlohmann/json.hpp>

#include "configs/catalog.hpp"
#include "sim/cluster/llm_cluster_config.hpp"

namespace meshsim::cli {

nlohmann::ordered_json deployment_json(const cluster::LlmClusterConfig& config);
// The same as lines for the terminal.
std::string deployment_text(const nlohmann::ordered_json& deployment);
// The catalog's models, one line each: parameters, active parameters, KV bytes per token,
// context.
std::string models_text(const configs::Catalog& catalog);

}  // namespace meshsim::cli
