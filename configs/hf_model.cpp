#include "configs/hf_model.hpp"

#include <filesystem>
#include <optional>

#include "configs/config_file.hpp"
#include "configs/hf_architecture.hpp"

namespace meshsim::configs {

Expected<cluster::ModelSpec> model_from_hf_config(const std::string& path, const std::string& hf_id) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  auto model = model_from_hf_json(*tree, hf_id);
  if (!model) return Error{path + ": " + model.error().message};
  return model;
}

Expected<std::vector<std::filesystem::path>> hf_config_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<fs::path> configs;
  const fs::path root = fs::path(folder) / "hf";
  std::string reason;
  switch (path_kind(root, &reason)) {
    case PathKind::kMissing:
      return configs;
    case PathKind::kFolder:
      break;
    default:
      return Error{root.string() + ": expected a folder of <org>/<name>/config.json" +
                   (reason.empty() ? "" : " (" + reason + ")")};
  }
  auto orgs = folder_entries(root);
  if (!orgs) return orgs.error();
  // A file beside the folders (a note) is not a model; a folder that cannot be reached
  // (a link loop) is refused, and whatever sits at <org>/<name>/config.json is the model's
  // config: one that is not a readable file (a folder, a pipe) is refused when read.
  const auto unreachable = [](const fs::path& path) -> std::optional<Error> {
    std::string why;
    if (path_kind(path, &why) != PathKind::kUnreachable) return std::nullopt;
    return Error{path.string() + ": cannot open it (" + why + ")"};
  };
  for (const fs::path& org : *orgs) {
    if (auto refused = unreachable(org)) return *refused;
    if (path_kind(org) != PathKind::kFolder) continue;
    auto names = folder_entries(org);
    if (!names) return names.error();
    for (const fs::path& name : *names) {
      if (auto refused = unreachable(name)) return *refused;
      if (path_kind(name) == PathKind::kFolder && path_kind(name / "config.json") != PathKind::kMissing) {
        configs.push_back(name / "config.json");
      }
    }
  }
  return configs;
}

Expected<std::vector<cluster::ModelSpec>> read_hf_models(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<cluster::ModelSpec> models;
  const auto configs = hf_config_files(folder);
  if (!configs) return configs.error();
  for (const auto& config : *configs) {
    const fs::path dir = config.parent_path();
    const std::string hf_id = dir.parent_path().filename().string() + "/" + dir.filename().string();
    auto model = model_from_hf_config(config.string(), hf_id);
    if (!model) return model.error();
    models.push_back(std::move(*model));
  }
  return models;
}

}  // namespace meshsim::configs
