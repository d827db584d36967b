#pragma once

// Classes of service: requests of one workload that share a priority and an SLO (a chat
// tier and a batch tier on one deployment). Plain values; the scenario's "classes" fill
// them (configs/README.md).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/metrics/run_metrics.hpp"

namespace meshsim::metrics {

struct ServiceClass {
  std::string name;
  // vLLM's convention, lower first: the vllm engine's priority policy admits and keeps
  // requests by it (serving.vllm.scheduling_policy "priority"); other policies ignore it.
  std::int32_t priority = 0;
  SloTargets slo;
  // The fraction of the workload's requests drawn into the class, when the workload does
  // not name each request's class itself.
  std::optional<double> share;
  // A ServeGen workload's clients whose requests are the class's ("chunk-3").
  std::vector<std::string> clients;
};

inline std::vector<SloTargets> slos_of(const std::vector<ServiceClass>& classes) {
  std::vector<SloTargets> out;
  for (const ServiceClass& c : classes) out.push_back(c.slo);
  return out;
}
// What judges a run's requests: `run` without classes, each class's SLO with them.
inline SloBook slo_book(const SloTargets& run, const std::vector<ServiceClass>& classes) {
  return SloBook{run, slos_of(classes)};
}

// At most this many classes (a request keeps its class in one byte).
inline constexpr std::size_t kMaxServiceClasses = 16;

}  // namespace meshsim::metrics
