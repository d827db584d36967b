#include "configs/scenario_config.hpp"

#include <algorithm>
#include <filesystem>

#include "configs/config_file.hpp"
#include "configs/object_reader.hpp"
#include "configs/serving_config.hpp"
#include "configs/service_classes.hpp"
#include "traces/generated_source.hpp"
#include "traces/servegen_source.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;
using engine::SimTime;
using traces::ArrivalSpec;
using traces::LengthSpec;


constexpr EnumNames kArrivalKindNames{std::array{std::pair{ArrivalSpec::Kind::kPoisson, std::string_view("poisson")},
                                                 std::pair{ArrivalSpec::Kind::kGamma, std::string_view("gamma")},
                                                 std::pair{ArrivalSpec::Kind::kDiurnal, std::string_view("diurnal")},
                                                 std::pair{ArrivalSpec::Kind::kConstant, std::string_view("constant")}}};

constexpr EnumNames kLengthKindNames{std::array{std::pair{LengthSpec::Kind::kFixed, std::string_view("fixed")},
                                                std::pair{LengthSpec::Kind::kUniform, std::string_view("uniform")},
                                                std::pair{LengthSpec::Kind::kQuantiles, std::string_view("quantiles")}}};

void read_length(ObjectReader& parent, std::string_view key, LengthSpec& spec) {
  ObjectReader reader(parent.raw(key), parent.path_of(key), parent.errors());
  reader.read_choice("kind", spec.kind, kLengthKindNames);
  const auto count_ok = [](std::uint64_t v) { return v >= 1 && v <= 10'000'000; };
  reader.read("value", spec.value, "a token count in [1, 10000000]", count_ok);
  reader.read("min", spec.min, "a token count in [1, 10000000]", count_ok);
  reader.read("max", spec.max, "a token count in [1, 10000000]", count_ok);
  if (const json* table = reader.raw("quantiles")) {
    spec.quantiles.clear();
    bool ok = table->is_array();
    if (ok) {
      for (const auto& point : *table) {
        if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number()) {
          ok = false;
          break;
        }
        spec.quantiles.emplace_back(point[0].get<double>(), point[1].get<double>());
      }
    }
    if (!ok) reader.fail("quantiles", "expected a list of [probability, tokens] pairs");
  }
}

void read_generator(ObjectReader& reader, traces::GeneratorSpec& spec) {
  reader.read("name", spec.name);
  {
    ObjectReader arrivals(reader.raw("arrivals"), reader.path_of("arrivals"), reader.errors());
    auto& a = spec.arrivals;
    arrivals.read_choice("kind", a.kind, kArrivalKindNames);
    arrivals.read("rate_per_s", a.rate_per_s, "a positive rate", kPositive);
    arrivals.read("cv", a.cv, "a positive coefficient of variation", kPositive);
    arrivals.read("amplitude", a.amplitude, "a number in [0, 1]", [](double v) { return v >= 0 && v <= 1; });
    arrivals.read("period_s", a.period_s, "a positive number of seconds", kPositive);
    arrivals.read("phase_rad", a.phase_rad);
  }
  if (const json* stages = reader.raw("stages")) {
    if (!stages->is_array() || stages->empty()) reader.fail("stages", "expected a list of {rate_per_s, duration_s}");
    for (std::size_t i = 0; stages->is_array() && i < stages->size(); ++i) {
      ObjectReader stage(&(*stages)[i], reader.path_of("stages") + "[" + std::to_string(i) + "]", reader.errors());
      traces::LoadStage s;
      stage.read("rate_per_s", s.rate_per_s, "a positive rate", kPositive);
      stage.read_duration("duration_s", s.duration, 1.0);
      if (!stage.has("duration_s")) stage.fail("duration_s", "expected the stage's length in seconds");
      spec.stages.push_back(s);
    }
  }
  read_length(reader, "prompt_tokens", spec.prompt_tokens);
  read_length(reader, "output_tokens", spec.output_tokens);
  if (reader.has("shared_prefix")) {
    ObjectReader prefix(reader.raw("shared_prefix"), reader.path_of("shared_prefix"), reader.errors());
    traces::SharedPrefixSpec p;
    prefix.read("system_prompts", p.system_prompts, "a positive integer", kAtLeastOne);
    prefix.read("users_per_system_prompt", p.users_per_system_prompt, "a positive integer", kAtLeastOne);
    prefix.read("system_prompt_tokens", p.system_prompt_tokens, "a token count in [0, 10000000]",
                [](std::uint64_t v) { return v <= 10'000'000; });
    prefix.read("multi_turn", p.multi_turn);
    prefix.read("turns_per_conversation", p.turns_per_conversation);
    spec.shared_prefix = p;
  }
  reader.read_optional("requests", spec.requests, "a positive integer", kAtLeastOne);
  reader.read_optional_duration("duration_s", spec.duration, 1.0);
}

void parse_generator_at(ObjectReader& workload, const std::string& base_dir, traces::GeneratorSpec& spec) {
  const json* node = workload.raw("generator");
  if (node != nullptr && node->is_string()) {
    // A path to a generator file, relative to the config file's folder.
    std::filesystem::path path(node->get<std::string>());
    if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
    auto loaded = load_generator(path.lexically_normal().string());
    if (!loaded) {
      workload.fail("generator", loaded.error().message);
      return;
    }
    spec = *loaded;
    return;
  }
  ObjectReader reader(node, workload.path_of("generator"), workload.errors());
  read_generator(reader, spec);
}

void parse_workload(ObjectReader& parent, const std::string& base_dir, traces::WorkloadSpec& spec) {
  ObjectReader reader(parent.raw("workload"), parent.path_of("workload"), parent.errors());
  const bool has_trace = reader.has("trace");
  const bool has_generator = reader.has("generator");
  const bool has_servegen = reader.has("servegen");
  if (int{has_trace} + int{has_generator} + int{has_servegen} > 1) {
    reader.fail(has_trace ? "trace" : "generator", "give one of 'trace', 'generator' and 'servegen'");
  }
  if (has_servegen) {
    traces::ServeGenSpec servegen;
    ObjectReader node(reader.raw("servegen"), reader.path_of("servegen"), reader.errors());
    node.read("path", servegen.path);
    if (servegen.path.empty()) node.fail("path", "expected a folder of ServeGen chunk-N-trace.csv files");
    if (std::filesystem::path(servegen.path).is_relative() && !servegen.path.empty()) {
      servegen.path = (std::filesystem::path(base_dir) / servegen.path).lexically_normal().string();
    }
    node.read("load_scale", servegen.load_scale, "a factor in (0, 100]",
              [](double v) { return v > 0 && v <= traces::kMaxLoadScale; });
    node.read_choice("lengths", servegen.lengths, traces::kServeGenLengthsNames);
    if (servegen.lengths == traces::ServeGenLengths::kModel) {
      read_length(node, "prompt_tokens", servegen.prompt_tokens);
      read_length(node, "output_tokens", servegen.output_tokens);
      if (!node.has("prompt_tokens") || !node.has("output_tokens")) {
        node.fail(node.has("prompt_tokens") ? "output_tokens" : "prompt_tokens",
                  "expected a length model with lengths: model (the window files carry no lengths)");
      }
    } else {
      for (const char* key : {"prompt_tokens", "output_tokens"}) {
        if (node.has(key)) {
          node.fail(key, "only with lengths: model (lengths: clients, the default, draws each client's lengths from "
                         "its chunk-N-dataset.json)");
        }
      }
    }
    spec.source = servegen;
  } else if (has_trace) {
    traces::TraceFileSpec file;
    ObjectReader trace(reader.raw("trace"), reader.path_of("trace"), reader.errors());
    trace.read("path", file.path);
    if (file.path.empty()) trace.fail("path", "expected the path of a trace file");
    std::filesystem::path path(file.path);
    if (path.is_relative() && !file.path.empty()) file.path = (std::filesystem::path(base_dir) / path).lexically_normal().string();
    trace.read_choice("format", file.format, traces::kTraceFormatNames);
    ObjectReader columns(trace.raw("columns"), trace.path_of("columns"), trace.errors());
    columns.read("arrival", file.columns.arrival);
    columns.read_choice("arrival_format", file.columns.arrival_format, traces::kTimeFormatNames);
    columns.read("prompt_tokens", file.columns.prompt_tokens);
    columns.read("output_tokens", file.columns.output_tokens);
    columns.read_optional("hash_ids", file.columns.hash_ids);
    columns.read_optional("class", file.columns.service_class);
    spec.source = file;
  } else {
    traces::GeneratorSpec generator;
    if (has_generator) {
      parse_generator_at(reader, base_dir, generator);
    } else {
      reader.raw("generator");
      reader.fail("generator",
                  "expected a workload: 'trace' (a file), 'generator' (an object or a file) or 'servegen' (window files)");
    }
    spec.source = generator;
  }
  reader.read("rate_scale", spec.rate_scale, "a factor in " + traces::rate_scale_range(), traces::rate_scale_in_range);
  reader.read_optional("max_requests", spec.max_requests, "a positive integer", kAtLeastOne);
  reader.read_optional("max_concurrency", spec.max_concurrency, "a positive number of requests in the system at once",
                       [](std::uint32_t v) { return v >= 1; });
  ObjectReader window(reader.raw("window"), reader.path_of("window"), reader.errors());
  window.read_duration("start_s", spec.window_start, 1.0);
  window.read_optional_duration("end_s", spec.window_end, 1.0);
  if (spec.window_end && *spec.window_end <= spec.window_start) {
    window.fail("end_s", "expected an end after start_s");
  }
}

json length_to_json(const LengthSpec& spec) {
  json out = {{"kind", kLengthKindNames.name(spec.kind)}};
  switch (spec.kind) {
    case LengthSpec::Kind::kFixed: out["value"] = spec.value; break;
    case LengthSpec::Kind::kUniform: out["min"] = spec.min; out["max"] = spec.max; break;
    case LengthSpec::Kind::kQuantiles: {
      json table = json::array();
      for (const auto& [p, tokens] : spec.quantiles) table.push_back({p, tokens});
      out["quantiles"] = table;
      break;
    }
  }
  return out;
}

json optional_json(const std::optional<SimTime>& time) {
  return time ? json(time->seconds()) : json(nullptr);
}

}  // namespace

Expected<traces::GeneratorSpec> load_generator(const std::string& path) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  ConfigErrors errors(path);
  traces::GeneratorSpec spec;
  {
    ObjectReader reader(&*tree, "", errors);
    read_generator(reader, spec);
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return spec;
}

Expected<ScenarioConfig> parse_scenario(const json& tree, const std::string& file) {
  ConfigErrors errors(file);
  ScenarioConfig config;
  const std::string base_dir = std::filesystem::path(file).parent_path().string();
  {
    ObjectReader reader(&tree, "", errors);
    reader.read("name", config.name);
    reader.read("seed", config.seed);
    reader.read_optional("catalog", config.catalog);
    if (config.catalog && std::filesystem::path(*config.catalog).is_relative() && !base_dir.empty()) {
      config.catalog = (std::filesystem::path(base_dir) / *config.catalog).lexically_normal().string();
    }
    parse_workload(reader, base_dir, config.workload);
    parse_serving(reader, base_dir, config.serving);
    parse_scaling(reader, config.scaling);
    parse_autoscaler(reader, config.autoscaler, base_dir);
    parse_cluster(reader, base_dir, config.cluster);
    parse_rl(reader, config.rl, base_dir);
    if (config.rl) {
      for (std::string& recipe : config.rl->train_also) {
        if (std::filesystem::path(recipe).is_relative() && !base_dir.empty()) {
          recipe = (std::filesystem::path(base_dir) / recipe).lexically_normal().string();
        }
      }
    }
    if (config.cluster.mode == ClusterMode::kFixed && !std::holds_alternative<LlmServingSpec>(config.serving)) {
      errors.add("cluster.mode", "a fixed cluster needs the llm serving model (serving.kind: llm)");
    }
    if (const auto* llm = std::get_if<LlmServingSpec>(&config.serving)) {
      check_start_state(llm->start_state, config.scaling, errors);
      for (const auto& sized : config.autoscaler.static_sizes) {
        const cluster::InstanceTag tag = sized.first;
        const bool present = std::any_of(llm->start_state.begin(), llm->start_state.end(),
                                         [&](const auto& group) { return group.tag == tag; });
        if (!present) {
          errors.add("autoscaler.static.sizes." + std::string(cluster::kInstanceTagNames.name(tag)),
                     "the start state has no instance of this tag (pools are the start state's tags)");
        }
      }
    } else if (config.autoscaler.policy != AutoscalerPolicy::kNone) {
      errors.add("autoscaler.policy", "autoscaling needs the llm serving model (serving.kind: llm)");
    }
    ObjectReader slo(reader.raw("slo"), "slo", errors);
    slo.read_duration("ttft_ms", config.replay.slo.ttft, 1e-3);
    double per_token_ms = config.replay.slo.ttft_per_prompt_token_s * 1e3;
    slo.read("ttft_ms_per_prompt_token", per_token_ms, "a number of milliseconds in [0, 1e6]",
             [](double v) { return v >= 0 && v <= 1e6; });
    config.replay.slo.ttft_per_prompt_token_s = per_token_ms * 1e-3;
    slo.read_duration("tbt_ms", config.replay.slo.tbt, 1e-3);
    slo.read_choice("tbt_definition", config.replay.slo.tbt_definition, metrics::kTbtDefinitionNames);
    slo.finish();
    parse_service_classes(reader, config);
    ObjectReader run(reader.raw("run"), "run", errors);
    run.read_optional_duration("until_s", config.replay.until, 1.0);
    run.read_duration("timeseries_interval_s", config.replay.timeseries_interval, 1.0);
    if (config.replay.timeseries_interval <= SimTime::zero()) {
      run.fail("timeseries_interval_s", "expected a positive number of seconds");
    }
  }
  if (const auto* generator = std::get_if<traces::GeneratorSpec>(&config.workload.source); generator && errors.empty()) {
    if (auto status = traces::validate(*generator); !status) {
      errors.add("workload.generator", status.error().message);
    }
  }
  if (const auto* servegen = std::get_if<traces::ServeGenSpec>(&config.workload.source); servegen && errors.empty()) {
    if (auto status = traces::validate(*servegen); !status) errors.add("workload.servegen", status.error().message);
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return config;
}

Expected<ScenarioConfig> load_scenario(const std::string& path) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  return parse_scenario(*tree, path);
}

json to_json(const traces::GeneratorSpec& spec) {
  const auto& a = spec.arrivals;
  json arrivals = {{"kind", kArrivalKindNames.name(a.kind)}, {"rate_per_s", a.rate_per_s}};
  if (a.kind == ArrivalSpec::Kind::kGamma) arrivals["cv"] = a.cv;
  if (a.kind == ArrivalSpec::Kind::kDiurnal) {
    arrivals["amplitude"] = a.amplitude;
    arrivals["period_s"] = a.period_s;
    arrivals["phase_rad"] = a.phase_rad;
  }
  json out{{"name", spec.name},
           {"arrivals", arrivals},
           {"prompt_tokens", length_to_json(spec.prompt_tokens)},
           {"output_tokens", length_to_json(spec.output_tokens)},
           {"requests", spec.requests ? json(*spec.requests) : json(nullptr)},
           {"duration_s", optional_json(spec.duration)}};
  if (!spec.stages.empty()) {
    out["stages"] = json::array();
    for (const auto& stage : spec.stages) {
      out["stages"].push_back({{"rate_per_s", stage.rate_per_s}, {"duration_s", stage.duration.seconds()}});
    }
  }
  if (const auto& p = spec.shared_prefix) {
    out["shared_prefix"] = {{"system_prompts", p->system_prompts},
                            {"users_per_system_prompt", p->users_per_system_prompt},
                            {"system_prompt_tokens", p->system_prompt_tokens},
                            {"multi_turn", p->multi_turn},
                            {"turns_per_conversation", p->turns_per_conversation}};
  }
  return out;
}

json to_json(const ScenarioConfig& config) {
  json workload;
  if (const auto* file = std::get_if<traces::TraceFileSpec>(&config.workload.source)) {
    const auto mapping = traces::preset_mapping(file->format, file->columns);
    workload["trace"] = {{"path", file->path},
                         {"format", traces::kTraceFormatNames.name(file->format)},
                         {"columns",
                          {{"arrival", mapping.arrival},
                           {"arrival_format", traces::kTimeFormatNames.name(mapping.arrival_format)},
                           {"prompt_tokens", mapping.prompt_tokens},
                           {"output_tokens", mapping.output_tokens},
                           {"hash_ids", mapping.hash_ids ? json(*mapping.hash_ids) : json(nullptr)}}}};
    if (mapping.service_class) workload["trace"]["columns"]["class"] = *mapping.service_class;
  } else if (const auto* servegen = std::get_if<traces::ServeGenSpec>(&config.workload.source)) {
    workload["servegen"] = {{"path", servegen->path},
                            {"load_scale", servegen->load_scale},
                            {"lengths", traces::kServeGenLengthsNames.name(servegen->lengths)}};
    if (servegen->lengths == traces::ServeGenLengths::kModel) {
      workload["servegen"]["prompt_tokens"] = length_to_json(servegen->prompt_tokens);
      workload["servegen"]["output_tokens"] = length_to_json(servegen->output_tokens);
    }
  } else {
    workload["generator"] = to_json(std::get<traces::GeneratorSpec>(config.workload.source));
  }
  workload["rate_scale"] = config.workload.rate_scale;
  workload["max_requests"] = config.workload.max_requests ? json(*config.workload.max_requests) : json(nullptr);
  workload["max_concurrency"] = config.workload.max_concurrency ? json(*config.workload.max_concurrency) : json(nullptr);
  workload["window"] = {{"start_s", config.workload.window_start.seconds()},
                        {"end_s", optional_json(config.workload.window_end)}};
  json out{
      {"name", config.name},
      {"seed", config.seed},
      {"workload", workload},
      {"serving", serving_to_json(config.serving)},
      {"scaling", scaling_to_json(config.scaling)},
      {"autoscaler", autoscaler_to_json(config.autoscaler)},
      {"cluster", cluster_to_json(config.cluster)},
      {"slo",
       {{"ttft_ms", config.replay.slo.ttft.ms()},
        {"ttft_ms_per_prompt_token", config.replay.slo.ttft_per_prompt_token_s * 1e3},
        {"tbt_ms", config.replay.slo.tbt.ms()},
        {"tbt_definition", metrics::kTbtDefinitionNames.name(config.replay.slo.tbt_definition)}}},
      {"run",
       {{"until_s", optional_json(config.replay.until)},
        {"timeseries_interval_s", config.replay.timeseries_interval.seconds()}}}};
  if (!config.replay.classes.empty()) out["classes"] = service_classes_to_json(config.replay.classes);
  if (config.rl) out["rl"] = rl_to_json(*config.rl);
  if (config.catalog) out["catalog"] = *config.catalog;
  return out;
}

Expected<Catalog> load_scenario_catalog(const ScenarioConfig& config) {
  return load_catalog(default_catalog_folder(), config.catalog.value_or(""));
}

std::string default_scenario_path() { return default_catalog_folder() + "/scenarios/default.json"; }
std::string default_training_path() { return default_catalog_folder() + "/scenarios/rl-train.json"; }

}  // namespace meshsim::configs
