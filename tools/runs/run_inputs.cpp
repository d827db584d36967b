#include "tools/runs/run_inputs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "configs/catalog.hpp"
#include "configs/config_file.hpp"
#include "configs/json_difference.hpp"
#include "sim/engine/digest.hpp"

namespace meshsim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The files' bytes, each preceded by its name relative to `folder`.
Expected<std::string> digest_files(const fs::path& folder, const std::vector<fs::path>& files) {
  engine::Digest digest;
  std::vector<char> buffer(1 << 20);
  for (const fs::path& file : files) {
    digest.add(file.lexically_relative(folder).generic_string()).add(std::string_view("\0", 1));
    std::ifstream in(file, std::ios::binary);
    if (!in) return Error{file.string() + ": cannot read it to check that a resumed run reads the same input"};
    while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
      digest.add(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
    }
  }
  return digest.hex();
}

// A trace file, or every file of a folder of ServeGen chunks.
Expected<std::string> digest_trace(const std::string& path) {
  if (configs::path_kind(path) != configs::PathKind::kFolder) {
    return digest_files(fs::path(path).parent_path(), {fs::path(path)});
  }
  auto entries = configs::folder_entries(path);
  if (!entries) return entries.error();
  std::vector<fs::path> files;
  for (const fs::path& entry : *entries) {
    if (configs::path_kind(entry) == configs::PathKind::kFile) files.push_back(entry);
  }
  return digest_files(path, files);
}

Expected<std::string> digest_catalog(const std::optional<std::string>& user_folder) {
  std::string both;
  for (const std::string& folder : {configs::default_catalog_folder(), user_folder.value_or("")}) {
    if (folder.empty()) continue;
    const auto listed = configs::catalog_files(folder);
    if (!listed) return listed.error();
    std::vector<fs::path> files(listed->begin(), listed->end());
    auto digest = digest_files(folder, files);
    if (!digest) return digest;
    both += *digest;
  }
  return both;
}

}  // namespace

std::string workload_file(const configs::ScenarioConfig& config) {
  if (const auto* file = std::get_if<traces::TraceFileSpec>(&config.workload.source)) return file->path;
  if (const auto* servegen = std::get_if<traces::ServeGenSpec>(&config.workload.source)) return servegen->path;
  return "";
}

Expected<json> input_digests(const std::vector<const configs::ScenarioConfig*>& configs) {
  json catalogs = json::object(), traces = json::object();
  for (const configs::ScenarioConfig* config : configs) {
    const std::string catalog = config->catalog.value_or("bundled");
    if (!catalogs.contains(catalog)) {
      auto digest = digest_catalog(config->catalog);
      if (!digest) return digest.error();
      catalogs[catalog] = *digest;
    }
    const std::string trace = workload_file(*config);
    if (!trace.empty() && !traces.contains(trace)) {
      auto digest = digest_trace(trace);
      if (!digest) return digest.error();
      traces[trace] = *digest;
    }
  }
  return json{{"catalogs", catalogs}, {"traces", traces}};
}

Status same_inputs(const json& recorded, const json& now, const std::string& folder) {
  const auto difference = configs::first_difference(recorded, now);
  if (!difference) return Ok{};
  return Error{folder + ": --resume with other inputs than the run was started with (" + *difference +
               "): resume it with its own config, catalog and traces, or use another --out"};
}

}  // namespace meshsim::cli
