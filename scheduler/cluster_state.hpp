#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "scheduler/ids.hpp"
#include "scheduler/op_result.hpp"
#include "scheduler/placement.hpp"
#include "scheduler/resources.hpp"

namespace meshsim::scheduler {

using Labels = std::map<std::string, std::string>;

enum class NodeState { kUp, kDraining, kDown };
inline constexpr EnumNames kNodeStateNames{std::array{std::pair{NodeState::kUp, std::string_view("up")},
                                                      std::pair{NodeState::kDraining, std::string_view("draining")},
                                                      std::pair{NodeState::kDown, std::string_view("down")}}};

struct NodeSpec {
  std::string name;
  ResourceVector capacity;
  Labels labels;
  std::string sku;
};

struct Node {
  NodeSpec spec;
  NodeState state = NodeState::kUp;
  ResourceLedger ledger;  // `used` = what ready placement groups hold here
};


// Which fitting node a single-node placement takes (a scheduling strategy's choice):
// the least free left (best fit, the default), the most (worst fit, to spread load), or
// the highest score of a plugin's function (a scan of every node).
enum class NodeOrder { kBestFit, kWorstFit, kScore };
using NodeScore = std::function<double(const ResourceVector& need, const Node& node)>;

enum class PgState { kPending, kReady };

struct PlacementGroup {
  PgId id = 0;
  std::string name;
  std::vector<ResourceVector> bundles;
  PlacementStrategy strategy = PlacementStrategy::kStrictPack;
  PgState state = PgState::kPending;
  std::vector<std::uint32_t> nodes;  // node of each bundle, once ready
};

// The simulated cluster as the scheduling core books it: nodes and the placement groups
// that hold their resources. A ready PG reserves node resources whether or not an agent
// uses them (as in Ray). Placement is all or nothing.
class ClusterState {
 public:
  // Its index; its name must be new (the inputs refuse a second node of one name).
  std::uint32_t add_node(NodeSpec spec);
  // Draining and down nodes take no new placement groups.
  OpResult set_node_state(const std::string& name, NodeState state);
  const std::vector<Node>& nodes() const { return nodes_; }
  std::optional<std::uint32_t> find_node(const std::string& name) const;
  // The most free GPU (milli) on any up node (0 with none), from the free-capacity index.
  std::int64_t most_free_gpu_milli() const { return free_index_.empty() ? 0 : std::get<0>(*free_index_.rbegin()); }
  // How single-node placements pick among fitting nodes (default best fit).
  void set_node_order(NodeOrder order, NodeScore score = nullptr);

  // Places a PG now; when it cannot, either fails (changing nothing) or, with
  // `pend_if_unplaceable`, keeps it pending and places it when resources are freed (in
  // the order such PGs were created).
  struct PgResult {
    OpResult result;
    std::optional<PgId> id;
    bool ready = false;
  };
  PgResult create_placement_group(std::string name, std::vector<ResourceVector> bundles, PlacementStrategy strategy,
                                  bool pend_if_unplaceable);
  // Whether a PG of these bundles would be placed now if the PGs in `freeing` were
  // removed first (what-if for victim selection; changes nothing).
  bool can_place(const std::vector<ResourceVector>& bundles, PlacementStrategy strategy,
                 const std::vector<PgId>& freeing = {}) const;
  // Frees the PG's node resources (if it was ready) and places pending PGs that now fit.
  OpResult remove_placement_group(PgId id);
  const PlacementGroup* placement_group(PgId id) const;
  // In no particular order (sort the ids where order shows).
  const std::unordered_map<PgId, PlacementGroup>& placement_groups() const { return pgs_; }

  // Everything a state file keeps of the cluster; node ledgers follow from the ready PGs.
  struct State {
    std::vector<std::pair<NodeSpec, NodeState>> nodes;
    std::map<PgId, PlacementGroup> placement_groups;
    std::vector<PgId> pending;  // in placement order
    PgId next_pg = 1;
  };
  State state() const;
  // Replaces everything with `state`; fails (changing nothing) when its PGs do not fit.
  OpResult restore(const State& state);

  // Node ledgers agree with the ready PGs and stay within capacity; empty when all is well.
  std::vector<std::string> check_invariants() const;

 private:
  bool try_place(PlacementGroup& pg);
  // The assignment place_bundles would choose, through the free-capacity index where one
  // node takes every bundle (single-bundle PGs and PACK), else by the linear rule.
  std::optional<std::vector<std::uint32_t>> choose_nodes(const std::vector<ResourceVector>& bundles,
                                                         PlacementStrategy strategy) const;
  std::optional<std::uint32_t> preferred_node(const ResourceVector& need) const;
  void reindex(std::uint32_t node, bool was_indexed);
  std::vector<ResourceVector> free_resources() const;
  std::vector<bool> eligible_nodes() const;
  void place_pending();

  std::vector<Node> nodes_;
  // Up nodes by free (gpu, cpu, memory) then index: the first fitting entry from the
  // needed GPUs on is the best fit, so placement at 10k nodes needs no full scan.
  using FreeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint32_t>;
  std::set<FreeKey> free_index_;
  NodeOrder node_order_ = NodeOrder::kBestFit;
  NodeScore node_score_;
  std::vector<FreeKey> indexed_as_;
  std::map<std::string, std::uint32_t> node_index_;
  // Hashed: victim selection looks a PG up for every candidate it weighs.
  std::unordered_map<PgId, PlacementGroup> pgs_;
  std::deque<PgId> pending_;
  PgId next_pg_ = 1;
};

}  // namespace meshsim::scheduler
