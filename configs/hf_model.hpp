#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/perf/hardware.hpp"
#include "sim/engine/expected.hpp"

namespace meshsim::configs {

// A model from a Hugging Face config.json (model_from_hf_json: any decoder-only
// transformer), its parameter count worked out from the shapes. Named `hf_id` (also its
// ModelSpec::name). Errors name the file and key.
Expected<cluster::ModelSpec> model_from_hf_config(const std::string& path, const std::string& hf_id);

// The paths of every `hf/<org>/<name>/config.json` under `folder`, sorted.
Expected<std::vector<std::filesystem::path>> hf_config_files(const std::string& folder);
// Every `hf/<org>/<name>/config.json` under `folder` (a --catalog folder), as models
// named "<org>/<name>", in path order.
Expected<std::vector<cluster::ModelSpec>> read_hf_models(const std::string& folder);

}  // namespace meshsim::configs
