#include "sim/script/serving_world.hpp"

#include <filesystem>

#include "configs/catalog.hpp"
#include "configs/object_reader.hpp"
#include "configs/serving_config.hpp"
#include "sim/cluster/llm_cluster.hpp"

namespace meshsim::script {

using nlohmann::json;
using cluster::InstanceTag;

namespace {

json failure(const std::string& error) { return json{{"success", false}, {"error", error}}; }

// The result of an action on `instance`: done, or refused by the manager (blocked).
json acted(const Status& status, std::uint32_t instance) {
  if (!status) return json{{"success", false}, {"blocked", true}, {"error", status.error().message}};
  return json{{"success", true}, {"instance", instance}};
}

std::string tag_name(InstanceTag tag) { return std::string(cluster::kInstanceTagNames.name(tag)); }

json view_json(const cluster::InstanceView& v) {
  return json{{"id", v.id},
              {"tag", tag_name(v.tag)},
              {"state", cluster::kInstanceStateNames.name(v.state)},
              {"server", v.server ? json(*v.server) : json(nullptr)},
              {"requests", v.requests},
              {"running", v.running},
              {"pending_tokens", v.pending_tokens},
              {"kv_used", v.kv_used}};
}

}  // namespace

Expected<std::unique_ptr<ServingWorld>> ServingWorld::create(const json& script, const std::string& file,
                                                             engine::Simulation& sim) {
  configs::ConfigErrors errors(file);
  configs::ServingSpec serving;
  configs::ScalingSpec scaling;
  {
    // Only these two keys are read here; the runner checks the others.
    json part = json::object();
    part["serving"] = script.at("serving");
    if (script.contains("scaling")) part["scaling"] = script["scaling"];
    configs::ObjectReader reader(&part, "", errors);
    configs::parse_serving(reader, std::filesystem::path(file).parent_path().string(), serving);
    configs::parse_scaling(reader, scaling);
    if (const auto* llm = std::get_if<configs::LlmServingSpec>(&serving)) {
      configs::check_start_state(llm->start_state, scaling, errors);
    }
  }
  if (!errors.empty()) return Error{errors.to_string()};
  const auto* llm = std::get_if<configs::LlmServingSpec>(&serving);
  if (llm == nullptr) return Error{file + ": serving.kind: scripts scale the llm serving model only"};
  auto catalog = configs::load_catalog(configs::default_catalog_folder());
  if (!catalog) return catalog.error();
  auto resolved = configs::resolve_llm_cluster(*llm, *catalog);
  if (!resolved) return Error{file + ": " + resolved.error().message};
  std::unique_ptr<ServingWorld> world(new ServingWorld(sim));
  cluster::RequestSink& sink = *world;  // a private base: converted here, where it is accessible
  world->cluster_ = std::make_unique<cluster::LlmCluster>(world->sim_, *resolved, sink);
  world->manager_ = std::make_unique<cluster::ScalingManager>(world->sim_, *world->cluster_, scaling.manager);
  world->sku_name_ = llm->sku;
  return world;
}

void ServingWorld::on_request_finished(const metrics::RequestRecord& record) {
  if (record.status == metrics::RequestStatus::kDropped) {
    ++dropped_;
  } else {
    ++completed_;
  }
  migrations_ += record.migrations;
}

json ServingWorld::submit(std::uint32_t count, std::uint32_t prompt_tokens, std::uint32_t output_tokens) {
  const std::uint64_t first = next_id_;
  for (std::uint32_t i = 0; i < count; ++i) {
    traces::TraceRequest r;
    r.id = next_id_++;
    r.arrival = sim_.now();
    r.prompt_tokens = prompt_tokens;
    r.output_tokens = output_tokens;
    cluster_->submit(r);
  }
  return json{{"success", true}, {"first_id", first}, {"count", count}};
}

json ServingWorld::scale_up_full(InstanceTag tag, std::optional<std::uint32_t> parallelism,
                                 const std::optional<std::string>& server_sku) {
  // Scaled-up instances match their pool's start state (seed 004's start_state_manager).
  const auto tp = manager_->view().hardware(tag).tensor_parallel;
  if (parallelism && *parallelism != tp) {
    return failure("parallelism " + std::to_string(*parallelism) + " differs from the start state's " +
                   std::to_string(tp));
  }
  // The pool's SKU by its catalog name, or as the config names the cluster's.
  const std::string& sku = manager_->view().hardware(tag).sku.name;
  const bool on_config_sku = sku == cluster_->config().sku.name;
  if (server_sku && *server_sku != sku && !(on_config_sku && *server_sku == sku_name_)) {
    return failure("server_sku '" + *server_sku + "' differs from the pool's '" + (on_config_sku ? sku_name_ : sku) +
                   "'");
  }
  auto added = manager_->scale_up_full(tag);
  if (!added) return json{{"success", false}, {"blocked", true}, {"error", added.error().message}};
  return json{{"success", true}, {"server", added->server}, {"instance", added->instance}};
}

json ServingWorld::scale_down_full(std::optional<std::uint32_t> instance, std::optional<InstanceTag> tag) {
  if (!instance) instance = tag ? manager_->view().least_loaded(*tag) : std::nullopt;
  if (!instance) return json{{"success", false}, {"blocked", true}, {"error", "no ACTIVE instance in that pool"}};
  return acted(manager_->scale_down_full(*instance), *instance);
}

json ServingWorld::deactivate(std::uint32_t instance) { return acted(manager_->deactivate(instance), instance); }

json ServingWorld::reactivate(std::uint32_t instance) { return acted(manager_->reactivate(instance), instance); }

json ServingWorld::status_summary() const {
  const auto s = manager_->view().get_status_summary();
  return json{{"success", true},
              {"active_instances", s.active_instances},
              {"scaling_up_instances", s.scaling_up_instances},
              {"draining_instances", s.draining_instances},
              {"total_servers", s.total_servers},
              {"total_instances", s.total_instances}};
}

json ServingWorld::active_instances(std::optional<InstanceTag> tag) const {
  json list = json::array();
  for (const auto& view : manager_->view().get_active_instances(tag)) list.push_back(view_json(view));
  return json{{"success", true}, {"instances", list}};
}

json ServingWorld::instance(std::uint32_t id) const {
  const auto view = manager_->view().instance(id);
  if (!view) return json{{"success", false}, {"removed", true}, {"error", "no instance " + std::to_string(id)}};
  json out = view_json(*view);
  out["success"] = true;
  return out;
}

ServingWorld::ServingWorld(engine::Simulation& sim) : sim_(sim) {}

ServingWorld::~ServingWorld() = default;

std::vector<std::string> ServingWorld::check_invariants() const { return cluster_->check_invariants(); }

json ServingWorld::request_counts() const {
  return json{{"success", true},
              {"arrived", next_id_},
              {"completed", completed_},
              {"dropped", dropped_},
              {"in_flight", cluster_->in_flight()},
              {"migrations", migrations_}};
}

autoscale::ElasticAutoscaler* ServingWorld::elastic(InstanceTag pool) const {
  const auto it = elastic_.find(pool);
  return it == elastic_.end() ? nullptr : it->second.policy.get();
}

json ServingWorld::configure_elastic(InstanceTag pool, const autoscale::ElasticConfig& config) {
  if (manager_->view().count(pool, cluster::InstanceState::kActive) == 0) {
    return failure("the cluster has no ACTIVE " + tag_name(pool) + " instance to manage");
  }
  // Replaces an earlier configuration of the pool; the first check runs now. The old loop
  // is stopped, not destroyed: its timer's next event is still queued and must find it.
  auto& slot = elastic_[pool];
  if (slot.loop) {
    slot.loop->stop();
    retired_.push_back(std::move(slot));
  }
  slot.policy = std::make_unique<autoscale::ElasticAutoscaler>(config, std::vector{pool});
  manager_->set_drain_timeout(config.drain_timeout);
  slot.loop = std::make_unique<autoscale::AutoscalerLoop>(sim_, *manager_, *slot.policy, [] { return true; });
  slot.loop->start();
  return json{{"success", true}};
}

json ServingWorld::elastic_metrics(InstanceTag pool) const {
  const auto* policy = elastic(pool);
  if (policy == nullptr) return failure("no elastic scheduler on the " + tag_name(pool) + " pool (configure_elastic)");
  json out{{"success", true}};
  for (const auto& [key, value] : policy->scheduler(pool).get_metrics(*manager_)) out[key] = value;
  return out;
}

json ServingWorld::wake_up_all_workers(InstanceTag pool) {
  auto* policy = elastic(pool);
  if (policy == nullptr) return failure("no elastic scheduler on the " + tag_name(pool) + " pool (configure_elastic)");
  policy->scheduler(pool).wake_up_all_workers(*manager_);
  return json{{"success", true}};
}

json ServingWorld::resume_elastic_scheduling(InstanceTag pool) {
  auto* policy = elastic(pool);
  if (policy == nullptr) return failure("no elastic scheduler on the " + tag_name(pool) + " pool (configure_elastic)");
  policy->scheduler(pool).resume_elastic_scheduling();
  return json{{"success", true}};
}

}  // namespace meshsim::script
