#include "scheduler/placement.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace meshsim::scheduler {
namespace {

// Best fit: the fitting node leaving the least GPU, then CPU, then memory free.
std::optional<std::uint32_t> best_fit(const ResourceVector& need, const std::vector<ResourceVector>& free,
                                      const std::vector<bool>& usable) {
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < free.size(); ++i) {
    if (!usable[i] || !need.fits_in(free[i])) continue;
    if (!best) {
      best = i;
      continue;
    }
    const ResourceVector& a = free[i];
    const ResourceVector& b = free[*best];
    if (std::make_tuple(a.gpu_milli(), a.cpu_milli(), a.memory_milli()) <
        std::make_tuple(b.gpu_milli(), b.cpu_milli(), b.memory_milli())) {
      best = i;
    }
  }
  return best;
}

}  // namespace

std::optional<std::vector<std::uint32_t>> place_bundles(const std::vector<ResourceVector>& bundles,
                                                        PlacementStrategy strategy,
                                                        const std::vector<ResourceVector>& free_in,
                                                        const std::vector<bool>& eligible) {
  std::vector<std::uint32_t> assignment(bundles.size(), 0);
  if (bundles.empty()) return assignment;
  if (strategy == PlacementStrategy::kStrictPack || strategy == PlacementStrategy::kPack) {
    ResourceVector total;
    for (const auto& b : bundles) total += b;
    if (const auto node = best_fit(total, free_in, eligible)) {
      std::fill(assignment.begin(), assignment.end(), *node);
      return assignment;
    }
    if (strategy == PlacementStrategy::kStrictPack) return std::nullopt;
  }
  // Largest bundles first (by GPU, then CPU), so small ones fill the gaps; stable for
  // equal bundles.
  std::vector<std::uint32_t> order(bundles.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return std::make_tuple(bundles[x].gpu_milli(), bundles[x].cpu_milli()) >
           std::make_tuple(bundles[y].gpu_milli(), bundles[y].cpu_milli());
  });
  std::vector<ResourceVector> free = free_in;
  std::vector<bool> used(free.size(), false);
  for (const std::uint32_t b : order) {
    std::optional<std::uint32_t> node;
    switch (strategy) {
      case PlacementStrategy::kPack: {
        // Prefer nodes the group already uses.
        std::vector<bool> already(free.size());
        for (std::size_t i = 0; i < free.size(); ++i) already[i] = eligible[i] && used[i];
        node = best_fit(bundles[b], free, already);
        if (!node) node = best_fit(bundles[b], free, eligible);
        break;
      }
      case PlacementStrategy::kSpread:
      case PlacementStrategy::kStrictSpread: {
        std::vector<bool> fresh(free.size());
        for (std::size_t i = 0; i < free.size(); ++i) fresh[i] = eligible[i] && !used[i];
        node = best_fit(bundles[b], free, fresh);
        if (!node && strategy == PlacementStrategy::kSpread) node = best_fit(bundles[b], free, eligible);
        break;
      }
      case PlacementStrategy::kStrictPack:
        break;
    }
    if (!node) return std::nullopt;
    free[*node] -= bundles[b];
    used[*node] = true;
    assignment[b] = *node;
  }
  return assignment;
}

}  // namespace meshsim::scheduler
