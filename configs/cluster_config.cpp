#include "configs/cluster_config.hpp"

#include <set>

#include <algorithm>
#include <filesystem>

#include "configs/config_file.hpp"
#include "configs/scheduler_args.hpp"

namespace meshsim::configs {
namespace {

using nlohmann::json;

std::string relative_to(const std::string& base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

std::string sku_resource(const std::string& sku) { return "sku:" + sku; }

scheduler::ResourceVector strip_custom(const scheduler::ResourceVector& r) {
  return scheduler::ResourceVector::of(r.cpu(), r.memory_mb(), r.gpu());
}

void read_batch_generator(ObjectReader& reader, traces::BatchGeneratorSpec& spec) {
  reader.read("duration_s", spec.duration_s, "a number of seconds in (0, 1e9]", [](double v) { return v > 0 && v <= 1e9; });
  const json* classes = reader.raw("classes");
  if (classes == nullptr || !classes->is_array() || classes->empty()) {
    reader.fail("classes", "expected a non-empty array of {class, rate_per_s, duration_median_s, duration_sigma, shapes}");
    return;
  }
  for (std::size_t i = 0; i < classes->size(); ++i) {
    ObjectReader c(&(*classes)[i], reader.path_of("classes") + "[" + std::to_string(i) + "]", reader.errors());
    traces::BatchClassLoad load;
    c.read("class", load.job_class);
    c.read("rate_per_s", load.rate_per_s, "a rate in [0, 1e4]", [](double v) { return v >= 0 && v <= 1e4; });
    c.read("duration_median_s", load.duration_median_s, "a number of seconds in (0, 1e9]",
           [](double v) { return v > 0 && v <= 1e9; });
    c.read("duration_sigma", load.duration_sigma, "a number in [0, 10]", [](double v) { return v >= 0 && v <= 10; });
    c.read_optional("checkpoint_interval_s", load.checkpoint_interval_s, "a non-negative number of seconds",
                    kNonNegative);
    const json* shapes = c.raw("shapes");
    if (shapes == nullptr || !shapes->is_array()) {
      c.fail("shapes", "expected an array of {gpu, cpu, memory_mb, weight}");
    } else {
      for (std::size_t k = 0; k < shapes->size(); ++k) {
        ObjectReader one(&(*shapes)[k], c.path_of("shapes") + "[" + std::to_string(k) + "]", c.errors());
        traces::BatchShape shape;
        one.read("gpu", shape.gpu, "a number of GPUs in [0, 1e6]", [](double v) { return v >= 0 && v <= 1e6; });
        one.read("cpu", shape.cpu, "a number of cores in [0, 1e6]", [](double v) { return v >= 0 && v <= 1e6; });
        one.read("memory_mb", shape.memory_mb, "a number of MB in [0, 1e12]", [](double v) { return v >= 0 && v <= 1e12; });
        one.read("weight", shape.weight, "a weight >= 0", kNonNegative);
        load.shapes.push_back(shape);
      }
    }
    spec.classes.push_back(std::move(load));
  }
  if (reader.errors().empty()) {
    if (const auto problem = traces::check(spec)) reader.fail("classes", *problem);
  }
}

}  // namespace

Expected<traces::BatchGeneratorSpec> load_batch_generator(const std::string& path) {
  auto tree = read_config_file(path);
  if (!tree) return tree.error();
  ConfigErrors errors(path);
  traces::BatchGeneratorSpec spec;
  {
    ObjectReader reader(&*tree, "", errors);
    read_batch_generator(reader, spec);
  }
  if (!errors.empty()) return Error{errors.to_string()};
  return spec;
}

std::map<std::string, shared::BatchClass> default_openb_classes(const shared::BatchClass& common) {
  std::map<std::string, shared::BatchClass> classes;
  for (const auto& [qos, priority] :
       {std::pair{"Guaranteed", 3.0}, std::pair{"LS", 2.5}, std::pair{"Burstable", 1.5}, std::pair{"BE", 1.0}}) {
    shared::BatchClass& cls = classes[qos] = common;
    cls.priority = priority;
    cls.labels = {{"qos", qos}};
  }
  return classes;
}

namespace {

// What a class's agents do when a preemption asks them to stop (see BatchClass).
void read_agent_answers(ObjectReader& reader, shared::BatchClass& cls) {
  reader.read("cancel_answer_s", cls.cancel_answer_s, "a non-negative number of seconds (up to 1e6)",
              [](double v) { return v >= 0 && v <= 1e6; });
  reader.read("hung_share", cls.hung_share, "a share in [0, 1]", [](double v) { return v >= 0 && v <= 1; });
}

}  // namespace

void parse_cluster(ObjectReader& parent, const std::string& base_dir, ClusterSpec& spec) {
  ObjectReader reader(parent.raw("cluster"), parent.path_of("cluster"), parent.errors());
  reader.read_choice("mode", spec.mode, kClusterModeNames);
  if (const json* nodes = reader.raw("nodes"); nodes != nullptr && !nodes->is_null()) {
    if (!nodes->is_array()) {
      reader.fail("nodes", "expected an array of {\"count\", \"sku\", \"cpu\", \"memory_gib\"}");
    } else {
      for (std::size_t i = 0; i < nodes->size(); ++i) {
        ObjectReader group(&(*nodes)[i], reader.path_of("nodes") + "[" + std::to_string(i) + "]", reader.errors());
        NodeGroupSpec g;
        group.read("count", g.count, "an integer in [1, 100000]", [](std::uint64_t v) { return v >= 1 && v <= 100'000; });
        group.read("sku", g.sku);
        if (g.sku.empty()) group.fail("sku", "required (a SKU of configs/hardware.json)");
        group.read("cpu", g.cpu, "a number of cores in (0, 1e6]", [](double v) { return v > 0 && v <= 1e6; });
        group.read("memory_gib", g.memory_gib, "a number of GiB in (0, 1e9]", [](double v) { return v > 0 && v <= 1e9; });
        spec.node_groups.push_back(g);
      }
    }
  }
  reader.read("node_list", spec.node_list);
  spec.node_list = relative_to(base_dir, spec.node_list);
  reader.read("serving_priority", spec.serving_priority, "a number in [0, 1e6]",
              [](double v) { return v >= 0 && v <= 1e6; });
  reader.read("serving_pool", spec.serving_pool);
  if (spec.serving_pool.empty()) reader.fail("serving_pool", "must not be empty");
  {
    ObjectReader batch(reader.raw("batch"), reader.path_of("batch"), reader.errors());
    batch.read("openb_pods", spec.openb_pods);
    spec.openb_pods = relative_to(base_dir, spec.openb_pods);
    if (const json* generator = batch.raw("generator"); generator != nullptr && !generator->is_null()) {
      if (generator->is_string()) {
        // A generator file, relative to the config file's folder.
        auto loaded = load_batch_generator(relative_to(base_dir, generator->get<std::string>()));
        if (loaded) {
          spec.generator = std::move(*loaded);
        } else {
          batch.fail("generator", loaded.error().message);
        }
      } else {
        ObjectReader inline_generator(generator, batch.path_of("generator"), batch.errors());
        spec.generator.emplace();
        read_batch_generator(inline_generator, *spec.generator);
      }
      if (!spec.openb_pods.empty()) batch.fail("generator", "give either openb_pods or a generator, not both");
    }
    const auto scale = [](double v) { return v > 0 && v <= 1e6; };
    batch.read("start_s", spec.openb.start_s, "a non-negative number of trace seconds", kNonNegative);
    batch.read("arrival_scale", spec.openb.arrival_scale, "a positive factor", scale);
    batch.read("duration_scale", spec.openb.duration_scale, "a positive factor", scale);
    batch.read("min_duration_s", spec.openb.min_duration_s, "a positive number of seconds", kPositive);
    batch.read_optional("limit", spec.openb.limit, "a positive integer", kAtLeastOne);
    // What every class shares unless it says otherwise.
    shared::BatchClass common{"batch", 1.0, {}, 300.0};
    batch.read("checkpoint_interval_s", common.checkpoint_interval_s, "a non-negative number of seconds", kNonNegative);
    read_agent_answers(batch, common);
    spec.classes = default_openb_classes(common);
    if (const json* classes = batch.raw("classes"); classes != nullptr && !classes->is_null()) {
      if (!classes->is_object()) {
        batch.fail("classes", "expected an object of job class -> {pool, priority, labels, checkpoint_interval_s, "
                              "cancel_answer_s, hung_share}");
      } else {
        for (const auto& [name, value] : classes->items()) {
          ObjectReader one(&value, batch.path_of("classes") + "." + name, batch.errors());
          shared::BatchClass cls = spec.classes.count(name) ? spec.classes[name] : common;
          one.read("pool", cls.pool);
          one.read("priority", cls.priority, "a number in [0, 1e6]", [](double v) { return v >= 0 && v <= 1e6; });
          if (one.has("labels")) cls.labels = read_labels(one, "labels");
          one.read("checkpoint_interval_s", cls.checkpoint_interval_s, "a non-negative number of seconds", kNonNegative);
          read_agent_answers(one, cls);
          if (cls.pool.empty()) one.fail("pool", "must not be empty");
          spec.classes[name] = cls;
        }
      }
    }
  }
  {
    ObjectReader preemption(reader.raw("preemption"), reader.path_of("preemption"), reader.errors());
    const auto update = read_policy_update(preemption);
    const auto applied = scheduler::update_policy(spec.policy, update);
    if (!applied.result.success) reader.fail("preemption", applied.result.error);
    for (const auto& warning : applied.warnings) reader.fail("preemption", warning);
    if (spec.mode == ClusterMode::kFixed) {
      if (const auto problem = unknown_protected_pool(spec, spec.policy)) preemption.fail("protected_pools", *problem);
    }
  }
  if (spec.mode == ClusterMode::kFixed && spec.node_groups.empty() && spec.node_list.empty()) {
    reader.fail("nodes", "a fixed cluster needs nodes (\"nodes\" groups or a \"node_list\" file)");
  }
  if (spec.mode == ClusterMode::kElastic && (!spec.node_groups.empty() || !spec.node_list.empty() ||
                                             !spec.openb_pods.empty() || spec.generator)) {
    reader.fail("mode", "nodes and batch jobs need \"mode\": \"fixed\" (an elastic cluster creates its servers)");
  }
}

std::optional<std::string> unknown_protected_pool(const ClusterSpec& spec, const scheduler::PreemptionPolicy& policy) {
  std::set<std::string> pools{spec.serving_pool};
  for (const auto& [name, cls] : spec.classes) pools.insert(cls.pool);
  for (const auto& pool : policy.protected_pools) {
    if (pools.count(pool) != 0) continue;
    std::string known;
    for (const auto& p : pools) known += (known.empty() ? "" : ", ") + p;
    return "'" + pool + "' is no pool of this cluster (its pools: " + known + ")";
  }
  return std::nullopt;
}

namespace {

json generator_to_json(const traces::BatchGeneratorSpec& spec) {
  json classes = json::array();
  for (const auto& c : spec.classes) {
    json shapes = json::array();
    for (const auto& s : c.shapes) {
      shapes.push_back({{"gpu", s.gpu}, {"cpu", s.cpu}, {"memory_mb", s.memory_mb}, {"weight", s.weight}});
    }
    json one = {{"class", c.job_class},
                {"rate_per_s", c.rate_per_s},
                {"duration_median_s", c.duration_median_s},
                {"duration_sigma", c.duration_sigma},
                {"shapes", shapes}};
    if (c.checkpoint_interval_s) one["checkpoint_interval_s"] = *c.checkpoint_interval_s;
    classes.push_back(one);
  }
  return json{{"duration_s", spec.duration_s}, {"classes", classes}};
}

}  // namespace

json cluster_to_json(const ClusterSpec& spec) {
  json groups = json::array();
  for (const auto& g : spec.node_groups) {
    groups.push_back({{"count", g.count}, {"sku", g.sku}, {"cpu", g.cpu}, {"memory_gib", g.memory_gib}});
  }
  json classes = json::object();
  for (const auto& [name, cls] : spec.classes) {
    classes[name] = {{"pool", cls.pool},
                     {"priority", cls.priority},
                     {"labels", cls.labels},
                     {"checkpoint_interval_s", cls.checkpoint_interval_s},
                     {"cancel_answer_s", cls.cancel_answer_s},
                     {"hung_share", cls.hung_share}};
  }
  return json{{"mode", kClusterModeNames.name(spec.mode)},
              {"nodes", groups},
              {"node_list", spec.node_list},
              {"serving_priority", spec.serving_priority},
              {"serving_pool", spec.serving_pool},
              {"batch",
               {{"openb_pods", spec.openb_pods},
                {"start_s", spec.openb.start_s},
                {"arrival_scale", spec.openb.arrival_scale},
                {"duration_scale", spec.openb.duration_scale},
                {"min_duration_s", spec.openb.min_duration_s},
                {"limit", spec.openb.limit ? json(*spec.openb.limit) : json(nullptr)},
                {"generator", spec.generator ? generator_to_json(*spec.generator) : json(nullptr)},
                {"classes", classes}}},
              {"preemption", to_json(spec.policy)}};
}

Expected<shared::SharedClusterConfig> make_shared_cluster_config(const ClusterSpec& spec,
                                                                  const LlmServingSpec& serving,
                                                                  const Catalog& catalog) {
  shared::SharedClusterConfig config;
  config.serving_priority = spec.serving_priority;
  config.serving_pool = spec.serving_pool;
  config.classes = spec.classes;
  config.policy = spec.policy;
  std::optional<scheduler::ResourceVector> instance;
  for (std::size_t i = 0; i < spec.node_groups.size(); ++i) {
    const auto& g = spec.node_groups[i];
    const auto sku = catalog.skus.find(g.sku);
    if (sku == catalog.skus.end()) {
      return Error{"cluster.nodes[" + std::to_string(i) + "].sku: no SKU '" + g.sku + "' in configs/hardware.json"};
    }
    const double gpus = sku->second.gpus_per_node;
    auto capacity = scheduler::ResourceVector::of(g.cpu, g.memory_gib * 1024.0 * 1.048576, gpus);
    capacity.with_custom(sku_resource(g.sku), gpus);
    for (std::uint32_t n = 0; n < g.count; ++n) {
      config.nodes.push_back(scheduler::NodeSpec{g.sku + "-" + std::to_string(config.nodes.size()), capacity,
                                                 {{"sku", g.sku}}, g.sku});
    }
    if (g.sku == serving.sku && !instance) {
      // An instance takes its GPUs' share of the host's CPU and memory.
      const double share = serving.tensor_parallel / gpus;
      instance = scheduler::ResourceVector::of(g.cpu * share, g.memory_gib * 1024.0 * 1.048576 * share,
                                               serving.tensor_parallel);
      instance->with_custom(sku_resource(g.sku), serving.tensor_parallel);
    }
  }
  if (!spec.node_list.empty()) {
    auto nodes = traces::read_openb_nodes(spec.node_list);
    if (!nodes) return nodes.error();
    std::set<std::string> grouped;  // the node groups' generated names
    for (const auto& node : config.nodes) grouped.insert(node.name);
    for (const auto& n : *nodes) {
      if (grouped.count(n.name)) {
        return Error{"cluster.node_list: " + spec.node_list + ": node '" + n.name +
                     "' has the name of a node of cluster.nodes (each node needs its own name)"};
      }
      auto capacity = scheduler::ResourceVector::of(n.cpu, n.memory_mb, n.gpus);
      capacity.with_custom(sku_resource(n.model), n.gpus);
      config.nodes.push_back(scheduler::NodeSpec{n.name, capacity, {{"sku", n.model}}, n.model});
    }
  }
  if (!instance) {
    return Error{"cluster.nodes: no node group of the serving SKU '" + serving.sku +
                 "': serving instances need nodes of their SKU"};
  }
  // The SKU resource keeps serving off other SKUs' nodes; when every node is of the
  // serving SKU it decides nothing, and leaving it out keeps resource vectors small
  // (custom resources cost an allocation per copy in the core's hot paths).
  const bool mixed = std::any_of(config.nodes.begin(), config.nodes.end(),
                                 [&](const scheduler::NodeSpec& n) { return n.sku != serving.sku; });
  if (!mixed) {
    for (auto& node : config.nodes) node.capacity = strip_custom(node.capacity);
    *instance = strip_custom(*instance);
  }
  config.instance_resources = *instance;
  return config;
}

Expected<std::vector<traces::BatchJobRecord>> load_batch_jobs(const ClusterSpec& spec, std::uint64_t seed) {
  if (spec.generator) {
    for (const auto& c : spec.generator->classes) {
      if (spec.classes.count(c.job_class) == 0) {
        return Error{"cluster.batch.generator: class '" + c.job_class + "' is not in cluster.batch.classes"};
      }
    }
    return traces::generate_batch_jobs(*spec.generator, seed);
  }
  if (spec.openb_pods.empty()) return std::vector<traces::BatchJobRecord>{};
  auto jobs = traces::read_openb_pods(spec.openb_pods, spec.openb);
  if (!jobs) return jobs.error();
  for (const auto& job : *jobs) {
    if (spec.classes.count(job.job_class) == 0) {
      return Error{spec.openb_pods + ": pod '" + job.name + "' has qos '" + job.job_class +
                   "', which cluster.batch.classes does not name"};
    }
  }
  return jobs;
}

}  // namespace meshsim::configs
