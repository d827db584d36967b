#include "configs/scaling_config.hpp"

#include <algorithm>
#include <filesystem>

#include "configs/capacity_model_file.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

json optional_seconds(const std::optional<SimTime>& time) { return time ? json(time->seconds()) : json(nullptr); }

// Instances a pool or cluster may reach: each costs memory and events, and no study
// needs more.
constexpr std::uint64_t kMaxInstances = 100'000;
constexpr auto kInstanceCount = [](std::uint64_t v) { return v >= 1 && v <= kMaxInstances; };
constexpr std::string_view kInstanceCountText = "an integer in [1, 100000]";

// A period something is checked at: at least 1 ms (a shorter one only adds events, and
// at a microsecond a long drain would take billions of them).
void read_interval(ObjectReader& reader, std::string_view key, SimTime& out) {
  reader.read_duration(key, out, 1.0);
  if (out < SimTime::from_ms(1)) reader.fail(key, "expected at least 0.001 s");
}

}  // namespace

void read_elastic_config(ObjectReader& reader, autoscale::ElasticConfig& c) {
  const auto ratio = [](double v) { return v >= 0 && v <= 1e6; };
  reader.read("scale_down_threshold", c.scale_down_threshold, "a load ratio >= 0", ratio);
  reader.read("scale_up_threshold", c.scale_up_threshold, "a load ratio >= 0", ratio);
  reader.read("min_workers", c.min_workers, kInstanceCountText, kInstanceCount);
  reader.read("max_workers", c.max_workers, kInstanceCountText, kInstanceCount);
  reader.read("requests_per_worker_capacity", c.requests_per_worker_capacity, "a positive number", kPositive);
  read_interval(reader, "monitoring_interval_s", c.monitoring_interval);
  reader.read_duration("drain_timeout_s", c.drain_timeout, 1.0);
  reader.read_duration("scale_down_cooldown_s", c.scale_down_cooldown, 1.0);
  reader.read_duration("scale_up_cooldown_s", c.scale_up_cooldown, 1.0);
  reader.read_duration("min_stable_period_s", c.min_stable_period, 1.0);
  reader.read("enable_elastic", c.enable_elastic);
  for (const auto& problem : autoscale::check(c)) reader.fail(problem.key, problem.message);
}

void parse_target_tracking(ObjectReader& reader, autoscale::TargetTrackingConfig& c, const std::string& base_dir) {
  reader.read_choice("metric", c.metric, autoscale::kTrackedMetricNames);
  reader.read("target", c.target, "a positive target", kPositive);
  if (const json* also = reader.raw("also"); also != nullptr && !also->is_null()) {
    if (!also->is_array()) {
      reader.fail("also", "expected an array of {\"metric\", \"target\"}");
    } else {
      c.also.clear();
      for (std::size_t i = 0; i < also->size(); ++i) {
        ObjectReader item(&(*also)[i], reader.path_of("also") + "[" + std::to_string(i) + "]", reader.errors());
        autoscale::TrackedTarget t;
        item.read_choice("metric", t.metric, autoscale::kTrackedMetricNames);
        if (!item.has("target")) item.fail("target", "required (the metric's target per instance)");
        item.read("target", t.target, "a positive target", kPositive);
        c.also.push_back(t);
      }
    }
  }
  reader.read("tolerance", c.tolerance, "a fraction in [0, 1)", [](double v) { return v >= 0 && v < 1; });
  read_interval(reader, "period_s", c.period);
  reader.read_duration("scale_down_stabilization_s", c.scale_down_stabilization, 1.0);
  reader.read("warm_start", c.warm_start);
  reader.read("scale_up_percent", c.scale_up_percent, "a non-negative percentage", kNonNegative);
  reader.read("scale_up_instances", c.scale_up_instances, "an integer in [0, 100000]",
              [](std::uint64_t v) { return v <= kMaxInstances; });
  reader.read("min_instances", c.min_instances, kInstanceCountText, kInstanceCount);
  reader.read("max_instances", c.max_instances, kInstanceCountText, kInstanceCount);
  if (c.min_instances > c.max_instances) reader.fail("min_instances", "must not exceed max_instances");
  reader.read("capacity_correction", c.capacity_correction);
  reader.read("miss_budget", c.miss_budget, "a fraction in (0, 1)", [](double v) { return v > 0 && v < 1; });
  std::optional<std::string> model_path;
  reader.read_optional("capacity_model", model_path);
  if (model_path) {
    std::filesystem::path path(*model_path);
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    auto model = read_capacity_model(path.lexically_normal().string());
    if (model) {
      c.capacity_model = std::make_shared<const autoscale::CapacityModel>(std::move(*model));
      c.capacity_model_path = path.lexically_normal().string();
    } else {
      reader.fail("capacity_model", model.error().message);
    }
  }
  const bool by_capacity = c.metric == autoscale::TrackedMetric::kCapacityUnits ||
                           std::ranges::any_of(c.also, [](const autoscale::TrackedTarget& t) {
                             return t.metric == autoscale::TrackedMetric::kCapacityUnits;
                           });
  if (by_capacity && !c.capacity_model && !model_path) {
    reader.fail("capacity_model", "required by the capacity_units metric: a file meshsim capacity-model writes");
  }
}

json target_tracking_to_json(const autoscale::TargetTrackingConfig& t) {
  json out{{"metric", autoscale::kTrackedMetricNames.name(t.metric)},
           {"target", t.target},
           {"tolerance", t.tolerance},
           {"period_s", t.period.seconds()},
           {"scale_down_stabilization_s", t.scale_down_stabilization.seconds()},
           {"warm_start", t.warm_start},
           {"scale_up_percent", t.scale_up_percent},
           {"scale_up_instances", t.scale_up_instances},
           {"min_instances", t.min_instances},
           {"max_instances", t.max_instances}};
  out["capacity_model"] = t.capacity_model ? json(t.capacity_model_path) : json(nullptr);
  out["capacity_correction"] = t.capacity_correction;
  out["miss_budget"] = t.miss_budget;
  json& also = out["also"] = json::array();
  for (const auto& more : t.also) {
    also.push_back({{"metric", autoscale::kTrackedMetricNames.name(more.metric)}, {"target", more.target}});
  }
  return out;
}

void check_start_state(const std::vector<cluster::InstanceGroup>& start_state, const ScalingSpec& scaling,
                       ConfigErrors& errors) {
  std::uint64_t total = 0;
  for (const auto& group : start_state) total += group.count;
  if (total > scaling.manager.max_total_instances) {
    errors.add("serving.start_state", std::to_string(total) + " instances in all exceed scaling.max_total_instances (" +
                                          std::to_string(scaling.manager.max_total_instances) + ")");
  }
}

void parse_scaling(ObjectReader& parent, ScalingSpec& spec) {
  ObjectReader reader(parent.raw("scaling"), parent.path_of("scaling"), parent.errors());
  auto& m = spec.manager;
  reader.read_duration("scale_up_delay_s", m.scale_up_delay, 1.0);
  read_interval(reader, "drain_check_interval_s", m.drain_check_interval);
  reader.read_optional_duration("drain_timeout_s", m.drain_timeout, 1.0);
  reader.read("min_instances_per_pool", m.min_instances_per_pool, kInstanceCountText, kInstanceCount);
  reader.read("max_total_instances", m.max_total_instances, kInstanceCountText, kInstanceCount);
  reader.read_optional("max_servers", m.max_servers, kInstanceCountText, kInstanceCount);
  reader.read("log", spec.log);
}

void parse_autoscaler(ObjectReader& parent, AutoscalerSpec& spec, const std::string& base_dir) {
  ObjectReader reader(parent.raw("autoscaler"), parent.path_of("autoscaler"), parent.errors());
  reader.read_choice("policy", spec.policy, kAutoscalerPolicyNames);
  {
    ObjectReader fixed(reader.raw("static"), reader.path_of("static"), reader.errors());
    read_interval(fixed, "interval_s", spec.static_interval);
    ObjectReader sizes(fixed.raw("sizes"), fixed.path_of("sizes"), fixed.errors());
    for (const auto& [tag, name] : cluster::kInstanceTagNames.entries()) {
      std::optional<std::uint32_t> size;
      sizes.read_optional(name, size, kInstanceCountText, kInstanceCount);
      if (size) spec.static_sizes.emplace_back(tag, *size);
    }
  }
  {
    ObjectReader elastic(reader.raw("elastic"), reader.path_of("elastic"), reader.errors());
    read_elastic_config(elastic, spec.elastic);
  }
  {
    ObjectReader tracking(reader.raw("target_tracking"), reader.path_of("target_tracking"), reader.errors());
    parse_target_tracking(tracking, spec.target_tracking, base_dir);
  }
  {
    ObjectReader oracle(reader.raw("oracle"), reader.path_of("oracle"), reader.errors());
    read_interval(oracle, "window_s", spec.oracle.window);
    oracle.read("target_utilisation", spec.oracle.target_utilisation, "a fraction in (0, 1]",
                [](double v) { return v > 0 && v <= 1; });
    oracle.read("max_instances", spec.oracle.max_instances, kInstanceCountText, kInstanceCount);
  }
}

json scaling_to_json(const ScalingSpec& spec) {
  const auto& m = spec.manager;
  return json{{"scale_up_delay_s", m.scale_up_delay.seconds()},
              {"drain_check_interval_s", m.drain_check_interval.seconds()},
              {"drain_timeout_s", optional_seconds(m.drain_timeout)},
              {"min_instances_per_pool", m.min_instances_per_pool},
              {"max_total_instances", m.max_total_instances},
              {"max_servers", m.max_servers ? json(*m.max_servers) : json(nullptr)},
              {"log", spec.log}};
}

json autoscaler_to_json(const AutoscalerSpec& spec) {
  json sizes = json::object();
  for (const auto& [tag, size] : spec.static_sizes) sizes[std::string(cluster::kInstanceTagNames.name(tag))] = size;
  const auto& e = spec.elastic;
  return json{{"policy", kAutoscalerPolicyNames.name(spec.policy)},
              {"static", {{"interval_s", spec.static_interval.seconds()}, {"sizes", sizes}}},
              {"elastic",
               {{"scale_down_threshold", e.scale_down_threshold},
                {"scale_up_threshold", e.scale_up_threshold},
                {"min_workers", e.min_workers},
                {"max_workers", e.max_workers},
                {"requests_per_worker_capacity", e.requests_per_worker_capacity},
                {"monitoring_interval_s", e.monitoring_interval.seconds()},
                {"drain_timeout_s", e.drain_timeout.seconds()},
                {"scale_down_cooldown_s", e.scale_down_cooldown.seconds()},
                {"scale_up_cooldown_s", e.scale_up_cooldown.seconds()},
                {"min_stable_period_s", e.min_stable_period.seconds()},
                {"enable_elastic", e.enable_elastic}}},
              {"target_tracking", target_tracking_to_json(spec.target_tracking)},
              {"oracle",
               {{"window_s", spec.oracle.window.seconds()},
                {"target_utilisation", spec.oracle.target_utilisation},
                {"max_instances", spec.oracle.max_instances}}}};
}

cluster::ScalingConfig manager_config(const ScalingSpec& scaling, const AutoscalerSpec& autoscaler) {
  cluster::ScalingConfig config = scaling.manager;
  if (autoscaler.policy == AutoscalerPolicy::kElastic) config.drain_timeout = autoscaler.elastic.drain_timeout;
  if (autoscaler.policy == AutoscalerPolicy::kOracle) config.scale_up_delay = SimTime::zero();
  return config;
}

}  // namespace meshsim::configs
