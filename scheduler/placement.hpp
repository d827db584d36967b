#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "scheduler/resources.hpp"
#include "sim/engine/enum_names.hpp"

namespace meshsim::scheduler {

// How a placement group's bundles are laid on nodes (Ray's strategies).
enum class PlacementStrategy {
  kPack,          // as few nodes as possible, spilling over when one is not enough
  kSpread,        // as many distinct nodes as possible, sharing when there are too few
  kStrictPack,    // all bundles on one node, or nothing
  kStrictSpread,  // every bundle on a different node, or nothing
};
inline constexpr EnumNames kPlacementStrategyNames{
    std::array{std::pair{PlacementStrategy::kPack, std::string_view("PACK")},
               std::pair{PlacementStrategy::kSpread, std::string_view("SPREAD")},
               std::pair{PlacementStrategy::kStrictPack, std::string_view("STRICT_PACK")},
               std::pair{PlacementStrategy::kStrictSpread, std::string_view("STRICT_SPREAD")}}};

// Chooses a node for every bundle from the nodes' free resources, all or nothing: the
// node index of each bundle, or std::nullopt when the strategy cannot be satisfied. Among
// fitting nodes it takes the best fit (least GPU, then CPU, left free), lowest index on
// ties, so results are deterministic. `eligible[i]` false excludes node i (down,
// draining). Cost: O(bundles x nodes).
std::optional<std::vector<std::uint32_t>> place_bundles(const std::vector<ResourceVector>& bundles,
                                                        PlacementStrategy strategy,
                                                        const std::vector<ResourceVector>& free,
                                                        const std::vector<bool>& eligible);

}  // namespace meshsim::scheduler
