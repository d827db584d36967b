#include "sim/shared/shared_cluster.hpp"

#include <algorithm>

#include "sim/cluster/llm_cluster.hpp"
#include "sim/engine/check.hpp"

namespace meshsim::shared {

using cluster::kInstanceTagNames;
namespace {

// The core's default strategy (binpack), except that a serving instance is never a
// victim: it leaves only by draining. (The serving pool's protection keeps other pools
// off it; this also covers batch work sharing its pool, and a same-pool threshold of 0.)
class ServingStays final : public scheduler::SchedulingStrategy {
 public:
  ServingStays() : inner_(std::move(*scheduler::make_scheduling_strategy("binpack"))) {}
  std::string_view name() const override { return inner_->name(); }
  scheduler::NodeOrder node_order() const override { return inner_->node_order(); }
  double score(const scheduler::ResourceVector& need, const scheduler::Node& node) const override {
    return inner_->score(need, node);
  }
  double priority(const scheduler::TaskSpec& task) const override { return inner_->priority(task); }
  bool should_preempt(const scheduler::IncomingTask& incoming, const scheduler::Task& victim) const override {
    return victim.actor_class != SharedCluster::kServingActorClass && inner_->should_preempt(incoming, victim);
  }

 private:
  std::unique_ptr<scheduler::SchedulingStrategy> inner_;
};

}  // namespace

SharedCluster::SharedCluster(engine::Simulation& sim, LlmCluster& serving, SharedClusterConfig config,
                             std::vector<traces::BatchJobRecord> jobs)
    : sim_(sim), serving_(serving), config_(std::move(config)), world_(sim), core_(world_, &world_, &world_) {
  scheduler::ResourceVector total;
  for (const auto& node : config_.nodes) {
    core_.cluster().add_node(node);
    total += node.capacity;
  }
  // Every pool may use the whole cluster: what separates them is priority and preemption.
  const auto make_pool = [&](const std::string& name, const scheduler::Labels& labels) {
    if (core_.agents().pool(name) != nullptr) return;
    scheduler::PoolSpec spec;
    spec.name = name;
    spec.labels = labels;
    spec.resources = total;
    const auto created = core_.create_pool(std::move(spec));
    MESHSIM_CHECK(created.success, created.error);
  };
  make_pool(config_.serving_pool, {{"role", "serving"}});
  for (const auto& [name, cls] : config_.classes) make_pool(cls.pool, {});
  scheduler::PreemptionPolicy policy = config_.policy;
  if (!policy.is_protected(config_.serving_pool)) policy.protected_pools.push_back(config_.serving_pool);
  const auto updated = core_.update_preemption_policy(scheduler::as_update(policy));
  MESHSIM_CHECK(updated.result.success, updated.result.error);
  core_.set_scheduling_strategy(std::make_unique<ServingStays>());
  batch_ = std::make_unique<BatchRunner>(sim_, core_, std::move(jobs), config_.classes, config_.prune_refusals);
  world_.set_agents(batch_.get());
  serving_preemptor_ = batch_->preemptor_id(kServingClass);
}

Expected<std::unique_ptr<SharedCluster>> SharedCluster::create(engine::Simulation& sim, LlmCluster& serving,
                                                               SharedClusterConfig config,
                                                               std::vector<traces::BatchJobRecord> jobs,
                                                               const std::vector<InstanceGroup>& start_state) {
  MESHSIM_CHECK(serving.instances() == 0, "a shared cluster places the serving start state itself");
  if (!serving.config().pool_hardware.empty()) {
    // Nodes are one shape of resources per serving instance (instance_resources).
    return Error{"a shared cluster serves on one SKU: start state groups cannot name their own sku or "
                 "tensor_parallel"};
  }
  std::unique_ptr<SharedCluster> shared(new SharedCluster(sim, serving, std::move(config), std::move(jobs)));
  std::uint32_t placed = 0;
  for (const auto& group : start_state) {
    for (std::uint32_t i = 0; i < group.count; ++i) {
      if (auto added = serving.add_placed_instance(group.tag, *shared); !added) {
        return Error{"the serving start state does not fit the cluster's nodes: " + std::to_string(placed) +
                     " instances placed, then " + added.error().message};
      }
      ++placed;
    }
  }
  return shared;
}

Expected<PlacedInstance> SharedCluster::place(std::uint32_t instance, InstanceTag tag, ServerPool& servers) {
  scheduler::TaskSpec spec;
  spec.task_id = task_id(instance);
  spec.pool = config_.serving_pool;
  spec.actor_class = kServingActorClass;
  spec.resources = config_.instance_resources;
  spec.priority = config_.serving_priority;
  spec.labels = {{"role", "serving"}, {"tag", std::string(kInstanceTagNames.name(tag))}};
  const auto submitted = core_.submit_task_with_preemption(spec);
  if (!submitted.result.success) {
    return Error{"no node has room for a serving instance (" + config_.instance_resources.to_string() +
                 ") even after preemption: " + submitted.result.error};
  }
  batch_->count_preemptions(serving_preemptor_, submitted.preempted);
  if (task_of_instance_.size() <= instance) task_of_instance_.resize(instance + 1, scheduler::kNoTask);
  task_of_instance_[instance] = submitted.task;
  const std::uint32_t node = submitted.node;
  auto [it, fresh] = server_of_node_.try_emplace(node, 0);
  if (fresh) {
    it->second = servers.add(tag);
    node_of_server_[it->second] = node;
  }
  return PlacedInstance{it->second, submitted.ready_in};
}

bool SharedCluster::release(std::uint32_t instance, std::uint32_t server, ServerPool& servers) {
  const auto done = core_.complete(task_of_instance_.at(instance));
  MESHSIM_CHECK(done.success, done.error);
  task_of_instance_[instance] = scheduler::kNoTask;
  const std::uint32_t node = node_of_server_.at(server);
  const bool emptied = servers.load(server) == 0;
  if (emptied) {
    servers.remove(server);
    server_of_node_.erase(node);
    node_of_server_.erase(server);
  }
  batch_->resources_freed(node);
  return emptied;
}

std::vector<std::string> SharedCluster::check_invariants() const {
  std::vector<std::string> problems = core_.check_invariants();
  for (auto& problem : batch_->check_invariants()) problems.push_back(std::move(problem));
  std::int64_t gpu_milli = 0;
  for (const auto& view : serving_.instance_views()) {
    const scheduler::Task* task = core_.tasks().find(task_id(view.id));
    const bool placed = task != nullptr && task->state == scheduler::TaskState::kRunning;
    if (placed != view.server.has_value()) {
      problems.push_back("serving instance " + std::to_string(view.id) + (placed ? " has" : " has no") +
                         " task in the core but " + (view.server ? "is" : "is not") + " on a server");
      continue;
    }
    if (!placed) continue;
    if (view.id >= task_of_instance_.size() || task_of_instance_[view.id] != task->handle) {
      problems.push_back("serving instance " + std::to_string(view.id) + " holds another task id than the core's " +
                         std::to_string(task->handle));
    }
    gpu_milli += config_.instance_resources.gpu_milli();
    const auto* agent = core_.agents().agent(task->agent);
    const auto node = node_of_server_.find(*view.server);
    if (agent == nullptr || node == node_of_server_.end() || node->second != agent->node) {
      problems.push_back("serving instance " + std::to_string(view.id) + " is on server " +
                         std::to_string(*view.server) + ", which is not the node its core agent holds");
    }
  }
  const auto core_running = core_.get_preemption_stats().running_tasks;
  const auto expected = batch_->counts().running + static_cast<std::uint64_t>(gpu_milli / std::max<std::int64_t>(
                                                                                   1, config_.instance_resources.gpu_milli()));
  if (core_running != expected) {
    problems.push_back("the core runs " + std::to_string(core_running) + " tasks, serving and batch hold " +
                       std::to_string(expected));
  }
  return problems;
}

}  // namespace meshsim::shared
