#pragma once

// What `meshsim compare-presets` reports: one outcome per policy and seed, written as
// presets.csv and preemptions.csv, and printed as a table of each policy's mean over its
// seeds (with the spread when there are several) and who preempted whom.

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace meshsim::cli {

// What the comparison reports of one run.
struct PresetOutcome {
  std::string name;  // the policy
  std::uint64_t seed = 0;
  std::string error;  // the run failed: nothing else is set
  bool unwritten = false;  // the failure was its run folder's (I/O, exit 3)
  // None where the run judged no request (no figure over nothing).
  std::optional<double> slo_attainment, ttft_p99_s;
  std::uint64_t scale_ups = 0, blocked = 0;
  std::uint64_t jobs_completed = 0, jobs_queued = 0, preemptions = 0;
  std::uint64_t same_pool = 0, cross_pool = 0, label = 0;
  double held_gpu_h = 0, useful_gpu_h = 0, lost_gpu_h = 0, lost_share = 0;
  // (preemptor's class, victim's class) -> preemptions; "serving" for serving instances.
  std::map<std::pair<std::string, std::string>, std::uint64_t> preempted_by;
  // Per class of service (none without classes): its name and SLO attainment (none where
  // the run judged none of its requests).
  std::vector<std::pair<std::string, std::optional<double>>> classes;
  // Wall-clock, so not part of what must repeat exactly.
  double schedule_p50_us = 0, schedule_p99_us = 0;
};

// presets.csv: one row per policy and seed, in the order given.
void write_presets_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes);
// preemptions.csv: policy, seed, preemptor class, victim class, preemptions.
void write_preemptions_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes);
// classes.csv, with classes of service: policy, seed, class, SLO attainment.
void write_classes_csv(std::ostream& out, const std::vector<PresetOutcome>& outcomes);
// The table: per policy (in first-seen order) the mean over its seeds (an SLO or latency
// over the runs that measured one, '-' when none did); with several seeds, each figure's
// spread (lowest to highest) below, and each policy against the first paired by seed;
// then each class's SLO attainment, with classes of service; then who preempted whom.
void print_presets_table(std::ostream& out, const std::vector<PresetOutcome>& outcomes, std::size_t seeds);

}  // namespace meshsim::cli
