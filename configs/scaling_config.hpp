#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "configs/object_reader.hpp"
#include "sim/autoscale/autoscaler_options.hpp"
#include "sim/cluster/scaling_options.hpp"
#include "sim/cluster/serving_options.hpp"

namespace meshsim::configs {

using engine::SimTime;

enum class AutoscalerPolicy { kNone, kStatic, kElastic, kTargetTracking, kOracle };
inline constexpr EnumNames kAutoscalerPolicyNames{
    std::array{std::pair{AutoscalerPolicy::kNone, std::string_view("none")},
               std::pair{AutoscalerPolicy::kStatic, std::string_view("static")},
               std::pair{AutoscalerPolicy::kElastic, std::string_view("elastic")},
               std::pair{AutoscalerPolicy::kTargetTracking, std::string_view("target_tracking")},
               std::pair{AutoscalerPolicy::kOracle, std::string_view("oracle")}}};

// The "scaling" object: the ScalingManager's parameters, and whether it logs.
struct ScalingSpec {
  cluster::ScalingConfig manager;
  bool log = false;  // its lines ("[ScalingManager] ...") on the console
};

// The "autoscaler" object: which policy acts every decision interval, with the
// parameters of each (only the chosen one is used).
struct AutoscalerSpec {
  AutoscalerPolicy policy = AutoscalerPolicy::kNone;
  // static: instances per pool; a pool not named keeps its start-state size.
  std::vector<std::pair<cluster::InstanceTag, std::uint32_t>> static_sizes;
  SimTime static_interval = SimTime::from_seconds(60);
  autoscale::ElasticConfig elastic;
  autoscale::TargetTrackingConfig target_tracking;
  autoscale::OracleConfig oracle;  // its tbt_target is the scenario's SLO
};

void parse_scaling(ObjectReader& parent, ScalingSpec& spec);
// A start state within the scaling limits: its instances in all at most
// scaling.max_total_instances (so a count of 10^7 is refused, not built), reported at
// serving.start_state.
void check_start_state(const std::vector<cluster::InstanceGroup>& start_state, const ScalingSpec& scaling,
                       ConfigErrors& errors);
// The fields of seed 003's ElasticConfig from `reader` (also a scenario step's arguments).
void read_elastic_config(ObjectReader& reader, autoscale::ElasticConfig& config);
void parse_autoscaler(ObjectReader& parent, AutoscalerSpec& spec, const std::string& base_dir);
// A target tracking object's fields (the autoscaler's, and the RL residual's baseline).
// `base_dir`: where a relative capacity_model path starts (the config file's folder).
void parse_target_tracking(ObjectReader& reader, autoscale::TargetTrackingConfig& config, const std::string& base_dir);
nlohmann::json target_tracking_to_json(const autoscale::TargetTrackingConfig& config);
nlohmann::json scaling_to_json(const ScalingSpec& spec);
nlohmann::json autoscaler_to_json(const AutoscalerSpec& spec);

// The manager's config as the policy needs it: the elastic policy's drain_timeout is the
// manager's; the oracle scales instantly (scale_up_delay 0).
cluster::ScalingConfig manager_config(const ScalingSpec& scaling, const AutoscalerSpec& autoscaler);

}  // namespace meshsim::configs
