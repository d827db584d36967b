#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "configs/scaling_config.hpp"
#include "sim/autoscale/elastic_scheduler.hpp"
#include "sim/cluster/scaling_manager.hpp"

namespace meshsim::script {

// The serving side of a scenario script (its "serving" and "scaling" objects, in the
// scenario config's format): an LlmCluster on the script's simulation (its one clock),
// the ScalingManager over it, and an ElasticScheduler per configured pool checking every
// monitoring interval. The calls of seeds 003 and 004 act on it.
class ServingWorld final : private cluster::RequestSink {
 public:
  // Errors name the script file and key.
  static Expected<std::unique_ptr<ServingWorld>> create(const nlohmann::json& script, const std::string& file,
                                                        engine::Simulation& sim);

  // `count` requests arriving now.
  nlohmann::json submit(std::uint32_t count, std::uint32_t prompt_tokens, std::uint32_t output_tokens);
  nlohmann::json scale_up_full(cluster::InstanceTag tag, std::optional<std::uint32_t> parallelism,
                               const std::optional<std::string>& server_sku);
  nlohmann::json scale_down_full(std::optional<std::uint32_t> instance, std::optional<cluster::InstanceTag> tag);
  nlohmann::json deactivate(std::uint32_t instance);
  nlohmann::json reactivate(std::uint32_t instance);
  nlohmann::json status_summary() const;
  nlohmann::json active_instances(std::optional<cluster::InstanceTag> tag) const;
  nlohmann::json instance(std::uint32_t id) const;
  nlohmann::json request_counts() const;
  // Seed 003 per pool.
  nlohmann::json configure_elastic(cluster::InstanceTag pool, const autoscale::ElasticConfig& config);
  nlohmann::json elastic_metrics(cluster::InstanceTag pool) const;
  nlohmann::json wake_up_all_workers(cluster::InstanceTag pool);
  nlohmann::json resume_elastic_scheduling(cluster::InstanceTag pool);

  std::vector<std::string> check_invariants() const;
  ~ServingWorld();  // out of line, as is the constructor: where LlmCluster is complete

 private:
  explicit ServingWorld(engine::Simulation& sim);
  void on_request_finished(const metrics::RequestRecord& record) override;
  autoscale::ElasticAutoscaler* elastic(cluster::InstanceTag pool) const;

  engine::Simulation& sim_;
  std::unique_ptr<cluster::LlmCluster> cluster_;
  std::unique_ptr<cluster::ScalingManager> manager_;
  std::string sku_name_;
  struct ElasticPool {
    std::unique_ptr<autoscale::ElasticAutoscaler> policy;
    std::unique_ptr<autoscale::AutoscalerLoop> loop;
  };
  std::map<cluster::InstanceTag, ElasticPool> elastic_;
  std::vector<ElasticPool> retired_;  // replaced configurations, stopped
  std::uint64_t next_id_ = 0, completed_ = 0, dropped_ = 0, migrations_ = 0;
};

}  // namespace meshsim::script
