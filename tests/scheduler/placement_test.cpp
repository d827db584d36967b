#include "scheduler/placement.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "scheduler/cluster_state.hpp"

namespace meshsim::scheduler {
namespace {

ResourceVector gpus(double n) { return ResourceVector::of(n * 4, n * 1000, n); }

std::vector<ResourceVector> free_of(const std::vector<double>& gpu_counts) {
  std::vector<ResourceVector> free;
  for (const double g : gpu_counts) free.push_back(gpus(g));
  return free;
}

std::vector<bool> all(std::size_t n) { return std::vector<bool>(n, true); }

TEST(PlaceBundlesTest, StrictPackPutsEverythingOnTheBestFittingNode) {
  const auto free = free_of({8, 4, 6});
  const auto placed = place_bundles({gpus(2), gpus(2)}, PlacementStrategy::kStrictPack, free, all(3));
  ASSERT_TRUE(placed);
  EXPECT_EQ(*placed, (std::vector<std::uint32_t>{1, 1}));  // the 4-GPU node fits exactly
  EXPECT_FALSE(place_bundles({gpus(5), gpus(4)}, PlacementStrategy::kStrictPack, free, all(3)));
}

TEST(PlaceBundlesTest, PackSpillsOverOnlyWhenOneNodeIsNotEnough) {
  const auto free = free_of({8, 4, 6});
  const auto placed = place_bundles({gpus(6), gpus(6)}, PlacementStrategy::kPack, free, all(3));
  ASSERT_TRUE(placed);
  EXPECT_EQ(std::set<std::uint32_t>(placed->begin(), placed->end()), (std::set<std::uint32_t>{0, 2}));
}

TEST(PlaceBundlesTest, StrictSpreadUsesDistinctNodesOrFails) {
  const auto free = free_of({8, 8, 8});
  const auto placed = place_bundles({gpus(1), gpus(1), gpus(1)}, PlacementStrategy::kStrictSpread, free, all(3));
  ASSERT_TRUE(placed);
  EXPECT_EQ(std::set<std::uint32_t>(placed->begin(), placed->end()).size(), 3u);
  EXPECT_FALSE(place_bundles({gpus(1), gpus(1), gpus(1), gpus(1)}, PlacementStrategy::kStrictSpread, free, all(3)));
}

TEST(PlaceBundlesTest, SpreadSharesNodesWhenThereAreTooFew) {
  const auto free = free_of({8, 8});
  const auto placed = place_bundles({gpus(1), gpus(1), gpus(1)}, PlacementStrategy::kSpread, free, all(2));
  ASSERT_TRUE(placed);
  EXPECT_EQ(std::set<std::uint32_t>(placed->begin(), placed->end()).size(), 2u);
}

TEST(PlaceBundlesTest, IneligibleNodesAreNeverUsed) {
  const auto free = free_of({8, 8});
  const auto placed = place_bundles({gpus(1)}, PlacementStrategy::kPack, free, {false, true});
  ASSERT_TRUE(placed);
  EXPECT_EQ((*placed)[0], 1u);
  EXPECT_FALSE(place_bundles({gpus(1)}, PlacementStrategy::kPack, free, {false, false}));
}

TEST(ClusterStateTest, ReadyPlacementGroupsHoldNodeResourcesUntilRemoved) {
  ClusterState cluster;
  cluster.add_node({"n0", gpus(8), {}, "h100"});
  cluster.add_node({"n1", gpus(8), {}, "h100"});
  auto pg = cluster.create_placement_group("train", {gpus(4), gpus(4)}, PlacementStrategy::kStrictSpread, false);
  ASSERT_TRUE(pg.result.success) << pg.result.error;
  EXPECT_TRUE(pg.ready);
  EXPECT_EQ(cluster.nodes()[0].ledger.available(), gpus(4));
  EXPECT_EQ(cluster.nodes()[1].ledger.available(), gpus(4));
  EXPECT_TRUE(cluster.check_invariants().empty());
  ASSERT_TRUE(cluster.remove_placement_group(*pg.id));
  EXPECT_EQ(cluster.nodes()[0].ledger.available(), gpus(8));
  EXPECT_TRUE(cluster.check_invariants().empty());
}

// Issue 60: a second node of one name took the first one's place in the name index.
TEST(ClusterStateTest, AStateWithTwoNodesOfOneNameIsRefusedByTheName) {
  ClusterState cluster;
  cluster.add_node({"n0", gpus(8), {}, "h100"});
  ClusterState::State state = cluster.state();
  state.nodes.push_back(state.nodes.front());
  const OpResult restored = cluster.restore(state);
  EXPECT_FALSE(restored.success);
  EXPECT_EQ(restored.error, "a second node named 'n0'");
  EXPECT_EQ(cluster.nodes().size(), 1u);  // left as it was
  EXPECT_THROW(cluster.add_node({"n0", gpus(1), {}, "h100"}), std::logic_error);
}

TEST(ClusterStateTest, AnUnplaceablePlacementGroupFailsCleanlyOrWaitsAsAsked) {
  ClusterState cluster;
  cluster.add_node({"n0", gpus(8), {}, "h100"});
  auto big = cluster.create_placement_group("big", {gpus(6)}, PlacementStrategy::kStrictPack, false);
  ASSERT_TRUE(big.result.success);
  auto refused = cluster.create_placement_group("refused", {gpus(4)}, PlacementStrategy::kStrictPack, false);
  EXPECT_FALSE(refused.result.success);
  EXPECT_EQ(refused.result.error, "placement group 'refused' (STRICT_PACK, 1 bundles) does not fit on the nodes");
  EXPECT_EQ(cluster.nodes()[0].ledger.available(), gpus(2));  // nothing partially placed
  auto waiting = cluster.create_placement_group("waiting", {gpus(4)}, PlacementStrategy::kStrictPack, true);
  ASSERT_TRUE(waiting.result.success);
  EXPECT_FALSE(waiting.ready);
  ASSERT_TRUE(cluster.remove_placement_group(*big.id));
  EXPECT_EQ(cluster.placement_group(*waiting.id)->state, PgState::kReady);
  EXPECT_TRUE(cluster.check_invariants().empty());
}

TEST(ClusterStateTest, DrainingNodesTakeNoNewPlacementGroups) {
  ClusterState cluster;
  cluster.add_node({"n0", gpus(8), {}, "h100"});
  cluster.add_node({"n1", gpus(8), {}, "h100"});
  ASSERT_TRUE(cluster.set_node_state("n0", NodeState::kDraining));
  auto pg = cluster.create_placement_group("a", {gpus(1)}, PlacementStrategy::kPack, false);
  ASSERT_TRUE(pg.result.success);
  EXPECT_EQ(cluster.placement_group(*pg.id)->nodes[0], 1u);
  EXPECT_FALSE(cluster.set_node_state("n9", NodeState::kDown));
}

}  // namespace
}  // namespace meshsim::scheduler

namespace meshsim::scheduler {
namespace {

// ClusterState places through its free-capacity index where it can; every choice must be
// the one the linear rule (place_bundles over all nodes) makes on the same free resources.
TEST(ClusterStateTest, IndexedPlacementChoosesWhatTheLinearRuleWould) {
  std::mt19937_64 rng(11);
  ClusterState cluster;
  for (int i = 0; i < 200; ++i) {
    cluster.add_node({"n" + std::to_string(i), ResourceVector::of(8 + rng() % 3 * 8, 65536, rng() % 2 ? 8 : 4), {}, "x"});
  }
  std::vector<PgId> live;
  const PlacementStrategy strategies[] = {PlacementStrategy::kPack, PlacementStrategy::kSpread,
                                          PlacementStrategy::kStrictPack, PlacementStrategy::kStrictSpread};
  for (int step = 0; step < 3000; ++step) {
    if (step % 97 == 0) {
      (void)cluster.set_node_state("n" + std::to_string(rng() % 200), rng() % 2 ? NodeState::kUp : NodeState::kDraining);
    }
    if (!live.empty() && rng() % 3 == 0) {
      const std::size_t i = rng() % live.size();
      ASSERT_TRUE(cluster.remove_placement_group(live[i]));
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    std::vector<ResourceVector> bundles(1 + rng() % 3, ResourceVector::of(1 + rng() % 4, 1024, rng() % 3));
    const PlacementStrategy strategy = strategies[rng() % 4];
    std::vector<ResourceVector> free;
    std::vector<bool> eligible;
    for (const auto& node : cluster.nodes()) {
      free.push_back(node.ledger.available());
      eligible.push_back(node.state == NodeState::kUp);
    }
    const auto expected = place_bundles(bundles, strategy, free, eligible);
    const auto pg = cluster.create_placement_group("pg", bundles, strategy, false);
    ASSERT_EQ(pg.ready, expected.has_value()) << "step " << step;
    if (!pg.ready) continue;
    EXPECT_EQ(cluster.placement_group(*pg.id)->nodes, *expected) << "step " << step;
    live.push_back(*pg.id);
  }
  EXPECT_EQ(cluster.check_invariants(), std::vector<std::string>{});
}

}  // namespace
}  // namespace meshsim::scheduler
