#include "scheduler/scheduling_strategy.hpp"

namespace meshsim::scheduler {
namespace {

// The built-ins' order as one number (free GPUs dominate, then CPUs, then memory), for
// callers of score(); placement itself uses the free-capacity index.
double free_score(const Node& node) {
  const ResourceVector& free = node.ledger.available();
  return free.gpu() * 1e12 + free.cpu() * 1e6 + free.memory_mb() * 1e-3;
}

class BinPackStrategy final : public SchedulingStrategy {
 public:
  std::string_view name() const override { return "binpack"; }
  NodeOrder node_order() const override { return NodeOrder::kBestFit; }
  double score(const ResourceVector&, const Node& node) const override { return -free_score(node); }
};

class SpreadStrategy final : public SchedulingStrategy {
 public:
  std::string_view name() const override { return "spread"; }
  NodeOrder node_order() const override { return NodeOrder::kWorstFit; }
  double score(const ResourceVector&, const Node& node) const override { return free_score(node); }
};

}  // namespace


Expected<std::unique_ptr<SchedulingStrategy>> make_scheduling_strategy(std::string_view name) {
  if (name == "binpack") return std::unique_ptr<SchedulingStrategy>(std::make_unique<BinPackStrategy>());
  if (name == "spread") return std::unique_ptr<SchedulingStrategy>(std::make_unique<SpreadStrategy>());
  return Error{"scheduling strategy '" + std::string(name) + "' is not one of 'binpack', 'spread'"};
}

}  // namespace meshsim::scheduler
